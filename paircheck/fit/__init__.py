"""Will it fit: the memory of a target and its draft at a context, as llama.cpp allocates it.

Pure functions of a model's GGUF metadata and tensor infos (``fit``, ``model_memory``);
``with_tensor_infos`` is the one reader step (local shards, or HTTP range reads of the
tensor-info section).
"""

from paircheck.fit.memory import FitOptions, ModelMemory, model_memory
from paircheck.fit.result import SCHEMA, DraftOptions, FitResult, fit
from paircheck.fit.sizes import format_size, parse_size
from paircheck.fit.tensors import with_tensor_infos

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
    "with_tensor_infos",
]
