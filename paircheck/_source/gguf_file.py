"""Source: a local GGUF file (or any shard of a split GGUF: the metadata is in the first)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from paircheck import constants as K
from paircheck._source.gguf_reader import (
    ByteSource,
    FileSource,
    GGUFFormatError,
    read_metadata,
    read_tensor_infos,
)
from paircheck._source.interface import ReadOptions
from paircheck.errors import InputError
from paircheck.model import GGUFMetadata, Identity, ModelDescription, Override
from paircheck.vocab import derive_llama_vocab

# Token texts and types are needed in full (types: BYTE tokens decide some load
# failures); merges and scores are only counted.
KEEP_ARRAYS = frozenset({K.TOKENS, K.TOKEN_TYPE})

_SPLIT_RE = re.compile(r"^(?P<stem>.*)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")


def first_shard(path: Path) -> Path:
    """``name-00003-of-00005.gguf`` -> ``name-00001-of-00005.gguf`` (gguf-split naming)."""
    match = _SPLIT_RE.match(path.name)
    if not match or match["no"] == "00001":
        return path
    first = path.with_name(f"{match['stem']}-00001-of-{match['count']}.gguf")
    if not first.is_file():
        raise InputError(str(path), f"this is shard {int(match['no'])} of a split model; the metadata is in {first.name}, which is missing")
    return first


def read_gguf(source: ByteSource, location: str, tensor_infos: bool, chunk: int = 1 << 20) -> GGUFMetadata:
    """Header, key/value section and (when asked) tensor infos from any ByteSource."""
    try:
        meta, cursor = read_metadata(source, KEEP_ARRAYS, chunk=chunk)
        if tensor_infos:
            read_tensor_infos(meta, cursor)
    except GGUFFormatError as exc:
        raise InputError(location, str(exc)) from None
    return meta


def describe_source(
    source: ByteSource,
    location: str,
    source_kind: str,
    options: ReadOptions,
) -> ModelDescription:
    """Read metadata from any ByteSource and derive the normalized description."""
    meta = read_gguf(source, location, options.tensor_infos)
    return description_from_metadata(meta, location, source_kind, source.name, options.overrides)


def description_from_metadata(
    meta: GGUFMetadata,
    location: str,
    source_kind: str,
    resolved: str | None,
    overrides: Mapping[str, Override] | None = None,
) -> ModelDescription:
    return ModelDescription(
        location=location,
        source_kind=source_kind,
        metadata=meta,
        vocab=derive_llama_vocab(meta, overrides),
        identity=identity_from_metadata(meta),
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
    try:
        with open(path, "rb") as handle:
            return describe_source(FileSource(path, handle), path_text, source_kind, options)
    except PermissionError:
        raise InputError(path_text, "permission denied") from None
    except IsADirectoryError:
        raise InputError(path_text, "is a directory, expected a .gguf file") from None
    except OSError as exc:
        raise InputError(path_text, f"cannot read: {exc.strerror or exc}") from None


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
