"""``paircheck fit`` as a library function: both models' memory at a context with
llama-server's flags (``FitOptions``, ``DraftOptions``), against a budget."""

from __future__ import annotations

from typing import TYPE_CHECKING

from paircheck.errors import InputError
from paircheck.fit import DraftOptions, FitOptions

if TYPE_CHECKING:
    from paircheck.fit import FitResult

__all__ = ["DraftOptions", "FitOptions", "fit_memory"]


def fit_memory(target: str, draft: str | None, options: FitOptions, draft_options: DraftOptions | None = None,
               *,
               vram: str | None = None, gpu: str | None = None, detect: bool = False) -> FitResult:
    """``paircheck fit TARGET [DRAFT]``: memory of the target (and draft) as llama.cpp allocates
    it with ``options`` (the target's flags) and ``draft_options``, against ``vram`` ("24GiB"),
    else the ``gpu`` row's memory, else (``detect``) the free memory this machine's tools report;
    no budget when there is none."""
    from paircheck.api._device import pick_device
    from paircheck.fit import fit, parse_size, sized
    from paircheck.pipeline import describe

    if options.ctx <= 0:
        raise InputError("--ctx", f"must be positive, got {options.ctx}")
    if options.ubatch <= 0 or options.batch <= 0:
        raise InputError("--ubatch", "batch sizes must be positive")
    budget = parse_size(vram) if vram is not None else None
    device = None
    if budget is None:
        picked = pick_device(gpu, None, detect=detect)
        if picked is not None and picked.memory_bytes is not None:
            budget, device = picked.memory_bytes, picked.note
    t_desc = sized(describe(target))
    d_desc = sized(describe(draft)) if draft else None
    result = fit(t_desc.metadata, d_desc.metadata if d_desc else None, options, draft_options or DraftOptions(), budget,
                 (t_desc.display_name, d_desc.display_name if d_desc else ""))
    result.device = device
    return result
