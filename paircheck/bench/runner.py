"""``paircheck bench run TARGET DRAFT``: check, measure the target alone and the pair, compare.

Both servers run the same binary with the same context size, one slot and the same
passed-through flags; only speculation differs (``--spec-type none`` against
``--model-draft DRAFT --spec-type draft-simple``).

The two are measured **interleaved**: both servers are up (the target's weights are one
mmap'd file, so its pages are shared), and each run is a pass over the prompts on one then
the other, in the order baseline, draft, draft, baseline, ... so that a machine that slows
down or speeds up during the measurement does so for both sides alike. Only one server works
at a time. ``sequential`` measures one after the other instead (for two servers that do not
fit in memory together, e.g. both offloaded to one GPU).

While a side's runs vary more than ``compare.STABLE_SPREAD``, runs are added to it and to the
first side (the target alone, every other side's reference), up to ``max_runs``; the
comparison says when it could not get there (``Comparison.conclusive``).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from paircheck.bench.compare import Comparison, Stability, compare, run_totals
from paircheck.bench.measure import BenchSession, BenchSettings
from paircheck.findings import Report
from paircheck.llama_server.process import llama_server, server_args
from paircheck.llama_server.prompts import Prompt
from paircheck.result_file import recording

DEFAULT_CTX = 4096
LABELS = ("baseline", "draft")


@dataclass
class PairRun:
    check: Report | None
    comparison: Comparison | None  # None when the check refused the pair
    baseline_file: Path | None = None
    draft_file: Path | None = None
    baseline: dict[str, Any] | None = None
    draft: dict[str, Any] | None = None


def _unstable(sessions: dict[str, BenchSession]) -> list[str]:
    """The sides whose runs still vary more than compare.STABLE_SPREAD, in their order."""
    ids = [p.id for p in next(iter(sessions.values())).prompts]
    return [label for label, s in sessions.items() if not Stability.of(run_totals(s.result, ids)[1], label).stable]


@dataclass(frozen=True)
class Side:
    """One server of a measurement: the target alone (``draft`` None) or with a draft, and
    flags for this server only (``--spec-draft-n-max K``)."""

    label: str
    draft: str | None = None
    args: tuple[str, ...] = ()


def run_sides(
    target: str,
    sides: Sequence[Side],
    binary: str,
    out_dir: Path,
    settings: BenchSettings,
    prompts: list[Prompt] | None = None,
    ctx_size: int = DEFAULT_CTX,
    extra: Sequence[str] = (),
    progress: bool = False,
    ready_timeout: float = 600.0,
    max_runs: int | None = None,
    sequential: bool = False,
) -> dict[str, dict[str, Any]]:
    """Measure every side on its own server, interleaved (see the module's docstring), and
    return each side's result by label; each is written to ``out_dir/LABEL.json`` as it grows.

    Several drafts or draft lengths share one measurement of the target alone: each run is a
    pass over the prompts on every server in turn, the order reversed every other run."""
    labels = [side.label for side in sides]
    if len(set(labels)) != len(labels):
        raise ValueError(f"side labels must differ: {labels}")
    out_dir.mkdir(parents=True, exist_ok=True)
    limit = max(settings.runs, max_runs if max_runs is not None else 3 * settings.runs)
    bar: Any = None
    with ExitStack() as stack:
        sessions: dict[str, BenchSession] = {}

        def open_session(side: Side) -> BenchSession:
            args = server_args(target, side.draft, ctx_size, extra) + list(side.args)
            server = stack.enter_context(llama_server(binary, args, ready_timeout, log_dir=out_dir))
            session = BenchSession(replace(settings, url=server.url), side.label, out_dir / f"{side.label}.json",
                                   prompts, {"server_command": server.command, "interleaved": not sequential})
            stack.enter_context(recording(session.result, session.save))
            session.start()
            sessions[side.label] = session
            return session

        if progress:
            from tqdm import tqdm

            bar = stack.enter_context(tqdm(desc="bench run", unit="req", leave=False))
        tick = None if bar is None else bar.update
        if sequential:
            for side in sides:
                session = open_session(side)
                for run in range(-settings.warmup, settings.runs):
                    session.run_pass(run, tick)
        else:
            for side in sides:
                open_session(side)
            run = -settings.warmup
            while run < settings.runs or run < limit:
                # every side for the runs asked; beyond, the sides whose runs still vary and the
                # first (the target alone, every other side's reference), so that each extra run
                # of a side stays interleaved with its reference, or every side while the
                # reference itself varies; with several drafts, one unsteady side would
                # otherwise rerun them all (two sides: as before, both)
                unsteady = _unstable(sessions) if run >= settings.runs else labels
                if not unsteady:
                    break
                todo = labels if labels[0] in unsteady else [labels[0], *unsteady]
                # ABBA: the side that goes first alternates, so a steady drift favours none
                for label in (todo if run % 2 == 0 else todo[::-1]):
                    sessions[label].run_pass(run, tick)
                run += 1
        return {label: s.result for label, s in sessions.items()}


def run_pair(
    target: str,
    draft: str,
    binary: str,
    out_dir: Path,
    settings: BenchSettings,
    prompts: list[Prompt] | None = None,
    ctx_size: int = DEFAULT_CTX,
    extra: Sequence[str] = (),
    progress: bool = False,
    check: bool = True,
    ready_timeout: float = 600.0,
    max_runs: int | None = None,
    sequential: bool = False,
    draft_args: Sequence[str] = (),
) -> PairRun:
    """Check the pair (llama.cpp draft-simple); if compatible, bench baseline and draft. A pair
    refused, or predicted to abort the server at run time, is not run (``comparison`` None).

    ``max_runs`` (default 3 x ``settings.runs``): the most runs per side while the runs vary;
    ``draft_args``: flags for the draft's server only (``--spec-draft-n-max K``)."""
    report = None
    if check:
        from paircheck.api import check_pair

        report = check_pair(target, draft, registry=False, fingerprint=False)
        if not report.compatible or report.run_time_aborts:
            return PairRun(report, None)
    results = run_sides(target, [Side(LABELS[0]), Side(LABELS[1], draft, tuple(draft_args))], binary, out_dir,
                        settings, prompts, ctx_size, extra, progress, ready_timeout, max_runs, sequential)
    comparison = compare(results["baseline"], results["draft"])
    return PairRun(report, comparison, out_dir / "baseline.json", out_dir / "draft.json", results["baseline"],
                   results["draft"])
