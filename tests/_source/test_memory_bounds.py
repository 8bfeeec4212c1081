"""Memory bounds of the readers, measured with tracemalloc peaks (Python allocations).

The property: what paircheck holds grows with the bytes it really reads, never with what
a header claims. A 262k-token vocabulary fits in twice its metadata plus 60 MB; a header
that claims 2^62 elements, 2^63-byte strings or 2^40 key/value pairs costs a few MB at
most, whether the size of the input is known (a file) or not (a pipe, a stream).
"""

from __future__ import annotations

import io
import struct
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fuzz"))

import targets  # noqa: E402

from paircheck._source.gguf_file import describe_gguf_file, describe_source  # noqa: E402
from paircheck._source.interface import ReadOptions  # noqa: E402
from paircheck._source.resolve import StreamSource  # noqa: E402
from paircheck.errors import InputError  # noqa: E402

MB = 1 << 20


def _peak(fn: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_262k_token_vocabulary_within_twice_its_metadata_plus_60_mb(real_vocab) -> None:
    path = real_vocab("gemma-4")
    desc, peak = _peak(lambda: describe_gguf_file(str(path), ReadOptions()))
    assert desc.vocab.n_tokens >= 262_000
    assert peak <= 2 * desc.metadata_bytes + 60 * MB, (peak / MB, desc.metadata_bytes / MB)


def _hostile() -> list[tuple[str, bytes]]:
    head = b"GGUF" + struct.pack("<IQ", 3, 0)
    key = struct.pack("<Q", 1) + b"a"
    return [
        ("n_kv 2^40", head + struct.pack("<Q", 1 << 40) + key + struct.pack("<IB", 0, 1) * 64),
        ("u8 array 2^62", head + struct.pack("<Q", 1) + key + struct.pack("<IIQ", 9, 0, 1 << 62) + b"\0" * 4096),
        ("string 2^63", head + struct.pack("<Q", 1) + key + struct.pack("<IQ", 8, 1 << 63) + b"x" * 4096),
        ("string array 2^62", head + struct.pack("<Q", 1) + key + struct.pack("<IIQ", 9, 8, 1 << 62)
         + struct.pack("<Q", 1) + b"x" * 4096),
        ("nested arrays", head + struct.pack("<Q", 1) + key + struct.pack("<IIQ", 9, 9, 1 << 40)
         + struct.pack("<IQ", 9, 1 << 40) * 8 + struct.pack("<IQ", 0, 1 << 62)),
        # Many small real elements: memory follows the bytes that exist (16 MB of 1-byte
        # strings claims 2^62 of them).
        ("2M tiny strings of 2^62", head + struct.pack("<Q", 1) + key + struct.pack("<IIQ", 9, 8, 1 << 62)
         + struct.pack("<Q", 0) * (2 << 20)),
    ]


@pytest.mark.parametrize(("what", "data"), _hostile(), ids=[w for w, _ in _hostile()])
@pytest.mark.parametrize("known_size", [True, False], ids=["file", "stream"])
def test_hostile_counts_cost_a_few_mb(what: str, data: bytes, known_size: bool) -> None:
    def run() -> None:
        if known_size:
            source: Any = targets.BytesSource(data)
        else:
            source = StreamSource("pipe", io.BufferedReader(io.BytesIO(data)))  # type: ignore[arg-type]
        try:
            desc = describe_source(source, what, "gguf", ReadOptions())
        except InputError:
            return
        # A stream's size is unknown, so an early end cannot be told from a cut download:
        # then the file is described as cut inside its keys, never as whole.
        assert not known_size and not desc.metadata.kv_complete and not desc.vocab.loadable

    _, peak = _peak(run)
    # The input itself is not counted (allocated before); a few MB of reading buffers are.
    assert peak < 4 * MB, (what, peak / MB)


def test_tokenizer_json_without_pre_tokenizer_stays_small(tmp_path: Path) -> None:
    import shutil

    from paircheck._source.hf_folder import describe_hf_folder

    folder = targets._Folder("tokenizer.json")
    regressions = Path(__file__).resolve().parents[1] / "fuzz_regressions"
    crash = regressions / "tokenizer_json" / "no-pre-tokenizer-cubic-memory.json"
    shutil.copy(crash, folder.dir / "tokenizer.json")

    def run() -> None:
        try:
            describe_hf_folder(folder.dir, "x")
        except InputError:
            pass

    _, peak = _peak(run)
    assert peak < 50 * MB, peak / MB  # was 1.6 GB: every substring of the whole check text
