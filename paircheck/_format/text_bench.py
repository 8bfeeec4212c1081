"""Speed for people: a measured comparison (``paircheck bench``), one bench result, and the
modelled speedup (``paircheck estimate``), which always says it is a model."""

from __future__ import annotations

from typing import Any

from paircheck._format.interface import DEFAULT_WIDTH
from paircheck._format.text_base import cell, simple_table, wrap
from paircheck.bench.compare import Comparison, Spread, acceptance_rates, draft_counts, tokens_per_second
from paircheck.bench.measure import NOT_MEASURED
from paircheck.speed.estimate import K_SEARCH_MAX, Estimate
from paircheck.speed.model import MIN_GAIN


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


_BASIS_WORD = {"measured": "MEASURED", "documented": "DOCUMENTED", "given": "GIVEN", "assumed": "ASSUMED"}
_SHOWN_LENGTHS = (1, 2, 3, 4, 6, 8, 12, 16)


def _points_said() -> str:
    return "published measurements on NVIDIA and Apple GPUs"


def _acceptance_lines(est: Estimate, basis: str, note: str | None, width: int) -> list[str]:
    """Where the acceptance comes from, what the registry documents, and the warnings."""
    lines: list[str] = []
    if note and basis in ("measured", "documented"):
        lines += wrap(f"acceptance {_BASIS_WORD[basis]}: {note}", width)
    if basis == "assumed":
        lines += wrap("acceptance ASSUMED: measure it with `paircheck probe TARGET DRAFT`, then --from the result",
                      width)
    for doc in est.documented:
        lines += wrap(f"documented: {doc}", width)
    for w in est.warnings:
        lines += wrap(f"warning {w.code} {w.name}: {w.message}", width)
    return lines


def render_gpu_estimate(est: Estimate, width: int = DEFAULT_WIDTH) -> str:
    """``estimate --gpu``: predicted tokens/s on the device, alone and at each draft length."""
    from tabulate import tabulate

    p = est.predicted
    assert p is not None
    hw = p.hardware
    acc = "" if p.acceptance is None else f" {p.acceptance:.2f}"
    said_acc = f"acceptance{acc} {_BASIS_WORD.get(p.acceptance_basis, p.acceptance_basis)}"
    if p.work_basis == "replayed":
        said_acc = "the probe's MEASURED counts"
    if p.faster:
        head = (f"PREDICTED on {hw.name}: {p.pair_tokens_per_s:.1f} tokens/s with the draft at draft max "
                f"{p.draft_max}, {p.speedup:.2f}x the target alone ({p.target_tokens_per_s:.1f} tokens/s), "
                f"from {said_acc}")
    else:
        head = (f"RUN WITHOUT A DRAFT on {hw.name}: no draft length is PREDICTED faster than the target alone "
                f"({p.target_tokens_per_s:.1f} tokens/s; best {p.speedup:.2f}x at draft max {p.draft_max}), from "
                f"{said_acc}")
    lines = wrap(head, width)
    rows = [("target alone", f"{p.target_tokens_per_s:.1f}", "1.00x")]
    rows += [(f"draft max {x.draft_max}" + (" (best)" if x.draft_max == p.draft_max else ""),
              f"{x.pair_tokens_per_s:.1f}", f"{x.speedup:.2f}x")
             for x in p.by_length if x.draft_max in _SHOWN_LENGTHS or x.draft_max == p.draft_max]
    lines += ["", tabulate(rows, headers=("predicted", "tokens/s", "speedup"), tablefmt="simple",
                           disable_numparse=True)]
    if p.band:
        band = [(f"{b.acceptance:.1f}", str(b.draft_max), f"{b.pair_tokens_per_s:.1f}", f"{b.speedup:.2f}x")
                for b in p.band]
        lines += ["", tabulate(band, headers=("assumed acceptance", "best draft max", "tokens/s", "speedup"),
                               tablefmt="simple", disable_numparse=True)]
    lines.append("")
    memory = f"{hw.memory_gib:g} GiB" if hw.memory_gib is not None else "memory not given"
    lines += wrap(f"device: {est.device_note or f'{hw.name} ({hw.bandwidth_gbs:g} GB/s, {memory})'}", width)
    need = p.memory_needed_gib
    if need is not None and p.fits is False:
        lines += wrap(f"warning: the pair needs about {need:.1f} GiB (weights and the KV cache at {p.context} tokens), "
                      f"more than the {hw.memory_gib:g} GiB here: it will not run fully on this device "
                      "(`paircheck fit` counts every buffer)", width)
    elif need is not None:
        lines += wrap(f"memory: about {need:.1f} GiB for both models' weights and KV caches at {p.context} tokens "
                      "(`paircheck fit` counts every buffer)", width)
    lines += _acceptance_lines(est, p.acceptance_basis, p.acceptance_note, width)
    c = p.constants
    reach = (f"{c.efficiency_of(hw.vendor, p.target_shape.weights):.0%}" if p.target_shape is not None else
             f"{c.efficiency_of(hw.vendor):.0%}")
    lines += wrap(
        f"model: paircheck.speed priced at the roofline for this device: each evaluation reads its weights "
        f"(a batch: the experts its tokens use) and KV cache at {reach} of the peak bandwidth for the target's "
        f"weights, plus {c.fixed_ms:g} ms; each more token of a batch adds {c.growth:g} of the memory time; "
        f"constants fitted to {_points_said()} (docs/estimate.md: the error per point). `paircheck bench run` "
        "measures speed instead.", width)
    return "\n".join(lines)


def render_estimate(est: Estimate, width: int = DEFAULT_WIDTH) -> str:
    from tabulate import tabulate

    if est.predicted is not None:
        return render_gpu_estimate(est, width)

    def best(k: int | None) -> str:  # at the search limit the best k is that or more
        return "-" if k is None else f">={k}" if k >= K_SEARCH_MAX else str(k)

    lines: list[str] = []
    rows: list[tuple[str, ...]]
    headers: tuple[str, ...] = ("acceptance", "tokens/pass", "speedup", "best k", "speedup at best k")
    if est.measured:
        assert est.speedup is not None and est.expected_tokens_per_pass is not None
        tuned = f" p-min {est.best_p_min:g}" if est.best_p_min else ""
        fastest = f"fastest: draft max {est.best_draft_max}{tuned}, {est.best_speedup:.2f}x"
        if (est.best_speedup or 0.0) < MIN_GAIN:
            fastest = ("RUN WITHOUT A DRAFT: no setting is predicted faster than the target alone "
                       f"(best {est.best_speedup:.2f}x)")
        if est.pair_tokens_per_s is not None and est.target_tokens_per_s is not None:
            lines += wrap(
                f"PREDICTED {est.pair_tokens_per_s:.1f} tokens/s at draft max {est.draft_max}, {est.speedup:.2f}x "
                f"the target alone ({est.target_tokens_per_s:.1f} tokens/s measured), from acceptance MEASURED by "
                f"the probe and costs measured on its machine; {fastest}", width
            )
        else:
            lines += wrap(
                f"MODELLED speed from MEASURED acceptance: speedup {est.speedup:.2f}x at draft max {est.draft_max} "
                f"({est.expected_tokens_per_pass:.2f} tokens per target pass measured), ASSUMED costs (cost ratio "
                f"{est.cost_ratio:.3f}); {fastest}", width
            )
        shown = [p for p in est.measured if p.draft_max in (1, 2, 3, 4, 6, 8, 12, 16) or p.draft_max == est.draft_max]
        rows = [(str(p.draft_max), f"{p.tokens_per_pass:.2f}", f"{p.drafted_per_pass:.2f}",
                 "-" if p.tokens_per_s is None else f"{p.tokens_per_s:.1f}", f"{p.speedup:.2f}x")
                for p in shown]
        headers = ("draft max", "tokens/pass", "drafted/pass", "tok/s", "speedup")
    elif est.acceptance is not None:
        assert est.speedup is not None and est.expected_tokens_per_pass is not None
        word = {"documented": "DOCUMENTED", "measured": "MEASURED"}.get(est.acceptance_basis, "given")
        lines += wrap(
            f"MODELLED (not measured): speedup {est.speedup:.2f}x at {word} acceptance {est.acceptance:.2f}, "
            f"draft max {est.draft_max}, cost ratio {est.cost_ratio:.3f}", width
        )
        rows = [
            (
                f"{est.acceptance:.2f}",
                f"{est.expected_tokens_per_pass:.2f}",
                f"{est.speedup:.2f}x",
                best(est.best_draft_max),
                f"{est.best_speedup:.2f}x",
            )
        ]
    else:
        lo, hi = est.band[0], est.band[-1]
        lines += wrap(
            f"MODELLED (not measured): speedup {lo.speedup:.2f}x..{hi.speedup:.2f}x for an ASSUMED acceptance "
            f"{lo.acceptance:.1f}..{hi.acceptance:.1f}, draft max {est.draft_max}, cost ratio {est.cost_ratio:.3f}",
            width,
        )
        rows = [
            (
                f"{p.acceptance:.2f}",
                f"{p.expected_tokens_per_pass:.2f}",
                f"{p.speedup:.2f}x",
                best(p.best_draft_max),
                f"{p.best_speedup:.2f}x",
            )
            for p in est.band
        ]
    lines.append("")
    lines.append(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True))
    lines.append("")
    if est.costs_basis == "measured":
        lines += wrap(f"costs MEASURED: {est.costs_note}", width)
    elif est.target_bytes and est.draft_bytes:
        lines += wrap(
            f"cost ratio c = draft/target weight bytes read per token = "
            f"{est.draft_bytes.per_token:,} / {est.target_bytes.per_token:,}", width
        )
    else:
        lines += wrap(f"cost ratio c = {est.cost_ratio} (given)", width)
    if est.acceptance_source and est.acceptance_source.startswith("bench:"):
        lines += wrap(f"acceptance MEASURED in {est.acceptance_source[6:]} (draft_n_accepted / draft_n)", width)
    lines += _acceptance_lines(est, est.acceptance_basis, est.acceptance_note, width)
    if est.device_note:
        lines += wrap(f"device: {est.device_note}", width)
    if est.costs_basis == "measured":
        lines += wrap(
            "model: paircheck.speed on the replayed counts: each target batch, the draft's re-evaluation of it, "
            "each drafted token and each round priced at what it cost on the probe's machine; tokens/s as "
            "llama-server's predicted_n / predicted_ms. `paircheck bench run` measures speed instead.", width
        )
    else:
        lines += wrap(
            f"model: Leviathan et al. 2023, E = (1 - a^(k+1)) / (1 - a), speedup = E / (k*c + 1) with ASSUMED costs: "
            f"a verification of k+1 tokens costs {1:g} + {est.verify_growth:g}*k decodes (--verify-cost), a round "
            f"{est.round_cost:g} more (--round-cost); decoding memory-bound; ignores the KV cache and prompt "
            "processing. `paircheck probe` measures the costs on this machine, `paircheck bench run` the speed.",
            width
        )
    return "\n".join(lines)
