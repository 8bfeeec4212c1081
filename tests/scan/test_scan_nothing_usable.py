"""A scan that finds no usable draft (issue 34, item 14): `scan llama-spm corpus/` ranked a
WPM (bert) vocabulary first, by file size alone, and offered nothing to run, where the check
of the same pair offers the draft-free n-gram methods. Now the nearest come first (accepted at
load before refused; a later check failing before an earlier one; then the share of the
target's token texts), and the scan offers the check's own fallback, a line the pinned
llama-server runs as printed."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import llamacpp_build
import pytest
from tiny_model import write_tiny_llama

from paircheck.llama_server.process import llama_server

REPO = Path(__file__).resolve().parents[2]
VOCAB = REPO / "fixtures" / "examples" / "ggml-vocab-llama-spm.gguf"
SERVER_FLAGS = ["-c", "256", "--parallel", "1", "-t", "1", "-tb", "1", "--no-repack"]  # llama.cpp#20824


def _paircheck(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "paircheck", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300, check=False)


def test_nothing_usable_ranks_the_nearest_first(corpus: Path) -> None:
    from paircheck.scan import scan

    result = scan(str(corpus / "ggml-vocab-llama-spm.gguf"), [str(corpus)], use_default_dirs=False, env={},
                  use_cache=False)
    assert result.usable == []
    names = [Path(c.location).name.removeprefix("ggml-vocab-").removesuffix(".gguf") for c in result.candidates]
    # Phi-3 loads (it is predicted to abort at run time); Baichuan is SPM like the target and
    # fails only the token count; every other one fails the vocabulary type, before that.
    assert names[:2] == ["phi-3", "baichuan"], names
    # Among those, the bert (WPM) vocabulary shares less of the target's token texts than
    # Gemma 4's: it was first, for being the smallest file.
    assert names.index("gemma-4") < names.index("bert-bge"), names
    near = [(c.checks_passed, c.shared_texts) for c in result.candidates]
    assert near == sorted(near, reverse=True), near


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_scan_offers_what_the_check_offers(corpus: Path) -> None:
    target = corpus / "ggml-vocab-llama-spm.gguf"
    check = json.loads(_paircheck("--json", target, corpus / "ggml-vocab-bert-bge.gguf").stdout)
    # The check offers the scan first (issue 50, item 3); the scan itself offers the rest.
    assert check["next_steps"][1] == f"paircheck scan {target}", check["next_steps"]
    fallback = check["next_steps"][2:]
    assert any(s.startswith("llama-server ") and "--spec-type ngram-mod" in s for s in fallback), fallback
    done = _paircheck("scan", "--no-default-dirs", "--no-cache", "--json", target, corpus)
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert doc["launch"] is None and doc["next_steps"] == fallback
    text = _paircheck("scan", "--no-default-dirs", "--no-cache", target, corpus).stdout
    flat = " ".join(text.split())
    for step in fallback:
        if step.startswith("llama-server "):
            assert step in [line.strip() for line in text.splitlines()], text  # a command: whole, on its line
        else:
            assert " ".join(step.split()) in flat, text


@pytest.mark.slow  # runs the pinned llama-server
def test_the_offered_line_runs_on_the_pinned_server(corpus: Path, tmp_path: Path) -> None:
    target = write_tiny_llama(tmp_path / "target.gguf", VOCAB, seed=0)
    drafts = tmp_path / "drafts"
    drafts.mkdir()
    for f in corpus.glob("*.gguf"):
        if f.name != "ggml-vocab-llama-spm.gguf":  # the target's own vocabulary: a usable draft
            (drafts / f.name).symlink_to(f)
    doc = json.loads(_paircheck("scan", "--no-default-dirs", "--no-cache", "--json", target, drafts).stdout)
    assert doc["candidates"] and not any(c["usable"] for c in doc["candidates"])
    lines = [shlex.split(s) for s in doc["next_steps"] if s.startswith("llama-server ")]
    assert len(lines) == 1 and lines[0][1:3] == ["-m", str(target)], doc["next_steps"]
    binary = str(llamacpp_build.ensure_tools()["llama-server"])
    with llama_server(binary, [*lines[0][1:], *SERVER_FLAGS], ready_timeout=120, log_dir=tmp_path) as server:
        log = server.log.read_text(errors="replace")
    # It answered /health: every option was accepted and the model loaded.
    assert "failed to initialize speculative decoding" not in log, log
