"""scan leaves out the target itself and byte-level copies of it, and nothing else: two models
of one family share a vocabulary and can have the same file size (a 7B and a 14B Q4_K_M were
taken for one model), so neither is an identity."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path


def _scan(target: Path, folder: Path) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-m", "paircheck", "scan", "--json", "--no-default-dirs", "--no-cache",
                           str(target), str(folder)], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    data: dict[str, object] = json.loads(proc.stdout)
    return data


def test_same_size_and_vocabulary_is_not_a_copy(gguf_factory: Callable[..., Path], tmp_path: Path) -> None:
    # The same vocabulary and file size, another model: names of one length ("7B" and "9B").
    target = gguf_factory("models/qwen-7b.gguf", extra_kv={"general.name": "Qwen-7B", "general.size_label": "7B"})
    other = gguf_factory("models/qwen-9b.gguf", extra_kv={"general.name": "Qwen-9B", "general.size_label": "9B"})
    assert target.stat().st_size == other.stat().st_size
    copy = shutil.copyfile(target, tmp_path / "models" / "qwen-7b-copy.gguf")
    data = _scan(target, tmp_path / "models")
    ranked = [c["location"] for c in data["candidates"]]  # type: ignore[attr-defined]
    assert str(other) in ranked
    same = data["same_as_target"]
    assert isinstance(same, list) and str(copy) in same and str(other) not in same
    assert str(copy) not in ranked
