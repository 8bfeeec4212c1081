"""From recorded traces to the numbers a user decides with: per draft length and p_min, the
drafted and accepted tokens per target pass (measured: replayed from the recording), and the
tokens per second and speedup they would give, predicted by ``paircheck.speed.model`` from
what each step costs (measured on this machine by the probe's calibration, or assumed from
the weight bytes with ``--no-calibrate``). Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from paircheck.probe.replay import (
    AcceptanceFigures,
    Counts,
    PromptTrace,
    add_batches,
    expected_sampled,
    greedy_agreement,
    replay,
    replay_outcomes,
)
from paircheck.speed.model import Costs, Prediction, Work, pair_ms, predict

K_MAX = 16  # draft lengths 1..16 are replayed
# p_min values reported by default: llama.cpp's default 0 (common/common.h,
# common_params_speculative_draft::p_min) and a few that cut low-confidence drafts.
DEFAULT_P_MIN: tuple[float, ...] = (0.0, 0.5, 0.75, 0.9)


@dataclass(frozen=True)
class Row(AcceptanceFigures):
    """One draft length and p_min: what llama-server would count (expected values when
    sampling), the work behind it, and the speed predicted for it (None without costs)."""

    draft_max: int
    p_min: float
    tokens: float
    passes: float
    drafted: float
    accepted: float
    batches: tuple[float, ...] = ()
    draft_decodes: float = 0.0
    predicted: Prediction | None = None
    generations: int = 1  # the prompts summed into this row
    # (lowest, highest) predicted speedup over the recording's near ties (greedy, p_min 0):
    # llama-server evaluates the draft's context in other batches than the recording (a cached
    # prefix, several slots in one batch), which can swap a near tie, and one swap costs a
    # whole rejected draft (replay.replay_outcomes). None: no near tie moves the figure.
    near_tie_speedups: tuple[float, float] | None = None

    @property
    def work(self) -> Work:
        return Work(self.tokens, self.batches, self.draft_decodes, self.generations)

    @property
    def predicted_speedup(self) -> float | None:
        return None if self.predicted is None else self.predicted.speedup

    @property
    def predicted_tokens_per_s(self) -> float | None:
        return None if self.predicted is None else self.predicted.pair_tokens_per_s


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
    accepted_per_pass: float  # at best_draft_max (or k=1 without costs), p_min 0


@dataclass(frozen=True)
class DraftSummary:
    path: str
    acceptance_rate: float | None  # over every prompt: positions agreeing / positions compared
    agreed: int
    compared: int
    rows: tuple[Row, ...]
    prompts: tuple[PromptSummary, ...]
    kinds: tuple[KindSummary, ...]
    costs: Costs | None
    best_draft_max: int | None  # at p_min 0, by predicted speed
    best: Row | None  # the best (draft_max, p_min) of all rows, by predicted speed

    def row(self, draft_max: int, p_min: float = 0.0) -> Row | None:
        for r in self.rows:
            if r.draft_max == draft_max and r.p_min == p_min:
                return r
        return None

    @property
    def predicted_speedup(self) -> float | None:
        """At the best draft length, p-min 0."""
        if self.best_draft_max is None:
            return None
        row = self.row(self.best_draft_max, 0.0)
        return row.predicted_speedup if row else None

    @property
    def recommended(self) -> Row | None:
        """The best setting when it is predicted faster than the target alone (by at least
        ``speed.model.MIN_GAIN``); None: run without this draft."""
        best = self.best
        return best if best is not None and best.predicted is not None and best.predicted.faster else None


def _row(k: int, p: float, counts: Counts, costs: Costs | None, generations: int) -> Row:
    row = Row(k, p, counts.tokens, counts.passes, counts.drafted, counts.accepted, counts.batches,
              counts.draft_decodes, None, generations)
    return _priced(row, costs)


def _priced(row: Row, costs: Costs | None) -> Row:
    if costs is None:
        return row
    return replace(row, predicted=predict(row.work, costs))


# (id of a trace, draft length) -> its near-tie outcomes: one summary prices the same traces for
# the whole, per prompt and per kind, and 2 ** ties replays each is the probe's slowest summary step
Outcomes = dict[tuple[int, int], list[Counts]]


def _near_ties(row: Row, traces: Sequence[PromptTrace], costs: Costs, memo: Outcomes) -> Row:
    """``row`` with the range its speedup takes when the server swaps near ties: per prompt the
    outcome that costs the pair most (least) time; the target alone's time does not depend on it."""
    if row.predicted is None or not any(t.near_ties for t in traces):
        return row
    slow, fast = Counts(), Counts()
    for trace in traces:
        key = (id(trace), row.draft_max)
        if key not in memo:
            memo[key] = list(replay_outcomes(trace, row.draft_max).values())
        works = memo[key]
        slow = slow + max(works, key=lambda c: pair_ms(Work(c.tokens, c.batches, c.draft_decodes), costs))
        fast = fast + min(works, key=lambda c: pair_ms(Work(c.tokens, c.batches, c.draft_decodes), costs))
    low, high = (predict(Work(c.tokens, c.batches, c.draft_decodes, len(traces)), costs) for c in (slow, fast))
    if low is None or high is None or high.speedup - low.speedup < 0.005:
        return row
    return replace(row, near_tie_speedups=(low.speedup, high.speedup))


def rows_for(traces: Sequence[PromptTrace], p_mins: Sequence[float], costs: Costs | None,
             accept_probs: Sequence[Sequence[float]] | None = None, k_max: int = K_MAX,
             memo: Outcomes | None = None) -> tuple[Row, ...]:
    """Every (draft_max, p_min) row, summed over ``traces``: replayed exactly for greedy
    decoding, expected values along the recorded paths when ``accept_probs`` (sampling)."""
    rows = []
    memo = {} if memo is None else memo
    for p in p_mins:
        for k in range(1, k_max + 1):
            if accept_probs is None:
                total = Counts()
                for trace in traces:
                    total = total + replay(trace, k, p)
                row = _row(k, p, total, costs, len(traces))
                rows.append(_near_ties(row, traces, costs, memo) if p == 0.0 and costs is not None else row)
            else:
                tokens = passes = drafted = accepted = decodes = 0.0
                batches: tuple[float, ...] = ()
                for trace, probs in zip(traces, accept_probs, strict=True):
                    ps, dr, ac, bs, dd = expected_sampled(trace, probs, k, p)
                    tokens += len(trace.target)
                    passes, drafted, accepted, decodes = passes + ps, drafted + dr, accepted + ac, decodes + dd
                    batches = add_batches(batches, bs)
                rows.append(_priced(Row(k, p, tokens, passes, drafted, accepted, batches, decodes, None, len(traces)),
                                    costs))
    return tuple(rows)


def _speed(r: Row) -> float:
    return round(r.predicted_speedup or 0.0, 6)


def _best_k(rows: Sequence[Row], p_min: float = 0.0) -> int | None:
    candidates = [r for r in rows if r.p_min == p_min and r.predicted is not None]
    if not candidates:
        return None
    # the fastest predicted; on a tie the shorter draft (less work for the same gain)
    return max(candidates, key=lambda r: (_speed(r), -r.draft_max)).draft_max


def _best_row(rows: Sequence[Row]) -> Row | None:
    candidates = [r for r in rows if r.predicted is not None]
    if not candidates:
        return None
    return max(candidates, key=lambda r: (_speed(r), -r.p_min, -r.draft_max))


def _rate(agreed: int, compared: int) -> float | None:
    return agreed / compared if compared else None


def summarize(path: str, prompts: Sequence[tuple[str, str]], traces: Sequence[PromptTrace],
              p_mins: Sequence[float], costs: Costs | None,
              accept_probs: Sequence[Sequence[float]] | None = None, k_max: int = K_MAX) -> DraftSummary:
    """One draft's summary; ``prompts`` gives (id, kind) for each trace, in the same order."""
    memo: Outcomes = {}  # the traces live as long as this call, so their ids stay theirs
    per_prompt = []
    agreed = compared = 0
    for i, ((pid, kind), trace) in enumerate(zip(prompts, traces, strict=True)):
        same, n = greedy_agreement(trace)
        agreed, compared = agreed + same, compared + n
        probs = None if accept_probs is None else [accept_probs[i]]
        rows_one = rows_for([trace], p_mins, costs, probs, k_max, memo)
        per_prompt.append(PromptSummary(pid, kind, _rate(same, n), rows_one))
    rows = rows_for(traces, p_mins, costs, accept_probs, k_max, memo)
    kinds = []
    for kind in dict.fromkeys(k for _, k in prompts):
        idx = [i for i, (_, k) in enumerate(prompts) if k == kind]
        same = sum(greedy_agreement(traces[i])[0] for i in idx)
        n = sum(greedy_agreement(traces[i])[1] for i in idx)
        krows = rows_for([traces[i] for i in idx], [0.0], costs,
                         None if accept_probs is None else [accept_probs[i] for i in idx], k_max, memo)
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
        costs=costs,
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
