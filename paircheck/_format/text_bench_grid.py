"""``bench run`` over a grid of workloads, for people: one verdict line per grid point (context
depth, requests at once, reply length), then one compact table, the legend saying how every
number was measured, and each point's warnings.

A grid of one point is shown as before (``text_bench.render_comparison``) plus the workload
and servers line (``workload_line``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from paircheck._format.interface import DEFAULT_WIDTH
from paircheck._format.text_base import simple_table, wrap
from paircheck._format.text_bench import _x
from paircheck.bench.compare import Comparison, Spread


def _where(w: dict[str, int] | None) -> str:
    if not w:
        return "the prompts as given"
    depth = f"ctx {w['context_tokens']:,}" if w.get("context_tokens") else "short prompts"
    return f"{depth}, {w['parallel']} at once, {w['n_predict']}-token replies"


def _tps(s: Spread | None) -> str:
    return "-" if s is None else f"{s.median:.1f}"


def point_verdict(comp: Comparison) -> str:
    """``MEASURED at ctx 4,096, 2 at once, 128-token replies: draft 1.23x the aggregate tokens/s
    of baseline ...`` (or NOT CONCLUSIVE, outputs differ, nothing comparable)."""
    where = _where(comp.workload)
    b, d = comp.baseline_aggregate_tokens_per_s, comp.draft_aggregate_tokens_per_s
    agg = (f" ({d.median:.1f} against {b.median:.1f} tokens/s)" if b is not None and d is not None else "")
    head = f"MEASURED at {where}" + ("" if comp.conclusive else ", NOT CONCLUSIVE (see the warnings)")
    if comp.speedup is not None:
        word = "faster" if comp.speedup > 1.0 else "slower" if comp.speedup < 1.0 else "no change"
        per_request = "" if comp.decode_speedup is None else f", {comp.decode_speedup:.2f}x per request (decode)"
        acc = "" if comp.acceptance_rate is None else f", acceptance {comp.acceptance_rate:.1%}"
        tokens = " on equal work in tokens (the texts differ)" if comp.equal_work == "tokens" else ""
        return (f"{head}: {comp.draft_label} is {comp.speedup:.2f}x the aggregate tokens/s of "
                f"{comp.baseline_label}{agg} ({word}){tokens}{per_request}{acc}")
    if comp.time_ratio is not None:
        differ = [p.prompt_id for p in comp.prompts if not p.outputs_equal]
        return (f"MEASURED at {where}: outputs differ (prompt {', '.join(differ)}), so no speedup on equal work; "
                f"time ratio {comp.baseline_label}/{comp.draft_label} = {comp.time_ratio:.2f}{agg}")
    return f"MEASURED at {where}: nothing comparable (no complete run over the same prompts on both sides)"


def workload_line(comp: Comparison, ctx_size: int | None, width: int = 80) -> str:
    """What a one-point bench run measured and on which servers, wrapped at ``width``."""
    w = comp.workload or {}
    parallel = w.get("parallel", 1)
    servers = ("" if ctx_size is None else
               f"; servers: --parallel {parallel} --ctx-size {ctx_size} ({ctx_size // parallel:,} tokens per slot)")
    return "\n".join(wrap(f"workload: {_where(w)}{servers}", width))


def _row(comp: Comparison) -> tuple[str, ...]:
    w = comp.workload or {}
    b, d = comp.baseline, comp.draft
    runs = "-" if b is None or d is None else f"{b.runs}+{d.runs}"
    return (f"{w.get('context_tokens', 0):,}", str(w.get("parallel", 1)), str(w.get("n_predict", "-")),
            _tps(comp.baseline_aggregate_tokens_per_s), _tps(comp.draft_aggregate_tokens_per_s),
            _x(comp.speedup) + ("" if comp.conclusive else "?"), _x(comp.decode_speedup),
            "-" if comp.acceptance_rate is None else f"{comp.acceptance_rate:.1%}", runs)


HEADERS = ("context", "at\nonce", "reply", "baseline\ntok/s", "draft\ntok/s", "speedup", "per\nrequest", "accept",
           "runs")


def _legend(comps: Sequence[Comparison], ctx_sizes: Sequence[int], machine: dict[str, Any] | None) -> str:
    where = "this machine"
    if machine:
        cpu = machine.get("processor") or machine.get("machine") or "?"
        where += f" ({cpu}, {machine.get('cpu_count', '?')} CPUs)"
    servers = sorted({(c.workload or {}).get("parallel", 1): n for c, n in zip(comps, ctx_sizes, strict=True)}.items())
    said = ", ".join(f"--parallel {p} --ctx-size {n} ({n // p:,} per slot)" for p, n in servers)
    interleaved = all(c.interleaved for c in comps)
    return (f"Every row MEASURED on {where} by llama-server, target alone (baseline) and with the draft, "
            f"{'runs interleaved' if interleaved else 'one side after the other'}, greedy; servers {said}. "
            "tok/s: aggregate, all generated tokens of a run over its wall time while any request was "
            "outstanding, median over the runs; speedup: median wall time of a run baseline/draft on equal "
            "work (same outputs: the aggregate tokens/s ratio), ? where NOT CONCLUSIVE; per request: median "
            "decode tokens/s of one request (llama-server's predicted_n/predicted_ms) draft/baseline; accept: "
            "draft_n_accepted/draft_n; runs: measured runs baseline+draft. At a context depth the prompt is "
            "filled to it and its prefix reused between runs (cache_prompt).")


def render_grid(comps: Sequence[Comparison], ctx_sizes: Sequence[int], machine: dict[str, Any] | None = None,
                markdown: bool = False, width: int = DEFAULT_WIDTH) -> str:
    """Several grid points: a verdict line each, one table, the legend, each point's warnings."""
    lines: list[str] = []
    for comp in comps:
        lines += [point_verdict(comp)] if markdown else wrap(point_verdict(comp), width)
    lines.append("")
    rows = [_row(c) for c in comps]
    if markdown:
        from tabulate import tabulate

        lines.append(str(tabulate(rows, headers=[h.replace("\n", " ") for h in HEADERS], tablefmt="github",
                                  disable_numparse=True)))
    else:
        lines.append(simple_table(HEADERS, rows, right=(0, 1, 2, 3, 4, 5, 6, 7)))
    lines.append("")
    legend = _legend(comps, ctx_sizes, machine)
    lines += [legend] if markdown else wrap(legend, width)
    everywhere = set.intersection(*(set(c.notes) for c in comps)) if comps else set()
    for comp in comps:
        for kind, items in (("warning", comp.warnings + comp.stability_problems), ("note", comp.notes)):
            for item in items:
                if item in everywhere:
                    continue
                said = f"{'- ' if markdown else ''}{kind} at {_where(comp.workload)}: {item}"
                lines += [said] if markdown else wrap(said, width)
    for item in (n for n in (comps[0].notes if comps else []) if n in everywhere):
        said = f"{'- ' if markdown else ''}note: {item}"
        lines += [said] if markdown else wrap(said, width)
    return "\n".join(lines)
