"""An Apple chip's memory for fit and --gpu: macOS lets the GPU wire only part of it
(recommendedMaxWorkingSetSize), and the table row is the largest configuration sold, so
the budget is that limit, stated as assumed, unless --vram gives the size (issue 50,
item 9)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from paircheck.hardware.pick import GIB, pick
from paircheck.hardware.table import load_gpus

REPO = Path(__file__).resolve().parents[2]
TARGET = REPO / "fixtures" / "examples" / "qwen2.5-14b-instruct.header.gguf"
DRAFT = REPO / "fixtures" / "examples" / "qwen2.5-0.5b-instruct.header.gguf"


@pytest.mark.parametrize(("gpu", "gib", "share"), [
    ("M2 Max", 72, "3/4"),  # 96 GiB: 73728.00 MB logged (llama.cpp#3213)
    ("M1 Max", 48, "3/4"),  # 64 GiB: 49152.00 MiB logged (llama.cpp#1870)
    ("M1 Pro", 32 * 2 / 3, "2/3"),  # 32 GiB: 21845.34 MB logged (ollama#434)
])
def test_an_apple_chip_gets_macos_default_gpu_limit_stated_as_assumed(gpu: str, gib: float, share: str) -> None:
    picked = pick(load_gpus(), gpu)
    assert picked is not None and picked.hardware is not None
    assert picked.memory_bytes == int(gib * GIB) and picked.hardware.memory_gib == pytest.approx(gib, abs=1e-6)
    assert f"memory ASSUMED: {gib:g} GiB, macOS's default GPU limit ({share})" in picked.note
    assert "iogpu.wired_limit_mb, give --vram" in picked.note


def test_vram_gives_the_size_and_a_discrete_gpu_keeps_its_own() -> None:
    picked = pick(load_gpus(), "M2 Max", vram_bytes=32 * GIB)
    assert picked is not None and picked.memory_bytes == 32 * GIB and "ASSUMED" not in picked.note
    picked = pick(load_gpus(), "RTX 4090")
    assert picked is not None and picked.memory_bytes == 24 * GIB and "ASSUMED" not in picked.note


def test_fit_on_m2_max_says_the_budget_and_where_it_comes_from() -> None:
    out = subprocess.run([sys.executable, "-m", "paircheck", "fit", str(TARGET), str(DRAFT), "-c", "32768",
                          "--gpu", "M2 Max"], capture_output=True, text=True, timeout=120, check=False)
    said = " ".join(out.stdout.split())
    assert out.returncode == 0 and said.startswith("memory: target + draft at -c 32768 fits in 73,728 MiB"), said
    assert "memory ASSUMED: 72 GiB" in said and "llama.cpp#3213" in said
