"""The probe's summary for people: a verdict line (the draft and setting to run, or "run
without a draft"), the drafts ranked, the best draft by draft length and by prompt kind, and
the launch line. Every acceptance says it was measured (on which server, how); every speed
says whether it was measured, predicted from costs measured on this machine, or modelled
from assumed costs."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from paircheck._format.interface import RenderOptions
from paircheck._format.text_base import wrap
from paircheck.probe.record import NEAR_TIE_NATS

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
    """Best first: drafts that would not abort, by predicted speed at their best setting, then
    by measured acceptance; drafts without a prediction after those with one."""
    order = list(enumerate(outcome.summaries))

    def key(item: tuple[int, DraftSummary]) -> tuple[bool, float, float]:
        i, s = item
        best = s.best.predicted_speedup if s.best is not None else None
        return (not aborts(outcome.data, i), best or 0.0, s.acceptance_rate or 0.0)

    return sorted(order, key=key, reverse=True)


def _tps(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def _measured(data: dict) -> bool:
    return bool(data.get("calibration"))


def _basis(data: dict) -> str:
    """How the speeds were found, in one clause."""
    calib = data.get("calibration")
    if not calib:
        return ("speeds MODELLED from assumed costs (--no-calibrate): a draft token costs its weight "
                "bytes' share of a target decode, a verification one decode, a round nothing")
    server = (calib.get("server") or {}).get("build_info")
    where = f"llama-server {server}" if server and "unknown" not in server else "llama-server"
    return (f"speeds PREDICTED from costs measured on this machine ({where}, {calib.get('measured_at')}; "
            f"typical repeat {calib.get('spread', 0):.0%} off)")


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
    for name in names:
        if len(name) > limit:
            # the same name in several rows (one draft fastest at two workloads) is one name
            shared = _shared_prefix(name, [n for n in names if n != name])
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
    headers = ("k", "drafted", "accepted", "acc/pass", "tok/s", "speedup") + tuple(
        h for p in extra for h in (f"p{p:g}: acc", "tok/s"))
    rows = []
    for k in ks:
        r0 = summary.row(k, 0.0)
        if r0 is None:
            continue
        cells: tuple[str, ...] = (str(k), _n(r0.drafted), _n(r0.accepted), f"{r0.accepted_per_pass:.2f}",
                                  _tps(r0.predicted_tokens_per_s), _x(r0.predicted_speedup).replace(" (slower)", ""))
        for p in extra:
            rp = summary.row(k, p)
            cells += ("-", "-") if rp is None else (f"{rp.accepted_per_pass:.2f}", _tps(rp.predicted_tokens_per_s))
        rows.append(cells)
    return _table(rows, headers)


def _tuned(summary: DraftSummary) -> Row | None:
    """The best setting with a p-min above 0, when it beats the best at p-min 0 (the default)."""
    best = summary.best
    if best is None or best.p_min == 0 or summary.predicted_speedup is None or best.predicted_speedup is None:
        return None
    return best if best.predicted_speedup > summary.predicted_speedup + 0.005 else None


def _target_tps(outcome: ProbeOutcome) -> float | None:
    for s in outcome.summaries:
        for r in s.rows:
            if r.predicted is not None and r.predicted.target_tokens_per_s is not None:
                return r.predicted.target_tokens_per_s
    return None


def _setting(row: Row) -> str:
    return f"--spec-draft-n-max {row.draft_max}" + (f" --spec-draft-p-min {row.p_min:g}" if row.p_min else "")


def _speed_clause(row: Row, target_tps: float | None) -> str:
    pred = row.predicted
    if pred is None:
        return ""
    if pred.pair_tokens_per_s is None or target_tps is None:
        return f"MODELLED {pred.speedup:.2f}x the target alone"
    return (f"PREDICTED {pred.pair_tokens_per_s:.1f} tokens/s, {pred.speedup:.2f}x the target alone "
            f"({target_tps:.1f} tokens/s, measured)")


def render_probe(outcome: ProbeOutcome, options: RenderOptions) -> str:
    data, width = outcome.data, options.width
    order = ranked(outcome)
    lines: list[str] = []
    if not order:
        return "MEASURED nothing: no draft was probed"
    target_tps = _target_tps(outcome)
    rec = data.get("recommendation") or {}
    chosen = next(((i, s) for i, s in order if rec.get("draft") and s.path == rec["draft"]), None)
    predicted_any = any(s.best is not None and s.best.predicted is not None for _, s in order)
    if chosen is not None and chosen[1].recommended is not None:
        best = chosen[1].recommended
        head = (f"{Path(chosen[1].path).name} is the fastest draft: {_speed_clause(best, target_tps)} at "
                f"{_setting(best)}; {_pct(chosen[1].acceptance_rate)} of its guesses are the target's, "
                f"{best.accepted_per_pass:.2f} accepted per target pass")
    elif predicted_any:
        alone = f" ({target_tps:.1f} tokens/s, measured)" if target_tps is not None else ""
        count = "no draft is" if len(order) > 1 else "the draft is not"
        head = (f"RUN WITHOUT A DRAFT: {count} predicted faster than the target alone{alone} at any "
                f"--spec-draft-n-max 1..16 or p-min tried")
    else:
        _, s0 = order[0]
        head = (f"MEASURED: {Path(s0.path).name}: {_pct(s0.acceptance_rate)} of its guesses are the target's "
                "(no speed predicted: the files have no weights to size and nothing was calibrated)")
    grid = data.get("workloads") or []
    if len(grid) > 1:  # the headline is the grid's first point; the table below has the others
        first = grid[0]
        depth = f"{first['context_tokens']} tokens of context" if first["context_tokens"] else "the prompt alone"
        head += f" (at {depth}, {first['n_predict']}-token replies, {first['parallel']} at once)"
    lines += wrap(head, width)
    pick = chosen[1].recommended if chosen is not None else None
    if pick is not None and pick.near_tie_speedups is not None:
        low, high = pick.near_tie_speedups
        lines += wrap(f"near ties: where the draft's two best guesses were within {NEAR_TIE_NATS:g} nats, "
                      "llama-server (which evaluates the draft's context in other batches: a cached prefix, "
                      f"several slots at once) may propose either; at this setting that gives {low:.2f}x to "
                      f"{high:.2f}x (PREDICTED for each outcome; `paircheck bench run` measures which)",
                      width, "  ", "    ")
    lines += wrap(f"acceptance measured on {_how(data)}; replayed for --spec-draft-n-max 1..16 and "
                  f"--spec-draft-p-min {', '.join(f'{p:g}' for p in data['settings']['p_min'])}; {_basis(data)}",
                  width, "  ", "  ")
    lines.append("")
    rows = []
    for rank, (i, s) in enumerate(order, 1):
        b = s.best
        rows.append([
            str(rank), Path(s.path).name, _pct(s.acceptance_rate), "-" if b is None else _setting_short(b),
            "-" if b is None else f"{b.accepted_per_pass:.2f}",
            "ABORTS" if aborts(data, i) else "-" if b is None else _tps(b.predicted_tokens_per_s),
            "ABORTS" if aborts(data, i) else "-" if b is None else _x(b.predicted_speedup).replace(" (slower)", ""),
        ])
    lines += _fitted(rows, ("#", "draft", "agree", "best", "acc/pass", "tok/s", "speedup"), 1, width)
    lines.append("")
    speeds = ("tok/s and speedup: PREDICTED from the costs measured here and the replayed counts, "
              "against the target alone" if _measured(data) else
              "tok/s: not known without a calibration; speedup: MODELLED from assumed costs")
    lines += wrap("agree: positions where the draft's top token is the target's (measured); best: the fastest "
                  "--spec-draft-n-max k (and p-min) for the draft; acc/pass: accepted draft tokens per target "
                  f"pass there, as llama-server counts them (replayed); {speeds}; below 1.00x slower than the "
                  "target alone", width)
    for i, s in order:
        for prompt_id, pos, token in aborts(data, i)[:1]:
            lines += wrap(f"warning: {Path(s.path).name} proposed token {token} at position {pos} of "
                          f"{prompt_id!r}; the target has no such id: llama-server aborts there (LW101)", width)
    for i, s in order:
        for w in data["drafts"][i].get("warnings", []) if not aborts(data, i) else []:
            lines += wrap(f"note: {Path(s.path).name}: {w}", width)
    lines += _grid(data, width)
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
    target = data["target"]["path"]
    if chosen is not None and chosen[1].recommended is not None:
        best = chosen[1].recommended
        setting = ["--spec-draft-n-max", str(best.draft_max)]
        if best.p_min:
            setting += ["--spec-draft-p-min", f"{best.p_min:g}"]
        command = shlex.join(["llama-server", "-m", target, "-md", chosen[1].path, "--spec-type", "draft-simple",
                              *setting])
        lines += ["", "Next:", f"  {command}"]
        lines += wrap("confirm on your own prompts: paircheck bench run TARGET DRAFT (measures both, in the "
                      "same run)", width, "  ", "  ")
    elif predicted_any:
        lines += ["", "Next:", f"  {shlex.join(['llama-server', '-m', target])}"]
    return "\n".join(lines)


def _grid(data: dict, width: int) -> list[str]:
    """The prediction at every workload of the grid (probe --context-tokens/--n-predict/
    --parallel), and a line where the fastest setting is not the same across it."""
    grid = data.get("workloads") or []
    if len(grid) < 2:
        return []
    names = short_names([Path(d["path"]).name for d in data["drafts"]], 28)
    rows = []
    for w in grid:
        rec = w["recommendation"]
        index = next((i for i, d in enumerate(w["drafts"]) if d["path"] == rec["draft"]), None)
        setting = "-" if rec["draft_max"] is None else f"k={rec['draft_max']}" + (
            f",p{rec['p_min']:g}" if rec["p_min"] else "")
        rows.append([str(w["context_tokens"]), str(w["n_predict"]), str(w["parallel"]), _tps(w["target_tokens_per_s"]),
                     "none" if index is None else names[index], setting,
                     "-" if index is None else _tps(rec["tokens_per_s"]),
                     "-" if index is None else _x(rec["speedup"]).replace(" (slower)", "")])
    lines = ["", *wrap("By workload: ctx tokens in the context before the reply, slots requests at once; alone and "
                       "tok/s are of all slots together, PREDICTED from costs measured at each depth here (slots "
                       "priced from batches timed across as many):", width)]
    lines += _fitted(rows, ("ctx", "reply", "slots", "alone", "fastest draft", "best", "tok/s", "speedup"), 4, width)
    picks = {(w["recommendation"]["draft"], w["recommendation"]["draft_max"], w["recommendation"]["p_min"])
             for w in grid}
    if len(picks) > 1:
        lines += wrap("The fastest setting is not the same at every workload: launch with the row of the workload "
                      "you serve (none: run the target alone there).", width)
    lines += _agreement(data, grid, [Path(d["path"]).name for d in data["drafts"]], width)
    return lines


def _agreement(data: dict, grid: list[dict], names: list[str], width: int) -> list[str]:
    """Per draft, how often its top token is the target's, by context depth (rows) and group
    of reply positions (columns): measured, from each depth's longest recording."""
    longest: dict[int, dict] = {}
    for w in grid:
        if w["context_tokens"] not in longest or w["n_predict"] > longest[w["context_tokens"]]["n_predict"]:
            longest[w["context_tokens"]] = w
    if len(longest) < 2 and max(w["n_predict"] for w in grid) < 64:
        return []  # one depth, one group of positions: the main table's "agree" says it all
    lines: list[str] = []
    for i, name in enumerate(names):
        groups = [(g["from"], g["to"]) for g in longest[max(longest)]["drafts"][i]["agreement_by_position"]]
        for w in longest.values():
            for g in w["drafts"][i]["agreement_by_position"]:
                if (g["from"], g["to"]) not in groups:
                    groups.append((g["from"], g["to"]))
        groups.sort()
        rows = []
        for depth, w in sorted(longest.items()):
            rates = {(g["from"], g["to"]): g["rate"] for g in w["drafts"][i]["agreement_by_position"]}
            rows.append([str(depth), *(_pct(rates.get(g)) if rates.get(g) is not None else "-" for g in groups)])
        lines += ["", *wrap(f"{name}: its top token is the target's (measured), by context depth and reply "
                            "position:", width)]
        lines += _table(rows, ("ctx", *(f"{lo}-{hi - 1}" for lo, hi in groups)))
    return lines


def _setting_short(row: Row) -> str:
    return f"k={row.draft_max}" + (f",p{row.p_min:g}" if row.p_min else "")
