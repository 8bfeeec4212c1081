"""Will it fit: the memory of a target and its draft at a context, as llama.cpp allocates it.

Pure functions of a model's GGUF metadata and tensor infos (``fit``, ``model_memory``);
``with_tensor_infos`` adds the complete tensor list, which the source axis reads
(``paircheck._source.tensors.model_tensors``: every shard, local or remote, or a folder's
safetensors headers).
"""

from paircheck.errors import InputError
from paircheck.fit.memory import FitOptions, ModelMemory, model_memory
from paircheck.fit.result import SCHEMA, DraftOptions, FitResult, fit
from paircheck.fit.tensors import with_tensor_infos
from paircheck.model import ModelDescription
from paircheck.sizes import format_size, parse_size

NO_WEIGHTS = (
    "has no tensor infos (a vocab-only or header-only file): there are no weights to size; give the model file "
    "itself"
)


def sized(desc: ModelDescription) -> ModelDescription:
    """``desc`` with the tensor infos of all its shards, for sizing; an InputError when it has
    none (a vocab-only file): memory without weights would be a figure for a model that does
    not exist, as ``estimate`` and ``scan`` also refuse it."""
    full = with_tensor_infos(desc)
    if not full.metadata.tensors:
        raise InputError(desc.location, NO_WEIGHTS)
    return full


def pair_memory(target: ModelDescription, draft: ModelDescription, ctx: int | None, vram: str | None) -> FitResult:
    """The pair check's memory figures: llama-server's defaults, at ``ctx`` (default: the
    target's training context, as llama-server's ``-c 0``)."""
    if ctx is not None and ctx <= 0:
        raise InputError("--ctx", f"must be positive, got {ctx}")
    budget = parse_size(vram) if vram is not None else None
    t, d = sized(target), sized(draft)
    if ctx is None:
        ctx = int(t.metadata.get(f"{t.metadata.get('general.architecture')}.context_length") or 4096)
    return fit(t.metadata, d.metadata, FitOptions(ctx=ctx), DraftOptions(), budget, (t.display_name, d.display_name))


__all__ = [
    "SCHEMA",
    "DraftOptions",
    "FitOptions",
    "FitResult",
    "ModelMemory",
    "fit",
    "format_size",
    "model_memory",
    "parse_size",
    "pair_memory",
    "sized",
    "with_tensor_infos",
]
