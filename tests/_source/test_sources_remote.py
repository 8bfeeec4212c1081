"""Remote GGUF over HTTP range requests, against a real server on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from httpserver import TestServer

from paircheck._source.gguf_file import describe_gguf_file
from paircheck._source.interface import ReadOptions
from paircheck._source.remote import describe_remote_gguf
from paircheck.errors import InputError

TAIL = 64 << 20  # fake tensor data after the metadata: what must never be downloaded


def _with_tensor_tail(src: Path, dst: Path) -> Path:
    dst.write_bytes(src.read_bytes() + b"\0" * TAIL)
    return dst


def test_range_reads_only_the_metadata_of_a_150k_vocab(real_vocab, tmp_path: Path) -> None:
    big = _with_tensor_tail(real_vocab("qwen2"), tmp_path / "qwen2.gguf")
    with TestServer() as server:
        url = server.add_file("m/qwen2.gguf", big)
        desc = describe_remote_gguf(url, url, ReadOptions())
    local = describe_gguf_file(str(real_vocab("qwen2")), ReadOptions())
    meta = desc.metadata_bytes
    assert meta == local.metadata_bytes and desc.vocab.texts == local.vocab.texts
    assert desc.vocab.n_tokens == 151936
    sent = server.counters.body_bytes
    assert meta <= sent <= meta * 1.05, (sent, meta)
    assert server.counters.requests <= 3
    assert desc.fetch.requests <= 3 and desc.fetch.bytes_received == sent


def test_server_without_range_support_is_read_as_a_stream_and_dropped(real_vocab, tmp_path: Path) -> None:
    big = _with_tensor_tail(real_vocab("qwen2"), tmp_path / "qwen2.gguf")
    with TestServer() as server:
        url = server.add_file("q.gguf", big)
        server.fault("q.gguf", "norange")
        desc = describe_remote_gguf(url, url, ReadOptions())
    assert desc.vocab.n_tokens == 151936
    assert not desc.fetch.ranged
    assert desc.fetch.bytes_received < desc.metadata_bytes + (2 << 20)
    # The server wrote what the socket buffers took, never the 64 MiB tail.
    assert server.counters.body_bytes < big.stat().st_size // 2
    assert any("ignored byte ranges" in note for note in desc.notes)


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ("416", "HTTP 416"),
        ("truncate", "truncated"),
        ("401", "HF_TOKEN"),
        ("403", "access denied"),
        ("404", "not found"),
        ("loop", "redirect loop"),
        ("html", "HTML page"),
        ("stall", "timeout"),
    ],
)
def test_faults_are_one_clear_error(fault: str, expected: str, gguf_factory, monkeypatch) -> None:
    monkeypatch.setenv("PAIRCHECK_HTTP_TIMEOUT", "1")
    path = gguf_factory()
    with TestServer() as server:
        server.stall_seconds = 3
        url = server.add_file("f.gguf", path)
        server.fault("f.gguf", fault)
        with pytest.raises(InputError) as info:
            describe_remote_gguf(url, url, ReadOptions())
    assert expected in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_file_on_plain_server(gguf_factory) -> None:
    with TestServer() as server, pytest.raises(InputError, match="not found"):
        describe_remote_gguf(server.url + "/nope.gguf", "nope", ReadOptions())


def test_cli_remote_pair_and_fault_exit_codes(gguf_factory, tmp_path: Path) -> None:
    path = gguf_factory()
    env = {**os.environ, "PAIRCHECK_HTTP_TIMEOUT": "1"}
    with TestServer() as server:
        url = server.add_file("a.gguf", path)
        ok = subprocess.run(
            [sys.executable, "-m", "paircheck", url, str(path)], capture_output=True, text=True, env=env
        )
        server.fault("b.gguf", "404")
        bad = subprocess.run(
            [sys.executable, "-m", "paircheck", url, server.url + "/b.gguf"], capture_output=True, text=True, env=env
        )
    assert ok.returncode == 0, ok.stderr
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "not found" in bad.stderr
