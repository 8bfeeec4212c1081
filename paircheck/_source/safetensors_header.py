"""The safetensors files of a Hugging Face folder, checked as the safetensors loader checks them.

Every engine and llama.cpp's converter open a folder's weights through a safetensors
reader; the Python package's ``safe_open`` refuses a file before reading any tensor when
its header does not describe the file exactly. The conditions and texts are transcribed
from huggingface/safetensors at v0.8.0-rc.0 (commit caa9a133; identical in the released
0.8.0 wheel, which the tests use as the oracle):

* safetensors/src/tensor.rs ``SafeTensors::read_metadata``: an 8-byte little-endian
  header length ``n`` ("header too small" when the file is shorter), ``n`` at most
  ``MAX_HEADER_SIZE`` = 100,000,000 ("header too large"), ``8 + n`` inside the file
  ("invalid header length"), UTF-8 ("invalid UTF-8 in header: ..."), JSON of the shape
  ``{"__metadata__": {str: str}, name: {"dtype", "shape", "data_offsets"}}`` ("invalid
  JSON in header: ..."), then ``Metadata::validate`` over the tensors sorted by their
  offsets: each starts where the previous ended and does not end before it starts
  ("invalid offset for tensor `NAME`"), the element count times the dtype's bit size
  does not overflow ("overflow computing buffer size from shape and/or element type"),
  is whole bytes ("The slice is slicing for subbytes dtypes, ...") and equals the span
  ("invalid shape, data type, or offset for tensor"); finally the data must end exactly
  at the end of the file ("incomplete metadata, file not fully covered");
* bindings/python/src/lib.rs ``Open::new``: every such error is raised as
  ``SafetensorError("Error while deserializing header: " + text)``.

Memory: the header length is checked against the file's size and the cap before any
byte of the header is read, and the header is read in pieces, so what is held grows with
the bytes that exist, never with what a header claims. Tensor data is never read.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paircheck.errors import InputError
from paircheck.model import TensorSectionError

N_LEN = 8
MAX_HEADER_SIZE = 100_000_000
USIZE_MAX = (1 << 64) - 1
PREFIX = "Error while deserializing header: "
INDEX_NAME = "model.safetensors.index.json"
MAX_INDEX_BYTES = 64 << 20
LOADER = "safetensors"

# safetensors/src/tensor.rs Dtype::bitsize
DTYPE_BITS = {
    "F4": 4, "F6_E3M2": 6, "F6_E2M3": 6, "BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8,
    "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16, "I32": 32, "U32": 32,
    "I64": 64, "U64": 64, "F16": 16, "BF16": 16, "F32": 32, "F64": 64, "C64": 64,
}
MISALIGNED = (
    "The slice is slicing for subbytes dtypes, and the slice does not end up at a byte boundary, this is invalid."
)


@dataclass(frozen=True)
class HeaderCheck:
    """What one file's header says and whether the loader accepts the file."""

    file: str
    file_size: int
    header_length: int | None  # n, when the first 8 bytes exist
    data_end: int | None  # 8 + n + the last tensor's end offset, when the header parses
    tensors: int
    error: TensorSectionError | None
    # (name, dtype, shape) of every tensor, in the header's order, when the loader accepts it.
    entries: tuple[tuple[str, str, tuple[int, ...]], ...] = ()


class _Refused(Exception):
    def __init__(self, text: str, incomplete: bool = False, needed: int | None = None) -> None:
        super().__init__(text)
        self.text = text
        self.incomplete = incomplete
        self.needed = needed


def _is_usize(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= USIZE_MAX


def _no_constants(name: str) -> Any:
    # serde_json has no NaN/Infinity literals; Python's json accepts them.
    raise ValueError(f"invalid number {name}")


_STRUCT_FIELDS = frozenset({"__metadata__", "dtype", "shape", "data_offsets"})


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # serde refuses a struct field given twice (`__metadata__`, a tensor's `dtype`, ...);
    # in its maps (tensor names, metadata entries) the last one wins, as in Python.
    seen: set[str] = set()
    for key, _ in pairs:
        if key in _STRUCT_FIELDS and key in seen:
            raise ValueError(f"duplicate field `{key}`")
        seen.add(key)
    return dict(pairs)


def _parse(header: bytes) -> list[tuple[str, str, list[int], tuple[int, int]]]:
    """The tensors of a header, as serde would deserialize HashMetadata. Raises _Refused."""
    try:
        text = header.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Refused(f"invalid UTF-8 in header: invalid utf-8 sequence from index {exc.start}") from None
    try:
        doc = json.loads(text, parse_constant=_no_constants, object_pairs_hook=_pairs)
    except (ValueError, RecursionError) as exc:
        raise _Refused(f"invalid JSON in header: {exc}") from None
    try:
        # A lone surrogate escape (\\ud800) decodes in Python; serde_json refuses it.
        json.dumps(doc, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise _Refused("invalid JSON in header: lone surrogate in a string") from None
    if not isinstance(doc, dict):
        raise _Refused(f"invalid JSON in header: invalid type: {type(doc).__name__}, expected a map")
    meta = doc.get("__metadata__")
    if meta is not None and (not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values())):
        raise _Refused("invalid JSON in header: __metadata__ must map strings to strings")
    tensors = []
    for name, info in doc.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict):
            raise _Refused(f"invalid JSON in header: tensor {name!r} is not a map")
        for key in ("dtype", "shape", "data_offsets"):
            if key not in info:
                raise _Refused(f"invalid JSON in header: missing field `{key}`")
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
            raise _Refused(f"invalid JSON in header: unknown variant `{dtype}`")
        if not isinstance(shape, list) or not all(_is_usize(d) for d in shape):
            raise _Refused(f"invalid JSON in header: invalid shape for tensor {name!r}")
        if not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_usize(o) for o in offsets):
            raise _Refused(f"invalid JSON in header: invalid data_offsets for tensor {name!r}")
        tensors.append((name, dtype, shape, (offsets[0], offsets[1])))
    return tensors


def _validate(tensors: list[tuple[str, str, list[int], tuple[int, int]]]) -> int:
    """Metadata::validate: returns where the data ends (relative to the data section)."""
    start = 0
    for name, dtype, shape, (s, e) in sorted(tensors, key=lambda t: t[3]):
        if s != start or e < s:
            raise _Refused(f"invalid offset for tensor `{name}`")
        start = e
        nelements = 1
        for dim in shape:
            nelements *= dim
            if nelements > USIZE_MAX:
                raise _Refused("overflow computing buffer size from shape and/or element type")
        nbits = nelements * DTYPE_BITS[dtype]
        if nbits > USIZE_MAX:
            raise _Refused("overflow computing buffer size from shape and/or element type")
        if nbits % 8 != 0:
            raise _Refused(MISALIGNED)
        if e - s != nbits // 8:
            raise _Refused("invalid shape, data type, or offset for tensor")
    return start


def check_header(read: Callable[[int, int], bytes], file_size: int, name: str) -> HeaderCheck:
    """Check one safetensors file whose bytes ``read(offset, length)`` returns and whose
    size is ``file_size`` (the filesystem's, or the Hub's listing). Reads at most the
    8-byte length and the header, in pieces of at most 1 MiB."""
    n: int | None = None
    data_end: int | None = None
    count = 0
    try:
        if file_size < N_LEN:
            raise _Refused("header too small", incomplete=file_size > 0, needed=None)
        raw = read(0, N_LEN)
        if len(raw) < N_LEN:
            raise _Refused("header too small", incomplete=True)
        n = struct.unpack("<Q", raw)[0]
        if n > MAX_HEADER_SIZE:
            raise _Refused("header too large")
        if N_LEN + n > file_size:
            # A cut inside the header: the usual interrupted download of a small file.
            raise _Refused("invalid header length", incomplete=True, needed=N_LEN + n)
        parts = []
        got = 0
        while got < n:
            piece = read(N_LEN + got, min(n - got, 1 << 20))
            if not piece:
                raise _Refused("invalid header length", incomplete=True, needed=N_LEN + n)
            parts.append(piece)
            got += len(piece)
        tensors = _parse(b"".join(parts)[:n])
        count = len(tensors)
        data_end = N_LEN + n + _validate(tensors)
        if data_end != file_size:
            raise _Refused("incomplete metadata, file not fully covered", incomplete=data_end > file_size,
                           needed=data_end)
    except _Refused as refused:
        error = TensorSectionError(
            PREFIX + refused.text, name, file_size, refused.needed, refused.incomplete, loader=LOADER,
            reason=None if refused.incomplete or data_end is None or data_end >= file_size else
            f"{Path(name).name} is {file_size - data_end:,} bytes longer than its header says (extra bytes at the end)",
        )
        return HeaderCheck(name, file_size, n, data_end, count, error)
    entries = tuple((t_name, dtype, tuple(shape)) for t_name, dtype, shape, _ in tensors)
    return HeaderCheck(name, file_size, n, data_end, count, None, entries)


def check_local_file(path: Path) -> HeaderCheck:
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size

            def read(offset: int, length: int) -> bytes:
                handle.seek(offset)
                return handle.read(length)

            return check_header(read, size, str(path))
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from None


def index_shards(raw: bytes, where: str) -> list[str]:
    """The shard files ``model.safetensors.index.json`` names, in order of first mention."""
    try:
        index = json.loads(raw)
    except ValueError as exc:
        raise InputError(where, f"{INDEX_NAME} is not valid JSON: {exc}") from None
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        # convert_hf_to_gguf.py's text (conversion/base.py, ModelBase.index_tensors)
        raise InputError(where, f"Can't load 'weight_map' from {INDEX_NAME!r}")
    return list(dict.fromkeys(weight_map.values()))


def missing_shard(name: str, folder: str, present: int, total: int) -> TensorSectionError:
    return TensorSectionError(
        f"No such file or directory: {os.path.join(folder, name)}", os.path.join(folder, name), None, None,
        incomplete=True, loader=LOADER,
        reason=f"shard {name} named in {INDEX_NAME} is missing ({present} of {total} shards present); "
        "the download was probably interrupted",
    )


def folder_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.safetensors") if p.is_file())


def read_index(folder: Path, location: str) -> bytes | None:
    """The folder's ``model.safetensors.index.json``, bounded; None when there is none."""
    index = folder / INDEX_NAME
    if not index.is_file():
        return None
    try:
        raw = index.read_bytes() if index.stat().st_size <= MAX_INDEX_BYTES else b""
    except OSError as exc:
        raise InputError(location, f"cannot read {INDEX_NAME}: {exc.strerror or exc}") from None
    if not raw:
        raise InputError(location, f"{INDEX_NAME} is empty or larger than {MAX_INDEX_BYTES:,} bytes")
    return raw


def check_folder(folder: Path, location: str) -> Iterator[TensorSectionError]:
    """The loader's refusals for the weights of a local folder, first problem first.

    With an index, every shard it names must exist; without one, every ``*.safetensors``
    file is checked. A folder with no weights at all (only tokenizer and config files, as
    paircheck itself caches a Hub repo) yields nothing: there is nothing to judge.
    """
    names: list[str]
    raw = read_index(folder, location)
    if raw is not None:
        try:
            names = index_shards(raw, location)
        except InputError as exc:
            # The folder is still described (its tokenizer is whole); its weights cannot load.
            yield TensorSectionError(exc.message, str(folder / INDEX_NAME), None, None, loader=LOADER)
            return
        present = [n for n in names if (folder / n).is_file()]
        if not present:
            return  # weights not downloaded at all: the vocabulary alone is judged
        for name in names:
            if name not in present:
                yield missing_shard(name, str(folder), len(present), len(names))
        files = [folder / n for n in present]
    else:
        files = folder_files(folder)
    for path in files:
        found = check_local_file(path)
        if found.error is not None:
            yield found.error


def _body(client: Any, resp: Any, skip: int, length: int, location: str) -> bytes:
    """``length`` bytes of an answer after its first ``skip``, bounded in time and memory."""
    import http.client  # here: a local folder's headers need no HTTP code

    from paircheck._source.http_client import body_pieces

    want = skip + length
    try:
        parts = list(body_pieces(client, resp, want))
    except http.client.IncompleteRead:
        raise InputError(location, "the Hub closed the connection mid-header (truncated answer)") from None
    except TimeoutError:
        client.wait_budget()
        raise InputError(location, f"the Hub stalled for {client.timeout:g} s (timeout)") from None
    except OSError as exc:
        what = exc.strerror or exc
        raise InputError(location, f"connection error while reading a safetensors header: {what}") from None
    if resp.body.length:
        resp.body.close()  # the rest is weights: stop, never read them
    else:
        client._drain(resp.body)
    return b"".join(parts)[skip:want]


def remote_reader(client: Any, url: str, location: str) -> Callable[[int, int], bytes]:
    """``read(offset, length)`` over HTTP range requests (never more than asked for)."""
    from paircheck._source.http_client import status_error

    def read(offset: int, length: int) -> bytes:
        resp = client.get(url, {"Range": f"bytes={offset}-{offset + length - 1}"})
        if resp.status == 416:
            client._drain(resp.body)
            return b""
        if resp.status not in (200, 206):
            client._drain(resp.body)
            raise status_error(location, resp.status, resp.body.reason, hub=True)
        # A 200 (Range ignored) is cut to what was asked: the data is never read.
        return _body(client, resp, offset if resp.status == 200 else 0, length, location)

    return read


def hub_weight_files(sizes: dict[str, int | None], index: bytes | None, location: str) -> list[str]:
    """The weight files of a Hub repo: the shards its index names, else every top-level
    ``*.safetensors`` file the listing holds."""
    if index is not None:
        return index_shards(index, location)
    return sorted(n for n in sizes if n.endswith(".safetensors") and "/" not in n)


def _not_listed(name: str, url: str) -> TensorSectionError:
    return TensorSectionError(
        f"No such file: {name} (named in {INDEX_NAME}, not in the repository)", url, None, None, loader=LOADER
    )


def _hub_header(client: Any, url: str, size: int, location: str) -> HeaderCheck:
    # Named by its URL: the file the Hub serves, not one on this machine.
    return check_header(remote_reader(client, url, location), size, url)


def check_hub_files(
    client: Any,
    url_of: Callable[[str], str],
    sizes: dict[str, int | None],
    index: bytes | None,
    repo_id: str,
    location: str,
) -> TensorSectionError | None:
    """The first refusal for a Hub repo's weights: every shard the index names is listed,
    and each file's header is checked against the size the Hub lists (read with range
    requests: the 8-byte length, then the header; never the data). Files whose size the
    listing omits are not judged."""
    names = hub_weight_files(sizes, index, location)
    missing = next((name for name in names if name not in sizes), None)
    if missing is not None:
        return _not_listed(missing, url_of(missing))
    for name in names:
        size = sizes[name]
        if size is not None:
            found = _hub_header(client, url_of(name), size, location)
            if found.error is not None:
                return found.error
    return None


def hub_headers(
    client: Any,
    url_of: Callable[[str], str],
    sizes: dict[str, int | None],
    index: bytes | None,
    location: str,
) -> list[HeaderCheck]:
    """Every weight file's header of a Hub repo, read with range requests (never the
    data) and checked as the loader checks it; an InputError for the first that fails."""
    checks = []
    for name in hub_weight_files(sizes, index, location):
        if name not in sizes:
            error = _not_listed(name, url_of(name))
            raise InputError(error.file, error.message)
        size = sizes[name]
        if size is None:
            raise InputError(location, f"the Hub lists no size for {name}: its header cannot be checked")
        found = _hub_header(client, url_of(name), size, location)
        if found.error is not None:
            raise InputError(found.file, found.error.message)
        checks.append(found)
    return checks
