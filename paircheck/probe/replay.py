"""Replay llama-server's draft-simple loop on a recorded generation: drafted and accepted tokens.

Pure functions, no I/O. The input is what ``record`` measured on real llama-servers: the
target's greedy tokens for one prompt, and, for each position, the draft's top token and
its confidence when it is fed the target's own tokens (teacher forcing), plus the
confidences the draft would go on drafting with after a token the target rejects.

Why this is exact for greedy decoding: in draft-simple the draft's context is the target's
accepted text (``common_speculative_impl_draft_simple::process`` decodes the target's
batches into the draft context). While the drafted tokens match the target, the draft's
context *is* the target's greedy output, so its i-th proposal is the teacher-forced top
token at that position; after the first mismatch nothing more is accepted, but the draft
keeps drafting on its own continuation, which counts in ``draft_n`` (and, with ``p_min``,
decides when drafting stops).

The loop mirrors the pinned llama.cpp (vendored in llama-cpp-python 0.3.36):

* ``tools/server/server-context.cpp`` ``get_n_draft_max``: at most
  ``n_predict - n_decoded - 1`` tokens are drafted (and ``n_ctx - n_tokens - 2``);
  no draft when that is <= 0; the first token comes from the prompt pass, never drafted.
* ``common/speculative.cpp`` ``draft_simple::draft``: the draft sampler is top-k 10 and
  proposes ``cur_p->data[0]`` (its top token); it stops *before* a token whose
  probability (softmax over those 10) is below ``p_min``, and at ``n_max`` tokens; a draft
  shorter than ``n_min`` is dropped.
* ``common/sampling.cpp`` ``common_sampler_sample_and_accept_n``: the target samples each
  position and accepts while its token equals the drafted one; an accepted end-of-generation
  token ends the pass without counting as accepted when drafted tokens follow it.
* ``server-context.cpp`` statistics: ``draft_n`` adds every drafted token, ``draft_n_accepted``
  the accepted ones; each pass yields its accepted tokens plus one of the target's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

# llama.cpp's draft sampler (common/speculative.cpp): top-k 10, so a draft token's "p" is
# its softmax over the 10 most likely tokens.
DRAFT_TOP_K = 10


@dataclass(frozen=True)
class PromptTrace:
    """One prompt's recording: the target's tokens and what the draft predicted at each.

    ``target[0]`` comes from the prompt pass. For ``j >= 1``, ``draft_top[j]`` and
    ``draft_conf[j]`` are the draft's top token and confidence when fed the prompt and
    ``target[:j]``. ``tails[j]`` (only where ``draft_top[j] != target[j]``, or at the last
    position) holds the confidences of the tokens the draft would draft next on its own
    continuation after ``draft_top[j]``, as far as they were recorded (``tail_limit``: every
    tail is recorded until a confidence below it, or 15 tokens, or the draft's end).
    ``draft_top[0]`` and ``draft_conf[0]`` are unused placeholders.
    """

    target: tuple[int, ...]
    draft_top: tuple[int, ...]
    draft_conf: tuple[float, ...]
    tails: dict[int, tuple[float, ...]] = field(default_factory=dict)
    n_predict: int = 0  # the request's n_predict (drafting is capped by it, not by len(target))
    prompt_tokens: int = 0
    # Each tail was recorded up to and including its first confidence below this value (or
    # 15 tokens): it decides drafting for p_min 0 and for every p_min >= tail_limit.
    tail_limit: float = 1.0
    # position -> the draft's runner-up there, where it came within a near tie of its top token
    # and one of the two is the target's (record.NEAR_TIE_NATS): the pair's server, whose draft
    # evaluates the same context in another order, may propose either (replay_outcomes).
    near_ties: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.target)
        if len(self.draft_top) != n or len(self.draft_conf) != n:
            raise ValueError("draft_top and draft_conf need one entry per target token")
        if self.n_predict < n:
            raise ValueError("n_predict is smaller than the number of target tokens")

    def head(self, m: int) -> PromptTrace:
        """The recording's first ``m`` tokens, as a request of ``n_predict = m`` makes them:
        what a shorter real run of the same prompt generates and drafts (llama-server caps
        drafting by n_predict, so the last positions draft less, exactly as replayed)."""
        if m >= len(self.target):
            return self
        return PromptTrace(self.target[:m], self.draft_top[:m], self.draft_conf[:m],
                           {j: t for j, t in self.tails.items() if j < m}, m, self.prompt_tokens, self.tail_limit,
                           {j: t for j, t in self.near_ties.items() if j < m})


def add_batches(a: tuple[float, ...], b: tuple[float, ...]) -> tuple[float, ...]:
    """Two batch-size histograms added (index i counts batches of i + 1 tokens)."""
    n = max(len(a), len(b))
    return tuple((a[i] if i < len(a) else 0) + (b[i] if i < len(b) else 0) for i in range(n))


class AcceptanceFigures:
    """The two figures users read of drafting, for anything that counts ``accepted``,
    ``drafted`` and ``passes`` (a replay's Counts, a summary's Row): one formula each."""

    accepted: float
    drafted: float
    passes: float

    @property
    def accepted_per_pass(self) -> float:
        return self.accepted / self.passes if self.passes else 0.0

    @property
    def acceptance_rate(self) -> float | None:
        """Accepted over drafted, as llama-server's log prints it; None when nothing was drafted."""
        return self.accepted / self.drafted if self.drafted else None


@dataclass(frozen=True)
class Counts(AcceptanceFigures):
    """What llama-server would report for one generation (or a sum of them), and the work
    behind it: how many target batches of each size, how many one-token draft decodes (what
    the speed model prices, ``paircheck.speed``)."""

    tokens: int = 0  # generated tokens (llama-server's predicted_n)
    passes: int = 0  # target passes: the prompt pass and every batch after it
    drafted: int = 0  # timings.draft_n
    accepted: int = 0  # timings.draft_n_accepted
    verifications: int = 0  # passes that verified a non-empty draft
    # batches[b - 1]: target batches of b tokens after the prompt pass (b = 1: one token, no
    # draft to verify; b = s + 1: the last sampled token and s drafted ones).
    batches: tuple[int, ...] = ()
    draft_decodes: int = 0  # one-token decodes the draft made while drafting

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.tokens + other.tokens,
            self.passes + other.passes,
            self.drafted + other.drafted,
            self.accepted + other.accepted,
            self.verifications + other.verifications,
            tuple(int(x) for x in add_batches(self.batches, other.batches)),
            self.draft_decodes + other.draft_decodes,
        )


class TailTooShort(ValueError):
    """A p_min above 0 needs a confidence the recording did not keep (its tail_limit is higher)."""


def _draft(trace: PromptTrace, start: int, n_max: int, p_min: float) -> tuple[list[int], int]:
    """The tokens draft-simple proposes for a pass whose first drafted position is ``start``.

    Returns the tokens proposed on the target's path (the last one may be the mismatch) and
    how many it proposes after leaving the path (their identity does not matter: nothing
    after a mismatch is accepted, but they count as drafted).
    """
    target, top, conf = trace.target, trace.draft_top, trace.draft_conf
    last_pos = len(target) - 1
    proposed: list[int] = []
    pos = start
    while len(proposed) < n_max:
        if conf[pos] < p_min:
            return proposed, 0  # "only collect very high-confidence draft tokens"
        proposed.append(top[pos])
        if top[pos] != target[pos] or pos == last_pos:
            break
        pos += 1
    if len(proposed) >= n_max:
        return proposed, 0
    # Off the target's path (or past its last token): the draft drafts on, on its own tokens.
    tail = trace.tails.get(pos, ())
    off = 0
    while len(proposed) + off < n_max:
        if off < len(tail):
            if tail[off] < p_min:
                break
        elif p_min > 0.0:
            raise TailTooShort(f"the tail recorded after position {pos} ends at {len(tail)} tokens")
        off += 1
    return proposed, off


def replay(trace: PromptTrace, draft_max: int, p_min: float = 0.0, n_min: int = 0,
           n_ctx: int | None = None) -> Counts:
    """The draft_n / draft_n_accepted llama-server reports for this generation at these
    settings, and the batches and draft decodes it takes to get there."""
    target = trace.target
    n = len(target)
    if n == 0:
        return Counts()
    generated = 1  # the prompt pass produced target[0]
    drafted = accepted = verifications = decodes = 0
    batches = [0] * (draft_max + 1)
    while generated < n:
        n_draft_max = trace.n_predict - generated - 1
        if n_ctx is not None:
            # slot.prompt holds the prompt and every generated token but the last sampled one
            n_draft_max = min(n_draft_max, n_ctx - (trace.prompt_tokens + generated - 1) - 2)
        n_draft_max = min(n_draft_max, draft_max)
        proposed: list[int] = []
        off = 0
        if n_draft_max > 0:
            proposed, off = _draft(trace, generated, n_draft_max, p_min)
            # draft_simple::draft decodes the last sampled token, then each drafted token it
            # goes on from: all but the last when it stops at n_max, every one when a token
            # below p_min stops it (that token was sampled from the last decode, never kept).
            decodes += len(proposed) + off + (0 if len(proposed) + off == n_draft_max else 1)
            if len(proposed) + off < n_min:
                proposed, off = [], 0
        size = len(proposed) + off
        batches[size] += 1  # the target's batch: the last sampled token and the draft
        if size == 0:
            generated += 1  # a plain step: no draft, one token
            continue
        # verification: accept while equal; an end-of-generation token ends the pass
        ok = 0
        for i, token in enumerate(proposed):
            if token != target[generated + i]:
                break
            if generated + i == n - 1 and i + 1 < size:
                break  # the target's last token: end of generation (EOG) or n_predict reached
            ok += 1
        drafted += size
        accepted += ok
        verifications += 1
        generated += ok + 1
    while batches and batches[-1] == 0:
        batches.pop()
    # passes are counted, not derived from the tokens: a pass whose last accepted token ends
    # the generation yields no token of its own (process_token stops before the sampled one)
    return Counts(tokens=n, passes=1 + sum(batches), drafted=drafted, accepted=accepted,
                  verifications=verifications, batches=tuple(batches), draft_decodes=decodes)


# At most this many near ties are swapped in every combination (2 ** 8 replays); beyond, the
# first ones in the generation are (a recording of a few hundred tokens has none or a few).
MAX_SWAPPED_TIES = 8


def replay_outcomes(trace: PromptTrace, draft_max: int, n_min: int = 0, n_ctx: int | None = None
                    ) -> dict[tuple[int, int], Counts]:
    """Every (drafted, accepted) llama-server may report at p_min 0, given the recording's near
    ties, with the work behind it: the replay with each combination of near-tie positions
    taking the draft's runner-up as its proposal. The pair's server evaluates the draft's
    context in another order than the recording did (the prompt and the accepted tokens in
    batches, the drafted ones one by one), which moves a logit by a few tenths of a nat: enough
    to swap a near tie, never more (record.NEAR_TIE_NATS). Without near ties this is the one
    outcome of ``replay``."""
    ties = sorted(trace.near_ties)[:MAX_SWAPPED_TIES]
    outcomes: dict[tuple[int, int], Counts] = {}
    for mask in range(1 << len(ties)):
        top = list(trace.draft_top)
        for bit, pos in enumerate(ties):
            if mask >> bit & 1:
                top[pos] = trace.near_ties[pos]
        variant = PromptTrace(trace.target, tuple(top), trace.draft_conf, trace.tails, trace.n_predict,
                              trace.prompt_tokens, trace.tail_limit)
        counts = replay(variant, draft_max, 0.0, n_min, n_ctx)
        outcomes.setdefault((counts.drafted, counts.accepted), counts)
    return outcomes


def greedy_agreement(trace: PromptTrace) -> tuple[int, int]:
    """(positions where the draft's top token is the target's, positions compared)."""
    n = len(trace.target)
    same = sum(1 for j in range(1, n) if trace.draft_top[j] == trace.target[j])
    return same, max(0, n - 1)


def expected_sampled(trace: PromptTrace, accept_prob: Sequence[float], draft_max: int, p_min: float = 0.0
                     ) -> tuple[float, float, float, tuple[float, ...], float]:
    """Expected (passes, drafted, accepted, batches, draft decodes) when the target *samples*
    (temperature > 0); ``batches`` as in ``Counts``.

    llama-server verifies a draft by sampling the target at each drafted position and
    accepting while the sampled token equals the drafted one (common_sampler_sample_and_
    accept_n), so a drafted token is accepted with the target's (post-sampler) probability
    of that token, ``accept_prob[j]``. This is computed along one recorded sampled path:
    each drafted token is taken as the draft's top token at that path position (exact while
    accepted tokens equal the path's, an approximation after a token the path did not
    take), and a pass drafts ``min(draft_max, room)`` tokens, cut where the draft's
    confidence falls below ``p_min`` on the path. A dynamic programme over the position at
    which each pass starts gives the expectation exactly under these assumptions.
    """
    n = len(trace.target)
    width = draft_max + 1
    if n == 0:
        return 0.0, 0.0, 0.0, (), 0.0
    # value[g] = expected (passes, drafted, accepted, decodes) still to come with g tokens
    # generated, and hist[g] the expected batches of each size still to come
    value: list[tuple[float, float, float, float]] = [(0.0, 0.0, 0.0, 0.0)] * (n + 1)
    hist: list[list[float]] = [[0.0] * width for _ in range(n + 1)]
    for g in range(n - 1, 0, -1):
        room = min(draft_max, trace.n_predict - g - 1)
        size = 0
        while size < room and g + size < n and trace.draft_conf[g + size] >= p_min:
            size += 1
        decodes = 0.0 if room <= 0 else float(size if size == room else size + 1)
        if size == 0:
            nxt = value[g + 1]
            value[g] = (nxt[0] + 1.0, nxt[1], nxt[2], nxt[3] + decodes)
            hist[g] = list(hist[g + 1])
            hist[g][0] += 1.0
            continue
        passes = drafted = acc = dec = 0.0
        h = [0.0] * width
        reach = 1.0  # probability that the first i drafted tokens were all accepted
        for i in range(size + 1):
            last = g + i >= n - 1
            p_stop = 1.0 if (i == size or last) else 1.0 - accept_prob[g + i]
            prob = reach * p_stop
            if prob > 0.0:
                at = min(n, g + i + 1)
                nxt = value[at]
                passes += prob * (1.0 + nxt[0])
                drafted += prob * (size + nxt[1])
                acc += prob * (i + nxt[2])
                dec += prob * (decodes + nxt[3])
                for b, count in enumerate(hist[at]):
                    h[b] += prob * count
                h[size] += prob
            if i == size or last:
                break
            reach *= accept_prob[g + i]
        value[g] = (passes, drafted, acc, dec)
        hist[g] = h
    first = value[1] if n > 1 else (0.0, 0.0, 0.0, 0.0)
    batches = list(hist[1]) if n > 1 else []
    while batches and batches[-1] == 0.0:
        batches.pop()
    return first[0] + 1.0, first[1], first[2], tuple(batches), first[3]
