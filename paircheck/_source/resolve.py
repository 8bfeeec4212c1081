"""Pick the source for what the user typed and return its ModelDescription.

Order: an existing local path (GGUF file, any shard of a split GGUF, or a Hugging Face
folder), then an http(s) URL, then a Hub reference (``org/name``, ``org/name:Q4_K_M``,
``org/name/file.gguf``, ``hf://...``). A local path always wins over a Hub id of the
same spelling, as with transformers' ``from_pretrained``; a missing path that looks
local (``./x.gguf``, ``models/a/b.gguf`` beside an existing ``models``) is "no such
file", never a Hub lookup. A missing ``a/b/c.gguf`` is tried as a Hub file (that is a
documented form), but when that fails too the error says "no such file" first.
A path that exists but is not a regular file (a pipe such as ``<(cat D.gguf)``, a
character device) is read once, front to back, as a stream.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from paircheck._source.gguf_file import describe_gguf_file, describe_source
from paircheck.errors import InputError
from paircheck.model import ModelDescription
from paircheck.vocab import Override


def describe(spec: str, overrides: dict[str, Override] | None = None, progress: bool = False) -> ModelDescription:
    """Describe one model; ``progress`` shows a progress line on a terminal for remote reads."""
    if not spec:
        raise InputError("", "empty model argument")
    path = Path(spec).expanduser()
    if path.is_dir():
        from paircheck._source.hf_folder import describe_hf_folder, is_hf_folder

        if not is_hf_folder(path):
            raise InputError(spec, "is a directory without config.json, tokenizer.json or tokenizer.model (expected a .gguf file or a Hugging Face model folder)")
        return describe_hf_folder(path, spec, "hf-folder", overrides)
    if path.exists():
        if not path.is_file():
            return _describe_stream(path, spec, overrides)
        return describe_gguf_file(str(path), overrides)
    if spec.startswith(("http://", "https://")):
        from paircheck._source.hub import HubSettings
        from paircheck._source.remote import describe_remote_gguf

        headers = {}
        settings = HubSettings.from_env()
        if settings.token and spec.startswith(settings.endpoint + "/"):
            headers["Authorization"] = f"Bearer {settings.token}"
        return describe_remote_gguf(spec, spec, "remote-gguf", headers, progress, overrides=overrides)
    if _looks_local(spec):
        raise InputError(spec, "no such file")
    from paircheck._source.hub import describe_hub, parse_hub_spec

    ref = parse_hub_spec(spec)
    if ref is not None and ref.filename and not spec.startswith("hf://"):
        # ``a/b/c.gguf`` is a Hub file or a mistyped local path: say the local part first.
        try:
            return describe_hub(spec, ref, overrides, progress)
        except InputError as exc:
            raise InputError(spec, f"no such file (and as a Hub file in {ref.repo_id}: {exc.message})") from None
    if ref is not None and (ref.filename or not spec.lower().endswith(".gguf")):
        return describe_hub(spec, ref, overrides, progress)
    raise InputError(spec, "no such file")


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


def _describe_stream(path: Path, spec: str, overrides: dict[str, Override] | None) -> ModelDescription:
    try:
        with open(path, "rb") as handle:
            return describe_source(StreamSource(spec, handle), spec, "gguf", overrides)
    except PermissionError:
        raise InputError(spec, "permission denied") from None
    except OSError as exc:
        raise InputError(spec, f"cannot read: {exc.strerror or exc}") from None


def _looks_local(spec: str) -> bool:
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
