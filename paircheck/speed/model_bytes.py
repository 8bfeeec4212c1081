"""The weight bytes of a model, read from its complete tensor list: what ``estimate``, the
GPU prediction and the probe size."""

from __future__ import annotations

from paircheck._source.tensors import model_tensors
from paircheck.errors import InputError
from paircheck.model import ModelDescription
from paircheck.weights import WeightBytes, expert_counts, weight_bytes


def read_weight_bytes(desc: ModelDescription) -> WeightBytes:
    """Sum the weight bytes of a model's complete tensor list (every shard of a GGUF, local
    or remote, or a Hugging Face folder's safetensors headers; never the weights).

    Raises InputError when there are none to read (a vocab-only GGUF, a folder without
    weights): ``--cost-ratio`` then gives ``c`` by hand.
    """
    try:
        tensors = model_tensors(desc)
    except InputError as exc:
        raise InputError(exc.where, f"{exc.message}; give --cost-ratio") from None
    if not tensors:
        raise InputError(desc.location, "has no tensors (a vocab-only file?); give --cost-ratio")
    try:
        return weight_bytes(((t.name, t.shape, t.ggml_type) for t in tensors), *expert_counts(desc))
    except ValueError as exc:
        raise InputError(desc.location, str(exc)) from None
