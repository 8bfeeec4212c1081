"""The device a speed or memory answer is for: named (``--gpu``, ``--bandwidth``), else the one
this machine's tools report; and ``paircheck gpus``, the table the names come from."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from paircheck.hardware.pick import Picked
    from paircheck.hardware.table import GpuTable


def pick_device(gpu: str | None, bandwidth: float | None, vram: str | None = None,
                detect: bool = True) -> Picked | None:
    """The device the options name, else the one this machine's tools report (None when there
    is none); ``vram`` ("24GiB") overrides the row's memory."""
    from paircheck.hardware.detect import detect as run_detection
    from paircheck.hardware.pick import pick
    from paircheck.hardware.table import load_gpus
    from paircheck.sizes import parse_size

    budget = parse_size(vram) if vram is not None else None
    detected = run_detection() if detect and gpu is None and bandwidth is None else None
    # The table only when a row can be asked for: parsing it was a fifth of a warm scan.
    named = gpu is not None or (detected is not None and detected.first is not None)
    return pick(load_gpus() if named else (), gpu, bandwidth, budget, detected)


def gpus(name: str | None = None, *, detect: bool = False) -> GpuTable:
    """The GPUs and Apple chips paircheck predicts speed for; ``name`` picks the row it matches
    (an InputError under NAME when none does)."""
    from paircheck.hardware.detect import detect as run_detection
    from paircheck.hardware.table import GpuTable, find_gpu, load_gpus

    rows = load_gpus()
    return GpuTable((find_gpu(name, rows, "NAME"),) if name else rows, run_detection() if detect else None,
                    bool(name))
