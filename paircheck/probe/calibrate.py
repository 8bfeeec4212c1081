"""Measure what each step of llama-server's speculative loop costs on this machine, with the
servers the probe starts, so that ``paircheck.speed.model`` can predict tokens per second.

What is measured, and how (every request through llama-server's native ``/completion``, every
time as the server's own ``timings`` report it, so the client and HTTP are left out):

* **a model's decode** (target and each draft): one greedy generation of a fixed number of
  tokens (``ignore_eos``), ``predicted_ms / (predicted_n - 1)`` (the first token comes from
  the prompt pass); for the target, the probe's own generations give it, per prompt;
* **a model's batch of n tokens**, n = 1, 2, 3, 4, 6, 9, 13, 17 (a verification is of 1 to 17
  tokens: the last sampled one and up to 16 drafted; the rest of the curve is a line): the
  server holds a prefix in its cache (``cache_prompt``), and a request of that prefix plus n
  new tokens makes it evaluate just those n (``prompt_n`` must say n, else the measurement is
  refused); ``prompt_ms`` is the time. Every n is measured ``repeats`` times, in rounds over
  all n, so that a drift of the machine's speed spreads over every size alike;
* **a step of N requests at once** (a workload of ``--parallel N``): every one of the
  server's N slots holds the prefix, and one request of N prompts (the prefix plus b new
  tokens each) makes the server evaluate them as one batch of N sequences, each over its own
  cache (llama-server takes a request's prompts as tasks together, then builds one batch);
  the time is the prompt_ms both report, b = 1, 2, 5, 9, 17. Measured, not priced as one
  sequence of N * b tokens: at a deep context each sequence reads its own cache (measured
  here at 4,096 tokens: two slots' step 275 ms, one sequence's two tokens 240);
* **what a round costs beyond those**: short real speculative runs of the pair (one server
  with both models, ``--spec-type draft-simple``) at two draft lengths, on the first
  ``SPEC_TOKENS`` tokens of a prompt the probe recorded; the replay of those tokens says
  exactly which batches and draft decodes the run made, and what they do not explain is
  fitted (``speed.model.fit_round_costs``). Each run follows one of the target alone
  generating the same tokens on its own server, and the target's decode for the pair's
  prediction is timed there: a machine whose speed drifts (measured here: +-15% over a
  minute on a shared VM) then shifts both sides alike.

Nothing here assumes a CPU: the flags after ``--`` (``-ngl``, ``-ngld``, threads) reach every
server, the pair's too, so a GPU's costs are measured the same way.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from paircheck.errors import InputError
from paircheck.llama_server.http import request_json
from paircheck.speed.model import Costs, Points, RoundFit, SlotSteps, Work, fit_round_costs, interpolate

# Verification batches of 1..17 tokens (the last sampled token and up to 16 drafted ones),
# timed at 8 sizes: the cost curve is the one-token time and a line through the rest
# (ModelCosts.points), which 7 sizes from 2 to 17 fix as well as 16 do, at half the time.
BATCH_SIZES = (1, 2, 3, 4, 6, 9, 13, 17)
# Tokens per slot of the steps of N slots timed (the same curve shape, fewer points: each
# size costs N times as much)
STREAM_SIZES = (1, 2, 5, 9, 17)
REPEATS = 3
DECODE_TOKENS = 32  # tokens a model generates to measure its decode
# The draft lengths of the speculative runs that fit the cost per round: far enough apart
# that the cost per round and the cost per verified token can be told apart.
ROUND_LENGTHS = (2, 8)
SPEC_REPEATS = 2  # speculative runs at each length, each after a run of the target alone
# The speculative runs generate the longest recording's first SPEC_TOKENS tokens (the replay
# of that head is exact too): at draft length 8 that is 5-10 rounds, enough to fit the cost
# per round, where the whole recording took as long as the probe's own generations.
SPEC_TOKENS = 32
METHOD = (
    "llama-server timings: decode = predicted_ms / (predicted_n - 1) of greedy generations; batch of n = "
    f"prompt_ms of n new tokens after a cached prefix, n = {', '.join(map(str, BATCH_SIZES))}, {REPEATS} rounds: "
    "the median for 1 token, a robust (Theil-Sen) line through every sample of 2 or more; "
    "a step of N requests at once (--parallel N) = prompt_ms of one request of N prompts, each n new tokens after "
    f"its own slot's cached prefix, n = {', '.join(map(str, STREAM_SIZES))}, drawn the same way; "
    f"per round = fitted to real speculative runs of each pair at --spec-draft-n-max {ROUND_LENGTHS[0]} and "
    f"{ROUND_LENGTHS[1]} ({SPEC_REPEATS} each) over the first {SPEC_TOKENS} tokens of the longest recording, each "
    "after the target alone generating the same tokens, whose decode then prices the pair's prediction (at a "
    "context depth, both reusing the prompt's prefix from the cache, as bench run does)"
)


@dataclass(frozen=True)
class Measured:
    """One quantity over its repeats (ms)."""

    median: float
    low: float
    high: float

    @staticmethod
    def of(values: Sequence[float]) -> Measured:
        return Measured(statistics.median(values), min(values), max(values))

    @property
    def spread(self) -> float:
        """(max - min) / median: 0 for a perfectly steady machine."""
        return (self.high - self.low) / self.median if self.median > 0 else 0.0


def theil_sen(samples: Sequence[tuple[int, float]]) -> tuple[float, float]:
    """(intercept at n = 0, slope) of the line through (n, ms) samples: the median of the
    pairwise slopes, then the median intercept. A robust fit: a few samples slowed down by
    other work on the machine move it little, where they would bend a curve through medians."""
    slopes = [(y1 - y0) / (n1 - n0) for i, (n0, y0) in enumerate(samples) for n1, y1 in samples[i + 1:] if n1 != n0]
    slope = statistics.median(slopes) if slopes else 0.0
    return statistics.median(y - slope * n for n, y in samples), slope


@dataclass(frozen=True)
class ModelCosts:
    """One model's decode and batch costs on its server.

    ``batches`` holds every size's repeats; the cost curve the model uses (``points``) is
    the median for one token and a robust line through every sample of 2..17 tokens: one
    token and a batch take different kernels on a CPU (measured here: a batch of 2 costs
    1.3-2.3x one token), and beyond that the cost grows about linearly.
    """

    decode: Measured
    batches: tuple[tuple[int, Measured], ...]
    samples: tuple[tuple[int, float], ...] = ()  # (n, ms) of every repeat

    streams: tuple[StreamCosts, ...] = ()  # steps of N requests at once, one per N > 1 measured

    @property
    def points(self) -> Points:
        return _curve(self.batches, self.samples)

    def slot_steps(self, parallel: int) -> SlotSteps | None:
        """The measured cost of a step of ``parallel`` slots (None when not measured for that
        many)."""
        return next((s.steps for s in self.streams if s.parallel == parallel), None)

    @property
    def spread(self) -> float:
        """The typical relative deviation of a repeat from the fitted cost (median), the
        decode's included: 0 for a perfectly steady machine."""
        pts = self.points
        devs = [abs(ms - interpolate(pts, n)) / interpolate(pts, n) for n, ms in self.samples
                if interpolate(pts, n) > 0]
        devs.append(self.decode.spread / 2)
        return statistics.median(devs)

    def to_dict(self) -> dict[str, Any]:
        return {"decode_ms": round(self.decode.median, 3),
                "decode_ms_range": [round(self.decode.low, 3), round(self.decode.high, 3)],
                "batch_ms": [[n, round(ms, 3)] for n, ms in self.points],
                "batch_ms_measured": [[n, round(m.median, 3), round(m.low, 3), round(m.high, 3)]
                                      for n, m in self.batches],
                "spread": round(self.spread, 4),
                **({"streams": [st.to_dict() for st in self.streams]} if self.streams else {})}


@dataclass(frozen=True)
class StreamCosts:
    """A step of ``parallel`` requests at once, each evaluating b new tokens after its own
    cached prefix: (b, ms of the whole step), the curve drawn as ModelCosts draws its own."""

    parallel: int
    batches: tuple[tuple[int, Measured], ...]
    samples: tuple[tuple[int, float], ...]
    decode: Measured | None = None  # the N slots generating together: ms a step

    @property
    def points(self) -> Points:
        return _curve(self.batches, self.samples)

    @property
    def steps(self) -> SlotSteps:
        return SlotSteps(self.points, self.decode.median if self.decode else None)

    def to_dict(self) -> dict[str, Any]:
        return {"parallel": self.parallel, "batch_ms": [[n, round(ms, 3)] for n, ms in self.points],
                "batch_ms_measured": [[n, round(m.median, 3), round(m.low, 3), round(m.high, 3)]
                                      for n, m in self.batches],
                **({"decode_ms": round(self.decode.median, 3),
                    "decode_ms_range": [round(self.decode.low, 3), round(self.decode.high, 3)]}
                   if self.decode else {})}


def points_from(value: Any) -> Points | None:
    """A ``batch_ms`` curve as ModelCosts.to_dict and StreamCosts.to_dict write it ([[tokens,
    ms], ...]); None for anything else (a file from elsewhere is checked, not trusted)."""
    if not isinstance(value, list):
        return None
    out = []
    for item in value:
        if (not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], int)
                or not isinstance(item[1], (int, float))):
            return None
        out.append((item[0], float(item[1])))
    return tuple(out)


def slot_steps_from(model: dict[str, Any], slots: int) -> SlotSteps | None:
    """A model's measured steps of ``slots`` slots, as ModelCosts.to_dict writes its
    ``streams`` (None when not measured for that many; files written before the slots'
    generation was timed have the curve alone)."""
    streams = model.get("streams")
    found = [st for st in streams if isinstance(st, dict) and st.get("parallel") == slots] \
        if isinstance(streams, list) else []
    points = points_from(found[0].get("batch_ms")) if found else None
    if points is None:
        return None
    decode = found[0].get("decode_ms")
    return SlotSteps(points, float(decode) if isinstance(decode, (int, float)) else None)


def _curve(batches: Sequence[tuple[int, Measured]], samples: Sequence[tuple[int, float]]) -> Points:
    """The median for one token and a robust line through every sample of 2 or more (see
    ModelCosts); the medians when too few sizes were timed for a line."""
    one = next((m.median for n, m in batches if n == 1), None)
    many = [(n, ms) for n, ms in samples if n >= 2]
    if one is None or len({n for n, _ in many}) < 2:
        return tuple((n, m.median) for n, m in batches)
    a, b = theil_sen(many)
    last = max(n for n, _ in many)
    return ((1, one), (2, max(one, a + 2 * b)), (last, max(one, a + last * b)))


@dataclass(frozen=True)
class SpecRun:
    """One real speculative run of the pair and what the replay says it did."""

    draft_max: int
    prompt_id: str
    predicted_n: int
    predicted_ms: float
    draft_n: int
    draft_n_accepted: int
    replay_drafted: int
    replay_accepted: int
    same_tokens: bool
    work: Work
    # every (drafted, accepted) the replay allows with the recording's near ties swapped
    # (replay.replay_outcomes); the replay's own first
    replay_outcomes: tuple[tuple[int, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"draft_max": self.draft_max, "prompt_id": self.prompt_id, "predicted_n": self.predicted_n,
                "predicted_ms": round(self.predicted_ms, 3), "draft_n": self.draft_n,
                "draft_n_accepted": self.draft_n_accepted, "replay_drafted": self.replay_drafted,
                "replay_accepted": self.replay_accepted,
                "replay_outcomes": [list(o) for o in self.replay_outcomes], "same_tokens": self.same_tokens}


def _timings(answer: Any, where: str) -> dict[str, Any]:
    timings = answer.get("timings") if isinstance(answer, dict) else None
    if not isinstance(timings, dict):
        raise InputError(where, "the answer has no timings (not a llama-server?)")
    return timings


def _num(timings: dict[str, Any], key: str, where: str) -> float:
    value = timings.get(key)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise InputError(where, f"the answer's timings have no {key}")
    return float(value)


def decode_ms_of(timings: dict[str, Any], where: str) -> float | None:
    """ms per decoded token of one generation (None when it decoded fewer than 2 tokens)."""
    n = _num(timings, "predicted_n", where)
    return _num(timings, "predicted_ms", where) / (n - 1) if n >= 2 else None


def batch_sizes(parallel: int = 1) -> tuple[int, ...]:
    """The batch sizes to time for up to ``parallel`` requests at once: a step of N slots
    verifies N drafts in one batch (``speed.model.for_slots``), so the curve is timed out to
    N times the longest verification, not extended to it."""
    if parallel <= 1:
        return BATCH_SIZES
    return tuple(sorted(set(BATCH_SIZES) | {parallel * n for n in (2, 5, 9, 17)}))


def measure_decode(url: str, prompt: Sequence[int], timeout: float, tokens: int = DECODE_TOKENS,
                   repeats: int = REPEATS, cache_prompt: bool = False) -> Measured:
    """A model's decode: greedy generations of ``tokens`` tokens after ``prompt``. Without
    ``cache_prompt`` every repeat evaluates the prompt again; with it (a deep context, whose
    evaluation would cost more than the decode) the server keeps the prompt between repeats,
    as a served conversation does."""
    where = url.rstrip("/") + "/completion"
    body = {"prompt": list(prompt), "n_predict": tokens, "temperature": 0.0, "ignore_eos": True,
            "cache_prompt": cache_prompt, "stream": False}
    values = []
    for _ in range(repeats):
        ms = decode_ms_of(_timings(request_json(url, "/completion", body, timeout), where), where)
        if ms is None:
            raise InputError(where, "the model generated fewer than 2 tokens (context full?)")
        values.append(ms)
    return Measured.of(values)


def _extensions(tokens: Sequence[int], longest: int, count: int) -> list[list[int]]:
    """``count`` runs of ``longest`` tokens, each beginning with a token no other run begins
    with: a request of the cached prefix and one of them then finds only the prefix in the
    server's caches (its slot's, and the host-memory prompt cache, ``--cache-ram``, which keeps
    earlier requests), so it evaluates exactly its new tokens. The rest of each run is the
    recording's own tokens, cycled when short (their values do not change the cost); the first
    tokens are ids below the largest the recording holds, so every one is in the vocabulary."""
    pool = list(tokens) or [1]
    while len(pool) < longest:
        pool += pool
    top = max(pool)
    firsts = [t for t in range(top, 0, -1)][:count]
    if len(firsts) < count:
        raise InputError("probe", "the recording holds too few distinct token ids to time batches")
    return [[first] + pool[:longest - 1] for first in firsts]


def measure_batches(url: str, prefix: Sequence[int], filler: Sequence[int], timeout: float,
                    sizes: Sequence[int] = BATCH_SIZES, repeats: int = REPEATS) -> list[tuple[int, float]]:
    """Evaluation time of n new tokens after a cached prefix, every repeat of each n in ``sizes``."""
    where = url.rstrip("/") + "/completion"
    runs = _extensions(filler, max(sizes), repeats * len(sizes))

    def ask(tokens: list[int]) -> dict[str, Any]:
        body = {"prompt": tokens, "n_predict": 1, "temperature": 0.0, "cache_prompt": True, "stream": False}
        return _timings(request_json(url, "/completion", body, timeout), where)

    ask(list(prefix))  # the prefix into the cache
    values: dict[int, list[float]] = {n: [] for n in sizes}
    turn = 0
    for _ in range(repeats):
        for n in sizes:
            timings = ask(list(prefix) + runs[turn][:n])
            turn += 1
            if int(_num(timings, "prompt_n", where)) != n:
                raise InputError(where, f"evaluated {timings.get('prompt_n')} tokens for a batch of {n}: the "
                                        "server did not reuse its cached prefix (cache_prompt), so batch costs "
                                        "cannot be measured; give --no-calibrate")
            values[n].append(_num(timings, "prompt_ms", where))
    return [(n, ms) for n in sizes for ms in values[n]]


def measure_streams(url: str, prefix: Sequence[int], filler: Sequence[int], timeout: float, parallel: int,
                    sizes: Sequence[int] = STREAM_SIZES, repeats: int = REPEATS) -> StreamCosts:
    """Steps of ``parallel`` slots, each evaluating n new tokens after ``prefix`` in its own
    cache, on a server started with at least that many slots: one request of ``parallel``
    prompts, which llama-server launches together and evaluates in one batch. Then the slots
    generating together after the prefix: the step of one token a slot as a reply pays it
    (SlotSteps)."""
    where = url.rstrip("/") + "/completion"

    def ask(prompts: list[list[int]], n_predict: int = 1) -> list[dict[str, Any]]:
        body = {"prompt": prompts, "n_predict": n_predict, "temperature": 0.0, "cache_prompt": True,
                "stream": False, **({"ignore_eos": True} if n_predict > 1 else {})}
        answer = request_json(url, "/completion", body, timeout)
        if not isinstance(answer, list) or len(answer) != len(prompts):
            raise InputError(where, f"answered {len(answer) if isinstance(answer, list) else 1} result(s) for "
                                    f"{len(prompts)} prompts in one request: cannot time {parallel} slots at once")
        return [_timings(a, where) for a in answer]

    ask([list(prefix)] * parallel)  # the prefix into every slot's cache
    runs = iter(_extensions(filler, max(sizes), repeats * len(sizes) * parallel))
    values: dict[int, list[float]] = {n: [] for n in sizes}
    for _ in range(repeats):
        for n in sizes:
            timings = ask([list(prefix) + next(runs)[:n] for _ in range(parallel)])
            if any(int(_num(t, "prompt_n", where)) != n for t in timings):
                raise InputError(where, f"evaluated {[t.get('prompt_n') for t in timings]} tokens for {parallel} "
                                        f"slots of {n}: the server did not reuse each slot's cached prefix "
                                        "(cache_prompt), so the steps of several slots cannot be measured; give "
                                        "--no-calibrate")
            # one batch: every prompt reports the same evaluation, its sampling aside
            values[n].append(max(_num(t, "prompt_ms", where) for t in timings))
    decodes = []
    for _ in range(repeats):
        # the slots run in lockstep: each step is the slowest slot's
        per_slot = [decode_ms_of(t, where) for t in ask([list(prefix)] * parallel, DECODE_TOKENS)]
        if any(ms is None for ms in per_slot):
            raise InputError(where, "a slot generated fewer than 2 tokens (context full?)")
        decodes.append(max(ms for ms in per_slot if ms is not None))
    return StreamCosts(parallel, tuple((n, Measured.of(values[n])) for n in sizes),
                       tuple((n, ms) for n in sizes for ms in values[n]), Measured.of(decodes))


def measure_model(url: str, prefix: Sequence[int], filler: Sequence[int], timeout: float,
                  decode: Measured | None = None, sizes: Sequence[int] = BATCH_SIZES,
                  deep: bool = False, parallels: Sequence[int] = ()) -> ModelCosts:
    """A model's costs on its server (``decode`` when the caller measured it already), after
    ``prefix`` (``deep``: a long context, kept in the server's cache for the decode too), and
    the steps of each number of slots in ``parallels`` above 1."""
    samples = measure_batches(url, prefix, filler, timeout, sizes)
    measured = sorted({n for n, _ in samples})
    batches = tuple((n, Measured.of([ms for m, ms in samples if m == n])) for n in measured)
    decode = decode or measure_decode(url, prefix, timeout, cache_prompt=deep)
    streams = tuple(measure_streams(url, prefix, filler, timeout, n) for n in sorted(set(parallels)) if n > 1)
    return ModelCosts(decode, batches, tuple(samples), streams)


def spec_run(url: str, prompt_id: str, prompt: Sequence[int], expected: Sequence[int], n_predict: int,
             draft_max: int, work: Work, replayed: tuple[int, int], timeout: float,
             outcomes: Mapping[tuple[int, int], Work] | None = None, cache_prompt: bool = False) -> SpecRun:
    """One greedy generation on a pair's server, as the probe's target generation was made.
    ``work`` is what the replay says it takes; ``outcomes`` what each swap of the recording's
    near ties would report and take (replay.replay_outcomes): the run's work is the one of the
    outcome the server reports. ``cache_prompt`` at a context depth: the prompt's prefix is
    reused from the slot's cache, as bench run and a served conversation do, and its decode
    follows a short evaluation, not one of the whole context."""
    where = url.rstrip("/") + "/completion"
    body = {"prompt": list(prompt), "n_predict": n_predict, "temperature": 0.0, "cache_prompt": cache_prompt,
            "stream": False, "return_tokens": True}
    answer = request_json(url, "/completion", body, timeout)
    timings = _timings(answer, where)
    tokens = answer.get("tokens") if isinstance(answer, dict) else None
    reported = (int(timings.get("draft_n") or 0), int(timings.get("draft_n_accepted") or 0))
    outcomes = dict(outcomes or {})
    return SpecRun(draft_max, prompt_id, int(_num(timings, "predicted_n", where)),
                   _num(timings, "predicted_ms", where), reported[0], reported[1], replayed[0], replayed[1],
                   isinstance(tokens, list) and list(tokens) == list(expected), outcomes.get(reported, work),
                   tuple(sorted(outcomes, key=lambda o: (o != replayed, o))))


def alone_run(url: str, prompt: Sequence[int], n_predict: int, timeout: float, cache_prompt: bool = False) -> float:
    """The target alone generating a recorded prompt again: ms per decoded token (``cache_prompt``
    as spec_run's)."""
    where = url.rstrip("/") + "/completion"
    body = {"prompt": list(prompt), "n_predict": n_predict, "temperature": 0.0, "cache_prompt": cache_prompt,
            "stream": False}
    ms = decode_ms_of(_timings(request_json(url, "/completion", body, timeout), where), where)
    if ms is None:
        raise InputError(where, "the target generated fewer than 2 tokens")
    return ms


def warm_up(url: str, prompt: Sequence[int], timeout: float) -> None:
    """One short generation, so that the first measured one does not pay for the weights being
    paged in."""
    request_json(url, "/completion", {"prompt": list(prompt), "n_predict": 4, "temperature": 0.0,
                                      "cache_prompt": False, "stream": False}, timeout)


@dataclass(frozen=True)
class PairCalibration:
    """What a draft's costs are on this machine, with the target's, and how they were found."""

    target: ModelCosts
    draft: ModelCosts
    runs: tuple[SpecRun, ...]
    fit: RoundFit

    @property
    def costs(self) -> Costs:
        return Costs(self.target.decode.median, self.draft.decode.median, self.target.points, self.draft.points,
                     self.fit.round_ms, self.fit.round_token_ms, absolute=True, basis="measured")

    def to_dict(self) -> dict[str, Any]:
        """The pair's part of the result file's calibration (beside the draft's own costs, which
        ModelCosts.to_dict writes per depth): the target's decode as timed between the pair's
        runs, the fitted cost per round and per token of a round, and the runs themselves."""
        return {"target_decode_ms": round(self.target.decode.median, 3),
                "target_decode_ms_range": [round(self.target.decode.low, 3), round(self.target.decode.high, 3)],
                "round_ms": round(self.fit.round_ms, 4), "round_token_ms": round(self.fit.round_token_ms, 4),
                "round_fit_residual_ms": [round(r, 3) for r in self.fit.residuals],
                "spec_runs": [r.to_dict() for r in self.runs]}


def calibrate_pair(target: ModelCosts, draft: ModelCosts, runs: Sequence[SpecRun]) -> PairCalibration:
    base = Costs(target.decode.median, draft.decode.median, target.points, draft.points)
    return PairCalibration(target, draft, tuple(runs), fit_round_costs(base, [(r.work, r.predicted_ms) for r in runs]))


def elapsed_ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 1)
