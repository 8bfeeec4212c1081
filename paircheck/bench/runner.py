"""``paircheck bench run TARGET DRAFT``: check, measure the target alone and the pair, compare.

Both servers run the same binary with the same context size, slots and passed-through flags;
only speculation differs (``--spec-type none`` against ``--model-draft DRAFT --spec-type
draft-simple``).

The two are measured **interleaved**: both servers are up (the target's weights are one
mmap'd file, so its pages are shared), and each run is a pass over the prompts on one then
the other, in the order baseline, draft, draft, baseline, ... so that a machine that slows
down or speeds up during the measurement does so for both sides alike. Only one server works
at a time. ``sequential`` measures one after the other instead (for two servers that do not
fit in memory together, e.g. both offloaded to one GPU).

While a side's runs vary more than ``compare.STABLE_SPREAD``, runs are added to it and to the
first side (the target alone, every other side's reference), up to ``max_runs``; the
comparison says when it could not get there (``Comparison.conclusive``).

A grid of workloads (``paircheck.workload``): the servers are started once per ``parallel``
value, with that many slots and a context big enough for each slot to hold the deepest
context plus the longest reply of those points (llama-server splits ``--ctx-size`` evenly
across its slots); each point is measured as above, in the grid's order within that group.
The prompts at a depth are filled once, by the first server, and sent alike to every side.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from paircheck.bench.compare import Comparison, Stability, compare, stability_values
from paircheck.bench.measure import BenchSession, BenchSettings, Prepared
from paircheck.errors import InputError
from paircheck.findings import Report
from paircheck.llama_server.process import RunningServer, llama_server, server_args
from paircheck.llama_server.prompts import BUILTIN_PROMPTS, Prompt
from paircheck.result_file import recording
from paircheck.workload import Workload

DEFAULT_CTX = 4096  # per slot, at least: what bench run always gave its one slot
# Per slot beyond the context depth and the reply: the request's own tokens where it is not
# filled (a depth below the prompt's length) and the draft's last proposal.
CTX_ROOM = 256
LABELS = ("baseline", "draft")


@dataclass
class PointRun:
    """One workload's measurement: each side's result by label, the servers' context size, and
    where the result files are."""

    workload: Workload
    results: dict[str, dict[str, Any]]
    ctx_size: int
    folder: Path
    comparison: Comparison | None = None

    def file(self, label: str) -> Path:
        return self.folder / f"{label}.json"


@dataclass
class PairRun:
    check: Report | None
    comparison: Comparison | None  # None when the check refused the pair; else the first point's
    baseline_file: Path | None = None
    draft_file: Path | None = None
    baseline: dict[str, Any] | None = None
    draft: dict[str, Any] | None = None
    points: list[PointRun] = field(default_factory=list)  # every workload, in the grid's order


def _unstable(sessions: dict[str, BenchSession]) -> list[str]:
    """The sides whose runs still vary more than compare.STABLE_SPREAD, in their order."""
    ids = [p.id for p in next(iter(sessions.values())).prompts]
    return [label for label, s in sessions.items()
            if not Stability.of(stability_values(s.result, ids), label).stable]


def point_folder(workload: Workload) -> str:
    """The folder of one grid point's result files: ``ctx4096-n128-p2``."""
    return f"ctx{workload.context_tokens}-n{workload.n_predict}-p{workload.parallel}"


def ctx_size_for(points: Sequence[Workload], prompts: Sequence[Prompt] | None = None) -> int:
    """The servers' --ctx-size for points sharing one slot count: every slot holds the deepest
    context plus the longest reply and CTX_ROOM (at least DEFAULT_CTX), rounded up to 256."""
    parallel = points[0].parallel
    reply = max([w.n_predict for w in points] + [p.n_predict or 0 for p in prompts or ()])
    depth = max(w.context_tokens for w in points)
    need = depth + reply + CTX_ROOM
    per_slot = max(DEFAULT_CTX, -(-need // 256) * 256)
    return parallel * per_slot


def check_ctx_size(ctx_size: int, grid: Sequence[Workload], prompts: Sequence[Prompt] | None = None) -> None:
    """A --ctx-size given by hand must leave every slot room for its depth and reply (InputError)."""
    for w in grid:
        reply = max([w.n_predict] + [p.n_predict or 0 for p in prompts or ()])
        per_slot = ctx_size // w.parallel
        if per_slot < w.context_tokens + reply:
            least = w.parallel * (w.context_tokens + reply + CTX_ROOM)
            raise InputError("--ctx-size", f"{ctx_size} gives each of {w.parallel} slot(s) {per_slot} tokens, fewer "
                             f"than --context-tokens {w.context_tokens} + a {reply}-token reply (llama-server splits "
                             f"--ctx-size across --parallel slots); give at least {least}, or leave --ctx-size out "
                             "and paircheck sizes it")


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
    ctx_size: int | None = None,
    extra: Sequence[str] = (),
    progress: bool = False,
    ready_timeout: float = 600.0,
    max_runs: int | None = None,
    sequential: bool = False,
    workload: Workload | None = None,
    document: str | None = None,
) -> dict[str, dict[str, Any]]:
    """Measure every side on its own server, interleaved (see the module's docstring), and
    return each side's result by label; each is written to ``out_dir/LABEL.json`` as it grows.

    Several drafts or draft lengths share one measurement of the target alone: each run is a
    pass over the prompts on every server in turn, the order reversed every other run.
    ``workload``: the context depth, reply length and requests at once (default: the prompts as
    given, ``settings.n_predict``, one at a time); ``ctx_size`` None sizes the context for it."""
    point = workload or Workload(settings.context_tokens, settings.n_predict, settings.parallel)
    done = run_grid(target, sides, binary, out_dir, settings, prompts, [point], ctx_size, extra, progress,
                    ready_timeout, max_runs, sequential, document)
    return done[0].results


def run_grid(
    target: str,
    sides: Sequence[Side],
    binary: str,
    out_dir: Path,
    settings: BenchSettings,
    prompts: list[Prompt] | None,
    grid: Sequence[Workload],
    ctx_size: int | None = None,
    extra: Sequence[str] = (),
    progress: bool = False,
    ready_timeout: float = 600.0,
    max_runs: int | None = None,
    sequential: bool = False,
    document: str | None = None,
    context_source: str = "built-in",
) -> list[PointRun]:
    """Measure every side at every workload of ``grid`` (see the module's docstring); one point's
    files go to ``out_dir`` itself, several points' each to ``out_dir/point_folder(w)``.

    ``ctx_size`` None: ``ctx_size_for`` each slot count; given, it must hold every point
    (``check_ctx_size``)."""
    labels = [side.label for side in sides]
    if len(set(labels)) != len(labels):
        raise ValueError(f"side labels must differ: {labels}")
    if not grid:
        raise ValueError("an empty grid")
    if ctx_size is not None:
        check_ctx_size(ctx_size, grid, prompts)
    prompts = list(prompts or BUILTIN_PROMPTS)
    out_dir.mkdir(parents=True, exist_ok=True)
    limit = max(settings.runs, max_runs if max_runs is not None else 3 * settings.runs)
    groups: dict[int, list[Workload]] = {}
    for w in grid:
        groups.setdefault(w.parallel, []).append(w)
    prepared: dict[int, list[Prepared]] = {}  # by depth: the same bytes for every side and slot count
    points: dict[Workload, PointRun] = {}
    bar: Any = None
    with ExitStack() as outer:
        if progress:
            from tqdm import tqdm

            bar = outer.enter_context(tqdm(desc="bench run", unit="req", leave=False))
        tick = None if bar is None else bar.update

        for parallel, group in groups.items():
            ctx = ctx_size if ctx_size is not None else ctx_size_for(group, prompts)

            def start(stack: ExitStack, side: Side, parallel: int = parallel, ctx: int = ctx) -> RunningServer:
                args = server_args(target, side.draft, ctx, extra, parallel) + list(side.args)
                return stack.enter_context(llama_server(binary, args, ready_timeout, log_dir=out_dir))

            def open_session(stack: ExitStack, server: RunningServer, side: Side, w: Workload,
                             ctx: int = ctx) -> BenchSession:
                folder = out_dir if len(grid) == 1 else out_dir / point_folder(w)
                folder.mkdir(parents=True, exist_ok=True)
                point_settings = replace(settings, url=server.url, n_predict=w.n_predict,
                                         context_tokens=w.context_tokens, parallel=w.parallel)
                session = BenchSession(point_settings, side.label, folder / f"{side.label}.json", prompts,
                                       {"server_command": server.command, "interleaved": not sequential,
                                        "ctx_size": ctx}, document, context_source)
                stack.enter_context(recording(session.result, session.save))
                made = session.start(prepared.get(w.context_tokens))
                prepared.setdefault(w.context_tokens, made)
                points.setdefault(w, PointRun(w, {}, ctx, folder)).results[side.label] = session.result
                return session

            if sequential:
                for side in sides:
                    with ExitStack() as stack:
                        server = start(stack, side)
                        for w in group:
                            with ExitStack() as point:
                                session = open_session(point, server, side, w)
                                for run in range(-settings.warmup, settings.runs):
                                    session.run_pass(run, tick)
                continue
            with ExitStack() as stack:
                servers = {side.label: start(stack, side) for side in sides}
                for w in group:
                    with ExitStack() as point:
                        sessions = {side.label: open_session(point, servers[side.label], side, w) for side in sides}
                        _interleave(sessions, labels, settings, limit, tick)
    return [points[w] for w in grid]


def _interleave(sessions: dict[str, BenchSession], labels: list[str], settings: BenchSettings, limit: int,
                tick: Any) -> None:
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


def run_pair(
    target: str,
    draft: str,
    binary: str,
    out_dir: Path,
    settings: BenchSettings,
    prompts: list[Prompt] | None = None,
    ctx_size: int | None = None,
    extra: Sequence[str] = (),
    progress: bool = False,
    check: bool = True,
    ready_timeout: float = 600.0,
    max_runs: int | None = None,
    sequential: bool = False,
    draft_args: Sequence[str] = (),
    grid: Sequence[Workload] | None = None,
    document: str | None = None,
    context_source: str = "built-in",
) -> PairRun:
    """Check the pair (llama.cpp draft-simple); if compatible, bench baseline and draft at every
    workload of ``grid`` (default: the prompts as given, ``settings.n_predict``, one at a time).
    A pair refused, or predicted to abort the server at run time, is not run (``comparison`` None).

    ``max_runs`` (default 3 x ``settings.runs``): the most runs per side while the runs vary;
    ``draft_args``: flags for the draft's server only (``--spec-draft-n-max K``); ``ctx_size``
    None: sized for the grid (``ctx_size_for``)."""
    report = None
    if check:
        from paircheck.pipeline import check_pair

        report = check_pair(target, draft, registry=False, fingerprint=False)
        if not report.compatible or report.run_time_aborts:
            return PairRun(report, None)
    grid = list(grid or [Workload(settings.context_tokens, settings.n_predict, settings.parallel)])
    points = run_grid(target, [Side(LABELS[0]), Side(LABELS[1], draft, tuple(draft_args))], binary, out_dir,
                      settings, prompts, grid, ctx_size, extra, progress, ready_timeout, max_runs, sequential,
                      document, context_source)
    for p in points:
        p.comparison = compare(p.results["baseline"], p.results["draft"])
    first = points[0]
    return PairRun(report, first.comparison, first.file("baseline"), first.file("draft"), first.results["baseline"],
                   first.results["draft"], points)
