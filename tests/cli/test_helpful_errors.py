"""Errors that help (issue 34, item 8): a mistyped file name gets the close names beside it, a
folder of GGUF files says what it holds and which command takes a folder, and a vision
projector (mmproj, general.architecture clip) is named as one, not as a missing tokenizer key."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path


def _run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "paircheck", *map(str, args)], capture_output=True, text=True,
                          timeout=60, check=False, cwd=cwd)


def test_a_missing_file_offers_the_close_names(gguf_factory: Callable[..., Path], tmp_path: Path) -> None:
    target = gguf_factory("models/qwen2.5-7b-instruct-q4_k_m.gguf")
    gguf_factory("models/qwen2.5-0.5b-instruct-q4_k_m.gguf")
    done = _run(target, "models/qwen2.5-0.5b-instruct-q4_k.gguf", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr  # one line, no traceback
    assert "no such file" in done.stderr and "close: models/qwen2.5-0.5b-instruct-q4_k_m.gguf" in done.stderr
    far = _run(target, "models/llama-3-8b.gguf", cwd=tmp_path)  # nothing close: no list
    assert far.returncode == 2 and "close:" not in far.stderr


def test_a_folder_of_ggufs_names_what_it_holds(gguf_factory: Callable[..., Path], tmp_path: Path) -> None:
    target = gguf_factory("t.gguf")
    gguf_factory("models/a-q4_k_m.gguf")
    gguf_factory("models/b-q8_0.gguf")
    done = _run(target, tmp_path / "models")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "is a directory of 2 GGUF files (a-q4_k_m.gguf, b-q8_0.gguf), not one model" in done.stderr
    assert "paircheck scan" in done.stderr


def test_a_vision_projector_is_named_as_one(gguf_factory: Callable[..., Path]) -> None:
    target = gguf_factory("t.gguf")
    mmproj = gguf_factory("mmproj-model-f16.gguf", arch="clip", model=None, tokens=[], scores=False,
                          token_types=False)
    data = json.loads(_run("--json", target, mmproj).stdout)
    loadable = next(c for c in data["checks"] if c["name"] == "loadable" and c["status"] == "fail")
    assert "a vision projector (mmproj" in loadable["message"] and "--mmproj" in loadable["fix"]
    assert "key not found in model: tokenizer.ggml.model" in loadable["message"]  # llama.cpp's own words kept
