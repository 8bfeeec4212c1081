"""Pick the source for what the user typed and return its ModelDescription.

Order: an existing local folder (Hugging Face model folder) or file (GGUF, any shard of
a split GGUF), then an http(s) URL, then a Hub reference (``org/name``,
``org/name:Q4_K_M``, ``org/name/file.gguf``, ``hf://...``). A local path always wins over
a Hub id of the same spelling, as with transformers' ``from_pretrained``; a missing path
that looks local (``./x.gguf``, ``models/a/b.gguf`` beside an existing ``models``) is "no
such file", never a Hub lookup. A missing ``a/b/c.gguf`` is tried as a Hub file (that is
a documented form), but when that fails too the error says "no such file" first.
A path that exists but is not a regular file (a pipe such as ``<(cat D.gguf)``, a
character device) is read once, front to back, as a stream.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import BinaryIO

from paircheck._source.gguf_file import describe_source
from paircheck._source.interface import ReadOptions, Source
from paircheck.errors import InputError
from paircheck.model import ModelDescription

# Every source by the name it gives its descriptions (``source_kind``), in the order they
# are asked whether they claim a spec: its module, its class, and whether it claims only
# paths that exist here. A module is imported when its turn comes, so a local GGUF never
# loads the folder, HTTP or Hub code, and a URL never loads the folder code. A file and a
# folder exclude each other, so the GGUF source is asked first.
SOURCES: tuple[tuple[str, str, str, bool], ...] = (
    ("gguf", "paircheck._source.gguf_file", "GGUFFileSource", True),
    ("hf-folder", "paircheck._source.hf_folder", "HFFolderSource", True),
    ("remote-gguf", "paircheck._source.remote", "HTTPSource", False),
    ("hub", "paircheck._source.hub", "HubSource", False),
)


def source_named(name: str) -> Source:
    """The source whose descriptions have ``source_kind == name`` (imported on demand)."""
    for known, module, cls, _ in SOURCES:
        if known == name:
            found: Source = getattr(importlib.import_module(module), cls)()
            return found
    raise KeyError(name)


def describe(spec: str, options: ReadOptions | None = None) -> ModelDescription:
    """Describe one model from whichever source claims ``spec``."""
    if not spec:
        raise InputError("", "empty model argument")
    options = options or ReadOptions()
    path = Path(spec).expanduser()
    if path.exists() and not path.is_file() and not path.is_dir():
        return _describe_stream(path, spec, options)
    exists = path.exists()
    for name, _, _, local in SOURCES:
        if local and not exists:
            continue
        if name == "hub" and looks_local(spec):
            break
        candidate = source_named(name)
        if candidate.claims(spec):
            if name == "hub" and _maybe_mistyped_path(spec):
                # ``a/b/c.gguf`` is a Hub file or a mistyped local path: say the local part first.
                try:
                    return candidate.describe(spec, options)
                except InputError as exc:
                    repo = "/".join(spec.split("/")[:2])
                    raise InputError(spec, f"no such file (and as a Hub file in {repo}: {exc.message})") from None
            return candidate.describe(spec, options)
    raise InputError(spec, "no such file" + _close_names(path))


def _close_names(path: Path) -> str:
    """The files beside a missing one whose names are close (a quant tag mistyped: q4_k for
    q4_k_m), as the end of the error: ``" (close: a.gguf, b.gguf)"``, or nothing."""
    import difflib

    try:
        folder = path.parent if str(path.parent) else Path(".")
        names = [p.name for p in folder.iterdir() if p.is_file()] if folder.is_dir() else []
    except OSError:
        return ""
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.75)
    return f" (close: {', '.join(str(folder / n) if str(path.parent) != '.' else n for n in close)})" if close else ""


def _maybe_mistyped_path(spec: str) -> bool:
    return not spec.startswith("hf://") and spec.lower().endswith(".gguf") and spec.count("/") >= 2


class StreamSource:
    """A pipe or other non-seekable file as a ByteSource: read once, front to back."""

    def __init__(self, name: str, handle: BinaryIO) -> None:
        self.name = name
        self._handle = handle
        self._pos = 0

    @property
    def size(self) -> int | None:
        return None  # unknown: the reader checks every count against bytes that really arrive

    def read_at(self, offset: int, length: int) -> bytes:
        if offset < self._pos:
            raise InputError(self.name, "a pipe can be read only once, front to back")
        while self._pos < offset:  # skipped bytes (never in practice: the reader reads on)
            skipped = self._handle.read(min(offset - self._pos, 1 << 20))
            if not skipped:
                return b""
            self._pos += len(skipped)
        # In pieces: read(n) allocates n bytes up front, and n comes from a header the
        # size of the input cannot check (a hostile pipe claims a 2^63-byte string).
        parts: list[bytes] = []
        have = 0
        while have < length:
            piece = self._handle.read(min(length - have, 1 << 20))
            if not piece:
                break
            parts.append(piece)
            have += len(piece)
        self._pos += have
        return b"".join(parts)


def _describe_stream(path: Path, spec: str, options: ReadOptions) -> ModelDescription:
    try:
        with open(path, "rb") as handle:
            return describe_source(StreamSource(spec, handle), spec, "gguf", options)
    except PermissionError:
        raise InputError(spec, "permission denied") from None
    except OSError as exc:
        raise InputError(spec, f"cannot read: {exc.strerror or exc}") from None


def looks_local(spec: str) -> bool:
    """A missing path the user meant as local, so the error is "no such file", not a Hub one.

    Local: starts with ``.``, ``/`` or ``~``, has a backslash or a drive letter, or a
    leading part of a longer path exists here (``models/a/b.gguf`` beside a ``models``
    folder). A ``.gguf`` needs ``org/name/file.gguf`` (3+ parts) to be a Hub file.
    ``hf://`` is always the Hub.
    """
    if spec.startswith("hf://"):
        return False
    if spec.startswith((".", "/", "~")) or "\\" in spec or (spec[:1].isalpha() and spec[1:3] in (":/", ":\\")):
        return True
    parts = [p for p in spec.split("/") if p]
    if spec.lower().endswith(".gguf") and len(parts) <= 2:
        return True
    # A bare ``org/name`` stays a repo id even beside an ``org`` folder.
    return (len(parts) > 2 or spec.lower().endswith(".gguf")) and Path(parts[0]).expanduser().exists()
