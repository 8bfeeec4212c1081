"""Source: a GGUF on an HTTP(S) server, read with range requests (metadata only).

The GGUF reader walks the file forward only, so a remote file is a ``ByteSource``
that fetches ranges ahead of the parser. How far ahead is decided by ``_Planner``, a
light scanner that walks the same header and key/value layout over the bytes already
fetched and estimates where the metadata ends:

* request 1 is a modest head (256 KiB): the header, the general keys and the first
  ~15k token texts, enough to know the token count and the average text length;
* request 2 reaches the estimated end of the token texts plus the fixed-size arrays
  that converters write right after them (types, scores) and a little more, so that
  the merges header and a sample of merges arrive too;
* request 3 reaches the estimated end of the merges plus a small tail for the special
  ids and the chat template. An estimate that falls short costs one more request.

A server that ignores Range and answers 200 with the whole body is read as a stream
and closed as soon as the metadata is parsed: the rest is never downloaded.

The requests go through ``http_client.HttpClient``, which bounds every wait and turns every
failure into one ``InputError`` line.
"""

from __future__ import annotations

import http.client
import shlex
import struct
from array import array
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

from paircheck import constants as K
from paircheck._source.gguf_file import description_from_metadata, read_model_metadata, read_other_shards
from paircheck._source.gguf_reader import read_gguf
from paircheck._source.http_client import (
    HttpClient,
    _Response,
    body_pieces,
    http_timeout,
    status_error,
)
from paircheck._source.hub_settings import HubSettings
from paircheck._source.interface import Progress, ReadOptions
from paircheck.constants import SCALAR_FORMATS, ValueType
from paircheck.errors import InputError
from paircheck.model import GGUFMetadata, LocalCopy, ModelDescription, Origin, TensorInfo

FIRST_RANGE = 256 << 10
# After the estimated end of a string array, fetch this much more: the next array
# headers and a sample of their elements, from which the next estimate is made.
SAMPLE_SLACK = 64 << 10
# Slack after the estimated end of the last big array: special ids, chat template.
TAIL_SLACK = 48 << 10
# Estimates of the remaining bytes of a string array are scaled up by this much: an
# overshoot in the middle of the metadata is not wasted, an undershoot costs a request.
ESTIMATE_MARGIN = 1.02
# The reader's chunk for remote sources: small, so that its last read never asks for
# much past the end of the metadata.
READER_CHUNK = 16 << 10
# After the key/value section come the tensor infos (llama.cpp checks them before it loads
# anything): a name of ~30 bytes, the type, up to four dimensions and the offset, about
# 80 bytes each. They are fetched with the last kv bytes, in one request; the count the
# header claims is capped so that a hostile header cannot make paircheck download data.
TENSOR_INFO_GUESS = 96
MAX_PLANNED_TENSORS = 16384
# The other shards of a split model: tensor infos are ~80 bytes a tensor, so one or two
# requests of this size read a shard's header, keys and tensor infos.
RANGE_CHUNK = 128 << 10


class _Planner:
    """Walks the GGUF header and kv section over the fetched bytes, incrementally.

    It never fails: on anything it does not understand it stops estimating and the
    source falls back to fetching what the parser asks for (doubling).
    """

    def __init__(self) -> None:
        self.buf = b""
        self.base = 0  # absolute offset of buf[0]
        self.pos = 0  # absolute offset of the next unparsed byte
        self.bo = "<"
        self.kv_left: int | None = None  # None until the header is parsed
        self.done_at: int | None = None  # absolute end of the kv section once known
        self.lost = False  # gave up (odd layout): no estimates
        self.model: str | None = None  # tokenizer.ggml.model, when seen
        self.tokens_count: int | None = None
        # A string array being walked: (key, count left, elements seen, bytes seen).
        self.array: tuple[str, int, int, int] | None = None
        self.token_lengths: array[int] = array("I")  # text length of each token seen
        self.stream_end = 0  # absolute end of the bytes fed so far
        self.tensor_count = 0  # from the header: how many tensor infos follow the kv section

    def feed(self, data: bytes) -> None:
        """Take the next bytes of the file (sources fetch contiguous ranges)."""
        start = self.stream_end
        self.stream_end += len(data)
        if self.lost or self.done_at is not None:
            return
        if self.pos >= self.stream_end:  # all inside a skipped fixed-size array
            self.buf, self.base = b"", self.pos
            return
        if self.pos > start:  # the skip ends inside these bytes (buf is empty then)
            self.buf, self.base = data[self.pos - start :], self.pos
        else:
            self.buf, self.base = self.buf[self.pos - self.base :] + data, self.pos
        try:
            self._advance()
        except (struct.error, UnicodeDecodeError, ValueError, OverflowError, AssertionError):
            self.lost = True

    # -- parsing over self.buf; each helper returns None when bytes are missing
    def _have(self, n: int) -> bool:
        return self.pos + n <= self.base + len(self.buf)

    def _u(self, fmt: str, size: int) -> int | None:
        if not self._have(size):
            return None
        value = struct.unpack_from(self.bo + fmt, self.buf, self.pos - self.base)[0]
        self.pos += size
        return value

    def _skip(self, n: int) -> None:
        self.pos += n
        rel = self.pos - self.base
        if rel >= len(self.buf):
            self.buf, self.base = b"", self.pos
        elif rel > (1 << 20):
            self.buf, self.base = self.buf[rel:], self.pos

    def _advance(self) -> None:
        if self.kv_left is None:
            if not self._have(24):
                return
            if self.buf[:4] != b"GGUF":
                self.lost = True
                return
            if struct.unpack_from("<I", self.buf, 4)[0] not in (2, 3):
                self.bo = ">"
            self.tensor_count = struct.unpack_from(self.bo + "Q", self.buf, 8)[0]
            self.pos = 16
            self.kv_left = self._u("Q", 8)
        while self.kv_left and not self.lost:
            if self.array is not None:
                if not self._walk_strings():
                    return
                continue
            start = self.pos
            if not self._one_kv():
                self.pos = start  # retry this kv when more bytes arrive
                return
        if self.kv_left == 0:
            self.done_at = self.pos

    def _one_kv(self) -> bool:
        klen = self._u("Q", 8)
        if klen is None or not self._have(klen + 4):
            return False
        rel = self.pos - self.base
        key = self.buf[rel : rel + klen].decode("utf-8")
        self.pos += klen
        vtype = self._u("I", 4)
        assert vtype is not None
        fmt = SCALAR_FORMATS.get(vtype)
        if fmt is not None:
            if not self._have(fmt[1]):
                return False
            self._skip(fmt[1])
        elif vtype == ValueType.STRING:
            slen = self._u("Q", 8)
            if slen is None or not self._have(slen):
                return False
            rel = self.pos - self.base
            if key == K.TOKENIZER_MODEL:
                self.model = self.buf[rel : rel + slen].decode("utf-8", "replace")
            self._skip(slen)
        elif vtype == ValueType.ARRAY:
            if not self._have(12):
                return False
            etype = self._u("I", 4)
            count = self._u("Q", 8)
            assert etype is not None and count is not None
            efmt = SCALAR_FORMATS.get(etype)
            if efmt is not None:
                self._skip(count * efmt[1])  # known size: no bytes needed
            elif etype == ValueType.STRING:
                if key == K.TOKENS:
                    self.tokens_count = count
                self.kv_left -= 1  # type: ignore[operator]
                self.array = (key, count, 0, 0)
                return True
            else:
                self.lost = True  # nested arrays: rare, not worth estimating
                return True
        else:
            self.lost = True
            return True
        self.kv_left -= 1  # type: ignore[operator]
        return True

    def _walk_strings(self) -> bool:
        assert self.array is not None
        key, left, seen, seen_bytes = self.array
        buf, base, pos = self.buf, self.base, self.pos
        end = base + len(buf)
        unpack = struct.Struct(self.bo + "Q").unpack_from
        record = self.token_lengths.append if key == K.TOKENS else None
        while left:
            if pos + 8 > end:
                break
            (n,) = unpack(buf, pos - base)
            if pos + 8 + n > end:
                break
            pos += 8 + n
            if record is not None:
                record(n)
            seen_bytes += 8 + n
            seen += 1
            left -= 1
        self.pos = pos
        if left:
            self.array = (key, left, seen, seen_bytes)
            return False
        self.array = None
        self._skip(0)
        return True

    def estimate_end(self) -> int | None:
        """Where the metadata probably ends (absolute), None when unknown."""
        if self.done_at is not None:
            return self.done_at + min(self.tensor_count, MAX_PLANNED_TENSORS) * TENSOR_INFO_GUESS
        if self.lost or self.kv_left is None:
            return None
        if self.array is None:
            return self.pos + SAMPLE_SLACK
        key, left, seen, seen_bytes = self.array
        avg = seen_bytes / seen if seen else 16.0
        if key == K.TOKENS and self.tokens_count is not None:
            count = self.tokens_count
            # Converters write the scores and token types right after the texts, 4 bytes
            # per token each (WordPiece has no scores; a BPE file without scores only
            # shifts the overshoot into its merges, which are needed anyway).
            after = 4 * count if self.model == "bert" else 8 * count
            rest = left * avg
            if self.model in _MERGE_MODELS:
                # Later BPE tokens are longer than the first ones (up to 1.35x on
                # average in real files); overshooting lands in the merges, not wasted.
                rest *= 1.4
            else:
                rest = min(rest * 1.35, rest + 0.9 * after)
            return self.pos + int(rest) + after + SAMPLE_SLACK
        if key == K.MERGES and self.token_lengths:
            # Merge j of a byte-level BPE creates token 256 + j, and its text is the two
            # halves of that token with a space: the token lengths predict the merges.
            lengths = self.token_lengths
            overall = sum(lengths) / len(lengths)
            done = seen
            stop = min(len(lengths), 256 + done + left)
            known = sum(lengths[256 + done : stop]) if 256 + done < stop else 0
            n_known = max(0, stop - (256 + done))
            rest = known + n_known * 9 + (left - n_known) * (overall + 9)
        else:
            rest = left * avg * ESTIMATE_MARGIN
        end = self.pos + int(rest)
        # What follows the last big array (special ids, chat templates) is small; 4% of
        # the total keeps the last request within the 5% budget and covers templates.
        return end + max(16 << 10, int(0.04 * end))


_MERGE_MODELS = frozenset({"gpt2", "gemma4", "hybriddna", "whitespace", None})


class RemoteSource:
    """A GGUF file over HTTP as a forward-only ByteSource that fetches ahead by plan."""

    def __init__(
        self,
        url: str,
        location: str,
        headers: dict[str, str] | None = None,
        progress: Progress | None = None,
        timeout: float | None = None,
        on_request: Callable[[], None] | None = None,
    ) -> None:
        self.name = url
        self.url = url
        self.location = location
        self.client = HttpClient(location, dict(headers or {}), timeout or http_timeout(), on_request=on_request)
        self.stats = self.client.stats
        self._size: int | None = None
        self._buf = b""
        self._base = 0  # absolute offset of _buf[0]
        self._planner = _Planner()
        self._stream: _Response | None = None  # set when the server ignored Range
        self._progress = progress
        self._started = False

    @property
    def size(self) -> int | None:
        if not self._started:
            self._fetch(0, FIRST_RANGE)
        return self._size

    def close(self) -> None:
        # Closing the connection is what stops a 200 answer mid-body.
        self.client.close()

    def __enter__(self) -> RemoteSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read_at(self, offset: int, length: int) -> bytes:
        end = self._base + len(self._buf)
        if offset + length > end and (self._size is None or end < self._size):
            self._fetch(end, offset + length - end)
            end = self._base + len(self._buf)
        rel = offset - self._base
        data = self._buf[rel : rel + length]
        # Forward-only: what precedes this read is never asked for again.
        if rel > (4 << 20):
            self._buf, self._base = self._buf[rel:], offset
        return data

    def _want(self, start: int, minimum: int) -> int:
        """How many bytes to fetch from ``start``: at least ``minimum``, more by plan."""
        estimate = self._planner.estimate_end()
        if estimate is None:
            # No plan (odd layout): grow geometrically so the count of requests stays small.
            return max(minimum, start)
        return max(minimum, estimate - start)

    def _fetch(self, start: int, minimum: int) -> None:
        if not self._started:
            want = max(minimum, FIRST_RANGE)
        else:
            want = self._want(start, minimum)
        if self._size is not None:
            want = min(want, self._size - start)
        if want <= 0:
            return
        data = self._stream_read(want) if self._stream is not None else self._range(start, want)
        if not data and start == 0:
            return
        self._buf = self._buf + data if self._buf else data
        self._planner.feed(data)
        if self._progress is not None:
            self._progress(self.stats.bytes_received, self._planner.estimate_end())

    def _range(self, start: int, want: int) -> bytes:
        end = start + want - 1
        resp = self.client.get(self.url, {"Range": f"bytes={start}-{end}"})
        first = not self._started
        self._started = True
        status = resp.status
        if status == 206:
            total = _content_range_total(resp.headers.get("Content-Range"))
            got_start = _content_range_start(resp.headers.get("Content-Range"))
            if got_start is None or got_start != start:
                resp.body.close()
                sent = f"bytes from {got_start}" if got_start is not None else "a partial answer without Content-Range"
                raise InputError(
                    self.location, f"the server sent {sent}, not bytes from {start} as asked (broken Range support)"
                )
            span = _content_range_span(resp.headers.get("Content-Range"))
            claimed = resp.body.length
            if span is not None and claimed is not None and claimed != span:
                resp.body.close()
                raise InputError(
                    self.location,
                    f"the server's Content-Length ({claimed}) disagrees with its Content-Range ({span} bytes): "
                    "a broken server or proxy",
                )
            if total is not None:
                self._size = total
            return self._read_body(resp, want)
        if status == 200 and first:
            # Range ignored: the whole file is coming. Read it as a stream, only as far
            # as the parser needs, and close the connection when done.
            self.stats.ranged = False
            length = resp.headers.get("Content-Length")
            self._size = int(length) if length and length.isdigit() else None
            self._stream = resp
            return self._stream_read(want)
        if status == 200:
            resp.body.close()
            raise InputError(self.location, "the server stopped honouring byte ranges (HTTP 200 to a range request)")
        if status == 416 and first:
            self.client._drain(resp.body)
            raise InputError(self.location, "empty file, not a GGUF model (HTTP 416 for the first bytes)")
        self.client._drain(resp.body)
        raise status_error(self.location, status, resp.body.reason)

    def _stream_read(self, want: int) -> bytes:
        assert self._stream is not None
        return self._read_body(self._stream, want)

    def _read_body(self, resp: _Response, want: int) -> bytes:
        parts: list[bytes] = []
        try:
            for piece in body_pieces(self.client, resp, want):
                parts.append(piece)
                self.stats.bytes_received += len(piece)
                if self._progress is not None:
                    self._progress(self.stats.bytes_received, self._planner.estimate_end())
        except http.client.IncompleteRead:
            raise InputError(self.location, "the server closed the connection mid-body (truncated download)") from None
        except TimeoutError:
            self.client.wait_budget()  # raises the overall-deadline error when that is what ran out
            raise InputError(self.location, f"the server stalled for {self.client.timeout:g} s (timeout)") from None
        except OSError as exc:
            raise InputError(self.location, f"connection error while reading: {exc.strerror or exc}") from None
        if self._stream is None:
            # A longer 206 than asked for: drain, so the connection can be reused. And
            # read1 never marks a finished body as done: read() does, freeing the connection.
            self.client._drain(resp.body)
        return b"".join(parts)


def _content_range_total(value: str | None) -> int | None:
    # "bytes 0-262143/7340032"; the total may be "*".
    if not value or "/" not in value:
        return None
    total = value.rsplit("/", 1)[1].strip()
    return int(total) if total.isdigit() else None


def _content_range_span(value: str | None) -> int | None:
    # "bytes 0-262143/7340032" -> 262144
    try:
        first, last = value.split()[1].split("/")[0].split("-")  # type: ignore[union-attr]
        return int(last) - int(first) + 1
    except (AttributeError, IndexError, ValueError):
        return None


def _content_range_start(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return int(value.split()[1].split("-")[0])
    except (IndexError, ValueError):
        return None


class RangeSource:
    """A ByteSource over HTTP that fetches only the byte ranges asked for (in chunks of at
    least RANGE_CHUNK): for the shards of a split model, whose header and tensor infos are
    read and nothing else."""

    def __init__(self, url: str, location: str, headers: dict[str, str] | None = None) -> None:
        self.name = url
        self.url = url
        self.location = location
        self.client = HttpClient(location, dict(headers or {}), http_timeout())
        self.stats = self.client.stats
        self._size: int | None = None
        self._base = 0
        self._buf = b""

    @property
    def size(self) -> int | None:
        if self._size is None:
            self._fetch(0, 1)
        return self._size

    def close(self) -> None:
        self.client.close()

    def read_at(self, offset: int, length: int) -> bytes:
        if not (self._base <= offset and offset + length <= self._base + len(self._buf)):
            self._fetch(offset, length)
        rel = offset - self._base
        return self._buf[rel : rel + length]

    def _fetch(self, start: int, length: int) -> None:
        want = max(length, RANGE_CHUNK)
        if self._size is not None:
            want = max(0, min(want, self._size - start))
            if want == 0:
                self._base, self._buf = start, b""
                return
        resp = self.client.get(self.url, {"Range": f"bytes={start}-{start + want - 1}"})
        if resp.status != 206:
            resp.body.close()
            if resp.status == 200:
                raise InputError(
                    self.location, "the server ignores byte ranges: paircheck will not download the whole model"
                )
            raise status_error(self.location, resp.status, resp.body.reason)
        total = _content_range_total(resp.headers.get("Content-Range"))
        if total is not None:
            self._size = total
        try:
            data = resp.body.read()
        except OSError as exc:
            raise InputError(self.location, f"connection error while reading: {exc}") from None
        self.stats.bytes_received += len(data)
        self._base, self._buf = start, data


def remote_gguf_tensors(desc: ModelDescription, headers: dict[str, str]) -> list[TensorInfo]:
    """Every tensor of a GGUF read over HTTP: the first file's infos came with its metadata;
    the other shards of a split model (named after the first one's URL) are read by range
    requests of their header, keys and tensor infos only, never their data. The requests
    are added to ``desc.fetch``."""
    url = desc.resolved_path or desc.location
    stats = desc.fetch

    def open_shard(shard_url: str) -> GGUFMetadata:
        source = RangeSource(shard_url, desc.location, headers)
        try:
            return read_gguf(source, chunk=RANGE_CHUNK // 2)
        finally:
            source.close()
            if stats is not None:
                stats.requests += source.stats.requests
                stats.bytes_received += source.stats.bytes_received

    error, others = read_other_shards(url, desc.metadata, open_shard)
    if error is not None:
        raise InputError(error.file, error.message)
    return [*(desc.metadata.tensors or ()), *others]


def url_file_name(url: str) -> str:
    """The file name a download of ``url`` is saved as: its path's last part (model.gguf if none)."""
    name = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    return name if name and name not in (".", "..") else "model.gguf"


def describe_remote_gguf(
    url: str,
    location: str,
    options: ReadOptions,
    source_kind: str = "remote-gguf",
    headers: dict[str, str] | None = None,
    hub: bool = False,
) -> ModelDescription:
    """Read only the metadata of the GGUF at ``url`` and describe it."""
    progress = options.progress_for(location)
    source = RemoteSource(url, location, headers, progress, on_request=options.on_request)
    try:
        try:
            # The tensor infos too: llama.cpp checks them, and each tensor's data against
            # the file's size (the Content-Range total), before it loads anything.
            meta = read_model_metadata(source, location, chunk=READER_CHUNK)
        except InputError as exc:
            if hub and exc.message.startswith("access denied"):
                raise status_error(location, 401, "", hub=True) from None
            raise
    finally:
        source.close()
        if progress is not None:
            progress.finish()
    # Named as given (the URL, or the Hub reference that led to it); nothing on this machine.
    # llama-server fetches a target from a URL itself (-mu); a draft must be downloaded first.
    name = url_file_name(url)
    copy = LocalCopy("llama-server has no option to fetch a draft from a URL; download it first",
                     (f"curl -L -o {shlex.quote(name)} {shlex.quote(url)}",), name)
    origin = Origin(command_name=location, form="gguf", remote=True, model_url=url, local_copy=copy)
    desc = description_from_metadata(meta, location, source_kind, url, origin, options.overrides)
    desc.fetch = source.stats
    if not source.stats.ranged:
        desc.notes.append(
            f"the server ignored byte ranges; paircheck stopped reading after {source.stats.bytes_received:,} bytes"
        )
    return desc


class HTTPSource:
    """A GGUF at an http(s) URL, read with range requests up to the end of its metadata."""

    name = "remote-gguf"

    def claims(self, spec: str) -> bool:
        return spec.startswith(("http://", "https://"))

    def describe(self, spec: str, options: ReadOptions) -> ModelDescription:
        # The Hub token goes only to the Hub's own host, never to another server.
        headers = HubSettings.from_env().headers_for(spec)
        return describe_remote_gguf(spec, spec, options, self.name, headers)

    def tensors(self, desc: ModelDescription) -> list[TensorInfo]:
        return remote_gguf_tensors(desc, HubSettings.from_env().headers_for(desc.resolved_path or desc.location))
