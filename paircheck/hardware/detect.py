"""What this machine's own tools say its GPU is: ``nvidia-smi``, ``rocm-smi``, or macOS's
``system_profiler`` (with ``sysctl hw.memsize`` for the unified memory).

Only a tool on PATH is run, with a bounded wait and bounded output; anything it prints that
cannot be read is a ``problem`` to show, never an error, because detection only saves the
user typing ``--gpu`` or ``--vram``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

TIMEOUT_S = 5.0
MAX_OUTPUT = 1 << 20  # bytes kept of a tool's output
NVIDIA_QUERY = ("nvidia-smi", "--query-gpu=name,memory.total,memory.free", "--format=csv")
ROCM_QUERY = ("rocm-smi", "--showproductname", "--showmeminfo", "vram", "--json")
MAC_QUERY = ("system_profiler", "SPDisplaysDataType", "-json")
MAC_MEMORY = ("sysctl", "-n", "hw.memsize")
MIB = 1 << 20


@dataclass(frozen=True)
class Device:
    """One GPU as a tool reported it. Memory in bytes; ``free_bytes`` None when the tool
    does not say (a unified-memory Mac)."""

    name: str
    total_bytes: int
    free_bytes: int | None


@dataclass(frozen=True)
class Detected:
    """What detection found: the devices, the command that said so, and what went wrong
    (a tool that failed or printed something unreadable)."""

    devices: tuple[Device, ...] = ()
    command: str = ""
    problems: tuple[str, ...] = field(default=())

    @property
    def first(self) -> Device | None:
        return self.devices[0] if self.devices else None


Runner = Callable[[Sequence[str]], str]


def run_tool(argv: Sequence[str]) -> str:
    """Run a tool and return what it printed; OSError or ValueError when it fails."""
    try:
        done = subprocess.run(list(argv), capture_output=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise ValueError(f"did not answer within {TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        err = done.stderr[:200].decode("utf-8", "replace").strip().splitlines()
        raise ValueError(f"exited with code {done.returncode}" + (f": {err[0]}" if err else ""))
    return done.stdout[:MAX_OUTPUT].decode("utf-8", "replace")


def _mib(cell: str) -> int:
    """A memory cell of nvidia-smi's CSV ("24576 MiB", or "24576" with nounits) in bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(MiB)?\s*", cell)
    if not m:
        raise ValueError(f"unreadable memory {cell.strip()!r}")
    return int(float(m.group(1)) * MIB)


def parse_nvidia_smi(text: str) -> tuple[Device, ...]:
    """nvidia-smi's ``--query-gpu=name,memory.total,memory.free --format=csv`` output (with or
    without its header and units)."""
    devices = []
    for line in text.splitlines():
        if not line.strip() or line.lower().startswith("name,"):
            continue
        cells = line.rsplit(",", 2)
        if len(cells) != 3:
            raise ValueError(f"unreadable line {line.strip()[:80]!r}")
        devices.append(Device(cells[0].strip(), _mib(cells[1]), _mib(cells[2])))
    if not devices:
        raise ValueError("listed no GPU")
    return tuple(devices)


def _field(card: dict[str, object], *words: str) -> str | None:
    for k, v in card.items():
        if all(w in k.lower() for w in words) and isinstance(v, (str, int)):
            return str(v)
    return None


def parse_rocm_smi(text: str) -> tuple[Device, ...]:
    """rocm-smi's ``--showproductname --showmeminfo vram --json`` output: one object per card
    with "VRAM Total Memory (B)", "VRAM Total Used Memory (B)" and a "Card series" name."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"printed no JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ValueError("printed JSON that is not an object")
    devices = []
    for card_id, card in sorted(data.items()):
        if not isinstance(card, dict) or not str(card_id).startswith("card"):
            continue
        total, used = _field(card, "total", "memory"), _field(card, "used", "memory")
        name = _field(card, "card", "series") or _field(card, "product", "name") or _field(card, "sku")
        if total is None or not total.isdigit() or name is None:
            raise ValueError(f"{card_id}: no VRAM total or card name")
        free = int(total) - int(used) if used is not None and used.isdigit() else None
        devices.append(Device(name.strip(), int(total), free))
    if not devices:
        raise ValueError("listed no card")
    return tuple(devices)


def parse_system_profiler(text: str, memsize: str) -> tuple[Device, ...]:
    """system_profiler's ``SPDisplaysDataType -json`` (the chip's name, "Apple M2 Max") and
    ``sysctl -n hw.memsize`` (the unified memory in bytes)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"printed no JSON ({exc.msg})") from None
    items = data.get("SPDisplaysDataType") if isinstance(data, dict) else None
    models = [i.get("sppci_model") for i in items or () if isinstance(i, dict)]
    names = [n for n in models if isinstance(n, str) and n.startswith("Apple")]
    if not names:
        raise ValueError("names no Apple GPU")
    if not memsize.strip().isdigit():
        raise ValueError(f"hw.memsize {memsize.strip()[:40]!r} is not a number")
    return (Device(names[0], int(memsize.strip()), None),)


def detect(which: Callable[[str], str | None] = shutil.which, run: Runner = run_tool) -> Detected:
    """The first of nvidia-smi, rocm-smi and system_profiler on PATH, asked for its GPUs."""
    problems: list[str] = []
    for argv, parse in ((NVIDIA_QUERY, parse_nvidia_smi), (ROCM_QUERY, parse_rocm_smi)):
        found = which(argv[0])
        if found is None:
            continue
        try:
            return Detected(parse(run([found, *argv[1:]])), " ".join(argv))
        except (OSError, ValueError) as exc:
            problems.append(f"{argv[0]}: {exc}")
    profiler, sysctl = which(MAC_QUERY[0]), which(MAC_MEMORY[0])
    if profiler is not None and sysctl is not None:
        try:
            devices = parse_system_profiler(run([profiler, *MAC_QUERY[1:]]), run([sysctl, *MAC_MEMORY[1:]]))
            return Detected(devices, f"{' '.join(MAC_QUERY)} and {' '.join(MAC_MEMORY)}")
        except (OSError, ValueError) as exc:
            problems.append(f"{MAC_QUERY[0]}: {exc}")
    return Detected(problems=tuple(problems))
