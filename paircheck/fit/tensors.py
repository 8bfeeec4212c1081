"""Reader side: the tensor infos of a model, from a local file (all shards of a split
GGUF) or over HTTP by range reads of the tensor-info section only (never tensor data)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from paircheck._source.gguf_reader import (
    FileSource,
    GGUFFormatError,
    GGUFMetadata,
    TensorInfo,
    read_metadata,
    read_tensor_infos_after,
)
from paircheck.errors import InputError
from paircheck.model import ModelDescription

_SPLIT = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$")
RANGE_CHUNK = 128 << 10  # tensor infos are ~80 bytes a tensor: one or two requests


class RangeSource:
    """A ByteSource over HTTP that fetches only the byte ranges asked for (in chunks)."""

    def __init__(self, url: str, location: str, headers: dict[str, str] | None = None) -> None:
        from paircheck._source.remote import HttpClient, http_timeout

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
        from paircheck._source.remote import _content_range_total, status_error

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
                    self.location, "the server ignores byte ranges: paircheck fit will not download the whole model"
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


def _shard_names(name: str, meta: GGUFMetadata) -> list[str]:
    """The other shards of a split GGUF (gguf-split naming), first one excluded."""
    count = meta.get("split.count") or 1
    match = _SPLIT.search(name)
    if count <= 1 or not match:
        return []
    stem = name[: match.start()]
    return [f"{stem}-{no:05d}-of-{count:05d}.gguf" for no in range(2, count + 1)]


def _local(path: str, meta: GGUFMetadata) -> list[TensorInfo]:
    infos: list[TensorInfo] = []
    try:
        with open(path, "rb") as handle:
            infos += read_tensor_infos_after(FileSource(path, handle), meta)
        for shard in _shard_names(path, meta):
            if not Path(shard).is_file():
                raise InputError(shard, "shard of a split model is missing")
            with open(shard, "rb") as handle:
                source = FileSource(shard, handle)
                shard_meta, _ = read_metadata(source)
                infos += read_tensor_infos_after(source, shard_meta)
    except GGUFFormatError as exc:
        raise InputError(path, str(exc)) from None
    except OSError as exc:
        raise InputError(path, exc.strerror or str(exc)) from None
    return infos


def _remote(url: str, location: str, meta: GGUFMetadata) -> tuple[list[TensorInfo], int, int]:
    """Tensor infos by range reads from ``meta.kv_end``: (infos, requests, bytes)."""
    source = RangeSource(url, location)
    try:
        infos = read_tensor_infos_after(source, meta, chunk=RANGE_CHUNK // 2)
        if _shard_names(url, meta):
            raise InputError(location, "remote split GGUFs are not sized yet: give the shards' folder locally")
    except GGUFFormatError as exc:
        raise InputError(location, str(exc)) from None
    finally:
        source.close()
    return infos, source.stats.requests, source.stats.bytes_received


def with_tensor_infos(desc: ModelDescription) -> ModelDescription:
    """Fill ``desc.metadata.tensors`` (all shards); an InputError where a source has none."""
    meta = desc.metadata
    if meta.tensor_error is not None:
        # llama.cpp would not load this file (its tensor section is cut or invalid).
        raise InputError(desc.location, f"cannot be sized: {meta.tensor_error.message}")
    if meta.tensors is not None and not _shard_names(desc.resolved_path or "", meta):
        return desc
    if desc.source_kind == "gguf" and desc.resolved_path:
        meta.tensors = _local(desc.resolved_path, meta)
    elif desc.source_kind in ("remote-gguf", "hub") and desc.resolved_path and "://" in desc.resolved_path:
        infos, requests, received = _remote(desc.resolved_path, desc.location, meta)
        meta.tensors = infos
        if desc.fetch is not None:
            desc.fetch.requests += requests
            desc.fetch.bytes_received += received
    elif desc.source_kind == "hf-folder" and desc.resolved_path:
        from paircheck.fit.hf import hf_metadata

        return dataclasses.replace(desc, metadata=hf_metadata(Path(desc.resolved_path), meta))
    else:
        raise InputError(
            desc.location,
            f"a {desc.source_kind} source has no tensor infos: paircheck fit sizes GGUF files and local HF folders",
        )
    return desc
