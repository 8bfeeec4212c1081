"""--strict fails on warnings that can hurt, not on a vocabulary tail of padding: LM Studio's
own example pair (Qwen2.5-14B, 152064 tokens, drafted by the 0.5B, 151936: the 128 ids between
are padding) must pass the README's ``paircheck --strict T D && exec llama-server ...``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import ggufgen


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "paircheck", *map(str, args)], capture_output=True, text=True,
                          timeout=60, check=False)


def _pair(gguf_factory: Callable[..., Path], tail: list[str]) -> tuple[Path, Path]:
    base = ggufgen.default_tokens()
    return gguf_factory("target.gguf", tokens=base + tail), gguf_factory("draft.gguf", tokens=base)


def test_strict_passes_a_padding_tail(gguf_factory: Callable[..., Path]) -> None:
    target, draft = _pair(gguf_factory, [f"[PAD{i}]" for i in range(400, 528)])
    out = _run("--strict", target, draft)
    assert out.returncode == 0, out.stdout
    assert "LW101" in out.stdout and "harmless" in out.stdout  # still shown, and said why it passes
    data = json.loads(_run("--json", "--strict", target, draft).stdout)
    assert data["exit_code"] == 0
    lw101 = next(w for w in data["warnings"] if w["code"] == "LW101")
    assert lw101["details"]["harmless"] is True


def test_strict_still_fails_on_real_tokens_and_other_warnings(gguf_factory: Callable[..., Path]) -> None:
    target, draft = _pair(gguf_factory, [f"[PAD{i}]" for i in range(400, 527)] + ["<|im_start|>"])
    assert _run("--strict", target, draft).returncode == 4  # a real token: predicted abort
    # A warning that can hurt still fails --strict: a draft half the target's size (PW001).
    a = gguf_factory("a.gguf", extra_kv={"general.size_label": "1B"})
    b = gguf_factory("b.gguf", extra_kv={"general.size_label": "0.5B"})
    out = _run("--strict", a, b)
    assert out.returncode == 5 and "PW001" in out.stdout, out.stdout
