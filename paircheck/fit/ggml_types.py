"""ggml sizes as the memory model needs them (InputError on an unknown type) and the KV cache types."""

from __future__ import annotations

from paircheck import weights
from paircheck.errors import InputError

# llama.cpp's accepted KV cache types (common/arg.cpp, kv_cache_types), by their -ctk names.
CACHE_TYPES: dict[str, int] = {
    "f32": 0,
    "f16": 1,
    "bf16": 30,
    "q8_0": 8,
    "q4_0": 2,
    "q4_1": 3,
    "iq4_nl": 20,
    "q5_0": 6,
    "q5_1": 7,
}


def block_and_size(ggml_type: int) -> tuple[int, int]:
    """(elements per block, bytes per block) of a ggml type id, or an InputError."""
    try:
        return weights.block_and_size(ggml_type)
    except ValueError as exc:
        raise InputError("tensor infos", str(exc)) from None


def row_size(ggml_type: int, n_elements: int) -> int:
    """Bytes of ``n_elements`` consecutive values (ggml_row_size): whole blocks only."""
    block, size = block_and_size(ggml_type)
    return size * (n_elements // block)


def tensor_bytes(ggml_type: int, shape: tuple[int, ...]) -> int:
    """ggml_nbytes of a contiguous tensor: the first dimension in blocks, times the others."""
    if not shape:
        return row_size(ggml_type, 1)
    rows = 1
    for dim in shape[1:]:
        rows *= dim
    return row_size(ggml_type, shape[0]) * rows


def cache_type(name: str) -> int:
    """The ggml type id of a ``--cache-type-k``/``-v`` name, or an InputError."""
    key = name.lower()
    if key not in CACHE_TYPES:
        raise InputError(
            "--cache-type", f"unsupported cache type {name!r} (llama.cpp accepts: {', '.join(CACHE_TYPES)})"
        )
    return CACHE_TYPES[key]
