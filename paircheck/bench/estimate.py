"""``paircheck estimate``: the expected speedup of a pair, from a model, never a measurement.

The model is Leviathan et al., "Fast Inference from Transformers via Speculative
Decoding" (ICML 2023), section 3: with a per-token acceptance rate ``a`` and ``k``
drafted tokens per target pass,

* expected tokens per target pass ``E = (1 - a^(k+1)) / (1 - a)`` (``k + 1`` when ``a = 1``);
* speedup ``E / (k*c + 1)``, where ``c`` is the cost of one draft forward pass relative to
  one target pass.

Decoding one token is memory-bound on the hardware people run these models on, so ``c``
is taken as the ratio of the weight bytes each model reads per token: every tensor's
bytes from the GGUF tensor infos (shape times the quantization's bytes per block, from
gguf's ``GGML_QUANT_SIZES``), without the token embedding table (one row is read per
token) unless the output head is tied to it, and for a mixture of experts only the
``expert_used_count`` of ``expert_count`` experts. What the model ignores: the KV cache
(grows with context), prompt processing, the draft's own sampling, and batch effects.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from paircheck._engine.interface import Rule
from paircheck.errors import InputError
from paircheck.model import ModelDescription
from paircheck.report import Finding

# llama.cpp's default --spec-draft-n-max (common/common.h, common_params_speculative_draft::n_max = 3).
DEFAULT_DRAFT_MAX = 3
# Without a measured or given acceptance, the model is shown over this range.
BAND = (0.5, 0.6, 0.7, 0.8, 0.9)
# A draft whose per-token cost is above this share of the target's rarely pays off.
COST_WARN = 0.3
# best_draft_max searches 1..this (llama.cpp drafts at most a few dozen tokens per pass).
K_SEARCH_MAX = 32

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
    "the embedding table only when it is also the output head, and for a mixture of experts "
    "only the active experts. paircheck warns when the draft reads more than 30% of the "
    "target's bytes, more than the target, or is the same file. The check reads nothing "
    "more for it: it uses the tensor infos when an engine's rules read them anyway, else "
    "the two files' sizes (a rougher stand-in that includes the embedding table; never for "
    "vocab-only files). `paircheck estimate TARGET DRAFT` models the speedup and "
    "`paircheck bench run TARGET DRAFT` measures it.",
    SIZE_FIX, kind="warning",
)
RULES = (SIZE_RULE,)

_EMBD = "token_embd.weight"
_OUTPUT = "output.weight"
_EXPERT_TENSOR = re.compile(r"\.ffn_(gate|up|down|gate_up)_exps\.")
_SPLIT_RE = re.compile(r"^(?P<stem>.*)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")


# --------------------------------------------------------------------------- cost ratio


def tensor_bytes(shape: Sequence[int], ggml_type: int) -> int:
    """Bytes of one tensor's data: elements / block size * bytes per block."""
    # Imported here: gguf pulls in numpy, which a plain pair check (vocab only) never needs.
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    try:
        block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
    except (ValueError, KeyError):
        raise ValueError(f"unknown ggml type {ggml_type}") from None
    n = 1
    for dim in shape:
        n *= int(dim)
    if shape and int(shape[0]) % block:
        raise ValueError(f"row of {shape[0]} elements is not a multiple of the block size {block}")
    return n // block * type_size


@dataclass(frozen=True)
class WeightBytes:
    """What one model reads per decoded token, from its tensor infos."""

    total: int  # bytes of all tensors in the file(s)
    per_token: int  # bytes read to decode one token (the cost model's unit)
    n_tensors: int
    expert_count: int | None = None
    expert_used_count: int | None = None
    tied_output: bool = False  # no output.weight: the embedding table is the output head


def weight_bytes(
    tensors: Iterable[tuple[str, Sequence[int], int]],
    expert_count: int | None = None,
    expert_used_count: int | None = None,
) -> WeightBytes:
    """Per-token weight bytes from ``(name, shape, ggml_type)`` tensor infos (pure)."""
    items = list(tensors)
    names = {name for name, _, _ in items}
    tied = _OUTPUT not in names
    moe = bool(expert_count and expert_used_count and 0 < expert_used_count < expert_count)
    total = per_token = 0
    for name, shape, ggml_type in items:
        size = tensor_bytes(shape, ggml_type)
        total += size
        if name == _EMBD and not tied:
            continue  # a lookup reads one row, not the table
        if moe and _EXPERT_TENSOR.search(f".{name}"):
            assert expert_count and expert_used_count
            size = size * expert_used_count // expert_count
        per_token += size
    return WeightBytes(
        total=total,
        per_token=per_token,
        n_tensors=len(items),
        expert_count=expert_count if moe else None,
        expert_used_count=expert_used_count if moe else None,
        tied_output=tied and _EMBD in names,
    )


def _expert_counts(desc: ModelDescription) -> tuple[int | None, int | None]:
    arch = desc.metadata.get("general.architecture")
    if not isinstance(arch, str):
        return None, None
    count = desc.metadata.get(f"{arch}.expert_count")
    used = desc.metadata.get(f"{arch}.expert_used_count")
    return (count if isinstance(count, int) else None, used if isinstance(used, int) else None)


def _shard_tensor_infos(first: Path, count: int) -> list[tuple[str, tuple[int, ...], int]]:
    """Tensor infos of shards 2..count of a split GGUF (the first is already read)."""
    from paircheck._source.gguf_reader import FileSource, GGUFFormatError, read_metadata, read_tensor_infos

    match = _SPLIT_RE.match(first.name)
    if not match:
        return []
    infos: list[tuple[str, tuple[int, ...], int]] = []
    for no in range(2, count + 1):
        shard = first.with_name(f"{match['stem']}-{no:05d}-of-{match['count']}.gguf")
        try:
            with open(shard, "rb") as handle:
                meta, cur = read_metadata(FileSource(shard, handle), chunk=1 << 16)
                infos += [(t.name, t.shape, t.ggml_type) for t in read_tensor_infos(meta, cur)]
        except OSError as exc:
            raise InputError(str(shard), f"cannot read this shard: {exc.strerror or exc}") from None
        except GGUFFormatError as exc:
            raise InputError(str(shard), str(exc)) from None
    return infos


def read_weight_bytes(desc: ModelDescription) -> WeightBytes:
    """Read the tensor infos of a local GGUF (all shards) and sum its weight bytes.

    Raises InputError when the source has no tensor infos (a Hugging Face folder, a
    vocab-only GGUF): ``--cost-ratio`` then gives ``c`` by hand.
    """
    from paircheck._source.gguf_reader import FileSource, GGUFFormatError, read_tensor_infos_after

    if desc.source_kind != "gguf" or not desc.resolved_path:
        raise InputError(desc.location, "weight sizes are read from a local GGUF file's tensor infos; give --cost-ratio")
    path = Path(desc.resolved_path)
    if desc.metadata.tensors is None:
        try:
            with open(path, "rb") as handle:
                read_tensor_infos_after(FileSource(path, handle), desc.metadata)
        except OSError as exc:
            raise InputError(desc.location, f"cannot read: {exc.strerror or exc}") from None
        except GGUFFormatError as exc:
            raise InputError(desc.location, str(exc)) from None
    infos = [(t.name, t.shape, t.ggml_type) for t in desc.metadata.tensors or []]
    count = desc.metadata.get("split.count")
    if isinstance(count, int) and count > 1:
        infos += _shard_tensor_infos(path, count)
    if not infos:
        raise InputError(desc.location, "has no tensors (a vocab-only file?); give --cost-ratio")
    try:
        return weight_bytes(infos, *_expert_counts(desc))
    except ValueError as exc:
        raise InputError(desc.location, str(exc)) from None


# --------------------------------------------------------------------------- the formula


def expected_tokens_per_pass(acceptance: float, draft_max: int) -> float:
    """Leviathan et al. eq. (1): ``(1 - a^(k+1)) / (1 - a)``; ``k + 1`` at ``a = 1``."""
    a, k = acceptance, draft_max
    if a >= 1.0:
        return float(k + 1)
    return (1.0 - a ** (k + 1)) / (1.0 - a)


def modelled_speedup(acceptance: float, draft_max: int, cost_ratio: float) -> float:
    """Leviathan et al. theorem 3.8: ``E / (k*c + 1)``."""
    return expected_tokens_per_pass(acceptance, draft_max) / (draft_max * cost_ratio + 1.0)


def best_draft_max(acceptance: float, cost_ratio: float, k_max: int = K_SEARCH_MAX) -> int:
    """The ``k`` in 1..k_max with the highest modelled speedup (the smallest on ties)."""
    return max(range(1, k_max + 1), key=lambda k: (modelled_speedup(acceptance, k, cost_ratio), -k))


@dataclass(frozen=True)
class Point:
    acceptance: float
    expected_tokens_per_pass: float
    speedup: float
    best_draft_max: int
    best_speedup: float


def _point(acceptance: float, draft_max: int, cost_ratio: float) -> Point:
    best = best_draft_max(acceptance, cost_ratio)
    return Point(
        acceptance=acceptance,
        expected_tokens_per_pass=expected_tokens_per_pass(acceptance, draft_max),
        speedup=modelled_speedup(acceptance, draft_max, cost_ratio),
        best_draft_max=best,
        best_speedup=modelled_speedup(acceptance, best, cost_ratio),
    )


@dataclass
class Estimate:
    """The model's answer. ``acceptance`` is None when none was given: ``band`` then has
    one point per acceptance in BAND and the single-point fields are None."""

    cost_ratio: float
    cost_source: str  # "tensor-infos" or "given"
    draft_max: int
    acceptance: float | None
    acceptance_source: str | None  # "given", "bench:<file>", or None
    expected_tokens_per_pass: float | None
    speedup: float | None
    best_draft_max: int | None
    best_speedup: float | None
    band: list[Point] = field(default_factory=list)
    target_bytes: WeightBytes | None = None
    draft_bytes: WeightBytes | None = None
    warnings: list[Finding] = field(default_factory=list)
    modelled: bool = True


def estimate(
    cost_ratio: float,
    acceptance: float | None = None,
    draft_max: int = DEFAULT_DRAFT_MAX,
    acceptance_source: str | None = None,
    cost_source: str = "given",
) -> Estimate:
    """The model for one cost ratio: one point for a given acceptance, else the band."""
    if not cost_ratio > 0:
        raise InputError("--cost-ratio", f"must be > 0, got {cost_ratio}")
    if draft_max < 1:
        raise InputError("--draft-max", f"must be >= 1, got {draft_max}")
    if acceptance is not None and not 0.0 <= acceptance <= 1.0:
        raise InputError("--acceptance", f"must be between 0 and 1, got {acceptance}")
    if acceptance is None:
        return Estimate(
            cost_ratio, cost_source, draft_max, None, None, None, None, None, None,
            band=[_point(a, draft_max, cost_ratio) for a in BAND],
        )
    p = _point(acceptance, draft_max, cost_ratio)
    return Estimate(
        cost_ratio, cost_source, draft_max, acceptance, acceptance_source or "given",
        p.expected_tokens_per_pass, p.speedup, p.best_draft_max, p.best_speedup,
    )


def estimate_pair(
    target: ModelDescription,
    draft: ModelDescription,
    acceptance: float | None = None,
    draft_max: int = DEFAULT_DRAFT_MAX,
    acceptance_source: str | None = None,
    cost_ratio: float | None = None,
) -> Estimate:
    """Read both models' tensor infos for ``c`` (unless given), then apply the model."""
    t_bytes = d_bytes = None
    if cost_ratio is None:
        t_bytes, d_bytes = read_weight_bytes(target), read_weight_bytes(draft)
        if t_bytes.per_token <= 0:
            raise InputError(target.location, "has no weight bytes to compare against")
        cost_ratio = d_bytes.per_token / t_bytes.per_token
        source = "tensor-infos"
    else:
        source = "given"
    result = estimate(cost_ratio, acceptance, draft_max, acceptance_source, source)
    result.target_bytes, result.draft_bytes = t_bytes, d_bytes
    finding = size_finding(
        t_bytes.per_token if t_bytes else None,
        d_bytes.per_token if d_bytes else None,
        same_file(target, draft),
    )
    if finding is not None:
        result.warnings.append(finding)
    return result


# --------------------------------------------------------------------------- the size warning


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
            SIZE_CODE, SIZE_NAME,
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
        return Finding(SIZE_CODE, SIZE_NAME, f"{larger}: it is larger than the target, so speculative decoding "
                       "will be slower", details, SIZE_FIX)
    if ratio > threshold:
        return Finding(SIZE_CODE, SIZE_NAME, f"{share}: little or no speedup is likely", details, SIZE_FIX)
    return None


def local_file_size(desc: ModelDescription) -> int | None:
    """Bytes of a local GGUF with tensors (all shards), from the file system: no read.

    None for other sources and for vocab-only files (no tensors: their size says nothing).
    """
    if desc.source_kind != "gguf" or not desc.resolved_path or desc.metadata.tensor_count == 0:
        return None
    path = Path(desc.resolved_path)
    count = desc.metadata.get("split.count")
    paths = [path]
    match = _SPLIT_RE.match(path.name)
    if isinstance(count, int) and count > 1 and match:
        paths = [path.with_name(f"{match['stem']}-{no:05d}-of-{match['count']}.gguf") for no in range(1, count + 1)]
    try:
        return sum(p.stat().st_size for p in paths)
    except OSError:
        return None


def size_warning(
    target: ModelDescription,
    draft: ModelDescription,
    threshold: float = COST_WARN,
    file_sizes: tuple[int | None, int | None] | None = None,
) -> Finding | None:
    """The check's size warning from what is known without reading more of the files.

    Per-token weight bytes when both sides' tensor infos are already in
    ``metadata.tensors``; else the file sizes given (``local_file_size``); else only the
    same-file case can be told.
    """
    sizes: list[int | None] = []
    for desc in (target, draft):
        infos = desc.metadata.tensors
        if not infos:
            sizes.append(None)
            continue
        try:
            wb = weight_bytes(((t.name, t.shape, t.ggml_type) for t in infos), *_expert_counts(desc))
        except ValueError:
            sizes.append(None)
            continue
        # A split GGUF's first shard holds only part of the weights: no size from it.
        count = desc.metadata.get("split.count")
        sizes.append(None if isinstance(count, int) and count > 1 else wb.per_token)
    same = same_file(target, draft)
    if (sizes[0] is None or sizes[1] is None) and file_sizes is not None and None not in file_sizes:
        return size_finding(file_sizes[0], file_sizes[1], same, threshold, basis="file")
    return size_finding(sizes[0], sizes[1], same, threshold)
