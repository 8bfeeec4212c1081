"""What was read of a local GGUF, kept so that the next look at the same file reads none of it.

A launch script's pre-flight check reads the same two files at every launch; parsing their
vocabularies (two arrays of 150k-260k strings, walked one length prefix at a time) is most of
what a check costs. An entry holds exactly what ``gguf_file`` builds from the file: its parsed
metadata, the vocabulary derived from it for one set of ``--override-kv`` values, and its
identity. Nothing that depends on how the user named the file is kept.

The key is the file's real path and its stat: device, inode, size, modification and change
time in nanoseconds. Writing, replacing or touching a file moves its change time (which no
user call sets back), so an entry is never used for other bytes; a file changed in the last
two seconds is not kept at all, as a rewrite within one tick of the filesystem's clock could
leave every part of the stamp as it was. paircheck's version and ``FORMAT`` are in the key too.

Stored with marshal: data only, so loading an entry runs no code, and it loads a vocabulary
in a few milliseconds (JSON takes longer than parsing the GGUF). A header with a CRC32 of the
payload comes first: a damaged, truncated or foreign entry is a miss, never an error.
Bounded: at most ``MAX_ENTRIES`` files and ``MAX_BYTES`` in all, the least recently used
dropped. A folder that cannot be written is not an error either: nothing is kept.
"""

from __future__ import annotations

import marshal
import os
import struct
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass, replace
from pathlib import Path
from typing import Any

from paircheck import constants as K
from paircheck.atomic import write_bytes_atomic
from paircheck.model import (
    GGUFArray,
    GGUFMetadata,
    Identity,
    LlamaVocab,
    LoadFailure,
    Override,
    TensorInfo,
    TensorSectionError,
)
from paircheck.version import __version__

# 1: metadata, vocabulary (its texts kept once when they are the tokens) and identity of
# paircheck 0.1.0's model classes. 2: TensorSectionError gained header_only.
FORMAT = 2
MAGIC = b"PCREAD\x00\x01"
_HEADER = struct.Struct("<8sIQ")  # magic, CRC32 of the payload, payload length
MAX_ENTRIES = 64
MAX_BYTES = 256 << 20
SETTLE_NS = 2_000_000_000
SUFFIX = ".pcread"

# The only classes an entry may name: anything else makes the entry a miss.
_CLASSES: dict[str, type] = {
    cls.__name__: cls
    for cls in (GGUFArray, GGUFMetadata, Identity, LlamaVocab, LoadFailure, TensorInfo, TensorSectionError)
}
_PLAIN = frozenset({int, float, str, bytes, bool, type(None)})
_CONTAINERS: dict[type, str] = {list: "list", tuple: "tuple", frozenset: "frozenset"}
_MAKE: dict[str, Any] = {"list": list, "tuple": tuple, "frozenset": frozenset}

Stamp = tuple[str, int, int, int, int, int]  # real path, device, inode, size, mtime_ns, ctime_ns
Read = tuple[GGUFMetadata, LlamaVocab, Identity]


class _Unusable(Exception):
    """An entry that is not what this version wrote, or a value an entry cannot hold.

    Always caught inside the cache (a miss, or nothing kept) and never shown, so it carries
    no message."""


def file_stamp(path: str) -> Stamp | None:
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except OSError:
        return None
    return real, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


@dataclass
class ReadCache:
    """The entries in one folder (``cache_home(env) / "read"``), and what one run found there."""

    folder: Path
    max_entries: int = MAX_ENTRIES
    max_bytes: int = MAX_BYTES
    # A file changed less than this long ago is not kept. Filesystems stamp times at a clock
    # tick (a few ms; FAT: 2 s), so a same-size rewrite within the tick would keep every part
    # of the stamp: the racy case git's index also refuses to trust.
    settle_ns: int = SETTLE_NS
    hits: int = 0
    misses: int = 0

    def get(self, stamp: Stamp, overrides: Mapping[str, Override]) -> Read | None:
        found = self._load(stamp, overrides)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def _load(self, stamp: Stamp, overrides: Mapping[str, Override]) -> Read | None:
        key = _key(stamp, overrides)
        path = self._entry(key)
        try:
            with open(path, "rb") as handle:
                head = handle.read(_HEADER.size)
                if len(head) != _HEADER.size:
                    return None
                magic, crc, length = _HEADER.unpack(head)
                if magic != MAGIC or length > self.max_bytes:
                    return None
                payload = handle.read(length + 1)
            if len(payload) != length or zlib.crc32(payload) != crc:
                return None
            stored_key, meta, vocab, identity, shared = marshal.loads(payload)
            if stored_key != key:
                return None  # a hash collision of two keys: as good as absent
            found = (_decode(meta), _decode(vocab), _decode(identity))
            if not (isinstance(found[0], GGUFMetadata) and isinstance(found[1], LlamaVocab)
                    and isinstance(found[2], Identity)):
                return None
            if shared is not None:
                tokens = _tokens(found[0])
                if tokens is None or type(shared) is not int or not 0 <= shared <= len(tokens):
                    return None
                found[1].texts = tokens[:shared]
            os.utime(path)  # the "recently used" of the bound
        except (OSError, EOFError, ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError,
                _Unusable):
            return None  # not what this version wrote: a miss, and the file is read
        return found

    def put(self, stamp: Stamp, overrides: Mapping[str, Override], read: Read) -> None:
        if time.time_ns() - max(stamp[4], stamp[5]) < self.settle_ns:
            return
        key = _key(stamp, overrides)
        meta, vocab, identity = read
        # The token texts are nearly always the stored tokens themselves (a text is changed
        # only when it holds a NUL or is empty): then they are kept once, as the tokens.
        tokens, texts, shared = _tokens(meta), vocab.texts, None
        if tokens is not None and len(texts) <= len(tokens) and texts == tokens[: len(texts)]:
            vocab, shared = replace(vocab, texts=[]), len(texts)
        try:
            # Version 2 (no shared references): with the texts kept once, the fastest to
            # write and to load.
            payload = marshal.dumps((key, _encode(meta), _encode(vocab), _encode(identity), shared), 2)
        except (_Unusable, ValueError):
            return  # something marshal cannot hold: not kept
        if len(payload) > self.max_bytes:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            header = _HEADER.pack(MAGIC, zlib.crc32(payload), len(payload))
            write_bytes_atomic(self._entry(key), (header, payload), 0o600)  # a reader sees all or nothing
            self._bound()
        except OSError:
            pass

    def _entry(self, key: str) -> Path:
        # The name only spreads the entries: the key inside decides (see ``get``). The key is a
        # repr(), which escapes the lone surrogates of a file name that is not UTF-8: it always encodes.
        raw = key.encode()
        return self.folder / f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}{SUFFIX}"

    def _bound(self) -> None:
        entries = []
        for entry in os.scandir(self.folder):
            if entry.name.endswith(SUFFIX):
                try:
                    st = entry.stat()
                except OSError:
                    continue
                entries.append((st.st_mtime_ns, st.st_size, entry.path))
        entries.sort(reverse=True)  # most recently used first
        total = 0
        for index, (_, size, path) in enumerate(entries):
            total += size
            if index >= self.max_entries or total > self.max_bytes:
                try:
                    os.unlink(path)
                except OSError:
                    pass


def _tokens(meta: GGUFMetadata) -> list[bytes] | None:
    entry = meta.kv.get(K.TOKENS)
    if entry is None or not isinstance(entry[1], GGUFArray) or not isinstance(entry[1].values, list):
        return None
    return entry[1].values


def _key(stamp: Stamp, overrides: Mapping[str, Override]) -> str:
    return repr((FORMAT, __version__, stamp, sorted(overrides.items())))


def _encode(value: Any) -> Any:
    """Plain values as they are; everything else as a tagged tuple marshal can hold.

    A container of plain values (a token list) is kept whole, so writing and loading it costs
    marshal's time alone; only containers of dataclasses (tensor infos, nested arrays) are walked.
    """
    kind = type(value)
    if kind in _PLAIN:
        return value
    container = _CONTAINERS.get(kind)
    if container is not None:
        # A tuple is judged by all its items (a kv entry is (type, value)); a list or set by its
        # first, as each holds one kind here: were a later item not plain, marshal.dumps would
        # refuse it (ValueError) and nothing would be kept.
        items = value if kind is tuple else value[:1] if kind is list else list(value)[:1]
        if set(map(type, items)) <= _PLAIN:
            return ("F", value)
        return ("C", container, [_encode(item) for item in value])
    if kind is dict:
        return ("M", [(_encode(k), _encode(v)) for k, v in value.items()])
    if is_dataclass(value) and _CLASSES.get(kind.__name__) is kind:
        return ("D", kind.__name__, [_encode(getattr(value, f.name)) for f in fields(value)])
    raise _Unusable


def _decode(value: Any) -> Any:
    if type(value) is not tuple:
        if type(value) not in _PLAIN:
            raise _Unusable
        return value
    tag = value[0]
    if tag == "F":
        if type(value[1]) not in _CONTAINERS:
            raise _Unusable
        return value[1]
    if tag == "C":
        return _MAKE[value[1]](_decode(item) for item in value[2])
    if tag == "M":
        return {_decode(k): _decode(v) for k, v in value[1]}
    if tag == "D":
        return _CLASSES[value[1]](*(_decode(item) for item in value[2]))
    raise _Unusable
