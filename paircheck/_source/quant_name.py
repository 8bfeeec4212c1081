"""Quantization tags in model names (``Q4_K_M``, ``IQ3_XXS``, ``BF16``): the one home of what a
tag looks like, for scan's labels of the Hub's files, the registry's name matching and the
Hub source's ``-hf`` names. Pure string work that imports nothing of paircheck, so that any
layer may use it.
"""

from __future__ import annotations

import re

# A tag as a word of a name: llama.cpp's types (Q4_K_M, IQ3_XXS, Q8_0) and the float ones.
QUANT_TAG = r"i?q\d+(?:_[a-z0-9]+)*|bf16|f16|fp16|f32|fp32"

_IN_NAME = re.compile(rf"(?i)(?:^|[-_.])({QUANT_TAG})(?=[-_.])")
# What llama.cpp's -hf selector takes for a tag (common/arg.cpp find_best_model: the tag, then
# "." or "-"), which is not the same as a word: "-Q4_K_M." and "-bf16-", matched lazily.
_SELECTOR = re.compile(r"(?<![A-Za-z0-9])(I?Q\d[A-Za-z0-9_]*?|BF16|F16|F32)(?=[.-])", re.I)


def is_quant_tag(token: str) -> bool:
    return re.fullmatch(QUANT_TAG, token, flags=re.I) is not None


def quant_tags(name: str) -> list[str]:
    """Every tag in a file name, in order, upper-cased: ``x-q4_k_m.gguf`` -> ``["Q4_K_M"]``."""
    return [t.upper() for t in _IN_NAME.findall(name)]


def selector_tags(name: str) -> list[str]:
    """The tags llama.cpp's ``-hf org/name:TAG`` could use to pick the file ``name``."""
    return [m.group(1).upper() for m in _SELECTOR.finditer(name)]
