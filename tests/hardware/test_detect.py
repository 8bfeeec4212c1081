"""GPU detection with real programs on PATH that print what nvidia-smi, rocm-smi and
system_profiler print, and `fit` answering without --vram from what they report."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import fit_shapes
import pytest

from paircheck.hardware.detect import MIB, detect, parse_nvidia_smi
from paircheck.hardware.pick import pick
from paircheck.hardware.table import load_gpus

REPO = Path(__file__).resolve().parents[2]
# What `nvidia-smi --query-gpu=name,memory.total,memory.free --format=csv` prints (nvidia-smi 550).
NVIDIA_CSV = """name, memory.total [MiB], memory.free [MiB]
NVIDIA GeForce RTX 3090, 24576 MiB, 23840 MiB
"""
# `rocm-smi --showproductname --showmeminfo vram --json` (ROCm 6.x).
ROCM_JSON = {"card0": {"Card Series": "Radeon RX 7900 XTX", "Card Model": "0x744c", "Card Vendor": "Advanced Micro "
                       "Devices, Inc. [AMD/ATI]", "Card SKU": "D7070100", "VRAM Total Memory (B)": "25753026560",
                       "VRAM Total Used Memory (B)": "1073741824"}}
MAC_JSON = {"SPDisplaysDataType": [{"_name": "Apple M2 Max", "sppci_model": "Apple M2 Max",
                                    "sppci_cores": "38", "sppci_device_type": "spdisplays_gpu"}]}


def _tool(folder: Path, name: str, body: str) -> Path:
    """A real executable on PATH that prints ``body`` (a shell script, as any program would)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _prints(folder: Path, name: str, text: str) -> Path:
    (folder / f"{name}.out").parent.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.out").write_text(text)
    return _tool(folder, name, f"cat '{folder / (name + '.out')}'")


def _env(bin_dir: Path) -> dict[str, str]:
    # Only the tools in bin_dir (and what sh and cat need): nothing of this machine's own GPU tools.
    return {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "PYTHONPATH": str(REPO), "COLUMNS": "80"}


def _detect_with(bin_dir: Path) -> object:
    import shutil

    return detect(which=lambda name: shutil.which(name, path=str(bin_dir)))


def test_nvidia_smi_on_path_is_read(tmp_path: Path) -> None:
    _prints(tmp_path, "nvidia-smi", NVIDIA_CSV)
    found = _detect_with(tmp_path)
    assert found.command == "nvidia-smi --query-gpu=name,memory.total,memory.free --format=csv"
    dev = found.first
    assert (dev.name, dev.total_bytes, dev.free_bytes) == ("NVIDIA GeForce RTX 3090", 24576 * MIB, 23840 * MIB)
    picked = pick(load_gpus(), detected=found)
    assert picked is not None and picked.hardware is not None
    assert picked.hardware.name == "GeForce RTX 3090" and picked.basis == "detected"
    assert picked.memory_bytes == 23840 * MIB  # the free memory, not the card's total
    assert "detected by `nvidia-smi" in picked.note and "23.3 GiB free" in picked.note


def test_rocm_smi_and_system_profiler_are_read(tmp_path: Path) -> None:
    rocm = tmp_path / "rocm"
    _prints(rocm, "rocm-smi", json.dumps(ROCM_JSON))
    dev = _detect_with(rocm).first
    assert (dev.name, dev.total_bytes, dev.free_bytes) == ("Radeon RX 7900 XTX", 25753026560,
                                                          25753026560 - 1073741824)
    mac = tmp_path / "mac"
    _prints(mac, "system_profiler", json.dumps(MAC_JSON))
    _prints(mac, "sysctl", "103079215104\n")
    found = _detect_with(mac)
    assert found.first.name == "Apple M2 Max" and found.first.total_bytes == 96 << 30
    assert found.first.free_bytes is None
    picked = pick(load_gpus(), detected=found)
    assert picked.hardware.name == "Apple M2 Max" and "96.0 GiB total" in picked.note


def test_a_gpu_not_in_the_table_gives_its_memory_and_says_the_bandwidth_is_unknown(tmp_path: Path) -> None:
    _prints(tmp_path, "nvidia-smi", NVIDIA_CSV.replace("GeForce RTX 3090", "Quadro GV100"))
    picked = pick(load_gpus(), detected=_detect_with(tmp_path))
    assert picked.hardware is None and picked.memory_bytes == 23840 * MIB
    assert "not in the GPU table" in picked.note and "--bandwidth" in picked.note


@pytest.mark.parametrize("body", [
    "echo 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver' >&2; exit 9",
    "echo 'garbage without commas'",
    "head -c 3000000 /dev/zero | tr '\\0' 'x'",  # endless nonsense: kept bounded
])
def test_a_broken_tool_is_a_problem_not_an_error(tmp_path: Path, body: str) -> None:
    _tool(tmp_path, "nvidia-smi", body)
    found = _detect_with(tmp_path)
    assert found.devices == () and len(found.problems) == 1 and found.problems[0].startswith("nvidia-smi: ")
    assert pick(load_gpus(), detected=found) is None


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_a_hanging_tool_is_given_up_on(tmp_path: Path) -> None:
    _tool(tmp_path, "nvidia-smi", "sleep 30")
    start = time.monotonic()
    found = _detect_with(tmp_path)
    assert time.monotonic() - start < 15 and "did not answer" in found.problems[0]


def test_csv_without_units_and_with_several_gpus() -> None:
    devices = parse_nvidia_smi("NVIDIA A100-SXM4-80GB, 81920, 80000\nNVIDIA A100-SXM4-80GB, 81920, 1024\n")
    assert len(devices) == 2 and devices[1].free_bytes == 1024 * MIB


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fit-shapes")


def _fit(bin_dir: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "paircheck", "fit", *map(str, args)], capture_output=True,
                          text=True, timeout=120, env=_env(bin_dir))


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_fit_without_vram_answers_from_nvidia_smi(tmp_path: Path, shapes: Path) -> None:
    """The issue's "done when": `fit` without --vram on a machine whose nvidia-smi reports memory."""
    t, d = fit_shapes.write("qwen2.5-7b", shapes), fit_shapes.write("qwen2.5-0.5b", shapes)
    _prints(tmp_path, "nvidia-smi", NVIDIA_CSV)
    out = _fit(tmp_path, t, d, "-c", "8192", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["vram_bytes"] == 23840 * MIB and doc["fits"] is True
    assert doc["device"].startswith("detected by `nvidia-smi")
    text = _fit(tmp_path, t, d, "-c", "8192").stdout
    assert text.splitlines()[0].startswith("memory: target + draft at -c 8192 fits in 23,840 MiB")
    assert "\ndevice: detected by `nvidia-smi" in text.split("\n\n")[0]
    # Too little free memory: the same answer as --vram with that budget, exit 1.
    _prints(tmp_path, "nvidia-smi", NVIDIA_CSV.replace("23840 MiB", "2048 MiB"))
    small = _fit(tmp_path, t, d, "-c", "8192", "--json")
    given = _fit(tmp_path, t, d, "-c", "8192", "--json", "--vram", "2048MiB")
    assert small.returncode == given.returncode == 1
    assert {k: v for k, v in json.loads(small.stdout).items() if k != "device"} == \
        {k: v for k, v in json.loads(given.stdout).items() if k != "device"}
    # --vram wins over what is detected; no tool on PATH: no budget, as before.
    assert json.loads(given.stdout)["device"] is None
    empty = tmp_path / "none"
    empty.mkdir()
    alone = json.loads(_fit(empty, t, d, "-c", "8192", "--json").stdout)
    assert alone["vram_bytes"] is None and alone["fits"] is None


def test_fit_with_a_named_gpu_uses_its_memory(shapes: Path, tmp_path: Path) -> None:
    t = fit_shapes.write("qwen2.5-7b", shapes)
    doc = json.loads(_fit(tmp_path, t, "-c", "4096", "--gpu", "4060 Ti 16GB", "--json").stdout)
    assert doc["vram_bytes"] == 16 << 30 and doc["device"].startswith("GPU table: GeForce RTX 4060 Ti 16GB")
    bad = _fit(tmp_path, t, "-c", "4096", "--gpu", "RTX 9999")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "not in the GPU table" in bad.stderr
