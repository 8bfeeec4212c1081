"""A pair given in the wrong order (the "draft" many times the target's size) is said to look
swapped, in the verdict line and in PW001, with the check in the right order; no launch line
keeps the swapped order."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path


def _check(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "paircheck", *map(str, args)], capture_output=True, text=True,
                          timeout=60, check=False)


def test_a_draft_many_times_the_target_looks_swapped(gguf_factory: Callable[..., Path]) -> None:
    small = gguf_factory("qwen-0.5b.gguf", extra_kv={"general.size_label": "0.5B"})
    big = gguf_factory("qwen-14b.gguf", extra_kv={"general.size_label": "14B"})
    out = _check(small, big)
    verdict = out.stdout.splitlines()[0] + out.stdout.splitlines()[1]
    assert "look swapped" in verdict, out.stdout
    assert f"paircheck {big} {small}" in out.stdout  # the fix: the check in the right order
    assert f"-md {big}" not in out.stdout  # the swapped order is never offered as a launch line
    data = json.loads(_check("--json", small, big).stdout)
    pw001 = next(w for w in data["warnings"] if w["code"] == "PW001")
    assert pw001["details"]["swapped"] == f"paircheck {big} {small}"
    assert data["next_steps"] == ["The two look swapped: check them with the target first:",
                                  f"paircheck {big} {small}"]


def test_a_draft_somewhat_larger_is_only_slow(gguf_factory: Callable[..., Path]) -> None:
    """Twice the size is a bad draft, not a swapped pair: the launch line stays."""
    target = gguf_factory("a-7b.gguf", extra_kv={"general.size_label": "7B"})
    draft = gguf_factory("b-14b.gguf", extra_kv={"general.size_label": "14B"})
    data = json.loads(_check("--json", target, draft).stdout)
    pw001 = next(w for w in data["warnings"] if w["code"] == "PW001")
    assert "swapped" not in pw001["details"] and "larger than the target" in pw001["message"]
    assert any(s.startswith(f"llama-server -m {target} -md {draft}") for s in data["next_steps"])
