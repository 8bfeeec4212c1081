"""``paircheck bench compare BASELINE DRAFT``: two bench results side by side.

Per prompt and overall: median and spread (min..max) of client time and of generated
tokens per second, the speedup (median client time of baseline over draft), the draft
acceptance rate ``draft_n_accepted / draft_n`` and the accepted tokens per target pass.

A speedup is only a speedup on equal work: with greedy sampling both servers should
produce the same text. Where they do not, the first differing position is shown and
``speedup`` is null (the plain ``time_ratio`` is still given, labelled as such). With several
requests at once (``parallel`` above 1) llama-server batches the slots' tokens together, and
its arithmetic differs slightly with the batch, which can flip a near-tie of greedy decoding in
one slot: there equal work is every request generating the same number of tokens on both
sides (``equal_work`` says which held), and the differing outputs are a warning.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

COMPARE_SCHEMA_VERSION = 3  # 3: the workload fields (workload, aggregates, equal_work); nothing of 2 removed
# A side's runs are stable when their decode tokens/s lie within this share of their median
# (max - min over median), after leaving out the one run farthest from it when there are
# STABLE_MIN_RUNS or more (one hiccup of the machine is not a trend).
STABLE_SPREAD = 0.10
STABLE_MIN_RUNS = 5


@dataclass(frozen=True)
class Stability:
    """Whether one side's runs agree well enough to be compared (see STABLE_SPREAD)."""

    runs: int
    spread: float | None  # (max - min) / median of the runs kept
    stable: bool
    reason: str | None  # why not, when not
    low: float | None = None  # the kept runs' range (tokens/s)
    high: float | None = None

    @staticmethod
    def of(values: list[float], side: str) -> Stability:
        if len(values) < 2:
            return Stability(len(values), None, False, f"the {side} has {len(values)} complete run(s): at least 2 "
                                                       "are needed to tell a steady speed from a chance one")
        kept = sorted(values)
        if len(kept) >= STABLE_MIN_RUNS:
            mid = statistics.median(kept)
            kept.remove(max(kept, key=lambda v: abs(v - mid)))
        mid = statistics.median(kept)
        spread = (max(kept) - min(kept)) / mid if mid > 0 else float("inf")
        if spread <= STABLE_SPREAD:
            return Stability(len(values), spread, True, None, min(kept), max(kept))
        return Stability(len(values), spread, False,
                         f"the {side} runs vary {min(kept):.1f}-{max(kept):.1f} tokens/s ({spread:.0%} of their "
                         f"median, over the {STABLE_SPREAD:.0%} threshold): the machine's speed changed during the "
                         "measurement (other load?)", min(kept), max(kept))


@dataclass(frozen=True)
class Spread:
    median: float
    min: float
    max: float
    n: int

    @staticmethod
    def of(values: list[float]) -> Spread | None:
        if not values:
            return None
        return Spread(statistics.median(values), min(values), max(values), len(values))


@dataclass(frozen=True)
class Difference:
    """Where two outputs first differ (character index into the text)."""

    position: int
    baseline_chars: int
    draft_chars: int
    baseline_tokens: int | None
    draft_tokens: int | None
    baseline_excerpt: str
    draft_excerpt: str


@dataclass
class PromptComparison:
    prompt_id: str
    baseline_ms: Spread | None
    draft_ms: Spread | None
    baseline_tokens_per_second: Spread | None
    draft_tokens_per_second: Spread | None
    time_ratio: float | None  # median baseline client time / median draft client time, always
    speedup: float | None  # time_ratio when the outputs are equal, else None
    outputs_equal: bool
    difference: Difference | None
    acceptance_rate: float | None
    accepted_per_pass: float | None
    draft_n: int
    draft_n_accepted: int


@dataclass
class Comparison:
    baseline_label: str
    draft_label: str
    speedup: float | None
    time_ratio: float | None
    acceptance_rate: float | None
    accepted_per_pass: float | None
    outputs_equal: bool
    baseline_run_ms: Spread | None  # client time of one pass over all prompts
    draft_run_ms: Spread | None
    baseline_tokens_per_second: Spread | None
    draft_tokens_per_second: Spread | None
    prompts: list[PromptComparison]
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # decode tokens/s with the draft over without (medians over runs): what `probe` predicts
    decode_speedup: float | None = None
    baseline: Stability | None = None
    draft: Stability | None = None
    # False when a side is unstable or the two sides' runs overlap: the ratio's sign is not certain
    conclusive: bool = False
    # What a probe predicted for this pair and setting (bench compare/run --probe), beside the measurement
    predicted: dict[str, Any] | None = None
    interleaved: bool = False
    # What was measured: context_tokens, n_predict, parallel (see paircheck.workload)
    workload: dict[str, int] | None = None
    # Per run, all generated tokens over the wall time while any request was outstanding, and over
    # the wall time while any was generating (bench.compare.busy_ms, decode_busy_ms)
    baseline_aggregate_tokens_per_s: Spread | None = None
    draft_aggregate_tokens_per_s: Spread | None = None
    baseline_aggregate_decode_tokens_per_s: Spread | None = None
    draft_aggregate_decode_tokens_per_s: Spread | None = None
    aggregate_decode_speedup: float | None = None
    # What made the work equal: "outputs" (the same text), "tokens" (several requests at once: the
    # same number of tokens per request, the texts differing), None (not equal: no speedup)
    equal_work: str | None = None

    @property
    def stability_problems(self) -> list[str]:
        out = [s.reason for s in (self.baseline, self.draft) if s is not None and s.reason]
        b, d = self.baseline, self.draft
        if (b is not None and d is not None and b.stable and d.stable and None not in (b.low, b.high, d.low, d.high)
                and max(b.low or 0.0, d.low or 0.0) <= min(b.high or 0.0, d.high or 0.0)):
            out.append(f"the two sides' runs overlap (baseline {b.low:.1f}-{b.high:.1f}, draft {d.low:.1f}-"
                       f"{d.high:.1f} tokens/s): faster or slower cannot be told apart")
        return out


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def tokens_per_second(req: dict[str, Any]) -> float | None:
    """Generated tokens per second of the server's decode phase (predicted_n / predicted_ms)."""
    timings = req.get("timings") or {}
    n, ms = _num(timings.get("predicted_n")), _num(timings.get("predicted_ms"))
    return n * 1000.0 / ms if n is not None and ms else None


def _by_prompt(result: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for req in result["requests"]:
        groups.setdefault(req["prompt_id"], []).append(req)
    return groups


def _excerpt(text: str, at: int) -> str:
    return text[max(0, at - 10) : at + 30]


def first_difference(a: str, b: str) -> int | None:
    """Index of the first differing character, or the shorter length; None when equal."""
    if a == b:
        return None
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _pred_n(req: dict[str, Any]) -> int | None:
    value = (req.get("timings") or {}).get("predicted_n")
    return value if isinstance(value, int) else None


def draft_counts(reqs: list[dict[str, Any]]) -> tuple[int, int, int, bool]:
    drafted = accepted = predicted = 0
    seen = False
    for req in reqs:
        timings = req.get("timings") or {}
        if isinstance(timings.get("draft_n"), int):
            seen = True
            drafted += timings["draft_n"]
            accepted += int(timings.get("draft_n_accepted") or 0)
        predicted += int(timings.get("predicted_n") or 0)
    return drafted, accepted, predicted, seen


def acceptance_rates(drafted: int, accepted: int, predicted: int) -> tuple[float | None, float | None]:
    """Acceptance rate, and accepted tokens per target pass: each pass yields its accepted
    draft tokens plus one of its own, so passes = predicted - accepted."""
    rate = accepted / drafted if drafted else None
    passes = predicted - accepted
    return rate, (accepted / passes if drafted and passes > 0 else None)


def same_tokens(reqs: list[dict[str, Any]]) -> bool:
    """Every request generated the same number of tokens (llama-server's predicted_n)."""
    counts = {_pred_n(r) for r in reqs}
    return len(counts) == 1 and None not in counts


def _compare_prompt(
    pid: str, base: list[dict[str, Any]], draft: list[dict[str, Any]], warnings: list[str], by_tokens: bool = False
) -> PromptComparison:
    b_ms, d_ms = Spread.of([r["client_ms"] for r in base]), Spread.of([r["client_ms"] for r in draft])
    b_tps = Spread.of([t for t in map(tokens_per_second, base) if t is not None])
    d_tps = Spread.of([t for t in map(tokens_per_second, draft) if t is not None])
    for side, reqs in (("baseline", base), ("draft", draft)):
        if len({r["content"] for r in reqs}) > 1:
            why = "(several requests at once: see below)" if by_tokens else "(not deterministic)"
            warnings.append(f"prompt {pid}: the {side} runs did not all produce the same text {why}")
    difference = None
    equal = bool(base and draft)
    if base and draft:
        a, b = base[0]["content"], draft[0]["content"]
        at = first_difference(a, b)
        equal = at is None and all(r["content"] == a for r in base + draft)
        if at is not None:
            difference = Difference(
                at, len(a), len(b), _pred_n(base[0]), _pred_n(draft[0]), _excerpt(a, at), _excerpt(b, at)
            )
    ratio = b_ms.median / d_ms.median if b_ms and d_ms and d_ms.median > 0 else None
    drafted, accepted, predicted, _ = draft_counts(draft)
    rate, per_pass = acceptance_rates(drafted, accepted, predicted)
    return PromptComparison(
        prompt_id=pid,
        baseline_ms=b_ms,
        draft_ms=d_ms,
        baseline_tokens_per_second=b_tps,
        draft_tokens_per_second=d_tps,
        time_ratio=ratio,
        speedup=ratio if equal or (by_tokens and same_tokens(base + draft)) else None,
        outputs_equal=equal,
        difference=difference,
        acceptance_rate=rate,
        accepted_per_pass=per_pass,
        draft_n=drafted,
        draft_n_accepted=accepted,
    )


def _clients(result: dict[str, Any]) -> list[int]:
    """The client threads a result's runs had (``settings.parallel``; 1 in files before it)."""
    parallel = (result.get("settings") or {}).get("parallel")
    if isinstance(parallel, int) and not isinstance(parallel, bool) and parallel >= 1:
        return list(range(parallel))
    return sorted({int(req.get("client", 0)) for req in result["requests"]}) or [0]


def complete_runs(result: dict[str, Any], prompt_ids: list[str]) -> list[list[dict[str, Any]]]:
    """The requests of each measured run that has every prompt of ``prompt_ids`` from every
    client (an interrupted run is left out), in run order."""
    if not prompt_ids:
        return []  # no prompt in common: no run measured anything comparable (not runs of 0 ms)
    keys = [(pid, c) for c in _clients(result) for pid in prompt_ids]
    runs: dict[int, dict[tuple[str, int], dict[str, Any]]] = {}
    for req in result["requests"]:
        runs.setdefault(int(req.get("run", 0)), {})[(req["prompt_id"], int(req.get("client", 0)))] = req
    return [[reqs[k] for k in keys] for _, reqs in sorted(runs.items()) if all(k in reqs for k in keys)]


def _union_ms(spans: list[tuple[float, float]]) -> float:
    """Total length of the union of [start, end] intervals (ms)."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def busy_ms(reqs: list[dict[str, Any]]) -> float:
    """The wall time while at least one of ``reqs`` was outstanding, by the client's clock: the
    union of [sent, sent + client_ms]. One request at a time: the sum of their client times (also
    for files without ``sent_ms``, written before requests were sent concurrently)."""
    if all(_num(r.get("sent_ms")) is not None for r in reqs):
        return _union_ms([(float(r["sent_ms"]), float(r["sent_ms"]) + float(r["client_ms"])) for r in reqs])
    return float(sum(r["client_ms"] for r in reqs))


def decode_busy_ms(reqs: list[dict[str, Any]]) -> float:
    """The wall time while at least one of ``reqs`` was generating: the union of each request's
    last ``predicted_ms`` before its answer arrived (llama-server's timings, placed on the client's
    clock). With several at once it can include another request's prompt evaluation batched
    alongside; one at a time it is the sum of predicted_ms."""
    spans = []
    for r in reqs:
        ms = _num((r.get("timings") or {}).get("predicted_ms")) or 0.0
        sent = _num(r.get("sent_ms"))
        if sent is None:
            return float(sum(_num((q.get("timings") or {}).get("predicted_ms")) or 0.0 for q in reqs))
        end = sent + float(r["client_ms"])
        spans.append((end - ms, end))
    return _union_ms(spans)


def _predicted(reqs: list[dict[str, Any]]) -> float:
    return sum(_num((r.get("timings") or {}).get("predicted_n")) or 0 for r in reqs)


def run_totals(result: dict[str, Any], prompt_ids: list[str]) -> tuple[list[float], list[float]]:
    """Per measured run over all prompts (and clients): its wall time while any request was
    outstanding (``busy_ms``; one request at a time, the sum of the client times), and decode
    tokens per second per request (sum of predicted_n over sum of predicted_ms). Runs missing a
    request (an interrupted file) are left out."""
    totals, tps = [], []
    for reqs in complete_runs(result, prompt_ids):
        totals.append(busy_ms(reqs))
        ms = sum(_num((r.get("timings") or {}).get("predicted_ms")) or 0 for r in reqs)
        if ms > 0:
            tps.append(_predicted(reqs) * 1000.0 / ms)
    return totals, tps


def run_aggregates(result: dict[str, Any], prompt_ids: list[str]) -> tuple[list[float], list[float]]:
    """Per measured run: aggregate tokens/s (all generated tokens over ``busy_ms``) and aggregate
    decode tokens/s (the same tokens over ``decode_busy_ms``)."""
    agg, decode = [], []
    for reqs in complete_runs(result, prompt_ids):
        n, wall, gen = _predicted(reqs), busy_ms(reqs), decode_busy_ms(reqs)
        if wall > 0:
            agg.append(n * 1000.0 / wall)
        if gen > 0:
            decode.append(n * 1000.0 / gen)
    return agg, decode


def parallel_of(result: dict[str, Any]) -> int:
    return len(_clients(result))


def stability_values(result: dict[str, Any], prompt_ids: list[str]) -> list[float]:
    """The per-run numbers a side's stability is judged on: decode tokens/s one request at a
    time (as always), aggregate tokens/s with several at once (the number the verdict gives)."""
    if parallel_of(result) > 1:
        return run_aggregates(result, prompt_ids)[0]
    return run_totals(result, prompt_ids)[1]


def workload_of(result: dict[str, Any]) -> dict[str, int]:
    """The workload a result measured (files before workloads: the prompts as given, one at a time)."""
    settings = result.get("settings") or {}
    depth = settings.get("context_tokens")
    return {"context_tokens": depth if isinstance(depth, int) else 0,
            "n_predict": int(settings.get("n_predict") or 0), "parallel": parallel_of(result)}


def _setting_warnings(baseline: dict[str, Any], draft: dict[str, Any]) -> list[str]:
    out = []
    for result, side in ((baseline, "baseline"), (draft, "draft")):
        if not result.get("complete"):
            why = f" ({result['error']})" if result.get("error") else ""
            out.append(f"the {side} file is incomplete{why}: only what was measured is compared")
    b_set, d_set = baseline.get("settings") or {}, draft.get("settings") or {}
    for key in ("n_predict", "seed", "temperature", "cache_prompt", "chat_template", "context_tokens", "parallel"):
        if b_set.get(key) != d_set.get(key):
            out.append(f"the runs used different {key}: baseline {b_set.get(key)!r}, draft {d_set.get(key)!r}")
    b_srv, d_srv = baseline.get("server") or {}, draft.get("server") or {}
    if b_srv.get("model_path") and d_srv.get("model_path") and b_srv["model_path"] != d_srv["model_path"]:
        out.append(f"different target models: baseline {b_srv['model_path']!r}, draft {d_srv['model_path']!r}")
    if (baseline.get("machine") or {}) != (draft.get("machine") or {}):
        out.append("the two files were measured on different machines")
    return out


def _workload_notes(result: dict[str, Any]) -> list[str]:
    """How the prompts were sent, when it was not one short prompt at a time."""
    settings = result.get("settings") or {}
    out = []
    depth = settings.get("context_tokens")
    if isinstance(depth, int) and depth > 0:
        prepared = [p for p in result.get("prepared") or [] if isinstance(p, dict)]
        counts = sorted(p["context_tokens"] for p in prepared if isinstance(p.get("context_tokens"), int))
        got = (f" ({counts[0]:,}-{counts[-1]:,} tokens as the server counts them)" if counts and counts[0] != counts[-1]
               else f" ({counts[0]:,} tokens as the server counts them)" if counts else "")
        source = settings.get("context_source") or "built-in"
        said = "paircheck's built-in document" if source == "built-in" else source
        repeated = " (repeated: shorter than the depth)" if any(p.get("repeated") for p in prepared) else ""
        out.append(f"each prompt was filled to {depth:,} tokens of context{got} from {said}{repeated}, and sent "
                   "with cache_prompt: the warm-up evaluates that prefix, the measured runs reuse it")
    parallel = parallel_of(result)
    if parallel > 1:
        out.append(f"{parallel} clients at once, each sending every prompt, against a server with "
                   f"{parallel} slots: tokens/s per request; aggregate tokens/s = all generated tokens over "
                   "the wall time while any request was outstanding")
    return out


def nothing_comparable(baseline: dict[str, Any], draft: dict[str, Any]) -> str | None:
    """Why two results have nothing to compare (an empty run, no prompt in common), or None."""
    def runs(result: dict[str, Any]) -> str:
        n = len({req.get("run", 0) for req in result["requests"]})
        return f"{n} run{'s' if n != 1 else ''}"

    if not draft["requests"] or not baseline["requests"]:
        empty, other = ("draft", "baseline") if not draft["requests"] else ("baseline", "draft")
        full = baseline if empty == "draft" else draft
        if not full["requests"]:
            return "neither run measured a request"
        return f"the {empty} run measured no request (the {other} has {runs(full)})"
    b_groups, d_groups = _by_prompt(baseline), _by_prompt(draft)
    if not any(pid in d_groups for pid in b_groups):
        return (f"no prompt was measured on both sides (baseline: {', '.join(b_groups)}; "
                f"draft: {', '.join(d_groups)})")
    return None


def compare(baseline: dict[str, Any], draft: dict[str, Any]) -> Comparison:
    """Compare two bench results (as loaded by ``client.load_bench_result``)."""
    warnings = _setting_warnings(baseline, draft)
    b_groups, d_groups = _by_prompt(baseline), _by_prompt(draft)
    common = [pid for pid in b_groups if pid in d_groups]
    only = sorted(set(b_groups) ^ set(d_groups))
    if only:
        warnings.append(f"prompts measured on one side only are left out: {', '.join(only)}")
    by_tokens = parallel_of(baseline) > 1 and parallel_of(draft) > 1
    prompts = [_compare_prompt(pid, b_groups[pid], d_groups[pid], warnings, by_tokens) for pid in common]
    drafted, accepted, predicted, seen = draft_counts([r for pid in common for r in d_groups[pid]])
    if not seen:
        warnings.append(
            "the draft run shows no draft_n at all: the server was started without --spec-type "
            "(or without -md), or the draft never proposed a token"
        )
    if draft_counts(baseline["requests"])[3]:
        warnings.append("the baseline run shows draft_n: it was measured with speculative decoding on")
    rate, per_pass = acceptance_rates(drafted, accepted, predicted)
    b_tot, b_tps = run_totals(baseline, common)
    d_tot, d_tps = run_totals(draft, common)
    ratio = (
        statistics.median(b_tot) / statistics.median(d_tot)
        if b_tot and d_tot and statistics.median(d_tot) > 0
        else None
    )
    equal = bool(prompts) and all(p.outputs_equal for p in prompts)
    work = "outputs" if equal else None
    if not equal and by_tokens and prompts and all(same_tokens(b_groups[pid] + d_groups[pid]) for pid in common):
        work = "tokens"
        differ = ", ".join(p.prompt_id for p in prompts if not p.outputs_equal)
        warnings.append(
            f"the outputs differ (prompt {differ}) with {parallel_of(draft)} requests at once: llama-server batches "
            "the slots' tokens together and its arithmetic differs slightly with the batch, which can flip a "
            "near-tie of greedy decoding; every request generated the same number of tokens on both sides, so the "
            "speedup compares equal work in tokens, not in text")
    elif not equal and prompts:
        warnings.append(
            "the outputs differ: the time ratio is not a speedup on equal work (see the first differing position)"
        )
    notes = [
        "prompts were sent raw, without a chat template"
        if not (baseline.get("settings") or {}).get("chat_template")
        else "prompts were sent through the server's chat template"
    ]
    notes += _workload_notes(baseline)
    notes.append(
        "not measured: " + ", ".join(baseline.get("not_measured") or ["streaming time to first token", "GPU memory"])
    )
    decode = (statistics.median(d_tps) / statistics.median(b_tps)
              if b_tps and d_tps and statistics.median(b_tps) > 0 else None)
    b_agg, b_gen = run_aggregates(baseline, common)
    d_agg, d_gen = run_aggregates(draft, common)
    gen_ratio = (statistics.median(d_gen) / statistics.median(b_gen)
                 if b_gen and d_gen and statistics.median(b_gen) > 0 else None)
    b_stab, d_stab = stability_values(baseline, common), stability_values(draft, common)
    comp = Comparison(
        baseline_label=str(baseline.get("label")),
        draft_label=str(draft.get("label")),
        speedup=ratio if work else None,
        time_ratio=ratio,
        acceptance_rate=rate,
        accepted_per_pass=per_pass,
        outputs_equal=equal,
        baseline_run_ms=Spread.of(b_tot),
        draft_run_ms=Spread.of(d_tot),
        baseline_tokens_per_second=Spread.of(b_tps),
        draft_tokens_per_second=Spread.of(d_tps),
        prompts=prompts,
        warnings=warnings,
        notes=notes,
        decode_speedup=decode if work else None,
        baseline=Stability.of(b_stab, "baseline"),
        draft=Stability.of(d_stab, "draft"),
        interleaved=bool(baseline.get("interleaved") and draft.get("interleaved")),
        workload=workload_of(baseline),
        baseline_aggregate_tokens_per_s=Spread.of(b_agg),
        draft_aggregate_tokens_per_s=Spread.of(d_agg),
        baseline_aggregate_decode_tokens_per_s=Spread.of(b_gen),
        draft_aggregate_decode_tokens_per_s=Spread.of(d_gen),
        aggregate_decode_speedup=gen_ratio if work else None,
        equal_work=work,
    )
    comp.conclusive = not comp.stability_problems
    return comp
