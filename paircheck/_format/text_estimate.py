"""``paircheck estimate`` for people: the prediction on a device (one headline, the draft
lengths or the workload grid, the documented figures beside the model's own for their
setups), or, without a device, what the speedup depends on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paircheck._format.interface import DEFAULT_WIDTH
from paircheck._format.text_base import wrap
from paircheck.speed.estimate import K_SEARCH_MAX, Estimate
from paircheck.speed.model import MIN_GAIN

if TYPE_CHECKING:
    from paircheck.speed.on_gpu import GpuPrediction


_BASIS_WORD = {"measured": "MEASURED", "documented": "DOCUMENTED", "given": "GIVEN", "assumed": "ASSUMED"}
_SHOWN_LENGTHS = (1, 2, 3, 4, 6, 8, 12, 16)


def _acceptance_lines(est: Estimate, basis: str, note: str | None, width: int) -> list[str]:
    """Where the acceptance comes from, what the registry documents (each figure beside the
    model's own for its setup), and the warnings."""
    lines: list[str] = []
    if note and basis in ("measured", "documented"):
        lines += wrap(f"acceptance {_BASIS_WORD[basis]}: {note}", width)
    if basis == "assumed":
        lines += wrap("acceptance ASSUMED: measure it with `paircheck probe TARGET DRAFT`, then --from the result",
                      width)
    checked = {c.line.split(" [documented for ")[0] for c in est.checks}
    for doc in est.documented:
        if doc not in checked and not doc.startswith(("speedup", "tokens per second", "baseline tokens")):
            lines += wrap(f"documented: {doc}", width)
    lines += _checks(est, width)
    for w in est.warnings:
        lines += wrap(f"warning {w.code} {w.name}: {w.message}", width)
    return lines


def _checks(est: Estimate, width: int) -> list[str]:
    """Each documented speed beside the model's figure for its setup, a table per run."""
    from tabulate import tabulate

    lines: list[str] = []
    groups: dict[str, list[Any]] = {}
    for c in est.checks:
        groups.setdefault(c.group, []).append(c)
    for group, checks in groups.items():
        lines += wrap(f"documented: {group}", width)
        setup = next((c.setup for c in checks if c.predicted is not None), None)
        if setup:
            lines += wrap(f"  the model's figure for that setup: {setup}", width, hanging="    ")
        rows = [(c.label, c.model_said, "-" if c.difference is None else f"{c.difference:+.0%}",
                 "OFF" if c.flagged else "") for c in checks]
        table = tabulate(rows, headers=("documented", "model", "diff", ">25%"), tablefmt="simple",
                         disable_numparse=True)
        lines += ["  " + row for row in table.splitlines()]
        for c in checks:
            if c.why_not:
                lines += wrap(f"  {c.label}: not predicted: {c.why_not}", width, hanging="    ")
        off = [c for c in checks if c.flagged]
        if off:
            alone = next((c for c in checks if c.quantity == "baseline_tokens_per_second" and not c.flagged
                          and c.difference is not None), None)
            need = next((f"; at per-token acceptance {c.needed:.2f} the model reaches {c.label}" for c in off
                         if c.needed is not None), "")
            said = (f"  OFF BY MORE THAN 25%: {', '.join(c.label for c in off)}"
                    + (f" (the target alone agrees, {alone.difference:+.0%}: the gap is the pair's)" if alone else "")
                    + f"{need}; what differs: {'; '.join(dict.fromkeys(c.differs for c in off if c.differs))}")
            lines += wrap(said, width, hanging="    ")
    return lines


def _setting(draft_max: int, p_min: float) -> str:
    return f"draft max {draft_max}" + (f", p-min {p_min:g}" if p_min else "")


def _said_acceptance(p: GpuPrediction) -> str:
    if p.work_basis == "replayed":
        return "the probe's MEASURED counts"
    word = _BASIS_WORD.get(p.acceptance_basis, p.acceptance_basis)
    if p.reported is not None and p.reported.kind != "per-token":
        return f"{p.reported.said()} {word}"
    return f"per-token acceptance {p.acceptance:.2f} {word}" if p.acceptance is not None else f"acceptance {word}"


def _workload_said(p: GpuPrediction) -> str:
    w = p.workload
    depth = f"{w.context_tokens:,} tokens of context" if w.context_tokens else "a short prompt"
    return f"{depth}, replies of {w.n_predict:,} tokens, {w.parallel} request{'s' if w.parallel > 1 else ''} at once"


def _headline(p: GpuPrediction) -> str:
    hw = p.hardware
    many = p.workload.parallel > 1
    per = (f" ({p.per_request_pair_tokens_per_s:.1f} per request)" if many else "")
    alone = f"{p.target_tokens_per_s:.1f} tokens/s" + (" in all" if many else "")
    if p.faster:
        return (f"PREDICTED on {hw.name}: {p.pair_tokens_per_s:.1f} tokens/s{' in all' if many else ''}{per} with the "
                f"draft at {_setting(p.draft_max, p.p_min)}, {p.speedup:.2f}x the target alone ({alone}), from "
                f"{_said_acceptance(p)}")
    return (f"RUN WITHOUT A DRAFT on {hw.name}: no setting is PREDICTED faster than the target alone ({alone}; "
            f"best {p.speedup:.2f}x at {_setting(p.draft_max, p.p_min)}), from {_said_acceptance(p)}")


def _grid_table(est: Estimate) -> str:
    from tabulate import tabulate

    rows = [(f"{p.workload.context_tokens:,}", f"{p.workload.n_predict:,}", str(p.workload.parallel),
             f"{p.target_tokens_per_s:.1f}", f"{p.pair_tokens_per_s:.1f}", f"{p.per_request_pair_tokens_per_s:.1f}",
             f"{p.speedup:.2f}x", _setting(p.draft_max, p.p_min) if p.faster else "no draft")
            for p in est.workloads]
    return tabulate(rows, headers=("context", "reply", "at once", "alone tok/s", "pair tok/s", "per request",
                                   "speedup", "best"), tablefmt="simple", disable_numparse=True)


def render_gpu_estimate(est: Estimate, width: int = DEFAULT_WIDTH) -> str:
    """``estimate --gpu``: predicted tokens/s on the device, alone and at each draft length."""
    from tabulate import tabulate

    p = est.predicted
    assert p is not None
    hw = p.hardware
    lines = wrap(_headline(p), width)
    if len(est.workloads) > 1:
        lines += ["", _grid_table(est)]
        best = {(q.draft_max, q.p_min) if q.faster else None for q in est.workloads}
        if len(best) > 1:
            lines += wrap("the fastest setting differs across the workloads: see the last column", width)
    else:
        rows = [("target alone", f"{p.target_tokens_per_s:.1f}", "1.00x")]
        rows += [(f"draft max {x.draft_max}" + (" (best)" if x.draft_max == p.draft_max else ""),
                  f"{x.pair_tokens_per_s:.1f}", f"{x.speedup:.2f}x")
                 for x in p.by_length if x.draft_max in _SHOWN_LENGTHS or x.draft_max == p.draft_max]
        head = "predicted" + (f", p-min {p.p_min:g}" if p.p_min else "")
        lines += ["", tabulate(rows, headers=(head, "tokens/s", "speedup"), tablefmt="simple",
                               disable_numparse=True)]
        if p.band:
            band = [(f"{b.acceptance:.1f}", _setting(b.draft_max, b.p_min), f"{b.pair_tokens_per_s:.1f}",
                     f"{b.speedup:.2f}x") for b in p.band]
            lines += ["", tabulate(band, headers=("per-token acceptance", "best setting", "tokens/s", "speedup"),
                                   tablefmt="simple", disable_numparse=True)]
    lines.append("")
    memory = f"{hw.memory_gib:g} GiB" if hw.memory_gib is not None else "memory not given"
    lines += wrap(f"device: {est.device_note or f'{hw.name} ({hw.bandwidth_gbs:g} GB/s, {memory})'}", width)
    lines += wrap(f"workload: {_workload_said(p)}" + ("" if len(est.workloads) == 1 else " (the headline's row)"),
                  width)
    need = p.memory_needed_gib
    w = p.workload
    at = f"{w.context_tokens + w.n_predict:,} tokens" + (f" x {w.parallel} requests" if w.parallel > 1 else "")
    if need is not None and p.fits is False:
        lines += wrap(f"warning: the pair needs about {need:.1f} GiB (weights and the KV caches at {at}), more than "
                      f"the {hw.memory_gib:g} GiB here: it will not run fully on this device (`paircheck fit` counts "
                      "every buffer)", width)
    elif need is not None:
        lines += wrap(f"memory: about {need:.1f} GiB for both models' weights and KV caches at {at} (`paircheck fit` "
                      "counts every buffer)", width)
    lines += _acceptance_lines(est, p.acceptance_basis, p.acceptance_note, width)
    c = p.constants
    reach = (f"{c.efficiency_of(hw.vendor, p.target_shape.weights):.0%}" if p.target_shape is not None else
             f"{c.efficiency_of(hw.vendor):.0%}")
    backend = hw.backend or "a device given by its bandwidth"
    many = (" Several requests at once: one batch verifies every request's draft, the weights read once, each "
            "request's KV cache for its own tokens." if any(q.workload.parallel > 1 for q in est.workloads) else "")
    lines += wrap(
        f"model: paircheck.speed priced at the roofline for this device: each evaluation reads its weights "
        f"(a batch: the experts its tokens use) and the KV cache at the context's depth plus half the reply, at "
        f"{reach} of the peak bandwidth for the target's weights, plus {c.fixed_ms:g} ms; each more token of a batch "
        f"adds {c.growth_of(hw.backend):g} of the memory time ({backend}); drafting as speed.acceptance models it "
        f"(docs/estimate.md: the error per published point).{many} `paircheck bench run` measures speed instead.",
        width)
    return "\n".join(lines)


def _no_device(est: Estimate, width: int) -> list[str]:
    """Without a device and without given costs: what the speedup depends on, and how to get it."""
    share = (f"the draft reads {est.cost_ratio:.1%} of the target's bytes per token" if est.cost_source != "given"
             else f"the draft costs {est.cost_ratio:g} of a target decode (given)")
    lines = wrap(
        "NO SPEED PREDICTED: no device was named or found here, and the speedup depends on it: on what a batch of "
        f"k+1 tokens costs there against one (a batch of 8 costs 2.1x to 6.6x one token in the published "
        f"measurements, registry/speed/batches.toml), and on the acceptance; {share}. Name a device: --gpu NAME "
        "(`paircheck gpus` lists them), or measure this machine: `paircheck probe TARGET DRAFT`", width)
    return lines


def render_estimate(est: Estimate, width: int = DEFAULT_WIDTH) -> str:
    from tabulate import tabulate

    if est.predicted is not None:
        return render_gpu_estimate(est, width)
    if not est.measured and not est.costs_given:
        said = _no_device(est, width)
        said.append("")
        if est.reported is not None:
            r = est.reported
            word = _BASIS_WORD.get(r.basis, r.basis)
            said += wrap(f"acceptance {word}: {r.said()}" + (f" {r.note}" if r.note else ""), width)
        said += _acceptance_lines(est, "assumed" if est.reported is None else "shown", None, width)
        if est.device_note:
            said += wrap(f"device: {est.device_note}", width)
        return "\n".join(said)

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
