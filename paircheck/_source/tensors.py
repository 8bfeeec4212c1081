"""A model's complete tensor list, whichever source read it: what fit and estimate size.

* a GGUF on this machine: the first shard's tensor infos (read with its metadata) and
  every other shard's, found by name as llama.cpp finds them (``gguf_file``);
* a GGUF over HTTP (a URL or a Hub file): the same, the other shards by range requests of
  their header and tensor infos (``remote``), with the Hub token for the Hub's own host;
* a Hugging Face folder, on this machine or on the Hub: its safetensors headers, named and
  typed as llama.cpp's converter would write them (``hf_tensors``, ``hub``).

Tensor data is never read. The source that described the model reads the rest of it, so
this is the one function the capabilities call, and none of them asks which source it was.
"""

from __future__ import annotations

from paircheck._source.resolve import source_named
from paircheck.errors import InputError
from paircheck.model import ModelDescription, TensorInfo


def model_tensors(desc: ModelDescription) -> list[TensorInfo]:
    """Every tensor of ``desc``'s model (all shards, or every safetensors file).

    An InputError when there is none to read (a folder without weights) or when the
    model would not load (its tensor section is cut or invalid: the list would be partial).
    A vocab-only GGUF gives an empty list; a header-only one in one file (every tensor info,
    no data: ``TensorSectionError.header_only``) its tensor infos, which are the whole list.
    """
    error = desc.metadata.tensor_error
    if error is not None:
        split = desc.metadata.get("split.count")
        if error.header_only and desc.metadata.tensors and not (isinstance(split, int) and split > 1):
            return list(desc.metadata.tensors)
        raise InputError(desc.location, f"cannot be sized: {error.message}")
    return source_named(desc.source_kind).tensors(desc)
