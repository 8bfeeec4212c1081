"""Pick the source for what the user typed and return its ModelDescription."""

from __future__ import annotations

from pathlib import Path

from paircheck._source.gguf_file import describe_gguf_file
from paircheck.errors import InputError
from paircheck.model import ModelDescription
from paircheck.vocab import Override


def describe(spec: str, overrides: dict[str, Override] | None = None) -> ModelDescription:
    """A local GGUF file (or shard). Other kinds of source plug in here."""
    if not spec:
        raise InputError("", "empty model argument")
    path = Path(spec)
    if path.is_dir():
        raise InputError(spec, "is a directory, expected a .gguf file")
    if path.exists():
        return describe_gguf_file(spec, overrides)
    raise InputError(spec, "no such file")
