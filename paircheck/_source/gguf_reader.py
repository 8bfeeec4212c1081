"""A streaming GGUF metadata reader that stops at the end of the metadata.

``gguf.GGUFReader`` maps every field of the file into numpy objects, which takes seconds
on a 150k-token vocabulary. paircheck only needs the header and the key/value section,
so this reader walks them once, sequentially, from any ``ByteSource`` (a local file, an
HTTP range reader, a stream), and never touches tensor data.

Hostile input is expected: every count and length is checked against the bytes that
can still exist before anything is allocated or looped over, and what is held in memory
grows only with the bytes actually read.

Layout (GGUF v2 and v3 share it; v1 used 32-bit counts and is not supported, as in
llama.cpp): magic "GGUF", uint32 version, uint64 tensor count, uint64 kv count, then
kv pairs (string key, uint32 type, value), then tensor infos. The byte order of the
whole file is that of the version field: a big-endian file stores 3 as 00 00 00 03.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

from paircheck import constants as K
from paircheck.constants import GGML_TYPE_COUNT, GGML_TYPES, SCALAR_FORMATS, ValueType
from paircheck.model import GGUFArray, GGUFMetadata, TensorInfo, TensorSectionError

GGUF_MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
# Arrays nested deeper than this are refused: real files nest at most once, and a
# hostile file could otherwise recurse without bound.
MAX_ARRAY_DEPTH = 8
# Arrays with more elements than this are not materialized unless asked for; their
# type and count are kept. Scores, token types and merges are only counted.
DEFAULT_KEEP_LIMIT = 1024
MIN_TENSOR_INFO_BYTES = 8 + 4 + 4 + 8  # name length, n_dims, type, offset
# Past this, a count or length that the rest of the file cannot hold is garbage rather
# than the sign of a cut download (key/value sections are megabytes at most).
MAX_PLAUSIBLE_CLAIM = 1 << 40


class GGUFFormatError(Exception):
    """The bytes are not a readable GGUF file (not a model-level problem)."""


class GGUFTruncated(GGUFFormatError):
    """The file ends before what its own header declares (a cut file)."""


# llama.cpp's own limits (ggml/src/gguf.cpp of the pinned llama.cpp): a string or an array
# longer than this is refused whatever the file's size, so no complete file has one.
GGUF_MAX_STRING_LENGTH = 1 << 30
GGUF_MAX_ARRAY_ELEMENTS = 1 << 30


class GGUFCorrupt(GGUFFormatError):
    """A length no GGUF file can hold (past llama.cpp's limits): damage, not a cut download."""

    def __init__(self, what: str, said: str, offset: int) -> None:
        super().__init__(
            f"corrupt file: {what} at offset {offset} claims {said}; no complete GGUF holds that (a cut "
            "download does not produce it), so the file is damaged or is not a model"
        )


class ByteSource(Protocol):
    """Where the bytes come from.

    ``read_at`` is called with offsets that only grow, each one where the previous read
    ended, so a forward-only stream can implement it. It returns at most ``length``
    bytes and fewer only at the end of the data.
    """

    name: str

    @property
    def size(self) -> int | None:  # total bytes if known
        ...

    def read_at(self, offset: int, length: int) -> bytes: ...


class FileSource:
    """A local file as a ByteSource."""

    def __init__(self, path: str | os.PathLike[str], handle: BinaryIO) -> None:
        self.name = os.fspath(path)
        self._handle = handle
        self._size = os.fstat(handle.fileno()).st_size

    @property
    def size(self) -> int | None:
        return self._size

    def read_at(self, offset: int, length: int) -> bytes:
        self._handle.seek(offset)
        return self._handle.read(length)


class _Cursor:
    """Sequential access to a ByteSource through a small sliding buffer."""

    def __init__(self, source: ByteSource, chunk: int) -> None:
        self.source = source
        self.chunk = chunk
        self.buf = b""
        self.buf_start = 0  # absolute offset of buf[0]
        self.pos = 0  # absolute offset of the next byte to parse
        self.total = source.size

    def remaining(self) -> int | None:
        return None if self.total is None else self.total - self.pos

    def check_room(self, needed: int, what: str) -> None:
        """Fail at once when ``needed`` bytes cannot exist in the rest of the file."""
        left = self.remaining()
        if left is not None and needed > left:
            # A claim no real file makes (more than a terabyte of keys) is corruption, not a cut.
            error = GGUFTruncated if needed <= MAX_PLAUSIBLE_CLAIM else GGUFFormatError
            raise error(
                f"{what} needs at least {needed} bytes at offset {self.pos} "
                f"but the file has only {left} left (truncated or corrupt)"
            )

    def ensure(self, n: int, what: str) -> int:
        """Make ``n`` bytes from ``pos`` available; return their index in ``buf``."""
        rel = self.pos - self.buf_start
        if rel + n <= len(self.buf):
            return rel
        self.check_room(n, what)
        # Keep only the unparsed tail, then read chunk by chunk: memory grows with the
        # bytes that really arrive, not with what a header claims.
        parts = [self.buf[rel:]]
        have = len(parts[0])
        end = self.buf_start + len(self.buf)
        while have < n:
            want = max(n - have, self.chunk)
            data = self.source.read_at(end, want)
            if not data:
                # Keep what did arrive: the magic check names a truncated "GGU" from it.
                self.buf, self.buf_start = b"".join(parts), self.pos
                raise GGUFTruncated(
                    f"file ends at byte {end} while reading {what} (truncated)"
                )
            parts.append(data)
            have += len(data)
            end += len(data)
        self.buf = b"".join(parts)
        self.buf_start = self.pos
        return 0

    def unpack(self, fmt: str, size: int, what: str) -> Any:
        i = self.ensure(size, what)
        self.pos += size
        return struct.unpack_from(fmt, self.buf, i)[0]

    def take(self, n: int, what: str) -> bytes:
        i = self.ensure(n, what)
        self.pos += n
        return self.buf[i : i + n]


@dataclass
class _Reader:
    cur: _Cursor
    bo: str
    keep: Callable[[str, int], bool]

    def u32(self, what: str) -> int:
        return self.cur.unpack(self.bo + "I", 4, what)

    def u64(self, what: str) -> int:
        return self.cur.unpack(self.bo + "Q", 8, what)

    def string(self, what: str) -> bytes:
        n = self.u64(f"length of {what}")
        self.check_length(n, what)
        self.cur.check_room(n, what)
        return self.cur.take(n, what)

    def check_length(self, n: int, what: str) -> None:
        """llama.cpp's gguf_reader: 'string length N exceeds maximum 1073741824'."""
        if n > GGUF_MAX_STRING_LENGTH:
            said = f"a string of {n:,} bytes (llama.cpp: string length {n} exceeds maximum {GGUF_MAX_STRING_LENGTH})"
            raise GGUFCorrupt(what, said, self.cur.pos - 8)

    def value(self, vtype: int, key: str, depth: int = 0) -> Any:
        fmt = SCALAR_FORMATS.get(vtype)
        if fmt is not None:
            return self.cur.unpack(self.bo + fmt[0], fmt[1], f"value of {key}")
        if vtype == ValueType.STRING:
            return _decode_value(self.string(f"value of {key}"))
        if vtype == ValueType.ARRAY:
            return self.array(key, depth)
        raise GGUFFormatError(f"key {key!r} has unknown value type {vtype}")

    def array(self, key: str, depth: int) -> GGUFArray:
        if depth >= MAX_ARRAY_DEPTH:
            raise GGUFFormatError(f"key {key!r}: arrays nested more than {MAX_ARRAY_DEPTH} deep")
        elem_type = self.u32(f"array type of {key}")
        count = self.u64(f"array length of {key}")
        if count > GGUF_MAX_ARRAY_ELEMENTS:
            kind = {int(ValueType.STRING): "strings", int(ValueType.ARRAY): "arrays"}.get(elem_type, "elements")
            said = f"{count:,} {kind} (llama.cpp reads at most {GGUF_MAX_ARRAY_ELEMENTS:,} elements)"
            raise GGUFCorrupt(f"array {key!r}", said, self.cur.pos - 8)
        fmt = SCALAR_FORMATS.get(elem_type)
        if fmt is not None:
            size = count * fmt[1]
            self.cur.check_room(size, f"array {key!r} of {count} elements")
            keep = self.keep(key, count)
            if not keep:
                head = self.cur.take(min(size, 16), f"array {key!r}")
                self._skip(size - len(head), key)
                return GGUFArray(elem_type, count, None, head)
            raw = self.cur.take(size, f"array {key!r}")
            return GGUFArray(elem_type, count, list(struct.unpack(f"{self.bo}{count}{fmt[0]}", raw)))
        if elem_type == ValueType.STRING:
            self.cur.check_room(8 * count, f"array {key!r} of {count} strings")
            return GGUFArray(elem_type, count, self._strings(key, count, self.keep(key, count)))
        if elem_type == ValueType.ARRAY:
            # Each nested array has a type and a count: at least 12 bytes.
            self.cur.check_room(12 * count, f"array {key!r} of {count} arrays")
            items = [self.array(key, depth + 1) for _ in range(count)]
            return GGUFArray(elem_type, count, items)
        raise GGUFFormatError(f"key {key!r}: array of unknown value type {elem_type}")

    def _skip(self, n: int, key: str) -> None:
        # Read through rather than seek: sources are forward-only streams.
        cur = self.cur
        while n > 0:
            step = min(n, cur.chunk)
            cur.ensure(step, f"array {key!r}")
            cur.pos += step
            n -= step

    def _strings(self, key: str, count: int, keep: bool) -> list[bytes] | None:
        """Read ``count`` strings: the hot loop of the whole program (tokens, merges).

        Strings that lie wholly inside the buffer go through a tight loop with no
        method calls but one unpack; a string that crosses the buffer's end takes the
        slow, checked path, then the tight loop resumes on the refilled buffer.
        """
        cur = self.cur
        unpack = struct.Struct(self.bo + "Q").unpack_from
        out: list[bytes] | None = [] if keep else None
        what = f"array {key!r}"
        k = 0
        while k < count:
            buf = cur.buf
            i = cur.pos - cur.buf_start
            end = len(buf)
            # unpack raises struct.error when fewer than 8 bytes are left: cheaper than
            # testing for it on every string (try costs nothing in CPython 3.11+).
            try:
                if out is not None:
                    append = out.append
                    # The loop variable is the resume index on purpose: after a break or
                    # a struct.error it says which string the slow path reads next.
                    for k in range(k, count):  # noqa: B007, B020
                        stop = i + 8 + unpack(buf, i)[0]
                        if stop > end:
                            break
                        append(buf[i + 8 : stop])
                        i = stop
                    else:
                        k = count
                else:
                    for k in range(k, count):  # noqa: B007, B020 (as above)
                        stop = i + 8 + unpack(buf, i)[0]
                        if stop > end:
                            break
                        i = stop
                    else:
                        k = count
            except struct.error:
                pass  # the next length straddles the buffer's end: slow path below
            cur.pos = cur.buf_start + i
            if k >= count:
                break
            n = self.u64(f"length of a string in {what}")
            self.check_length(n, f"a string in {what}")
            cur.check_room(n, f"a string in {what}")
            if out is not None:
                out.append(cur.take(n, what))
            else:
                self._skip(n, key)
            k += 1
        return out


def _decode_value(raw: bytes) -> str:
    # A string value with invalid UTF-8 is still data (llama.cpp keeps the bytes);
    # surrogateescape keeps it round-trippable.
    return raw.decode("utf-8", errors="surrogateescape")


def _default_keep(always: frozenset[str]) -> Callable[[str, int], bool]:
    def keep(key: str, count: int) -> bool:
        return key in always or count <= DEFAULT_KEEP_LIMIT

    return keep


def read_metadata(
    source: ByteSource,
    keep_arrays: frozenset[str] = frozenset(),
    chunk: int = 1 << 20,
) -> tuple[GGUFMetadata, _Cursor]:
    """Parse header and key/value section; return them and the cursor after them.

    Arrays named in ``keep_arrays`` are materialized whatever their length; other
    arrays longer than DEFAULT_KEEP_LIMIT are only counted. Raises GGUFFormatError.
    """
    cur = _Cursor(source, chunk)
    try:
        cur.ensure(4 if cur.total is None else min(4, cur.total), "the magic number")
    except GGUFFormatError:
        pass  # shorter than a magic number: reported just below
    if cur.buf[:4] != GGUF_MAGIC:
        raise GGUFFormatError(_not_gguf_message(cur.buf[:64]))
    cur.pos = 4
    raw_version = cur.take(4, "the version")
    le, be = struct.unpack("<I", raw_version)[0], struct.unpack(">I", raw_version)[0]
    if le in SUPPORTED_VERSIONS:
        bo, version = "<", le
    elif be in SUPPORTED_VERSIONS:
        bo, version = ">", be
    elif le == 1 or be == 1:
        raise GGUFFormatError("GGUF version 1 is not supported by llama.cpp; reconvert the model")
    else:
        raise GGUFFormatError(f"unknown GGUF version {le} (supported: 2, 3)")
    reader = _Reader(cur, bo, _default_keep(keep_arrays))
    tensor_count = reader.u64("the tensor count")
    kv_count = reader.u64("the key/value count")
    kv: dict[str, tuple[int, Any]] = {}
    duplicates: list[str] = []
    try:
        _read_kv(reader, cur, kv_count, kv, duplicates)
    except GGUFTruncated:
        # The header (magic, version, counts) describes the file: a cut inside the keys is
        # llama.cpp's "failed to read key-value pairs", an interrupted download, not
        # unreadable input. The keys read before the cut are dropped: no rule of any engine
        # may judge a model by half of its metadata (a vocab_size read, the tokens not).
        meta = GGUFMetadata(
            version=version, byte_order=bo, tensor_count=tensor_count, kv={}, kv_end=cur.pos,
            duplicate_keys=duplicates, file_size=cur.total, kv_complete=False,
        )
        end = cur.total if cur.total is not None else cur.buf_start + len(cur.buf)
        meta.tensor_error = TensorSectionError(
            "failed to read key-value pairs", source.name, end, None, incomplete=True,
            reason=f"the file ends inside its metadata at {end:,} bytes: the download was probably interrupted",
        )
        return meta, cur
    meta = GGUFMetadata(
        version=version,
        byte_order=bo,
        tensor_count=tensor_count,
        kv=kv,
        kv_end=cur.pos,
        duplicate_keys=duplicates,
    )
    return meta, cur


def _read_kv(
    reader: _Reader, cur: _Cursor, kv_count: int, kv: dict[str, tuple[int, Any]], duplicates: list[str]
) -> None:
    # Each key/value pair takes at least 8 (key length) + 4 (type) + 1 bytes. A file that
    # cannot hold them is read as far as it goes all the same: a length past llama.cpp's
    # limits in what is there means a damaged file, not a cut one (GGUFCorrupt).
    try:
        cur.check_room(13 * kv_count, f"{kv_count} key/value pair{'' if kv_count == 1 else 's'}")
    except GGUFTruncated:
        pass  # the loop below reaches the cut, or a corrupt length before it
    for index in range(kv_count):
        raw_key = reader.string(f"key #{index}")
        try:
            key = raw_key.decode("utf-8")
        except UnicodeDecodeError:
            raise GGUFFormatError(
                f"key #{index} at offset {cur.pos - len(raw_key)} is not valid UTF-8"
            ) from None
        vtype = reader.u32(f"type of {key!r}")
        value = reader.value(vtype, key)
        if key in kv:
            duplicates.append(key)  # llama.cpp's gguf loader refuses such a file
        else:
            kv[key] = (vtype, value)


def read_gguf(
    source: ByteSource,
    keep_arrays: frozenset[str] = frozenset(),
    chunk: int = 1 << 20,
) -> GGUFMetadata:
    """Header, key/value section and tensor infos, as llama.cpp reads them even for a
    vocab-only load. Problems in the tensor section are recorded in ``tensor_error``
    (the file is still described); an unreadable header or kv section raises
    GGUFFormatError."""
    meta, cur = read_metadata(source, keep_arrays, chunk)
    if meta.kv_complete:
        read_tensor_infos(meta, cur)
    return meta


def read_tensor_infos_after(source: ByteSource, meta: GGUFMetadata, chunk: int = 1 << 16) -> list[TensorInfo]:
    """Tensor infos of an already parsed file, read from ``meta.kv_end`` on: the key/value
    section (token texts, merges) is not read a second time."""
    cur = _Cursor(source, chunk)
    cur.pos = cur.buf_start = meta.kv_end
    return read_tensor_infos(meta, cur)


GGML_MAX_DIMS = 4
GGML_MAX_NAME = 64
GGUF_DEFAULT_ALIGNMENT = 32
# sizeof(struct gguf_tensor_info) on 64-bit hosts: a ggml_tensor (336 bytes) and an offset.
SIZEOF_GGUF_TENSOR_INFO = 344
SIZE_MAX = (1 << 64) - 1
INT64_MAX = (1 << 63) - 1
_READ_FAILED = "failed to read tensor info"


class _TensorProblem(Exception):
    """One refusal, in llama.cpp's words; ``incomplete``: the file ends too early."""

    def __init__(
        self, message: str, incomplete: bool = False, needed: int | None = None, header_only: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.incomplete = incomplete
        self.needed = needed
        self.header_only = header_only


def read_tensor_infos(meta: GGUFMetadata, cur: _Cursor) -> list[TensorInfo]:
    """Parse the tensor infos that follow the kv section (never the tensor data) and
    check them, and the data section's bounds, as the pinned llama.cpp does at load.

    The checks are transcribed from gguf_init_from_reader (ggml/src/gguf.cpp) and from
    the llama_model_loader constructor (src/llama-model-loader.cpp, llama_tensor_weight)
    of llama-cpp-python 0.3.36's vendored llama.cpp, in their order; the first failure is
    recorded in ``meta.tensor_error`` with llama.cpp's text. Sets ``meta.tensors`` (the
    infos read, all of them unless an error stopped the read), ``file_size`` and
    ``data_end``. Reads only the tensor infos: memory and time grow with them alone.
    """
    infos: list[TensorInfo] = []
    meta.tensors = infos
    meta.file_size = cur.total
    try:
        meta.data_end = _tensor_section(meta, cur, infos)
    except _TensorProblem as problem:
        # A header-only file was written so, not cut: say that, not "interrupted download".
        meta.tensor_error = TensorSectionError(
            problem.message, cur.source.name, cur.total, problem.needed,
            problem.incomplete and not problem.header_only,
            reason="a header-only file (its tensor infos, no weights)" if problem.header_only else None,
            header_only=problem.header_only,
        )
    return infos


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _c_name(raw: bytes) -> bytes:
    # ggml_set_name copies a C string: the name ends at its first NUL.
    cut = raw.find(b"\0")
    return raw if cut < 0 else raw[:cut]


def _show(name: bytes) -> str:
    return name.decode("utf-8", errors="replace")


def _alignment(meta: GGUFMetadata) -> int:
    entry = meta.kv.get(K.ALIGNMENT)
    # An alignment of the wrong type or not a power of 2 is refused with the kv section
    # (paircheck.vocab reports it); the tensor section is then judged with the default.
    if entry is None or entry[0] != ValueType.UINT32 or not isinstance(entry[1], int):
        return GGUF_DEFAULT_ALIGNMENT
    value = entry[1]
    return value if value > 0 and value & (value - 1) == 0 else GGUF_DEFAULT_ALIGNMENT


def _nbytes(ne: tuple[int, int, int, int], blck: int, type_size: int) -> int:
    """ggml_nbytes of a contiguous tensor, in size_t arithmetic."""
    if min(ne) <= 0:
        return 0
    if ne[0] * type_size <= SIZE_MAX:
        # The usual case: no size_t wrap-around anywhere, so the strides telescope.
        return type_size * (ne[0] // blck) * ne[1] * ne[2] * ne[3]
    nb = [type_size, type_size * (ne[0] // blck)]
    for j in range(2, GGML_MAX_DIMS):
        nb.append((nb[j - 1] * ne[j - 1]) & SIZE_MAX)
    if blck == 1:
        total = type_size + sum((ne[i] - 1) * nb[i] for i in range(GGML_MAX_DIMS))
    else:
        total = ((ne[0] * nb[0]) & SIZE_MAX) // blck + sum((ne[i] - 1) * nb[i] for i in range(1, GGML_MAX_DIMS))
    return total & SIZE_MAX


def _tensor_section(meta: GGUFMetadata, cur: _Cursor, infos: list[TensorInfo]) -> int:
    """Read and check; return where the last tensor's data ends. Raises _TensorProblem."""
    count = _signed(meta.tensor_count, 64)
    if count < 0 or count > SIZE_MAX // SIZEOF_GGUF_TENSOR_INFO:
        raise _TensorProblem(
            f"number of tensors is {count} but must be in [0, {SIZE_MAX // SIZEOF_GGUF_TENSOR_INFO}]"
        )
    bo = meta.byte_order
    u64, u32, i64, i32 = bo + "Q", bo + "I", bo + "q", bo + "i"
    seen: set[bytes] = set()
    sizes: list[int] = []
    c_names: list[bytes] = []
    try:
        for index in range(count):
            length = cur.unpack(u64, 8, "a tensor name length")
            if length > GGUF_MAX_STRING_LENGTH:
                raise _TensorProblem(f"string length {length} exceeds maximum {GGUF_MAX_STRING_LENGTH}")
            left = cur.remaining()
            if left is not None and length > left:
                # A short name that does not fit is a cut file; a huge one is garbage.
                raise _TensorProblem(
                    f"string length {length} exceeds remaining file size {left} bytes",
                    incomplete=length < GGML_MAX_NAME,
                )
            if length >= GGML_MAX_NAME:
                raise _TensorProblem(f"tensor name {index} is too long: {length} >= {GGML_MAX_NAME}")
            raw = cur.take(length, "a tensor name")
            name = _c_name(raw)
            shown = _show(name)
            if raw in seen:
                raise _TensorProblem(f"duplicate tensor name '{shown}' for tensor {index}")
            seen.add(raw)
            n_dims = cur.unpack(u32, 4, "a tensor's dimension count")
            if n_dims > GGML_MAX_DIMS:
                raise _TensorProblem(
                    f"tensor '{shown}' has invalid number of dimensions: {n_dims} > {GGML_MAX_DIMS}"
                )
            ne = [1, 1, 1, 1]
            for j in range(n_dims):
                ne[j] = cur.unpack(i64, 8, "a tensor's shape")
                if ne[j] < 0:
                    raise _TensorProblem(
                        f"tensor '{shown}' dimension {j} has invalid number of elements: {ne[j]} < 0"
                    )
            nelements = ne[0]
            for j in range(1, GGML_MAX_DIMS):
                if ne[j] > 1 and INT64_MAX // ne[j] < nelements:
                    raise _TensorProblem(
                        f"incorrect shape for a tensor '{shown}' may cause overflow errors: "
                        f"({ne[0]}, {ne[1]}, {ne[2]}, {ne[3]}) is >= INT64_MAX ({INT64_MAX})"
                    )
                nelements *= ne[j]
            ggml_type = cur.unpack(i32, 4, "a tensor's type")
            if ggml_type < 0 or ggml_type >= GGML_TYPE_COUNT:
                raise _TensorProblem(
                    f"tensor '{shown}' has invalid ggml type {ggml_type}. should be in [0, {GGML_TYPE_COUNT})"
                )
            type_name, blck, type_size = GGML_TYPES[ggml_type]
            if blck == 0 or ne[0] % blck != 0:
                raise _TensorProblem(
                    f"tensor '{shown}' of type {ggml_type} ({type_name}) has {ne[0]} elements per row, "
                    f"not a multiple of block size ({blck})"
                )
            if nelements // blck > SIZE_MAX // type_size:
                raise _TensorProblem(
                    f"tensor '{shown}' with shape ({ne[0]}, {ne[1]}, {ne[2]}, {ne[3]}) has a size in bytes > {SIZE_MAX}"
                )
            offset = cur.unpack(u64, 8, "a tensor's offset")
            infos.append(TensorInfo(shown, tuple(ne[:n_dims]), ggml_type, offset))
            sizes.append(_nbytes((ne[0], ne[1], ne[2], ne[3]), blck, type_size))
            c_names.append(name)
    except GGUFFormatError:
        # The file ended inside the tensor infos (the cursor only fails at its end).
        raise _TensorProblem(_READ_FAILED, incomplete=True) from None
    if count == 0:
        return cur.pos
    alignment = _alignment(meta)
    data_offset = (cur.pos + alignment - 1) // alignment * alignment
    # What the file must hold: up to the end of the last tensor's data (not its padding).
    needed = data_offset + infos[-1].offset + sizes[-1]
    if cur.total is not None and data_offset > cur.total:
        raise _TensorProblem(
            "failed to seek to beginning of data section", incomplete=True, needed=max(needed, data_offset)
        )
    total = 0
    for info, nbytes in zip(infos, sizes, strict=True):
        if info.offset != total:
            raise _TensorProblem(f"tensor '{info.name}' has offset {info.offset}, expected {total}")
        if nbytes > SIZE_MAX - (alignment - 1):
            raise _TensorProblem(
                f"tensor '{info.name}' size {nbytes} overflows after padding (alignment {alignment})"
            )
        padded = (nbytes + alignment - 1) // alignment * alignment
        if SIZE_MAX - total < padded:
            raise _TensorProblem(f"tensor '{info.name}' size overflow, cannot accumulate size {total} + {padded}")
        total += padded
    # The model loader (llama_model_loader, llama_tensor_weight): names as ggml keeps them
    # are unique, and each tensor's data lies inside the file.
    names: set[bytes] = set()
    for info, c_name, nbytes in zip(infos, c_names, sizes, strict=True):
        if c_name in names:
            raise _TensorProblem(f"invalid model: tensor '{info.name}' is duplicated")
        names.add(c_name)
        start = data_offset + info.offset
        if cur.total is not None and start + nbytes > cur.total:
            raise _TensorProblem(
                f"tensor '{info.name}' data is not within the file bounds, model is corrupted or incomplete",
                incomplete=True,
                needed=needed,
                # Every info was read and checked and not one byte of data is there: the file
                # was written without its weights (an interrupted download ending exactly here
                # is a chance of a few bytes in gigabytes). The names not reached yet must be
                # unique too, or the list would not be what a whole file's loader accepts.
                header_only=cur.total == data_offset and len(names | set(c_names)) == len(c_names),
            )
    return needed


def _not_gguf_message(head: bytes) -> str:
    """Say what the file looks like instead, when that is easy to tell."""
    if not head:
        return "empty file, not a GGUF model"
    if len(head) < len(GGUF_MAGIC) and GGUF_MAGIC.startswith(head):
        return f"file ends at byte {len(head)} while reading the magic number (truncated, or not a GGUF file)"
    if head.startswith(b"version https://git-lfs"):
        return "this is a Git LFS pointer, not the model: run `git lfs pull` or download the file"
    stripped = head.lstrip()
    if stripped.startswith((b"{", b"[")):
        return "this is a JSON file, not a GGUF model"
    if stripped[:15].lower().startswith((b"<!doctype", b"<html")):
        return "this is an HTML page, not a GGUF model (a download link to a web page?)"
    if len(head) >= 9 and head[8:9] == b"{":
        return "this looks like a safetensors file, not GGUF: give the model folder instead"
    if head.startswith(b"PK"):
        return "this is a zip archive (a PyTorch checkpoint?), not a GGUF model"
    return f"not a GGUF file (it starts with {head[:8]!r}, expected b'GGUF')"
