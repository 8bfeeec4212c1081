"""The tensor infos fit sizes: the model's complete tensor list from the source axis
(``paircheck._source.tensors.model_tensors``: every shard, local or remote, or a folder's
safetensors headers), and for a Hugging Face folder the hyperparameters the converter
would write from its config.json."""

from __future__ import annotations

import dataclasses

from paircheck._source.tensors import model_tensors
from paircheck.fit.hf import hf_hparams
from paircheck.model import ModelDescription


def with_tensor_infos(desc: ModelDescription) -> ModelDescription:
    """``desc`` with the complete tensor list in its metadata; an InputError where there is
    none to read or the model would not load."""
    if desc.hf is None:
        meta = dataclasses.replace(desc.metadata, tensors=model_tensors(desc))
    else:
        # A folder's hyperparameters are in config.json, not in GGUF keys; a model type the
        # memory model does not size is refused before any header is read.
        config = desc.hf.extra.get("config")
        meta = hf_hparams(config if isinstance(config, dict) else {}, desc.metadata, desc.location)
        meta.tensors = model_tensors(desc)
        meta.tensor_count = len(meta.tensors)
    return dataclasses.replace(desc, metadata=meta)
