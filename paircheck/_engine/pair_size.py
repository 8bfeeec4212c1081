"""PW001: is the draft much cheaper per token than the target? An engine-neutral warning.

Pure: it reads the tensor infos of both descriptions (paircheck.weights); it never
changes a verdict.
"""

from __future__ import annotations

import os

from paircheck._engine.common import shell_path
from paircheck.findings import WARN, Finding, Rule
from paircheck.model import ModelDescription
from paircheck.weights import description_weight_bytes, parameter_count

# A draft whose per-token cost is above this share of the target's rarely pays off.
COST_WARN = 0.3
# A "draft" this many times the target's size is the target: the two were given swapped.
SWAP_RATIO = 4.0

SIZE_CODE, SIZE_NAME = "PW001", "draft_size"
SIZE_TITLE = "The draft is not much cheaper per token than the target (or is the same file)"
SIZE_FIX = (
    "Use a draft several times smaller than the target (per-token weight bytes below 30% of the "
    "target's), e.g. a smaller model of the same family, or a more quantized copy of it."
)

SIZE_RULE = Rule(
    SIZE_CODE, SIZE_NAME, SIZE_TITLE,
    "Speculative decoding pays off only when a draft token costs much less than a target "
    "pass. Decoding is memory-bound, so the cost of a pass is about the weight bytes read "
    "per token: every tensor's bytes from the GGUF tensor infos (with its quantization), "
    "the embedding table only when it is also the output head, and for a mixture of experts"
    " only the active experts. paircheck warns when the draft reads more than 30% of the "
    "target's bytes, more than the target, or is the same file. The check reads nothing "
    "more for it: the tensor infos are read with the metadata (never for vocab-only files, "
    "which have none). A draft at least 4 times the target's size is taken for the two "
    "given in the wrong order (the target comes first): the warning gives the check in the "
    "right order, and no launch line is printed for the swapped pair. Where a side has no "
    "tensor infos (a vocab-only or header-only GGUF, a Hugging Face folder without "
    "safetensors headers), the parameter counts stand in for the bytes: its "
    "general.size_label, or an estimate from its config.json. `paircheck estimate TARGET "
    "DRAFT` models the speedup and `paircheck bench run TARGET DRAFT` measures it.",
    SIZE_FIX, kind="warning",
)
RULES = (SIZE_RULE,)


def same_file(target: ModelDescription, draft: ModelDescription) -> bool:
    """Both sides name the same file (by absolute path; no file system access)."""
    if target.resolved_path and draft.resolved_path:
        return os.path.abspath(target.resolved_path) == os.path.abspath(draft.resolved_path)
    return target.location == draft.location


def size_finding(
    target_bytes: int | None,
    draft_bytes: int | None,
    same: bool,
    threshold: float = COST_WARN,
    basis: str = "weights",
) -> Finding | None:
    """The one-line warning: same file, a draft larger than the target, or ``c > threshold``.

    Pure. ``basis`` "weights": sizes are per-token weight bytes (see ``weight_bytes``);
    "file": whole file sizes, a rougher stand-in (they include the embedding table).
    Sizes are None when unknown.
    """
    if same:
        return Finding(
            SIZE_CODE, SIZE_NAME, WARN,
            "target and draft are the same file: every draft token costs a full target pass, so this is slower",
            {"same_file": True},
            SIZE_FIX,
        )
    if not target_bytes or draft_bytes is None:
        return None
    ratio = draft_bytes / target_bytes
    if basis == "file":
        details: dict[str, object] = {"basis": "file_size", "target_file_bytes": target_bytes,
                                      "draft_file_bytes": draft_bytes, "size_ratio": round(ratio, 4)}
        larger = f"the draft file is {ratio:.2f}x the size of the target file"
        share = f"the draft file is {ratio:.0%} of the target file's size (above {threshold:.0%})"
    else:
        details = {"basis": "weight_bytes_per_token", "target_bytes_per_token": target_bytes,
                   "draft_bytes_per_token": draft_bytes, "cost_ratio": round(ratio, 4)}
        larger = f"the draft reads {ratio:.2f}x the target's weight bytes per token"
        share = f"the draft reads {ratio:.0%} of the target's weight bytes per token (cost ratio above {threshold:.0%})"
    if ratio > 1.0:
        return Finding(SIZE_CODE, SIZE_NAME, WARN, f"{larger}: it is larger than the target, so speculative decoding "
                       "will be slower", details, SIZE_FIX)
    if ratio > threshold:
        return Finding(SIZE_CODE, SIZE_NAME, WARN, f"{share}: little or no speedup is likely", details, SIZE_FIX)
    return None


def _billions(n: int) -> str:
    return f"{n / 1e9:.2f}B" if n < 10e9 else f"{n / 1e9:.0f}B"


def parameter_finding(
    target: tuple[int, str], draft: tuple[int, str], threshold: float = COST_WARN
) -> Finding | None:
    """The size warning from parameter counts (``(count, where it comes from)``), when the
    bytes per token cannot be read: a rougher stand-in that still tells a 14B draft from a
    0.5B target."""
    (t_n, t_from), (d_n, d_from) = target, draft
    if t_n <= 0:
        return None
    ratio = d_n / t_n
    details = {"basis": "parameters", "target_parameters": t_n, "draft_parameters": d_n,
               "target_parameters_from": t_from, "draft_parameters_from": d_from, "parameter_ratio": round(ratio, 4)}
    sizes = f"the draft has {_billions(d_n)} parameters ({d_from}), the target {_billions(t_n)} ({t_from})"
    if ratio > 1.0:
        return Finding(SIZE_CODE, SIZE_NAME, WARN, f"{sizes}: the draft is larger than the target, so speculative "
                       "decoding will be slower", details, SIZE_FIX)
    if ratio > threshold:
        return Finding(SIZE_CODE, SIZE_NAME, WARN, f"{sizes}: {ratio:.0%} of the target's (above {threshold:.0%}): "
                       "little or no speedup is likely", details, SIZE_FIX)
    return None


def size_warning(target: ModelDescription, draft: ModelDescription, threshold: float = COST_WARN) -> Finding | None:
    """The check's size warning from the tensor infos the sources already read: per-token
    weight bytes of both sides; without them, the parameter counts the files or configs
    state (general.size_label, config.json); without those, only the same-file case."""
    t, d = description_weight_bytes(target), description_weight_bytes(draft)
    same = same_file(target, draft)
    if same or (t is not None and d is not None):
        return swapped(size_finding(t.per_token if t else None, d.per_token if d else None, same, threshold),
                       target, draft)
    t_params, d_params = parameter_count(target), parameter_count(draft)
    if t_params is None or d_params is None:
        return None
    return swapped(parameter_finding(t_params, d_params, threshold), target, draft)


def swapped(found: Finding | None, target: ModelDescription, draft: ModelDescription) -> Finding | None:
    """The size warning of a draft many times the target's size: the two look swapped, and
    its fix is the check in the right order (``details["swapped"]``: the order to use)."""
    if found is None:
        return None
    ratio = next((found.details[k] for k in ("cost_ratio", "parameter_ratio", "size_ratio") if k in found.details),
                 None)
    if not isinstance(ratio, (int, float)) or ratio < SWAP_RATIO:
        return found
    right = f"paircheck {shell_path(draft)} {shell_path(target)}"
    message = (f"{found.message}; the draft is {ratio:.0f}x the target: the two look swapped "
               "(the target comes first)")
    return Finding(found.code, found.name, found.status, message, {**found.details, "swapped": right}, right)
