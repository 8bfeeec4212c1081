"""``paircheck bench compare BASELINE DRAFT``: two bench results side by side.

Per prompt and overall: median and spread (min..max) of client time and of generated
tokens per second, the speedup (median client time of baseline over draft), the draft
acceptance rate ``draft_n_accepted / draft_n`` and the accepted tokens per target pass.

A speedup is only a speedup on equal work: with greedy sampling both servers should
produce the same text. Where they do not, the first differing position is shown and
``speedup`` is null (the plain ``time_ratio`` is still given, labelled as such).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

COMPARE_SCHEMA_VERSION = 2
FORMATS = ("table", "markdown", "json")
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


def _compare_prompt(
    pid: str, base: list[dict[str, Any]], draft: list[dict[str, Any]], warnings: list[str]
) -> PromptComparison:
    b_ms, d_ms = Spread.of([r["client_ms"] for r in base]), Spread.of([r["client_ms"] for r in draft])
    b_tps = Spread.of([t for t in map(tokens_per_second, base) if t is not None])
    d_tps = Spread.of([t for t in map(tokens_per_second, draft) if t is not None])
    for side, reqs in (("baseline", base), ("draft", draft)):
        if len({r["content"] for r in reqs}) > 1:
            warnings.append(f"prompt {pid}: the {side} runs did not all produce the same text (not deterministic)")
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
        speedup=ratio if equal else None,
        outputs_equal=equal,
        difference=difference,
        acceptance_rate=rate,
        accepted_per_pass=per_pass,
        draft_n=drafted,
        draft_n_accepted=accepted,
    )


def run_totals(result: dict[str, Any], prompt_ids: list[str]) -> tuple[list[float], list[float]]:
    """Per measured run over all prompts: total client ms, and tokens per second (sum of
    predicted_n over sum of predicted_ms). Runs missing a prompt (an interrupted file) are left out."""
    if not prompt_ids:
        return [], []  # no prompt in common: no run measured anything comparable (not runs of 0 ms)
    runs: dict[int, dict[str, dict[str, Any]]] = {}
    for req in result["requests"]:
        runs.setdefault(int(req.get("run", 0)), {})[req["prompt_id"]] = req
    totals, tps = [], []
    for reqs in runs.values():
        if not all(pid in reqs for pid in prompt_ids):
            continue
        totals.append(sum(reqs[pid]["client_ms"] for pid in prompt_ids))
        n = sum(_num((reqs[pid].get("timings") or {}).get("predicted_n")) or 0 for pid in prompt_ids)
        ms = sum(_num((reqs[pid].get("timings") or {}).get("predicted_ms")) or 0 for pid in prompt_ids)
        if ms > 0:
            tps.append(n * 1000.0 / ms)
    return totals, tps


def _setting_warnings(baseline: dict[str, Any], draft: dict[str, Any]) -> list[str]:
    out = []
    for result, side in ((baseline, "baseline"), (draft, "draft")):
        if not result.get("complete"):
            why = f" ({result['error']})" if result.get("error") else ""
            out.append(f"the {side} file is incomplete{why}: only what was measured is compared")
    b_set, d_set = baseline.get("settings") or {}, draft.get("settings") or {}
    for key in ("n_predict", "seed", "temperature", "cache_prompt", "chat_template"):
        if b_set.get(key) != d_set.get(key):
            out.append(f"the runs used different {key}: baseline {b_set.get(key)!r}, draft {d_set.get(key)!r}")
    b_srv, d_srv = baseline.get("server") or {}, draft.get("server") or {}
    if b_srv.get("model_path") and d_srv.get("model_path") and b_srv["model_path"] != d_srv["model_path"]:
        out.append(f"different target models: baseline {b_srv['model_path']!r}, draft {d_srv['model_path']!r}")
    if (baseline.get("machine") or {}) != (draft.get("machine") or {}):
        out.append("the two files were measured on different machines")
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
    """Compare two bench results (as loaded by ``client.load_result``)."""
    warnings = _setting_warnings(baseline, draft)
    b_groups, d_groups = _by_prompt(baseline), _by_prompt(draft)
    common = [pid for pid in b_groups if pid in d_groups]
    only = sorted(set(b_groups) ^ set(d_groups))
    if only:
        warnings.append(f"prompts measured on one side only are left out: {', '.join(only)}")
    prompts = [_compare_prompt(pid, b_groups[pid], d_groups[pid], warnings) for pid in common]
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
    if not equal and prompts:
        warnings.append(
            "the outputs differ: the time ratio is not a speedup on equal work (see the first differing position)"
        )
    notes = [
        "prompts were sent raw, without a chat template"
        if not (baseline.get("settings") or {}).get("chat_template")
        else "prompts were sent through the server's chat template"
    ]
    notes.append(
        "not measured: " + ", ".join(baseline.get("not_measured") or ["streaming time to first token", "GPU memory"])
    )
    decode = (statistics.median(d_tps) / statistics.median(b_tps)
              if b_tps and d_tps and statistics.median(b_tps) > 0 else None)
    comp = Comparison(
        baseline_label=str(baseline.get("label")),
        draft_label=str(draft.get("label")),
        speedup=ratio if equal else None,
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
        decode_speedup=decode if equal else None,
        baseline=Stability.of(b_tps, "baseline"),
        draft=Stability.of(d_tps, "draft"),
        interleaved=bool(baseline.get("interleaved") and draft.get("interleaved")),
    )
    comp.conclusive = not comp.stability_problems
    return comp
