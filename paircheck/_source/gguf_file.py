"""Source: a local GGUF file (or any shard of a split GGUF: the metadata is in the first)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from paircheck import constants as K
from paircheck._source import split_name
from paircheck._source.gguf_reader import (
    ByteSource,
    FileSource,
    GGUFFormatError,
    read_gguf,
)
from paircheck._source.interface import ReadOptions
from paircheck._source.read_cache import Read, file_stamp
from paircheck.constants import LLAMA_TYPE_NAMES, ValueType
from paircheck.errors import InputError
from paircheck.model import (
    GGUFMetadata,
    Identity,
    LlamaVocab,
    LoadFailure,
    ModelDescription,
    Origin,
    Override,
    TensorInfo,
    TensorSectionError,
)
from paircheck.vocab import derive_llama_vocab

# Token texts and types are needed in full (types: BYTE tokens decide some load
# failures); merges and scores are only counted.
KEEP_ARRAYS = frozenset({K.TOKENS, K.TOKEN_TYPE})



def first_shard(path: Path) -> Path:
    """``name-00003-of-00005.gguf`` -> ``name-00001-of-00005.gguf`` (gguf-split naming)."""
    split = split_name.parse(path.name)
    if split is None or split.is_first:
        return path
    first = path.with_name(split.first)
    if not first.is_file():
        message = f"this is shard {split.no} of a split model; the metadata is in {first.name}, which is missing"
        raise InputError(str(path), message)
    return first


def read_model_metadata(source: ByteSource, location: str, chunk: int = 1 << 20) -> GGUFMetadata:
    """Header, key/value section and tensor infos, as llama.cpp reads them even for a
    vocab-only load; an unreadable header or kv section is the user's InputError."""
    try:
        return read_gguf(source, KEEP_ARRAYS, chunk)
    except GGUFFormatError as exc:
        raise InputError(location, str(exc)) from None


def describe_source(
    source: ByteSource,
    location: str,
    source_kind: str,
    options: ReadOptions,
    origin: Origin | None = None,
) -> ModelDescription:
    """Read metadata from any ByteSource and derive the normalized description. Without
    an ``origin``, the model is named by the source's name and nothing more is known of
    it (a pipe: read once, so nothing can read it again)."""
    meta = read_model_metadata(source, location)
    origin = origin or Origin(command_name=source.name, form="gguf")
    return description_from_metadata(meta, location, source_kind, source.name, origin, options.overrides)


def description_from_metadata(
    meta: GGUFMetadata,
    location: str,
    source_kind: str,
    resolved: str | None,
    origin: Origin,
    overrides: Mapping[str, Override] | None = None,
) -> ModelDescription:
    # A file cut inside its keys has no vocabulary to derive: the keys read so far would
    # describe a different, smaller one. Its failure is the cut itself.
    vocab = (
        derive_llama_vocab(meta, overrides)
        if meta.kv_complete
        else LlamaVocab(failure=LoadFailure("failed to read key-value pairs"))
    )
    return _description((meta, vocab, identity_from_metadata(meta)), location, source_kind, resolved, origin)


def _description(
    read: Read, location: str, source_kind: str, resolved: str | None, origin: Origin
) -> ModelDescription:
    """What was read of a file (just now, or kept in the read cache), under the name it was given by."""
    meta, vocab, identity = read
    return ModelDescription(
        location=location,
        source_kind=source_kind,
        metadata=meta,
        vocab=vocab,
        identity=identity,
        origin=origin,
        resolved_path=resolved,
        metadata_bytes=meta.kv_end,
    )


def describe_gguf_file(path_text: str, options: ReadOptions, source_kind: str = "gguf") -> ModelDescription:
    path = Path(path_text)
    if not path.exists():
        raise InputError(path_text, "no such file")
    if path.is_dir():
        raise InputError(path_text, "is a directory, expected a .gguf file")
    path = first_shard(path)
    # llama-server opens the first shard (and finds the others by name) as paircheck does.
    origin = Origin(command_name=str(path), form="gguf", server_file=str(path))
    cache = options.cache
    stamp = file_stamp(str(path)) if cache is not None else None
    kept = cache.get(stamp, options.overrides) if cache is not None and stamp is not None else None
    try:
        if kept is not None:
            desc = _description(kept, path_text, source_kind, str(path), origin)
        else:
            with open(path, "rb") as handle:
                desc = describe_source(FileSource(path, handle), path_text, source_kind, options, origin)
            # Kept only when the file did not change while it was read (a download in progress).
            if cache is not None and stamp is not None and file_stamp(str(path)) == stamp:
                cache.put(stamp, options.overrides, (desc.metadata, desc.vocab, desc.identity))
    except PermissionError:
        raise InputError(path_text, "permission denied") from None
    except IsADirectoryError:
        raise InputError(path_text, "is a directory, expected a .gguf file") from None
    except OSError as exc:
        raise InputError(path_text, f"cannot read: {exc.strerror or exc}") from None
    meta = desc.metadata
    if meta.tensor_error is None:
        meta.tensor_error, _ = read_other_shards(str(path), meta, open_local_shard)
    return desc


def open_local_shard(path: str) -> GGUFMetadata:
    """One shard's header, keys and tensor infos (checked as llama.cpp checks them)."""
    with open(path, "rb") as handle:
        return read_gguf(FileSource(path, handle))


def local_gguf_tensors(desc: ModelDescription) -> list[TensorInfo]:
    """Every tensor of a GGUF on this machine: the first shard's, read with its metadata,
    then every other shard's, found by name as llama.cpp finds them."""
    first = desc.resolved_path or desc.location
    error, others = read_other_shards(first, desc.metadata, open_local_shard)
    if error is not None:
        raise InputError(error.file, error.message)
    return [*(desc.metadata.tensors or ()), *others]


def _int_value(meta: GGUFMetadata, key: str) -> int | None:
    value = meta.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_other_shards(
    first: str, meta: GGUFMetadata, open_shard: Callable[[str], GGUFMetadata]
) -> tuple[TensorSectionError | None, list[TensorInfo]]:
    """Shards 2..N of a split model, read and checked as llama.cpp does.

    llama.cpp loads every shard of a split model, even for a vocab-only load, and checks
    each one's tensor infos and data against its own size (llama_model_loader's
    constructor, src/llama-model-loader.cpp of the pinned version). ``first`` is the first
    shard's path or URL (the others are named after it); ``open_shard`` reads one of them.
    Returns the first problem in llama.cpp's words (or None) and the tensor infos of the
    other shards read until then (none for a model in one file). The first shard was
    checked by its own read.
    """
    where = first
    found: list[TensorInfo] = []

    def refused(message: str, file: str = where) -> tuple[TensorSectionError, list[TensorInfo]]:
        return TensorSectionError(message, file, None, None), found

    def wrong_type(m: GGUFMetadata, key: str, expected: int) -> str | None:
        # llama_model_loader::get_key refuses a key stored with another type.
        vtype = m.type_of(key)
        if vtype is None or vtype == expected:
            return None
        got, want = LLAMA_TYPE_NAMES.get(vtype, vtype), LLAMA_TYPE_NAMES[expected]
        return f"key {key} has wrong type {got} but expected type {want}"

    bad = wrong_type(meta, K.SPLIT_COUNT, ValueType.UINT16)
    if bad is not None:
        return refused(bad)
    n_split = _int_value(meta, K.SPLIT_COUNT) or 0
    if n_split <= 1:
        return None, found
    bad = wrong_type(meta, K.SPLIT_NO, ValueType.UINT16)
    if bad is not None:
        return refused(bad)
    idx = _int_value(meta, K.SPLIT_NO)
    if idx is None:
        return refused(f"key not found in model: {K.SPLIT_NO}")
    if idx != 0:
        return refused(f"illegal split file idx: {idx} (file: {where}), model must be loaded with the first split")
    split = split_name.parse(first)
    if split is None or not split.is_first or split.count != n_split:
        return refused(f"invalid split file name: {where}")
    names = {t.name for t in meta.tensors or ()}
    count = len(names)
    for no, shard in enumerate(split.others(), start=1):
        try:
            shard_meta = open_shard(shard)
        except FileNotFoundError:
            return refused(f"failed to load GGUF split from {shard} (the shard is missing)", shard)
        except (OSError, GGUFFormatError):
            return refused(f"failed to load GGUF split from {shard}", shard)
        if shard_meta.tensor_error is not None:
            return shard_meta.tensor_error, found
        shard_no = _int_value(shard_meta, K.SPLIT_NO)
        if shard_no is None:
            return refused(f"missing key {K.SPLIT_NO} in GGUF split {shard}", shard)
        if shard_no != no:
            return refused(f"invalid split file idx: {shard_no} (file: {shard}), expected {no}", shard)
        for tensor in shard_meta.tensors or ():
            if tensor.name in names:
                return refused(f"invalid model: tensor '{tensor.name}' is duplicated", shard)
            names.add(tensor.name)
        found += shard_meta.tensors or ()
        count += len(shard_meta.tensors or ())
    bad = wrong_type(meta, K.SPLIT_TENSORS_COUNT, ValueType.INT32)
    if bad is not None:
        return refused(bad)
    expected = _int_value(meta, K.SPLIT_TENSORS_COUNT)
    if expected is None:
        return refused(f"key not found in model: {K.SPLIT_TENSORS_COUNT}")
    if expected != count:
        return refused(f"corrupted model: {expected} tensors expected but {count} found")
    return None, found


def _text(meta: GGUFMetadata, key: str) -> str | None:
    value: Any = meta.get(key)
    return value if isinstance(value, str) and value else None


def identity_from_metadata(meta: GGUFMetadata) -> Identity:
    bases = []
    count = meta.get(K.BASE_MODEL_COUNT)
    if isinstance(count, int):
        for i in range(min(count, 16)):
            base = _text(meta, K.BASE_MODEL_REPO_URL.format(id=i)) or _text(meta, K.BASE_MODEL_NAME.format(id=i))
            if base:
                bases.append(base)
    return Identity(
        architecture=_text(meta, K.ARCHITECTURE),
        name=_text(meta, K.NAME),
        basename=_text(meta, K.BASENAME),
        size_label=_text(meta, K.SIZE_LABEL),
        finetune=_text(meta, K.FINETUNE),
        organization=_text(meta, K.ORGANIZATION),
        repo=_text(meta, K.REPO_URL) or _text(meta, K.SOURCE_REPO_URL),
        base_models=tuple(bases),
    )



class GGUFFileSource:
    """A GGUF file on this machine (any shard of a split model)."""

    name = "gguf"

    def claims(self, spec: str) -> bool:
        path = Path(spec).expanduser()
        return path.exists() and not path.is_dir()

    def describe(self, spec: str, options: ReadOptions) -> ModelDescription:
        return describe_gguf_file(str(Path(spec).expanduser()), options)

    def tensors(self, desc: ModelDescription) -> list[TensorInfo]:
        return local_gguf_tensors(desc)
