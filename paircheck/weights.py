"""Bytes of weights from tensor infos: what a model holds, and what it reads per token.

Pure functions of tensor infos (name, shape, ggml type), used by the size warning, the
speedup model (``paircheck estimate``) and the memory fit. Sizes come from the pinned
ggml's own type table (constants.GGML_TYPES, checked against libggml by a test), so every
quantization type is counted as llama.cpp stores it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from paircheck.constants import GGML_TYPES
from paircheck.model import ModelDescription

_EMBD = "token_embd.weight"
_OUTPUT = "output.weight"
_EXPERT_TENSOR = re.compile(r"\.ffn_(gate|up|down|gate_up)_exps\.")


def block_and_size(ggml_type: int) -> tuple[int, int]:
    """(elements per block, bytes per block) of a ggml type id, from the pinned ggml's table;
    ValueError for an unknown or removed type."""
    name, block, size = GGML_TYPES.get(ggml_type, ("", 0, 0))
    if block == 0:
        raise ValueError(f"unknown ggml type {ggml_type}{f' ({name})' if name else ''}")
    return block, size


def row_size(ggml_type: int, n_elements: int) -> int:
    """Bytes of ``n_elements`` consecutive values (ggml_row_size): whole blocks only."""
    block, size = block_and_size(ggml_type)
    return size * (n_elements // block)


def tensor_bytes(shape: Sequence[int], ggml_type: int) -> int:
    """Bytes of one tensor's data (ggml_nbytes of a contiguous tensor): elements / block
    size x bytes per block; the first dimension must be whole blocks, as ggml requires."""
    block, type_size = block_and_size(ggml_type)
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



def expert_counts(desc: ModelDescription) -> tuple[int | None, int | None]:
    """``{arch}.expert_count`` and ``{arch}.expert_used_count`` when the model has experts;
    for a Hugging Face folder, the config.json values the converter writes them from."""
    if desc.hf is not None:
        config = desc.hf.extra.get("config")
        return config_expert_counts(config if isinstance(config, dict) else {})
    arch = desc.metadata.get("general.architecture")
    if not isinstance(arch, str):
        return None, None
    count = desc.metadata.get(f"{arch}.expert_count")
    used = desc.metadata.get(f"{arch}.expert_used_count")
    return (count if isinstance(count, int) else None, used if isinstance(used, int) else None)


def config_expert_counts(config: dict[str, Any]) -> tuple[int | None, int | None]:
    """(experts, experts used per token) from a config.json (its ``text_config`` first)."""
    if isinstance(config.get("text_config"), dict):
        config = {**config, **config["text_config"]}
    count = config.get("num_experts", config.get("num_local_experts"))
    used = config.get("num_experts_per_tok")
    return (count if isinstance(count, int) else None, used if isinstance(used, int) else None)


def description_weight_bytes(desc: ModelDescription) -> WeightBytes | None:
    """Weight bytes of the tensors this description lists; None when it has none, when a
    type is unknown, or for the first shard of a split model (it holds only part)."""
    infos = desc.metadata.tensors
    count = desc.metadata.get("split.count")
    if not infos or (isinstance(count, int) and count > 1):
        return None
    try:
        return weight_bytes(((t.name, t.shape, t.ggml_type) for t in infos), *expert_counts(desc))
    except ValueError:
        return None
