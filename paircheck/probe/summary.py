"""From recorded traces to the numbers a user decides with: per draft length and p_min, the
drafted and accepted tokens per target pass (measured), and the speedup they would give
(modelled from the weight-byte cost ratio). Pure functions, no I/O.

The speed model: generating ``tokens`` takes ``passes`` target forward passes plus one
draft forward pass per drafted token, each costing ``c`` of a target pass (decoding is
memory-bound, so ``c`` is the ratio of weight bytes read per token, as ``estimate`` takes
it). Without a draft the same tokens take ``tokens`` target passes, so

    modelled speedup = tokens / (passes + c * drafted).

It is Leviathan et al.'s model with the measured counts in place of an assumed
acceptance. What it leaves out: a verification pass of k+1 tokens costing more than one
token (it does on a CPU), the draft's own prompt processing, sampling and scheduling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from paircheck.probe.replay import Counts, PromptTrace, expected_sampled, greedy_agreement, replay

K_MAX = 16  # draft lengths 1..16 are replayed
# p_min values reported by default: llama.cpp's default 0 (common/common.h,
# common_params_speculative_draft::p_min) and a few that cut low-confidence drafts.
DEFAULT_P_MIN: tuple[float, ...] = (0.0, 0.5, 0.75, 0.9)


@dataclass(frozen=True)
class Row:
    """One draft length and p_min: what llama-server would count (expected values when sampling)."""

    draft_max: int
    p_min: float
    tokens: float
    passes: float
    drafted: float
    accepted: float
    modelled_speedup: float | None  # None without a cost ratio

    @property
    def accepted_per_pass(self) -> float:
        return self.accepted / self.passes if self.passes else 0.0

    @property
    def acceptance_rate(self) -> float | None:
        return self.accepted / self.drafted if self.drafted else None


@dataclass(frozen=True)
class PromptSummary:
    prompt_id: str
    kind: str
    acceptance_rate: float | None  # greedy agreement: draft's top token == target's, per position
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class KindSummary:
    kind: str
    acceptance_rate: float | None
    best_draft_max: int | None
    accepted_per_pass: float  # at best_draft_max (or k=1 without a cost ratio), p_min 0


@dataclass(frozen=True)
class DraftSummary:
    path: str
    acceptance_rate: float | None  # over every prompt: positions agreeing / positions compared
    agreed: int
    compared: int
    rows: tuple[Row, ...]
    prompts: tuple[PromptSummary, ...]
    kinds: tuple[KindSummary, ...]
    cost_ratio: float | None
    best_draft_max: int | None  # at p_min 0, by modelled speedup
    best: Row | None  # the best (draft_max, p_min) of all rows, by modelled speedup

    def row(self, draft_max: int, p_min: float = 0.0) -> Row | None:
        for r in self.rows:
            if r.draft_max == draft_max and r.p_min == p_min:
                return r
        return None

    @property
    def modelled_speedup(self) -> float | None:
        if self.best_draft_max is None:
            return None
        row = self.row(self.best_draft_max, 0.0)
        return row.modelled_speedup if row else None


def _speedup(tokens: float, passes: float, drafted: float, cost_ratio: float | None) -> float | None:
    if cost_ratio is None or passes + cost_ratio * drafted <= 0:
        return None
    return tokens / (passes + cost_ratio * drafted)


def _row(k: int, p: float, counts: Counts, cost_ratio: float | None) -> Row:
    return Row(k, p, counts.tokens, counts.passes, counts.drafted, counts.accepted,
               _speedup(counts.tokens, counts.passes, counts.drafted, cost_ratio))


def rows_for(traces: Sequence[PromptTrace], p_mins: Sequence[float], cost_ratio: float | None,
             accept_probs: Sequence[Sequence[float]] | None = None, k_max: int = K_MAX) -> tuple[Row, ...]:
    """Every (draft_max, p_min) row, summed over ``traces``: replayed exactly for greedy
    decoding, expected values along the recorded paths when ``accept_probs`` (sampling)."""
    rows = []
    for p in p_mins:
        for k in range(1, k_max + 1):
            if accept_probs is None:
                total = Counts()
                for trace in traces:
                    total = total + replay(trace, k, p)
                rows.append(_row(k, p, total, cost_ratio))
            else:
                tokens = passes = drafted = accepted = 0.0
                for trace, probs in zip(traces, accept_probs, strict=True):
                    ps, dr, ac = expected_sampled(trace, probs, k, p)
                    tokens += len(trace.target)
                    passes, drafted, accepted = passes + ps, drafted + dr, accepted + ac
                rows.append(Row(k, p, tokens, passes, drafted, accepted, _speedup(tokens, passes, drafted, cost_ratio)))
    return tuple(rows)


def _best_k(rows: Sequence[Row], p_min: float = 0.0) -> int | None:
    candidates = [r for r in rows if r.p_min == p_min and r.modelled_speedup is not None]
    if not candidates:
        return None
    # the highest modelled speedup; on a tie the shorter draft (less work for the same gain)
    return max(candidates, key=lambda r: (round(r.modelled_speedup or 0.0, 6), -r.draft_max)).draft_max


def _best_row(rows: Sequence[Row]) -> Row | None:
    candidates = [r for r in rows if r.modelled_speedup is not None]
    if not candidates:
        return None
    return max(candidates, key=lambda r: (round(r.modelled_speedup or 0.0, 6), -r.p_min, -r.draft_max))


def _rate(agreed: int, compared: int) -> float | None:
    return agreed / compared if compared else None


def summarize(path: str, prompts: Sequence[tuple[str, str]], traces: Sequence[PromptTrace],
              p_mins: Sequence[float], cost_ratio: float | None,
              accept_probs: Sequence[Sequence[float]] | None = None, k_max: int = K_MAX) -> DraftSummary:
    """One draft's summary; ``prompts`` gives (id, kind) for each trace, in the same order."""
    per_prompt = []
    agreed = compared = 0
    for i, ((pid, kind), trace) in enumerate(zip(prompts, traces, strict=True)):
        same, n = greedy_agreement(trace)
        agreed, compared = agreed + same, compared + n
        probs = None if accept_probs is None else [accept_probs[i]]
        per_prompt.append(PromptSummary(pid, kind, _rate(same, n), rows_for([trace], p_mins, cost_ratio, probs, k_max)))
    rows = rows_for(traces, p_mins, cost_ratio, accept_probs, k_max)
    kinds = []
    for kind in dict.fromkeys(k for _, k in prompts):
        idx = [i for i, (_, k) in enumerate(prompts) if k == kind]
        same = sum(greedy_agreement(traces[i])[0] for i in idx)
        n = sum(greedy_agreement(traces[i])[1] for i in idx)
        krows = rows_for([traces[i] for i in idx], [0.0], cost_ratio,
                         None if accept_probs is None else [accept_probs[i] for i in idx], k_max)
        best = _best_k(krows)
        at = next(r for r in krows if r.draft_max == (best or 1))
        kinds.append(KindSummary(kind, _rate(same, n), best, at.accepted_per_pass))
    return DraftSummary(
        path=path,
        acceptance_rate=_rate(agreed, compared),
        agreed=agreed,
        compared=compared,
        rows=rows,
        prompts=tuple(per_prompt),
        kinds=tuple(kinds),
        cost_ratio=cost_ratio,
        best_draft_max=_best_k(rows),
        best=_best_row(rows),
    )


def accept_probabilities(trace: PromptTrace, candidates: Sequence[dict[int, float]]) -> list[float]:
    """Per position, the target's post-sampler probability of the draft's top token (0 when
    the target's sampler does not keep it): the chance llama-server accepts that token."""
    out = [0.0] * len(trace.target)
    for j in range(1, len(trace.target)):
        out[j] = float(candidates[j].get(trace.draft_top[j], 0.0)) if j < len(candidates) else 0.0
    return out
