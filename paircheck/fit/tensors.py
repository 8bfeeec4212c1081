"""The tensor infos fit sizes: the model's complete tensor list from the source axis
(``paircheck._source.tensors.model_tensors``: every shard, local or remote, or a folder's
safetensors headers), and for a Hugging Face folder the hyperparameters the converter
would write from its config.json."""

from __future__ import annotations

import dataclasses

from paircheck._source.tensors import model_tensors
from paircheck.fit.hf import hf_hparams
from paircheck.model import GGUFMetadata, ModelDescription


def hparams_metadata(desc: ModelDescription) -> GGUFMetadata:
    """The model's hyperparameters as GGUF keys: a GGUF's own; for a model read with its
    config.json, the keys llama.cpp's converter would write from it (a model type the memory
    model does not size is refused here, an InputError)."""
    config = desc.config
    if config is None:
        return desc.metadata
    return hf_hparams(config, desc.metadata, desc.location)


def with_tensor_infos(desc: ModelDescription) -> ModelDescription:
    """``desc`` with the complete tensor list in its metadata; an InputError where there is
    none to read or the model would not load. A folder's hyperparameters are in config.json,
    not in GGUF keys: they are turned into keys before any header is read."""
    meta = hparams_metadata(desc)
    tensors = model_tensors(desc)
    meta = dataclasses.replace(meta, tensors=tensors, tensor_count=len(tensors) if desc.config is not None
                               else meta.tensor_count)
    return dataclasses.replace(desc, metadata=meta)
