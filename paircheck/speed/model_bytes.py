"""The weight bytes of a model, read from its complete tensor list: what ``estimate``, the
GPU prediction and the probe size."""

from __future__ import annotations

from paircheck._source.tensors import model_tensors
from paircheck.errors import InputError
from paircheck.model import ModelDescription
from paircheck.weights import WeightBytes, expert_counts, weight_bytes

# What a user can do when the weight bytes cannot be read: give ``c`` by hand, which helps
# every speed model but the one on a GPU (the roofline needs each model's shapes, not c).
GIVE_COST_RATIO = "give --cost-ratio"
ON_GPU = "a prediction on a GPU reads both models' tensor lists (without --gpu, --cost-ratio gives c by hand)"


def read_weight_bytes(desc: ModelDescription, fix: str = GIVE_COST_RATIO) -> WeightBytes:
    """Sum the weight bytes of a model's complete tensor list (every shard of a GGUF, local
    or remote, or a Hugging Face folder's safetensors headers; never the weights).

    Raises InputError when there are none to read (a vocab-only GGUF, a folder without
    weights), with ``fix``, what to do instead, appended.
    """
    try:
        tensors = model_tensors(desc)
    except InputError as exc:
        raise InputError(exc.where, f"{exc.message}; {fix}") from None
    if not tensors:
        raise InputError(desc.location, f"has no tensors (a vocab-only file?); {fix}")
    try:
        return weight_bytes(((t.name, t.shape, t.ggml_type) for t in tensors), *expert_counts(desc))
    except ValueError as exc:
        raise InputError(desc.location, str(exc)) from None
