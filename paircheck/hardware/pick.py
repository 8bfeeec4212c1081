"""Which device a prediction or a fit is for: the one named (``--gpu``), the numbers given
(``--bandwidth``, ``--vram``), or the one this machine's tools report, in that order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from paircheck.errors import InputError
from paircheck.hardware.detect import Detected
from paircheck.hardware.device import Hardware
from paircheck.hardware.table import Gpu, find_gpu, key

GIB = 1 << 30


@dataclass(frozen=True)
class Picked:
    """The device, how it was chosen (``table``, ``given`` or ``detected``), the memory a fit
    may use in bytes (a detected device's free memory; None when unknown), and what to tell
    the user about the choice."""

    hardware: Hardware | None  # None: memory known, bandwidth not (a detected GPU not in the table)
    basis: str
    memory_bytes: int | None
    note: str


# macOS lets the GPU wire only part of an Apple chip's memory (Metal's
# recommendedMaxWorkingSetSize; `sudo sysctl iogpu.wired_limit_mb=N` raises it). The
# fractions are what llama.cpp logged as recommendedMaxWorkingSetSize on real machines:
# 21845.34 MB of 32 GiB, M2 Max (ollama/ollama#434) and M1 Max (ggml-org/llama.cpp#2011):
# 2/3; 49152.00 MiB of 64 GiB, M1 Max (llama.cpp#1870) and 73728.00 MB of 96 GiB, M2 Max
# (llama.cpp#3213): 3/4. No log of a 36 or 48 GiB machine was found: the cut between the
# two fractions is ASSUMED above 36 GiB. Newer macOS releases may allow more (107.52 of
# 128 GiB measured on an M5 Max, antirez/ds4#893).
APPLE_LIMIT_SOURCE = "recommendedMaxWorkingSetSize as llama.cpp logs it: llama.cpp#3213, #1870"
APPLE_SMALL_MAX_GIB = 36


def apple_gpu_limit_bytes(memory_gib: float) -> int:
    """The memory macOS lets the GPU wire by default on an Apple chip with ``memory_gib``."""
    fraction = 2 / 3 if memory_gib <= APPLE_SMALL_MAX_GIB else 3 / 4
    return int(memory_gib * GIB * fraction)


def _row_note(gpu: Gpu) -> str:
    return f"{gpu.name}: {gpu.bandwidth_gbs:g} GB/s, {gpu.memory_gib:g} GiB ({gpu.source})"


def pick(gpus: Sequence[Gpu], gpu: str | None = None, bandwidth_gbs: float | None = None,
         vram_bytes: int | None = None, detected: Detected | None = None) -> Picked | None:
    """The device to predict for; None when nothing names one and nothing was detected."""
    if bandwidth_gbs is not None and not bandwidth_gbs > 0:
        raise InputError("--bandwidth", f"must be > 0 GB/s, got {bandwidth_gbs:g}")
    if gpu is not None:
        row = find_gpu(gpu, gpus)
        bw = bandwidth_gbs if bandwidth_gbs is not None else row.bandwidth_gbs
        apple = row.kind == "unified" and row.vendor == "apple"
        mem = vram_bytes if vram_bytes is not None else int(row.memory_gib * GIB)
        given = "" if vram_bytes is None else f"; memory {vram_bytes / GIB:g} GiB (--vram)"
        if apple and vram_bytes is None:
            # The row's memory is the largest configuration sold; the GPU gets part of it.
            mem = apple_gpu_limit_bytes(row.memory_gib)
            share = "2/3" if row.memory_gib <= APPLE_SMALL_MAX_GIB else "3/4"
            given = (f"; memory ASSUMED: {mem / GIB:g} GiB, macOS's default GPU limit ({share}) of the "
                     f"{row.memory_gib:g} GiB model ({APPLE_LIMIT_SOURCE}); for another size or a raised "
                     "iogpu.wired_limit_mb, give --vram")
        source = row.source if bandwidth_gbs is None else "--bandwidth"
        hw = Hardware(row.name, bw, mem / GIB, row.vendor, source)
        given += "" if bandwidth_gbs is None else f"; bandwidth {bandwidth_gbs:g} GB/s (--bandwidth)"
        return Picked(hw, "table", mem, f"GPU table: {_row_note(row)}{given}")
    if bandwidth_gbs is not None:
        hw = Hardware(f"{bandwidth_gbs:g} GB/s device", bandwidth_gbs, None if vram_bytes is None else vram_bytes / GIB,
                      "", "--bandwidth")
        return Picked(hw, "given", vram_bytes, f"given: {bandwidth_gbs:g} GB/s (--bandwidth)")
    if detected is None or detected.first is None:
        return None
    dev = detected.first
    free = dev.free_bytes if dev.free_bytes is not None else dev.total_bytes
    mem = vram_bytes if vram_bytes is not None else free
    more = f" (the first of {len(detected.devices)})" if len(detected.devices) > 1 else ""
    said = "free" if dev.free_bytes is not None else "total"
    seen = f"detected by `{detected.command}`: {dev.name}{more}, {free / GIB:.1f} GiB {said}"
    found = next((g for g in gpus if key(dev.name) in {key(s) for s in (g.name, *g.aliases)}), None)
    if found is None:
        return Picked(None, "detected", mem, f"{seen}; not in the GPU table, so its bandwidth is unknown: "
                                             "give --gpu or --bandwidth to predict speed")
    hw = Hardware(found.name, found.bandwidth_gbs, mem / GIB, found.vendor, found.source)
    return Picked(hw, "detected", mem, f"{seen}; GPU table: {_row_note(found)}")
