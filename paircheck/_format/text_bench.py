"""Speed for people: a measured comparison (``paircheck bench``) and one bench result
(``paircheck estimate``'s output is text_estimate's)."""

from __future__ import annotations

from typing import Any

from paircheck._format.interface import DEFAULT_WIDTH
from paircheck._format.text_base import cell, simple_table, wrap
from paircheck.bench.compare import Comparison, Spread, acceptance_rates, draft_counts, tokens_per_second
from paircheck.bench.measure import NOT_MEASURED


def _spread(s: Spread | None, digits: int = 0) -> str:
    if s is None:
        return "-"
    return f"{s.median:.{digits}f} ({s.min:.{digits}f}-{s.max:.{digits}f})"


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _verdict(comp: Comparison) -> str:
    unstable = "" if comp.conclusive else "NOT CONCLUSIVE (see the warnings), "
    if comp.speedup is not None:
        word = "faster" if comp.speedup > 1.0 else "slower" if comp.speedup < 1.0 else "no change"
        acc = f", acceptance {_pct(comp.acceptance_rate)}" if comp.acceptance_rate is not None else ""
        decode = f" (decode {comp.decode_speedup:.2f}x)" if comp.decode_speedup is not None else ""
        tokens = " in tokens (the texts differ)" if comp.equal_work == "tokens" else ""
        return (f"MEASURED, {unstable}" if unstable else "MEASURED: ") + (
            f"{comp.draft_label} is {comp.speedup:.2f}x the speed of {comp.baseline_label}{decode} ({word}) on "
            f"equal work{tokens}{acc}")
    if comp.time_ratio is not None:
        return (
            f"MEASURED: outputs differ, so no speedup on equal work; time ratio "
            f"{comp.baseline_label}/{comp.draft_label} = {comp.time_ratio:.2f}"
        )
    return "MEASURED: nothing comparable (no complete run over the same prompts on both sides)"


def _predicted_lines(comp: Comparison, width: int) -> list[str]:
    """What a probe predicted for this setting, beside what was measured here."""
    pred = comp.predicted
    if not pred:
        return []
    measured = (f"{comp.draft_tokens_per_second.median:.1f} tokens/s, decode {comp.decode_speedup:.2f}x"
                if comp.draft_tokens_per_second is not None and comp.decode_speedup is not None else "-")
    tps = pred.get("tokens_per_s")
    said = (f"PREDICTED by paircheck probe ({pred.get('source')}): {tps:.1f} tokens/s, {pred['speedup']:.2f}x the "
            f"target alone; MEASURED here: {measured}" if isinstance(tps, (int, float)) else
            f"MODELLED by paircheck probe ({pred.get('source')}): {pred['speedup']:.2f}x; MEASURED here: {measured}")
    return wrap(said, width)


def _header(unit: str, label: str) -> str:
    """A two-line column header (``ms`` over the run's label), so long labels stay narrow."""
    return f"{cell(label, 13, hyphens=True)}\n{unit}"


def _github_table(comp: Comparison) -> str:
    """The whole comparison as one GitHub table (``--format markdown``: no width to fit)."""
    from tabulate import tabulate

    headers = ("prompt", f"{comp.baseline_label} ms", f"{comp.draft_label} ms", f"{comp.baseline_label} tok/s",
               f"{comp.draft_label} tok/s", "speedup", "accept", "acc/pass", "same output")
    rows = [(p.prompt_id, _spread(p.baseline_ms), _spread(p.draft_ms), _spread(p.baseline_tokens_per_second, 1),
             _spread(p.draft_tokens_per_second, 1), _x(p.speedup), _pct(p.acceptance_rate),
             _per_pass(p.accepted_per_pass), _same(p.outputs_equal, p.difference))
            for p in comp.prompts]
    rows.append(("all prompts", _spread(comp.baseline_run_ms), _spread(comp.draft_run_ms),
                 _spread(comp.baseline_tokens_per_second, 1), _spread(comp.draft_tokens_per_second, 1),
                 _x(comp.speedup), _pct(comp.acceptance_rate), _per_pass(comp.accepted_per_pass),
                 "yes" if comp.outputs_equal else "no"))
    return str(tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True))


def _same(equal: bool, difference: Any) -> str:
    return "yes" if equal else (f"no, at char {difference.position}" if difference else "no")


def _per_pass(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _text_tables(comp: Comparison) -> list[str]:
    """Time and the speedup in one table, decode speed and drafting in a second: each fits 80
    columns (one table of every column is ~150 wide)."""
    time_rows = [(p.prompt_id, _spread(p.baseline_ms), _spread(p.draft_ms), _x(p.speedup),
                  "yes" if p.outputs_equal else "no") for p in comp.prompts]
    time_rows.append(("all prompts", _spread(comp.baseline_run_ms), _spread(comp.draft_run_ms), _x(comp.speedup),
                      "yes" if comp.outputs_equal else "no"))
    speed_rows = [(p.prompt_id, _spread(p.baseline_tokens_per_second, 1), _spread(p.draft_tokens_per_second, 1),
                   _pct(p.acceptance_rate), _per_pass(p.accepted_per_pass)) for p in comp.prompts]
    speed_rows.append(("all prompts", _spread(comp.baseline_tokens_per_second, 1),
                       _spread(comp.draft_tokens_per_second, 1), _pct(comp.acceptance_rate),
                       _per_pass(comp.accepted_per_pass)))
    b, d = comp.baseline_label, comp.draft_label
    times = simple_table(("prompt", _header("ms", b), _header("ms", d), "speedup", "same\noutput"), time_rows)
    speeds = simple_table(("prompt", _header("tok/s", b), _header("tok/s", d), "accept", "acc/pass"), speed_rows)
    return [times, "", speeds]


def render_comparison(comp: Comparison, markdown: bool = False, width: int = DEFAULT_WIDTH) -> str:
    lines = [*wrap(_verdict(comp), width), *_predicted_lines(comp, width), ""]
    lines += [_github_table(comp)] if markdown else _text_tables(comp)
    lines.append("")
    runs = "" if comp.baseline is None or comp.draft is None else (
        f" ({comp.baseline.runs} baseline and {comp.draft.runs} draft runs"
        f"{', interleaved' if comp.interleaved else ''})")
    parallel = (comp.workload or {}).get("parallel", 1)
    at_once = "" if parallel <= 1 else (
        f" With {parallel} requests at once: ms per prompt is one request's client time, for all prompts the "
        "wall time of a run while any request was outstanding (so its speedup is the aggregate tokens/s ratio); "
        "tok/s is per request.")
    legend = (f"ms and tok/s: median (min-max) over the measured runs{runs}; speedup: median client time "
              "baseline/draft, only where outputs are equal; decode: median decode tokens/s draft/baseline "
              "(llama-server's predicted_n/predicted_ms); accept: draft_n_accepted/draft_n; acc/pass: "
              f"accepted draft tokens per target pass.{at_once}")
    lines += [legend] if markdown else wrap(legend, width)
    for p in comp.prompts:
        d = p.difference
        if d is not None:
            said = (f"- prompt {p.prompt_id}: outputs differ at char {d.position} "
                    f"(baseline {d.baseline_chars} chars/{d.baseline_tokens} tokens, draft {d.draft_chars} chars/"
                    f"{d.draft_tokens} tokens): baseline {d.baseline_excerpt!r}, draft {d.draft_excerpt!r}")
            lines += [said] if markdown else wrap(said, width, hanging="    ")
    for kind, items in (("warning", comp.warnings + comp.stability_problems), ("note", comp.notes)):
        for item in items:
            said = f"{'- ' if markdown else ''}{kind}: {item}"
            lines += [said] if markdown else wrap(said, width)
    return "\n".join(lines)


def render_bench_result(result: dict[str, Any], width: int = DEFAULT_WIDTH) -> str:
    """Per prompt: median client time and decode tokens per second, and drafting if any."""
    from tabulate import tabulate

    rows = []
    for prompt in result["prompts"]:
        reqs = [r for r in result["requests"] if r["prompt_id"] == prompt["id"]]
        ms = Spread.of([r["client_ms"] for r in reqs])
        tps = Spread.of([t for t in map(tokens_per_second, reqs) if t is not None])
        drafted, accepted, predicted, _ = draft_counts(reqs)
        rate, _ = acceptance_rates(drafted, accepted, predicted)
        rows.append(
            (
                prompt["id"],
                len(reqs),
                "-" if ms is None else f"{ms.median:.0f} ({ms.min:.0f}-{ms.max:.0f})",
                "-" if tps is None else f"{tps.median:.1f}",
                "-" if rate is None else f"{rate:.1%}",
            )
        )
    table = tabulate(
        rows, headers=("prompt", "runs", "client ms", "tok/s", "accept"), tablefmt="simple", disable_numparse=True
    )
    raw = (
        "through the server's chat template" if result["settings"]["chat_template"] else "raw, without a chat template"
    )
    return "\n".join([table, *wrap(f"note: prompts sent {raw}; not measured: {', '.join(NOT_MEASURED)}", width)])
