"""Write mutated copies of vocab-only GGUF files, for the differential tests.

Why not ``gguf.GGUFReader`` + ``gguf.GGUFWriter``: the reader needs 2-4 s for a small
vocab file (45 s for gemma-4), because it builds a numpy view per string; a hypothesis run
over hundreds of mutations cannot afford that. Worse, the writer only emits well-formed
metadata, while the mutations we want are exactly the malformed cases (a key retyped from
UINT32 to INT32, BOOL to UINT8, token texts with NUL bytes or invalid UTF-8).

So this module holds a tiny, self-contained GGUF metadata codec (independent of
paircheck's reader, so that a reader bug cannot hide itself by also producing the test
inputs):

* :func:`read_kvs` parses the header and the key/value section into :class:`KV` records
  that keep the **raw bytes** of every value; unmodified keys are written back
  byte-for-byte.
* :func:`rewrite_gguf` lets a callback edit that list (drop, replace, retype) and writes
  the result. Only files without tensors are supported (all of llama.cpp's
  ``ggml-vocab-*.gguf`` files have none); with zero tensors ggml's GGUF reader does not
  seek to an aligned data section, so no padding is needed.

Type numbers and names come from ``gguf.GGUFValueType`` (the vendored gguf-py constants),
so they cannot drift from the format.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gguf import GGUFValueType as VT

GGUF_MAGIC = b"GGUF"

#: struct format for each fixed-size scalar type.
_SCALAR_FMT: dict[int, str] = {
    VT.UINT8: "<B",
    VT.INT8: "<b",
    VT.UINT16: "<H",
    VT.INT16: "<h",
    VT.UINT32: "<I",
    VT.INT32: "<i",
    VT.FLOAT32: "<f",
    VT.BOOL: "<?",
    VT.UINT64: "<Q",
    VT.INT64: "<q",
    VT.FLOAT64: "<d",
}


@dataclass
class KV:
    """One metadata entry.

    ``raw`` is the encoded value (without key and type tag) exactly as in the source file.
    ``value`` is decoded lazily by :meth:`decode`; to change an entry, build a new one with
    :func:`make_kv`.
    """

    key: str
    vtype: int
    raw: bytes
    sub_type: int | None = None  # element type for ARRAY
    _decoded: Any = field(default=None, repr=False, compare=False)

    def decode(self) -> Any:
        """Decode the value: int/float/bool, ``bytes`` for STRING, a list for ARRAY
        (strings inside arrays are ``bytes`` too, so invalid UTF-8 survives)."""
        if self._decoded is None:
            self._decoded, _ = _decode_value(memoryview(self.raw), 0, self.vtype)
        return self._decoded


def _decode_value(buf: memoryview, off: int, vtype: int) -> tuple[Any, int]:
    if vtype in _SCALAR_FMT:
        fmt = _SCALAR_FMT[vtype]
        (v,) = struct.unpack_from(fmt, buf, off)
        return v, off + struct.calcsize(fmt)
    if vtype == VT.STRING:
        (n,) = struct.unpack_from("<Q", buf, off)
        off += 8
        return bytes(buf[off : off + n]), off + n
    if vtype == VT.ARRAY:
        sub, n = struct.unpack_from("<IQ", buf, off)
        off += 12
        if sub in _SCALAR_FMT:
            fmt = _SCALAR_FMT[sub]
            size = struct.calcsize(fmt)
            vals = [x[0] for x in struct.iter_unpack(fmt, buf[off : off + n * size])]
            return vals, off + n * size
        out = []
        for _ in range(n):
            v, off = _decode_value(buf, off, sub)
            out.append(v)
        return out, off
    raise ValueError(f"unknown GGUF value type {vtype}")


def _skip_value(buf: memoryview, off: int, vtype: int) -> tuple[int, int | None]:
    """Return the end offset of a value starting at ``off`` (and the array element type)."""
    if vtype in _SCALAR_FMT:
        return off + struct.calcsize(_SCALAR_FMT[vtype]), None
    if vtype == VT.STRING:
        (n,) = struct.unpack_from("<Q", buf, off)
        return off + 8 + n, None
    if vtype == VT.ARRAY:
        sub, n = struct.unpack_from("<IQ", buf, off)
        off += 12
        if sub in _SCALAR_FMT:
            return off + n * struct.calcsize(_SCALAR_FMT[sub]), sub
        if sub == VT.STRING:
            for _ in range(n):
                (ln,) = struct.unpack_from("<Q", buf, off)
                off += 8 + ln
            return off, sub
        for _ in range(n):
            off, _ = _skip_value(buf, off, sub)
        return off, sub
    raise ValueError(f"unknown GGUF value type {vtype}")


@dataclass
class GGUFMeta:
    """Header fields and the ordered key/value list of a GGUF file."""

    version: int
    n_tensors: int
    kvs: list[KV]

    def index(self, key: str) -> int | None:
        """Position of ``key`` in :attr:`kvs`, or None."""
        for i, kv in enumerate(self.kvs):
            if kv.key == key:
                return i
        return None

    def get(self, key: str) -> KV | None:
        i = self.index(key)
        return None if i is None else self.kvs[i]

    def set(self, kv: KV) -> None:
        """Replace the entry with the same key in place, or append it."""
        i = self.index(kv.key)
        if i is None:
            self.kvs.append(kv)
        else:
            self.kvs[i] = kv

    def drop(self, key: str) -> None:
        self.kvs = [kv for kv in self.kvs if kv.key != key]


def read_kvs(path: Path | str) -> GGUFMeta:
    """Parse the header and metadata of a little-endian GGUF v2/v3 file."""
    data = Path(path).read_bytes()
    buf = memoryview(data)
    if data[:4] != GGUF_MAGIC:
        raise ValueError(f"{path}: not a GGUF file")
    version, n_tensors, n_kv = struct.unpack_from("<IQQ", buf, 4)
    off = 24
    kvs: list[KV] = []
    for _ in range(n_kv):
        (klen,) = struct.unpack_from("<Q", buf, off)
        off += 8
        key = bytes(buf[off : off + klen]).decode("utf-8")
        off += klen
        (vtype,) = struct.unpack_from("<I", buf, off)
        off += 4
        end, sub = _skip_value(buf, off, vtype)
        kvs.append(KV(key, vtype, bytes(buf[off:end]), sub))
        off = end
    return GGUFMeta(version, n_tensors, kvs)


def _encode_value(value: Any, vtype: int, sub_type: int | None) -> bytes:
    if vtype in _SCALAR_FMT:
        return struct.pack(_SCALAR_FMT[vtype], value)
    if vtype == VT.STRING:
        b = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        return struct.pack("<Q", len(b)) + b
    if vtype == VT.ARRAY:
        assert sub_type is not None, "ARRAY needs a sub_type"
        if sub_type in _SCALAR_FMT:
            fmt = _SCALAR_FMT[sub_type]
            body = struct.pack("<" + fmt[1] * len(value), *value)
        else:
            body = b"".join(_encode_value(v, sub_type, None) for v in value)
        return struct.pack("<IQ", sub_type, len(value)) + body
    raise ValueError(f"unknown GGUF value type {vtype}")


def make_kv(key: str, value: Any, vtype: int, sub_type: int | None = None) -> KV:
    """Build an entry from a Python value. No range or UTF-8 validation is done on
    purpose: strings may be ``bytes`` with NULs or invalid UTF-8."""
    return KV(key, int(vtype), _encode_value(value, vtype, sub_type),
              None if sub_type is None else int(sub_type))


def write_kvs(meta: GGUFMeta, dst: Path | str) -> None:
    """Write a tensor-less GGUF file holding ``meta``."""
    if meta.n_tensors:
        raise ValueError("rewrite of files with tensors is not supported")
    parts = [GGUF_MAGIC, struct.pack("<IQQ", meta.version, 0, len(meta.kvs))]
    for kv in meta.kvs:
        kb = kv.key.encode("utf-8")
        parts.append(struct.pack("<Q", len(kb)) + kb + struct.pack("<I", kv.vtype))
        parts.append(kv.raw)
    Path(dst).write_bytes(b"".join(parts))


def rewrite_gguf(src: Path | str, dst: Path | str,
                 mutate: Callable[[GGUFMeta], None]) -> GGUFMeta:
    """Copy ``src`` to ``dst`` after letting ``mutate`` edit the metadata in place.

    Returns the mutated metadata. Entries the callback does not touch keep their original
    bytes.
    """
    meta = read_kvs(src)
    mutate(meta)
    write_kvs(meta, dst)
    return meta


def token_texts(meta: GGUFMeta) -> list[bytes]:
    """The raw ``tokenizer.ggml.tokens`` strings (empty list when absent)."""
    kv = meta.get("tokenizer.ggml.tokens")
    return [] if kv is None else list(kv.decode())


def set_tokens(meta: GGUFMeta, texts: Sequence[bytes],
               resize_parallel: bool = True) -> None:
    """Replace the token list. With ``resize_parallel`` the ``scores`` and ``token_type``
    arrays are cut/extended to the same length (0.0 / type 1 NORMAL), so that a length
    change only tests the size rule and not the loader's "array too short" error."""
    meta.set(make_kv("tokenizer.ggml.tokens", list(texts), VT.ARRAY, VT.STRING))
    if not resize_parallel:
        return
    n = len(texts)
    for key, fill in (("tokenizer.ggml.scores", 0.0), ("tokenizer.ggml.token_type", 1)):
        kv = meta.get(key)
        if kv is None or kv.vtype != VT.ARRAY or kv.sub_type not in _SCALAR_FMT:
            continue
        vals = list(kv.decode())
        vals = vals[:n] + [type(vals[0])(fill) if vals else fill] * max(0, n - len(vals))
        meta.set(make_kv(key, vals, VT.ARRAY, kv.sub_type))


# --------------------------------------------------------------------------------------
# Files with tensors: a real vocabulary's key/value section, then tensor infos and data
# laid out as gguf_write_to_file does (infos, padding to the alignment, each tensor's
# data padded to the alignment). Every field is written as given, so a mutation can put
# any value in it (a negative dimension, an unknown type, a wrong offset).
# --------------------------------------------------------------------------------------

@dataclass
class TensorSpec:
    """One tensor info. ``dims`` are written as int64 (fastest first, as GGUF stores
    them); ``n_dims`` overrides the dimension count written; ``offset`` None means the
    offset a writer would give it."""

    name: bytes
    dims: list[int]
    ggml_type: int = 0  # F32
    offset: int | None = None
    n_dims: int | None = None


#: Tensors larger than this get no data in a built file (their size and offsets are still
#: declared): mutations with huge dimensions must not write gigabytes.
MAX_WRITTEN = 16 << 20


def tensor_nbytes(spec: TensorSpec) -> int | None:
    """Bytes of a tensor's data (block and type size from gguf-py, independent of
    paircheck's table), or None for a type gguf-py does not know or negative dims."""
    from gguf import GGML_QUANT_SIZES

    known = {int(k): v for k, v in GGML_QUANT_SIZES.items()}
    if spec.ggml_type not in known or any(d < 0 for d in spec.dims):
        return None
    blck, size = known[spec.ggml_type]
    n = 1
    for d in spec.dims:
        n *= d
    return n // blck * size


def _pad(n: int, alignment: int) -> int:
    return (n + alignment - 1) // alignment * alignment


@dataclass
class Layout:
    """Where things are in a built file, for mutations that cut or patch it."""

    data: bytes
    infos_start: int
    info_offsets: list[int]  # where each tensor info starts
    data_start: int
    tensor_ends: list[int]  # absolute end of each tensor's data (without padding)


def build_with_tensors(meta: GGUFMeta, tensors: Sequence[TensorSpec], alignment: int = 32,
                       n_tensors: int | None = None, max_written: int = MAX_WRITTEN) -> Layout:
    """A GGUF holding ``meta``'s key/value entries and ``tensors`` (data: a byte pattern)."""
    head = [GGUF_MAGIC, struct.pack("<IQQ", meta.version, len(tensors) if n_tensors is None else n_tensors,
                                    len(meta.kvs))]
    for kv in meta.kvs:
        kb = kv.key.encode("utf-8")
        head.append(struct.pack("<Q", len(kb)) + kb + struct.pack("<I", kv.vtype) + kv.raw)
    out = bytearray(b"".join(head))
    infos_start = len(out)
    info_offsets = []
    offset = 0
    sizes = []
    for spec in tensors:
        nbytes = tensor_nbytes(spec) or 0
        sizes.append(nbytes)
        info_offsets.append(len(out))
        dims = spec.dims
        out += struct.pack("<Q", len(spec.name)) + spec.name
        out += struct.pack("<I", len(dims) if spec.n_dims is None else spec.n_dims)
        out += b"".join(struct.pack("<Q", d & ((1 << 64) - 1)) for d in dims)
        out += struct.pack("<i", spec.ggml_type)
        out += struct.pack("<Q", (offset if spec.offset is None else spec.offset) & ((1 << 64) - 1))
        offset += _pad(nbytes, alignment)
    data_start = _pad(len(out), alignment) if tensors else len(out)
    out += b"\0" * (data_start - len(out))
    ends = []
    for i, nbytes in enumerate(sizes):
        if nbytes > max_written:
            # Declared, not written: the file is cut from here on, as a partial download.
            ends.append(len(out) + nbytes)
            continue
        out += bytes([(i + 1) & 0xFF]) * nbytes
        ends.append(len(out))
        out += b"\0" * (_pad(nbytes, alignment) - nbytes)
    return Layout(bytes(out), infos_start, info_offsets, data_start, ends)
