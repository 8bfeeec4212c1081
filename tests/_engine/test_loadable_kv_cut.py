"""A GGUF cut inside its key/value section: ``loadable`` fails (exit 1) with the plain
reason and the fix, locally and over HTTP range reads, and llama.cpp's own loader refuses
the same files. Where not even the magic, version and counts can be read the input cannot
be described, and paircheck keeps exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from gguf_mutate import TensorSpec, build_with_tensors, read_kvs
from httpserver import TestServer
from oracle import llama_values, require_oracle

from paircheck.findings import FAIL, SKIP
from paircheck.pipeline import check_pair, describe

TENSORS = [TensorSpec(b"token_embd.weight", [64, 64], 0)]
# The header: magic (4), version (4), tensor count (8), kv count (8).
HEADER = 24


@pytest.fixture
def whole(real_vocab: Callable[[str], Path], tmp_path: Path) -> Path:
    path = tmp_path / "whole.gguf"
    path.write_bytes(build_with_tensors(read_kvs(real_vocab("llama-spm")), TENSORS).data)
    return path


def _cuts(whole: Path) -> list[int]:
    kv_end = describe(str(whole)).metadata.kv_end
    return [HEADER, HEADER + 5, 200, kv_end // 3, kv_end // 2, kv_end - 1]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paircheck", *args], capture_output=True, text=True, env={**os.environ, **(env or {})}
    )


def test_cut_inside_the_keys_fails_loadable_like_llamacpp(whole: Path, tmp_path: Path) -> None:
    require_oracle()
    data = whole.read_bytes()
    for keep in _cuts(whole):
        cut = tmp_path / f"cut{keep}.gguf"
        cut.write_bytes(data[:keep])
        said = llama_values(cut)
        assert said["loaded"] is False, keep
        # paircheck quotes llama.cpp: the same line is in its loader's log.
        assert "gguf_init_from_reader: failed to read key-value pairs" in said["error"], said
        report = check_pair(str(whole), str(cut))
        target, draft = report.checks[0], report.checks[1]
        assert target.status != FAIL and draft.status == FAIL, keep
        assert draft.message.startswith(
            f"draft: the file ends inside its metadata at {keep:,} bytes: the download was probably interrupted. "
            "llama.cpp refuses to load it: failed to read key-value pairs"
        ), draft.message
        assert draft.details["incomplete"] is True and draft.details["file_size"] == keep
        assert draft.fix is not None and "Resume the download" in draft.fix
        # Nothing can be said about a vocabulary that was not read: skipped, never passed.
        assert [c.status for c in report.checks[2:]] == [SKIP] * 5, keep
        assert report.verdict == "refused"


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_cut_inside_the_keys_exits_1_and_before_the_counts_exits_2(whole: Path, tmp_path: Path) -> None:
    data = whole.read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[:500])
    result = run("--json", str(whole), str(cut))
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    assert doc["first_failure"] == "loadable" and doc["draft"]["loadable"] is False
    # No engine judges the model by the keys read before the cut: none accepts it.
    every = run("--json", "--engine", "all", str(whole), str(cut))
    assert every.returncode == 1 and json.loads(every.stdout)["compatible_with"] == [], every.stdout[:400]
    for keep in (3, 10, HEADER - 1):
        cut.write_bytes(data[:keep])
        result = run(str(whole), str(cut))
        assert result.returncode == 2, (keep, result.stdout)
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_cut_inside_the_keys_over_http_range_reads(whole: Path, tmp_path: Path) -> None:
    data = whole.read_bytes()
    with TestServer() as server:
        url_whole = server.add_file("m/whole.gguf", whole)
        for keep in _cuts(whole)[1::2]:
            cut = tmp_path / f"cut{keep}.gguf"
            cut.write_bytes(data[:keep])
            url = server.add_file(f"m/cut{keep}.gguf", cut)
            result = run("--json", url_whole, url, env={"PAIRCHECK_HTTP_TIMEOUT": "5"})
            assert result.returncode == 1, (keep, result.stderr)
            (fail,) = [c for c in json.loads(result.stdout)["checks"] if c["status"] == "fail"]
            assert fail["details"]["side"] == "draft" and fail["details"]["file_size"] == keep
            assert f"ends inside its metadata at {keep:,} bytes" in fail["message"]
            assert fail["details"]["error"] == "failed to read key-value pairs"
