"""``paircheck estimate`` as a library function: the acceptance as the user gives it (a rate
as llama-server prints it, at the draft length and p-min it ran at; a per-token rate; a bench
or probe result), the device (named, or found here), the workload, then one prediction from
``paircheck.speed``."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from paircheck.errors import InputError

if TYPE_CHECKING:
    from paircheck.speed.acceptance import Acceptance
    from paircheck.speed.estimate import Estimate

BACKENDS = ("cuda", "metal", "rocm", "vulkan", "cpu")


def _is_probe(path: str) -> bool:
    """A probe result (paircheck probe) rather than a bench result: read its kind."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False  # the bench reader says what is wrong with the file
    return b'"kind": "paircheck-probe"' in head


def _given_acceptance(acceptance: float | None, acceptance_rate: float | None, draft_max: int | None,
                      p_min: float | None, draft_min: int | None, from_file: str | None) -> Acceptance | None:
    """The acceptance given as an option, checked (one of them at most)."""
    from paircheck.speed.acceptance import RATE, Acceptance

    given = [o for o, v in (("--acceptance-rate", acceptance_rate), ("--per-token-acceptance", acceptance),
                            ("--from", from_file)) if v is not None]
    if len(given) > 1:
        raise InputError(given[1], f"give one of {', '.join(given)}, not several")
    if acceptance_rate is not None:
        if not 0.0 < acceptance_rate <= 1.0:
            raise InputError("--acceptance-rate", f"must be above 0 and at most 1, got {acceptance_rate:g}")
        if draft_max is None:
            raise InputError("--acceptance-rate", "needs --draft-max K: the --spec-draft-n-max it was measured at "
                             "(accepted / drafted depends on it)")
        return Acceptance(acceptance_rate, RATE, draft_max, p_min or 0.0, draft_min or 0, "given")
    if acceptance is not None:
        if not 0.0 <= acceptance <= 1.0:
            raise InputError("--per-token-acceptance", f"must be between 0 and 1, got {acceptance:g}")
        return Acceptance(acceptance, basis="given")
    return None


def estimate(target: str, draft: str, *, acceptance: float | None = None, acceptance_rate: float | None = None,
             draft_max: int | None = None, p_min: float | None = None, draft_min: int | None = None,
             from_file: str | None = None, cost_ratio: float | None = None, verify_cost: float | None = None,
             round_cost: float = 0.0, gpu: str | None = None, bandwidth: float | None = None, vram: str | None = None,
             backend: str | None = None, context_tokens: str = "0", n_predict: str = "128", parallel: str = "1",
             detect: bool = False) -> Estimate:
    """``paircheck estimate TARGET DRAFT``: tokens/s of the target alone and with the draft,
    PREDICTED on a device (``gpu`` from the table, ``bandwidth`` in GB/s, or with ``detect``
    the GPU this machine's tools report), always labelled as a model.

    The acceptance, one of: ``acceptance_rate`` (accepted / drafted, as llama-server prints it,
    measured at ``draft_max`` and ``p_min``), ``acceptance`` (the per-token rate), ``from_file``
    (a bench result's counts, or a probe result's measured work); default: a documented one
    for this pair, else the assumed band. Without a device no speed is predicted: the
    result says what the speedup depends on (``verify_cost`` and ``round_cost``, in target
    decodes, model it with given costs). ``context_tokens``, ``n_predict`` and ``parallel``:
    comma-separated lists, one row each."""
    from paircheck.api._device import pick_device
    from paircheck.pipeline import describe
    from paircheck.speed.acceptance import RATE, Acceptance
    from paircheck.speed.estimate import DEFAULT_DRAFT_MAX, estimate_pair
    from paircheck.workload import parse_grid

    if draft_max is not None and draft_max < 1:
        # Checked before any default can stand in for it (0 used to become 3).
        raise InputError("--draft-max", f"must be at least 1, got {draft_max}")
    if p_min is not None and not 0.0 <= p_min < 1.0:
        raise InputError("--p-min", f"must be at least 0 and below 1, got {p_min:g}")
    if backend is not None and backend not in BACKENDS:
        raise InputError("--backend", f"{backend!r} is not one of {', '.join(BACKENDS)}")
    reported = _given_acceptance(acceptance, acceptance_rate, draft_max, p_min, draft_min, from_file)
    if acceptance_rate is not None:
        p_min = p_min or 0.0
    grid = parse_grid(context_tokens, n_predict, parallel)
    picked = pick_device(gpu, bandwidth, vram, detect)
    hardware = picked.hardware if picked is not None else None
    if hardware is not None and backend is not None:
        hardware = replace(hardware, backend_class="rocm/vulkan" if backend in ("rocm", "vulkan") else backend)
    basis = picked.basis if picked is not None else "table"
    note = picked.note if picked is not None else None
    if from_file is not None and _is_probe(from_file):
        from paircheck.probe.estimate_from import estimate_from_probe

        result = estimate_from_probe(describe(target), describe(draft), from_file, draft_max, cost_ratio,
                                     hardware, basis, grid[0].context_tokens)
        result.device_note = note
        return result
    source = borrowed = None
    target_desc, draft_desc = describe(target), describe(draft)
    if from_file is not None:
        from paircheck.api._bench import bench_p_min
        from paircheck.bench.from_result import acceptance_from, other_models_warning

        measured = acceptance_from(from_file)
        source = f"bench:{from_file}"
        draft_max = draft_max or measured.draft_max
        # accepted / drafted at the server's setting (its defaults, the pinned build's, when not set)
        at_k, at_p = measured.draft_max or DEFAULT_DRAFT_MAX, bench_p_min(from_file)
        reported = Acceptance(measured.acceptance, RATE, at_k, at_p, 0, "measured",
                              f"in {from_file} (draft_n_accepted / draft_n)")
        borrowed = other_models_warning(measured, from_file, target_desc, draft_desc)
    result = estimate_pair(target_desc, draft_desc, None, draft_max or DEFAULT_DRAFT_MAX, source,
                           cost_ratio, verify_cost or 0.0, round_cost, hardware, basis, None, draft_max,
                           reported=reported, p_min=p_min, workloads=grid, draft_min=draft_min,
                           costs_given=verify_cost is not None)
    if borrowed is not None:
        result.warnings.insert(0, borrowed)  # whose number it is comes before what is made of it
    result.device_note = note
    return result
