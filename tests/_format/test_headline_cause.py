"""The verdict line names the cause first (issue 50, item 1): when two vocabularies are
different tokenizers altogether, that is said before llama.cpp's first failing check (a BOS
flag, a token count), which stays the rule that refuses the pair."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "paircheck", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "80"}, timeout=120, check=False)


def _verdict(out: str) -> str:
    """The verdict paragraph (the first line and its indented continuations), on one line."""
    lines = out.splitlines()
    paragraph = [lines[0]]
    for line in lines[1:]:
        if not line.startswith("  ") or line.strip().startswith("rules:"):
            break
        paragraph.append(line.strip())
    return " ".join(paragraph)


def test_different_tokenizers_lead_the_headline(real_vocab: Callable[[str], Path]) -> None:
    # Qwen2.5's vocabulary as target, Llama 3's as draft: llama.cpp stops at BOS (LC003).
    done = _run(real_vocab("qwen2"), real_vocab("llama-bpe"))
    assert done.returncode == 1, done.stderr
    said = _verdict(done.stdout)
    assert said.startswith("NOT COMPATIBLE for llama.cpp draft-simple: different tokenizers (127846 of 128251 "
                           "compared ids differ); "), said
    assert said.endswith("llama.cpp's first failing check, LC003 bos: the target never adds BOS, the draft adds "
                         "it (add: 0 - 1)"), said
    # The refusing rule is unchanged for scripts.
    doc = json.loads(_run("--json", real_vocab("qwen2"), real_vocab("llama-bpe")).stdout)
    assert doc["first_failure"] == "bos"


def test_a_few_differing_ids_are_not_called_another_tokenizer(gguf_factory: Callable[..., Path]) -> None:
    # The same tokenizer with one renamed token and another BOS flag: both checks fail, but
    # the vocabularies are one tokenizer: the headline stays llama.cpp's first failing check.
    target = gguf_factory(add_bos=True)
    draft = gguf_factory(add_bos=False, replace={20: "renamed"})
    doc = json.loads(_run("--json", target, draft).stdout)
    assert [c["name"] for c in doc["checks"] if c["status"] == "fail"] == ["bos", "token_text"], doc["checks"]
    said = _verdict(_run(target, draft).stdout)
    assert said.startswith("NOT COMPATIBLE for llama.cpp draft-simple: the target adds BOS"), said
    assert "different tokenizers" not in said
