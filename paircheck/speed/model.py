"""The speed model: how long llama-server's draft-simple loop takes to generate some work,
from what each of its steps costs. The one home of every predicted tokens/s and speedup
paircheck prints (probe, estimate, scan, the check's ``--probe`` launch line, bench compare).

**Work** is what a generation takes, counted (a probe replays it exactly for greedy
decoding) or expected (from an acceptance rate, Leviathan et al.'s i.i.d. model):

* ``tokens``: the tokens generated (llama-server's ``predicted_n``);
* ``batches[b - 1]``: the target's batches of ``b`` tokens after the prompt pass (``b = 1``:
  one token and nothing to verify; ``b = s + 1``: the last sampled token and ``s`` drafted);
* ``draft_decodes``: the one-token decodes the draft makes while drafting;
* ``generations``: how many generations the work sums (each one's first token comes from
  its prompt pass, so it costs no decode).

**Costs** are what each step takes, in milliseconds (measured on this machine by the probe's
calibration, or computed for a GPU) or in units of one target decode (assumed from the
weight bytes, when only a ratio can be known).

The loop, as the pinned llama.cpp runs it (llama-cpp-python 0.3.36's vendored
``tools/server/server-context.cpp`` ``update_slots`` and ``common/speculative.cpp``
``common_speculative_impl_draft_simple``), and what each part costs:

* the target decodes each batch of ``b`` tokens and samples ``b`` positions: ``T(b)``, the
  target's decode time plus what ``b - 1`` more tokens add to one evaluation;
* the draft re-evaluates the same batch ("for now, always re-evaluate for simplicity",
  ``common_speculative_process`` after every target batch): ``D(b)``;
* while drafting, the draft decodes the last sampled token and every drafted token it goes
  on from (``draft_simple::draft``): ``draft_decode_ms`` each;
* what a round costs beyond those (the server's bookkeeping, the target sampling ``b``
  positions instead of one, checkpoints): ``round_ms + round_token_ms * b``, fitted to real
  speculative runs by the calibration, 0 when assumed.

So ``time(pair) = sum_b batches[b] * (T(b) + D(b) + round_ms + round_token_ms * b) +
draft_decodes * draft_decode_ms``, and the target alone takes ``(tokens - 1) *
target_decode_ms`` for the same tokens (the first one comes from the prompt pass, which is
not counted on either side, as llama-server's ``predicted_ms`` does not count it). Tokens per
second are ``tokens * 1000 / time``: ``predicted_n / predicted_ms``, as ``bench`` reads them.
Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# A draft is recommended only when it is predicted at least this much faster than the target
# alone: the model is held to 10% of bench's measurement (tests/probe/test_speed_differential.py),
# so a smaller predicted gain could be a loss.
MIN_GAIN = 1.05

Points = tuple[tuple[int, float], ...]


@dataclass(frozen=True)
class Work:
    """What a generation takes (see the module docstring)."""

    tokens: float
    batches: tuple[float, ...]
    draft_decodes: float
    generations: float = 1.0  # how many generations (prompts) the work sums: each has a prompt pass

    @property
    def rounds(self) -> float:
        return float(sum(self.batches))

    @property
    def batch_tokens(self) -> float:
        return float(sum((b + 1) * n for b, n in enumerate(self.batches)))


@dataclass(frozen=True)
class Costs:
    """What each step of the loop costs (see the module docstring).

    ``target_batch_ms`` and ``draft_batch_ms`` are (n, ms) points: the time to evaluate n new
    tokens (llama-server's ``prompt_ms`` for n tokens after a cached prefix); between points the
    cost is interpolated, beyond the last one extended along the last segment. ``absolute``
    False: the costs are in units of one target decode, so a speedup can be predicted but no
    tokens per second. ``basis`` says where they come from: ``measured`` (calibrated on this
    machine's llama-server), ``assumed`` (weight bytes) or a caller's own word (``roofline``).
    """

    target_decode_ms: float
    draft_decode_ms: float
    target_batch_ms: Points = ()
    draft_batch_ms: Points = ()
    round_ms: float = 0.0
    round_token_ms: float = 0.0
    absolute: bool = True
    basis: str = "measured"

    def target_batch(self, b: int) -> float:
        """``T(b)``: one target batch of ``b`` tokens, its sampling included."""
        if b <= 1 or not self.target_batch_ms:
            return self.target_decode_ms
        return self.target_decode_ms + max(0.0, interpolate(self.target_batch_ms, b)
                                           - interpolate(self.target_batch_ms, 1))

    def draft_batch(self, b: int) -> float:
        """``D(b)``: the draft re-evaluating the target's batch of ``b`` tokens."""
        return interpolate(self.draft_batch_ms, b) if self.draft_batch_ms else 0.0

    def batch(self, b: int) -> float:
        """One batch of ``b`` tokens with everything that comes with it but the draft's decodes."""
        return self.target_batch(b) + self.draft_batch(b) + self.round_ms + self.round_token_ms * b


def assumed_costs(cost_ratio: float, verify_growth: float = 0.0, round_cost: float = 0.0) -> Costs:
    """Costs in units of one target decode when nothing was measured: the draft's decode costs
    ``cost_ratio`` (its weight bytes over the target's), a batch of b tokens costs ``1 +
    verify_growth * (b - 1)`` decodes, a round ``round_cost`` more, and the draft's re-evaluation
    of the batch nothing. With both at 0 this is Leviathan et al.'s ``E / (k c + 1)``."""
    batch: Points = ((1, 1.0), (2, 1.0 + verify_growth))
    return Costs(1.0, cost_ratio, batch, (), round_cost, 0.0, absolute=False, basis="assumed")


@dataclass(frozen=True)
class SlotSteps:
    """What a step of N slots was measured to cost (probe's calibration): ``points``, (b, ms)
    of a step of b new tokens a slot, timed as one request of N prompts after each slot's
    cached prefix (llama-server's ``prompt_ms``); ``decode_ms``, a step of the N slots
    generating together (``predicted_ms`` per token of N greedy replies at once), None when
    not timed. A prompt's evaluation carries the request's launch, so deep in a context its
    one-token step costs more than a generated token's (at 4,096 tokens, two slots: 295 ms
    against 258-275 measured by bench run); the generation prices a token, the curve what more
    tokens a slot add."""

    points: Points
    decode_ms: float | None = None


def for_slots(costs: Costs, slots: int, longest_batch: int = 17, target_steps: SlotSteps | None = None,
              draft_steps: SlotSteps | None = None) -> Costs:
    """The costs of one step of a server running ``slots`` requests at once, written so that
    ``target_ms``/``pair_ms`` of one request's work give the time for every slot to do the
    same work together (tokens per second per request; times ``slots`` in aggregate).

    How the pinned llama-server runs N slots (``server-context.cpp`` ``update_slots``,
    ``common/speculative.cpp`` ``draft_simple::draft``): each step decodes one target batch
    holding every slot's tokens (a slot's last sampled token and its draft), the draft
    re-evaluates that batch, and each drafting step decodes one draft batch of one token per
    slot. So with every slot in the same round: a verification of ``b`` tokens a slot is a
    target batch of ``slots`` sequences of ``b`` tokens, its re-evaluation a draft batch of as
    many, a drafting step a draft batch of one token per slot, and the target alone decodes
    batches of one token per slot. The per-round costs (sampling, bookkeeping) are per slot.

    ``target_steps`` and ``draft_steps``, when measured (probe's calibration, SlotSteps), price
    those batches: a step of one token a slot at the measured generation's cost (else the
    curve's first point), and b tokens a slot that plus what the curve adds from 1 to b
    (Costs.target_batch). Without them a batch of
    ``slots`` sequences of b tokens is priced as one sequence of ``slots * b`` tokens: right
    where the weights dominate (a short context, a GPU's roofline), too cheap at a deep context
    on a CPU, where each sequence reads its own cache (measured here at 4,096 tokens: 275 ms
    for two slots' step, 240 for one sequence's two tokens)."""
    if slots <= 1:
        return costs
    target_points = _slot_points(target_steps, costs.target_batch_ms, slots, longest_batch)
    draft_points = _slot_points(draft_steps, costs.draft_batch_ms, slots, longest_batch)
    # with measured steps, the step of one token a slot as measured (the N slots generating
    # together), not the one-slot decode plus a difference of two timings (at 512 tokens a
    # one-token batch timed 82 ms, the decode 68)
    target_step = _slot_step(target_steps, target_points) if target_steps else costs.target_batch(slots)
    draft_step = _slot_step(draft_steps, draft_points) if draft_steps else max(
        costs.draft_decode_ms, interpolate(costs.draft_batch_ms, slots) if costs.draft_batch_ms
        else costs.draft_decode_ms * slots)
    return Costs(target_step, draft_step, target_points, draft_points,
                 costs.round_ms * slots, costs.round_token_ms * slots, costs.absolute, costs.basis)


def _slot_step(steps: SlotSteps, points: Points) -> float:
    """A step of one token a slot: the measured generation's, else the curve's first point."""
    return steps.decode_ms if steps.decode_ms is not None else points[0][1]


def _slot_points(steps: SlotSteps | None, one_slot: Points, slots: int, longest_batch: int) -> Points:
    """(b, ms) of a step of ``slots`` slots verifying b tokens each: the measured ``steps``,
    else the one-slot curve at ``slots * b`` tokens (none without either)."""
    curve, scale = (steps.points, 1) if steps and steps.points else (one_slot, slots)
    return tuple((b, interpolate(curve, scale * b)) for b in range(1, longest_batch + 1)) if curve else ()


def interpolate(points: Points, n: int) -> float:
    """Piecewise linear through ``points`` (sorted by n), extended along the end segments."""
    if len(points) == 1:
        return points[0][1]
    for (n0, y0), (n1, y1) in zip(points, points[1:], strict=False):
        if n <= n1 or (n1, y1) == points[-1]:
            return y0 + (y1 - y0) * (n - n0) / (n1 - n0)
    raise AssertionError("unreachable")


def target_ms(work: Work, costs: Costs) -> float:
    """The target alone generating the same tokens (decode phase: every token but each
    generation's first, which its prompt pass gives)."""
    return max(0.0, work.tokens - work.generations) * costs.target_decode_ms


def pair_ms(work: Work, costs: Costs) -> float:
    """The pair generating ``work`` (decode phase)."""
    total = work.draft_decodes * costs.draft_decode_ms
    for size, count in enumerate(work.batches, 1):
        if count:
            total += count * costs.batch(size)
    return total


@dataclass(frozen=True)
class Prediction:
    """Target alone and pair, for one setting. Tokens per second are None when the costs are
    relative (``Costs.absolute`` False): then only the speedup is known."""

    speedup: float
    target_tokens_per_s: float | None
    pair_tokens_per_s: float | None

    @property
    def faster(self) -> bool:
        return self.speedup >= MIN_GAIN


def predict(work: Work, costs: Costs) -> Prediction | None:
    """The prediction for ``work`` (None when nothing is generated after the first token)."""
    alone, pair = target_ms(work, costs), pair_ms(work, costs)
    if alone <= 0 or pair <= 0:
        return None
    if not costs.absolute:
        return Prediction(alone / pair, None, None)
    return Prediction(alone / pair, work.tokens * 1000.0 / alone, work.tokens * 1000.0 / pair)


# --------------------------------------------------------------------------- without a probe


def expected_tokens_per_round(acceptance: float, draft_max: int) -> float:
    """Leviathan et al. eq. (1): ``(1 - a^(k+1)) / (1 - a)``; ``k + 1`` at ``a = 1``."""
    a, k = acceptance, draft_max
    if a >= 1.0:
        return float(k + 1)
    return (1.0 - a ** (k + 1)) / (1.0 - a)


def expected_work(acceptance: float, draft_max: int, tokens: float = 1000.0) -> Work:
    """The work of ``tokens`` tokens when each drafted token is accepted with probability
    ``acceptance`` independently (Leviathan et al. section 3): every round drafts ``k`` tokens
    (``k`` decodes) and verifies a batch of ``k + 1``, and yields eq. (1)'s tokens."""
    rounds = (tokens - 1.0) / expected_tokens_per_round(acceptance, draft_max)
    batches = [0.0] * (draft_max + 1)
    batches[draft_max] = rounds
    return Work(tokens, tuple(batches), rounds * draft_max)


def assumed_speedup(acceptance: float, draft_max: int, cost_ratio: float, verify_growth: float = 0.0,
                    round_cost: float = 0.0) -> float:
    """The speedup at an assumed i.i.d. acceptance with assumed costs (``assumed_costs``)."""
    pred = predict(expected_work(acceptance, draft_max), assumed_costs(cost_ratio, verify_growth, round_cost))
    assert pred is not None
    return pred.speedup


def best_assumed(acceptance: float, cost_ratio: float, verify_growth: float = 0.0, round_cost: float = 0.0,
                 k_max: int = 32) -> tuple[int, float]:
    """The draft length in 1..k_max with the highest ``assumed_speedup`` (the shortest on ties)."""
    speeds = {k: assumed_speedup(acceptance, k, cost_ratio, verify_growth, round_cost) for k in range(1, k_max + 1)}
    k = max(speeds, key=lambda k: (round(speeds[k], 9), -k))
    return k, speeds[k]


# --------------------------------------------------------------------------- calibration


@dataclass(frozen=True)
class RoundFit:
    round_ms: float
    round_token_ms: float
    residuals: tuple[float, ...]  # measured minus modelled, ms, per run after the fit


def fit_round_costs(costs: Costs, runs: Iterable[tuple[Work, float]], longest_batch: int = 17) -> RoundFit:
    """``round_ms`` and ``round_token_ms`` that best explain real speculative runs: each run is
    the work replayed for it and the decode time llama-server measured. Least squares on what
    the other costs leave unexplained.

    The runs are the pair as it really runs; the other costs are timed apart, each model on a
    server of its own. Where the runs are faster than those costs add up to, the fit may take
    time off each round, but never more than the draft's re-evaluation of the batch (the
    target's verification and the draft's decodes were timed as they run): measured here with
    the Q4_1 draft, whose batches timed on its own server cost 16 ms a token, the pair's runs
    took 6-12% less than the sum, and the fit -9 ms a verified token. Past that bound, the
    better non-negative fit (noise, not a cost)."""
    bare = Costs(costs.target_decode_ms, costs.draft_decode_ms, costs.target_batch_ms, costs.draft_batch_ms)
    rows = [(w.rounds, w.batch_tokens, ms - pair_ms(w, bare)) for w, ms in runs]
    if not rows:
        return RoundFit(0.0, 0.0, ())
    r0, r1 = _least_squares(rows)
    if any(r0 + r1 * b < -bare.draft_batch(b) for b in range(1, longest_batch + 1)):
        # the one-parameter fits, each kept only when non-negative; the better of them
        options = [(max(0.0, _ratio(rows, 0)), 0.0), (0.0, max(0.0, _ratio(rows, 1)))]
        r0, r1 = min(options, key=lambda p: _sse(rows, *p))
    residuals = tuple(y - r0 * x0 - r1 * x1 for x0, x1, y in rows)
    return RoundFit(r0, r1, residuals)


def _ratio(rows: Sequence[tuple[float, float, float]], i: int) -> float:
    den = sum(r[i] * r[i] for r in rows)
    return sum(r[i] * r[2] for r in rows) / den if den else 0.0


def _sse(rows: Sequence[tuple[float, float, float]], r0: float, r1: float) -> float:
    return sum((y - r0 * x0 - r1 * x1) ** 2 for x0, x1, y in rows)


def _least_squares(rows: Sequence[tuple[float, float, float]]) -> tuple[float, float]:
    a = sum(x0 * x0 for x0, _, _ in rows)
    b = sum(x0 * x1 for x0, x1, _ in rows)
    c = sum(x1 * x1 for _, x1, _ in rows)
    d = sum(x0 * y for x0, _, y in rows)
    e = sum(x1 * y for _, x1, y in rows)
    det = a * c - b * b
    if abs(det) <= 1e-9 * max(1.0, a * c):
        return _ratio(rows, 0), 0.0  # the runs cannot tell the two apart: a cost per round alone
    return (d * c - b * e) / det, (a * e - b * d) / det
