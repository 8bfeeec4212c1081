"""The probe's summary for people: a verdict line, the drafts ranked, the best draft by draft
length and by prompt kind, and the launch line. Every acceptance says it was measured (on
which server, how); every speedup says it is modelled."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from paircheck._format.interface import RenderOptions
from paircheck._format.text_base import wrap

if TYPE_CHECKING:
    from paircheck.probe.run import ProbeOutcome
    from paircheck.probe.summary import DraftSummary, Row

# The draft lengths shown by default (every one of 1..16 is in the JSON, and with -v).
SHOWN_K = (1, 2, 3, 4, 6, 8, 12, 16)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _x(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.2f}x" + (" (slower)" if x < 0.995 else "")


def _n(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.1f}"


def aborts(data: dict, index: int) -> list[list[int | str]]:
    drafts = data.get("drafts", [])
    return drafts[index].get("foreign_tokens", []) if index < len(drafts) else []


def ranked(outcome: ProbeOutcome) -> list[tuple[int, DraftSummary]]:
    """Best first: drafts that would not abort, by modelled speedup at their best length,
    then by measured acceptance; drafts without a cost ratio after those with one."""
    order = list(enumerate(outcome.summaries))

    def key(item: tuple[int, DraftSummary]) -> tuple[bool, float, float]:
        i, s = item
        return (not aborts(outcome.data, i), s.modelled_speedup or 0.0, s.acceptance_rate or 0.0)

    return sorted(order, key=key, reverse=True)


def _how(data: dict) -> str:
    sampling = data.get("sampling", {})
    temp = sampling.get("temperature", 0.0)
    decoding = "greedy" if not temp else f"sampled at temperature {temp:g} (expected values)"
    template = "chat template applied" if data.get("template") == "applied" else "raw prompts"
    n_prompts = len(data.get("prompts", []))
    server = data.get("target", {}).get("server", {}) or {}
    build = server.get("build_info")
    # a build made without git metadata (the pinned sdist's) says "b0-unknown": say nothing then
    where = f"llama-server {build}" if build and "unknown" not in build else "llama-server"
    return (f"{where} on this machine, {decoding}, {template}, {n_prompts} prompts x "
            f"{data.get('n_predict')} tokens")


def _table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> list[str]:
    from tabulate import tabulate

    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True).splitlines()


def _middle(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    keep = limit - 1
    return text[: (keep + 1) // 2] + "…" + text[len(text) - keep // 2:]


def _shared_prefix(name: str, others: Sequence[str]) -> int:
    """How much of ``name``'s start another name shares, cut back to a separator."""
    best = 0
    for other in others:
        n = 0
        while n < min(len(name), len(other)) and name[n] == other[n]:
            n += 1
        best = max(best, n)
    while best and name[best - 1] not in ".-_ ":
        best -= 1
    return best


def short_names(names: Sequence[str], limit: int) -> list[str]:
    """Names within ``limit`` that can still be told apart: a name first loses the start it
    shares with another (``…Q8_0.gguf``, ``…Q2_K.gguf``), then its middle."""
    out = []
    for i, name in enumerate(names):
        if len(name) > limit:
            shared = _shared_prefix(name, [n for j, n in enumerate(names) if j != i])
            if shared >= 4:
                name = "…" + name[shared:]
        out.append(_middle(name, limit))
    return out


def _fitted(rows: list[list[str]], headers: Sequence[str], name_col: int, width: int) -> list[str]:
    """The table within ``width``: long names are shortened (short_names) until it fits."""
    table = _table(rows, headers)
    names = [r[name_col] for r in rows]
    longest = max(map(len, names))
    while max(map(len, table)) > width and longest > 12:
        longest = max(12, longest - (max(map(len, table)) - width))
        shown = short_names(names, longest)
        table = _table([[*r[:name_col], n, *r[name_col + 1:]] for r, n in zip(rows, shown, strict=True)], headers)
    return table


def _by_k(summary: DraftSummary, p_mins: list[float], verbose: bool) -> list[str]:
    ks = range(1, 17) if verbose else SHOWN_K
    tuned = _tuned(summary)
    # one p-min beside the default: the one that tunes best, else the lowest (-v: every one)
    extra = [p for p in p_mins if p > 0] if verbose else [tuned.p_min] if tuned else [p for p in p_mins if p > 0][:1]
    headers = ("k", "drafted", "accepted", "acc/pass", "MODELLED") + tuple(
        h for p in extra for h in (f"acc/pass p{p:g}", "MODELLED"))
    rows = []
    for k in ks:
        r0 = summary.row(k, 0.0)
        if r0 is None:
            continue
        cells: tuple[str, ...] = (str(k), _n(r0.drafted), _n(r0.accepted), f"{r0.accepted_per_pass:.2f}",
                                  _x(r0.modelled_speedup).replace(" (slower)", ""))
        for p in extra:
            rp = summary.row(k, p)
            cells += ("-", "-") if rp is None else (f"{rp.accepted_per_pass:.2f}",
                                                    _x(rp.modelled_speedup).replace(" (slower)", ""))
        rows.append(cells)
    return _table(rows, headers)


def _tuned(summary: DraftSummary) -> Row | None:
    """The best setting with a p-min above 0, when it beats the best at p-min 0 (the default)."""
    best = summary.best
    if best is None or best.p_min == 0 or summary.modelled_speedup is None or best.modelled_speedup is None:
        return None
    return best if best.modelled_speedup > summary.modelled_speedup + 0.005 else None


def render_probe(outcome: ProbeOutcome, options: RenderOptions) -> str:
    data, width = outcome.data, options.width
    order = ranked(outcome)
    lines: list[str] = []
    if not order:
        return "MEASURED nothing: no draft was probed"
    best_i, best = order[0]
    best_name = Path(best.path).name
    k = best.best_draft_max
    at = best.row(k, 0.0) if k is not None else None
    if at is None or best.modelled_speedup is None:
        head = f"MEASURED: {best_name}: {_pct(best.acceptance_rate)} of its guesses are the target's"
    elif best.modelled_speedup >= 0.995:
        head = (f"MEASURED: {best_name} is the best draft: {_pct(best.acceptance_rate)} of its guesses are the "
                f"target's; at --spec-draft-n-max {k}, {at.accepted_per_pass:.2f} accepted per target pass, "
                f"MODELLED speedup {_x(best.modelled_speedup)}")
    else:
        n = len(order)
        head = (f"MEASURED: {'no draft' if n > 1 else 'the draft'} is modelled to be faster than the target "
                f"alone{'' if n > 1 else ''}; {'the closest is ' + best_name if n > 1 else best_name}: "
                f"{_pct(best.acceptance_rate)} of its guesses are the target's, {at.accepted_per_pass:.2f} "
                f"accepted per target pass at --spec-draft-n-max {k}, MODELLED {_x(best.modelled_speedup)}")
    lines += wrap(head, width)
    lines += wrap(f"measured on {_how(data)}; replayed for --spec-draft-n-max 1..16 and --spec-draft-p-min "
                  f"{', '.join(f'{p:g}' for p in data['settings']['p_min'])}", width, "  ", "  ")
    tuned = _tuned(best)
    if tuned is not None:
        lines += wrap(f"with --spec-draft-p-min {tuned.p_min:g}: MODELLED {_x(tuned.modelled_speedup)} at "
                      f"--spec-draft-n-max {tuned.draft_max} ({tuned.accepted_per_pass:.2f} accepted per pass)",
                      width, "  ", "  ")
    lines.append("")
    rows = []
    for rank, (i, s) in enumerate(order, 1):
        k = s.best_draft_max
        r = s.row(k, 0.0) if k is not None else s.row(1, 0.0)
        rows.append([
            str(rank), Path(s.path).name, _pct(s.acceptance_rate), "-" if k is None else str(k),
            "-" if r is None else f"{r.accepted_per_pass:.2f}",
            "ABORTS" if aborts(data, i) else _x(s.modelled_speedup).replace(" (slower)", ""),
            "-" if s.cost_ratio is None else f"{s.cost_ratio:.2f}",
        ])
    lines += _fitted(rows, ("#", "draft", "agree", "best k", "acc/pass", "MODELLED", "cost"), 1, width)
    lines.append("")
    lines += wrap("agree: positions where the draft's top token is the target's (measured); acc/pass: accepted "
                  "draft tokens per target pass at best k, p-min 0, as llama-server counts them (replayed from "
                  "the measurement); MODELLED: tokens / (passes + cost x drafted), cost = draft/target weight "
                  "bytes per token, below 1.00x slower than the target alone: acceptance measured, speed "
                  "modelled", width)
    for i, s in order:
        for prompt_id, pos, token in aborts(data, i)[:1]:
            lines += wrap(f"warning: {Path(s.path).name} proposed token {token} at position {pos} of "
                          f"{prompt_id!r}; the target has no such id: llama-server aborts there (LW101)", width)
    for i, s in order:
        for w in data["drafts"][i].get("warnings", []) if not aborts(data, i) else []:
            lines += wrap(f"note: {Path(s.path).name}: {w}", width)
    shown = order if options.verbose else order[:1]
    for _, s in shown:
        lines += ["", f"{Path(s.path).name} by --spec-draft-n-max (k), p-min 0:"]
        lines += _by_k(s, list(data["settings"]["p_min"]), options.verbose)
        if len(s.kinds) > 1:
            lines += ["", f"{Path(s.path).name} by kind of prompt (p-min 0):"]
            lines += _table(
                [(k.kind, _pct(k.acceptance_rate), "-" if k.best_draft_max is None else str(k.best_draft_max),
                  f"{k.accepted_per_pass:.2f}") for k in s.kinds],
                ("kind", "agree", "best k", "acc/pass"),
            )
    if best.best_draft_max is not None and not aborts(data, best_i):
        target = data["target"]["path"]
        setting = ["--spec-draft-n-max", str(best.best_draft_max)]
        if tuned is not None:
            setting = ["--spec-draft-n-max", str(tuned.draft_max), "--spec-draft-p-min", f"{tuned.p_min:g}"]
        command = shlex.join(["llama-server", "-m", target, "-md", best.path, "--spec-type", "draft-simple",
                              *setting])
        lines += ["", "Next:", f"  {command}"]
        best_speed = tuned.modelled_speedup if tuned is not None else best.modelled_speedup
        if best_speed is not None and best_speed < 0.995:
            lines += wrap("the model predicts no gain: measure on your machine with paircheck bench run "
                          "before keeping the draft", width, "  ", "  ")
    return "\n".join(lines)
