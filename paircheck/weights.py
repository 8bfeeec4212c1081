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
    # Bytes of every routed expert (all ``expert_count`` of them): a batch whose tokens pick
    # different experts reads more of these than one token does (paircheck.speed.roofline).
    expert_bytes: int = 0
    # Weights (elements) read to decode one token, counted as ``per_token`` is: with it, the
    # bits a token reads per weight (a batch's arithmetic grows with weights, its reads with bytes).
    per_token_elements: int = 0


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
    total = per_token = experts = elements = 0
    for name, shape, ggml_type in items:
        size = tensor_bytes(shape, ggml_type)
        total += size
        if name == _EMBD and not tied:
            continue  # a lookup reads one row, not the table
        n = 1
        for dim in shape:
            n *= int(dim)
        if moe and _EXPERT_TENSOR.search(f".{name}"):
            assert expert_count and expert_used_count
            experts += size
            size = size * expert_used_count // expert_count
            n = n * expert_used_count // expert_count
        per_token += size
        elements += n
    return WeightBytes(
        total=total,
        per_token=per_token,
        n_tensors=len(items),
        expert_count=expert_count if moe else None,
        expert_used_count=expert_used_count if moe else None,
        tied_output=tied and _EMBD in names,
        expert_bytes=experts,
        per_token_elements=elements,
    )



def expert_counts(desc: ModelDescription) -> tuple[int | None, int | None]:
    """``{arch}.expert_count`` and ``{arch}.expert_used_count`` when the model has experts;
    for a Hugging Face folder, the config.json values the converter writes them from."""
    if desc.config is not None:
        return config_expert_counts(desc.config)
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


# --- parameter counts, where there are no tensor infos ----------------------------------------

_LABEL = re.compile(r"(\d+(?:\.\d+)?)([KMBT])")
_SCALE = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}


def label_parameters(label: str | None) -> int | None:
    """``general.size_label`` as a parameter count: ``"14B"`` -> 14e9, ``"135M"`` -> 135e6.
    None for labels that are not one dense size (``8x7B``: experts, which a label cannot say
    how many are used per token; ``E2B``, ``A3B``...)."""
    if not label:
        return None
    m = _LABEL.fullmatch(label.strip().upper())
    return int(float(m.group(1)) * _SCALE[m.group(2)]) if m else None


def config_parameters(config: dict[str, object]) -> int | None:
    """Parameters read per token, estimated from a Hugging Face ``config.json``: attention and
    MLP weights of every layer (the active experts only for a mixture of experts) and the output
    head (the token embedding only when it is the head). None when a size is missing."""
    text = config.get("text_config")
    if isinstance(text, dict):
        config = {**config, **text}

    def num(key: str) -> int | None:
        value = config.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

    h, layers, vocab = num("hidden_size"), num("num_hidden_layers"), num("vocab_size")
    if h is None or layers is None or vocab is None:
        return None
    heads = num("num_attention_heads") or 1
    head_dim = num("head_dim") or h // heads
    kv_heads = num("num_key_value_heads") or heads
    attention = h * heads * head_dim * 2 + h * kv_heads * head_dim * 2  # q and o, k and v
    experts, used, expert_ff = num("num_experts") or num("num_local_experts"), num("num_experts_per_tok"), (
        num("moe_intermediate_size") or num("intermediate_size"))
    if experts and used and expert_ff:
        mlp = 3 * h * expert_ff * used + 3 * h * (num("shared_expert_intermediate_size") or 0)
    else:
        ff = num("intermediate_size")
        if ff is None:
            return None
        mlp = 3 * h * ff
    return layers * (attention + mlp) + vocab * h  # the output head (or the tied embedding)


def parameter_count(desc: ModelDescription) -> tuple[int, str] | None:
    """(parameters, where the figure comes from) for the size warning when tensor infos are
    missing: the tensor infos' elements if there are any, else ``general.size_label``, else an
    estimate from ``config.json`` (a Hugging Face folder without safetensors headers)."""
    infos = desc.metadata.tensors
    count = desc.metadata.get("split.count")
    if infos and not (isinstance(count, int) and count > 1):
        total = 0
        for t in infos:
            n = 1
            for dim in t.shape:
                n *= int(dim)
            total += n
        return total, "tensor infos"
    label = desc.identity.size_label
    from_label = label_parameters(label)
    if from_label is not None:
        return from_label, f"general.size_label {label}"
    config = desc.config
    if config:
        estimated = config_parameters(config)
        if estimated is not None:
            return estimated, "config.json, estimated"
    return None
