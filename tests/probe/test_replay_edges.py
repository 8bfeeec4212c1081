"""The replay's edges that the mutation run (benchmarks/mutation.py, docs/mutation.md) found
untested: the trace's own checks, sums of counts, a draft that ends exactly at n_min or one
past an end-of-generation token, a tail at exactly p-min, one-token traces, and the sampled
expectation through plain steps in the middle of a generation.
"""

from __future__ import annotations

import pytest

from paircheck.probe.replay import (
    Counts,
    PromptTrace,
    TailTooShort,
    add_batches,
    expected_sampled,
    greedy_agreement,
    replay,
)

T = (10, 11, 12, 13, 14, 15, 16, 17)


def trace(top: list[int], conf: list[float] | None = None, tails: dict[int, tuple[float, ...]] | None = None,
          n_predict: int | None = None, target: tuple[int, ...] = T, tail_limit: float = 1.0) -> PromptTrace:
    return PromptTrace(target, tuple(top), tuple(conf or [0.9] * len(target)), tails or {},
                       n_predict or len(target), prompt_tokens=5, tail_limit=tail_limit)


def test_a_trace_needs_one_entry_per_token_and_room_for_them() -> None:
    message = "^draft_top and draft_conf need one entry per target token$"
    with pytest.raises(ValueError, match=message):
        PromptTrace(T, T[:-1], (0.9,) * 8, n_predict=8)  # draft_top short, draft_conf right
    with pytest.raises(ValueError, match=message):
        PromptTrace(T, T, (0.9,) * 7, n_predict=8)  # draft_conf short, draft_top right
    with pytest.raises(ValueError, match="^n_predict is smaller than the number of target tokens$"):
        PromptTrace(T, T, (0.9,) * 8, n_predict=7)
    PromptTrace(T, T, (0.9,) * 8, n_predict=8)  # exactly as many: fine


def test_histograms_and_counts_add_up_field_by_field() -> None:
    assert add_batches((1, 2, 3), (4,)) == (5, 2, 3)
    assert add_batches((4,), (1, 2, 3)) == (5, 2, 3)
    assert add_batches((), ()) == ()
    a = Counts(tokens=8, passes=5, drafted=7, accepted=3, verifications=2, batches=(1, 0, 2), draft_decodes=9)
    b = Counts(tokens=4, passes=2, drafted=1, accepted=1, verifications=1, batches=(0, 1), draft_decodes=2)
    assert a + b == Counts(tokens=12, passes=7, drafted=8, accepted=4, verifications=3, batches=(1, 1, 2),
                           draft_decodes=11)
    assert a + Counts() == a and Counts() + a == a
    assert Counts().accepted_per_pass == 0.0 and Counts().acceptance_rate is None
    assert a.accepted_per_pass == pytest.approx(3 / 5) and a.acceptance_rate == pytest.approx(3 / 7)


def test_one_token_and_no_token_traces() -> None:
    one = trace([0], target=(10,), n_predict=1)
    assert replay(one, draft_max=4) == Counts(tokens=1, passes=1)  # the prompt pass alone
    assert greedy_agreement(one) == (0, 0)
    assert expected_sampled(one, [0.0], 4) == (1.0, 0.0, 0.0, (), 0.0)
    empty = PromptTrace((), (), ())
    assert replay(empty, draft_max=4) == Counts()
    assert greedy_agreement(empty) == (0, 0)
    assert expected_sampled(empty, [], 4) == (0.0, 0.0, 0.0, (), 0.0)


def test_a_draft_of_exactly_n_min_is_kept() -> None:
    conf = [0.9] * 8
    conf[3] = 0.1  # g=1 drafts 11, 12, then stops before position 3
    kept = replay(trace(list(T), conf), draft_max=4, p_min=0.5, n_min=2)
    assert kept.batches[2] >= 1 and kept.accepted >= 2  # the draft of 2 was verified
    dropped = replay(trace(list(T), conf), draft_max=4, p_min=0.5, n_min=3)
    assert dropped.batches[0] > kept.batches[0] and dropped.accepted < kept.accepted


def test_an_end_of_generation_one_before_the_last_drafted_token_ends_the_pass() -> None:
    # g=1 drafts 11, 2 (the target's last token, EOG), then one token past it (k=3): the EOG
    # is followed by a drafted token, so it ends the pass as the target's own, not accepted
    c = replay(trace([0, 11, 2], target=(10, 11, 2), n_predict=16), draft_max=3)
    assert c == Counts(tokens=3, passes=2, drafted=3, accepted=1, verifications=1, batches=(0, 0, 0, 1),
                       draft_decodes=3)


def test_the_draft_stops_at_the_recorded_end_and_reads_the_tail_after_it() -> None:
    # a perfect draft reaches the target's last token with room to spare: it drafts on from
    # the tail recorded after that last position, down to p-min
    c = replay(trace(list(T), tails={7: (0.9, 0.1)}, n_predict=16, tail_limit=0.5), draft_max=10, p_min=0.5)
    # g=1: positions 1..7 (7 on the path), then the tail: 0.9 kept, 0.1 stops -> 8 drafted
    assert (c.drafted, c.accepted, c.verifications) == (8, 6, 1)
    assert c.draft_decodes == 8 + 1  # stopped by p-min: the dropped token's decode counts


def test_a_tail_at_exactly_p_min_is_drafted_and_one_below_stops_at_once() -> None:
    top = list(T)
    top[1] = 99
    at = replay(trace(top, tails={1: (0.5, 0.2)}, tail_limit=0.5), draft_max=4, p_min=0.5)
    below = replay(trace(top, tails={1: (0.2,)}, tail_limit=0.5), draft_max=4, p_min=0.5)
    # g=1: 99 drafted, then the tail: 0.5 is not below p-min (drafted), 0.2 is
    assert at.drafted - below.drafted == 1
    # a tail whose first confidence is already below p-min drafts nothing after the mismatch
    assert below == replay(trace(top, tails={1: (0.2, 0.9)}, tail_limit=0.5), draft_max=4, p_min=0.5)
    with pytest.raises(TailTooShort, match=r"^the tail recorded after position 1 ends at 0 tokens$"):
        replay(trace(top, tails={1: ()}, tail_limit=0.5), draft_max=4, p_min=0.5)


def _on_path(conf: list[float], wrong: int) -> tuple[PromptTrace, list[float]]:
    """A draft right everywhere but at ``wrong``, whose tail after it is the path's own
    confidences: there the sampled expectation and the greedy replay must agree exactly."""
    top = list(T)
    top[wrong] = 99
    tails = {wrong: tuple(conf[wrong + 1:])}
    probs = [1.0 if top[j] == T[j] else 0.0 for j in range(len(T))]
    return trace(top, conf, tails, tail_limit=0.0), probs


@pytest.mark.parametrize("p_min", [0.0, 0.5, 0.9])
def test_expected_sampled_agrees_with_the_replay_through_plain_steps(p_min: float) -> None:
    # low confidences at 2 and 6: at p-min 0.5 those passes are plain steps mid-generation
    conf = [0.9, 0.9, 0.4, 0.9, 0.9, 0.95, 0.3, 0.9]
    tr, probs = _on_path(conf, wrong=4)
    for k in range(1, 9):
        exact = replay(tr, k, p_min)
        passes, drafted, accepted, batches, decodes = expected_sampled(tr, probs, k, p_min)
        got = (passes, drafted, accepted, decodes)
        assert got == pytest.approx((exact.passes, exact.drafted, exact.accepted, exact.draft_decodes)), (k, p_min)
        assert batches == pytest.approx(exact.batches), (k, p_min)


def test_expected_sampled_at_exactly_p_min_drafts_the_token() -> None:
    conf = [0.9, 0.9, 0.5, 0.9, 0.9, 0.9, 0.9, 0.9]
    tr, probs = _on_path(conf, wrong=5)
    exact = replay(tr, 4, 0.5)
    assert expected_sampled(tr, probs, 4, 0.5)[1] == pytest.approx(exact.drafted)
    # just above it the token is cut: another count
    assert expected_sampled(tr, probs, 4, 0.51)[1] == pytest.approx(replay(tr, 4, 0.51).drafted) != exact.drafted


def _brute(tr: PromptTrace, probs: list[float], k: int, p_min: float, g: int = 1) -> tuple[float, float, float, float]:
    """expected_sampled's (passes, drafted, accepted, decodes) by recursion over the passes,
    every outcome of every pass weighed by its probability: an oracle for its dynamic programme
    (for traces whose n_predict is their length, so no pass drafts past the recorded end)."""
    n = len(tr.target)
    if g >= n:
        return 0.0, 0.0, 0.0, 0.0
    room = min(k, tr.n_predict - g - 1)
    size = 0
    while size < room and tr.draft_conf[g + size] >= p_min:
        size += 1
    decodes = 0.0 if room <= 0 else float(size if size == room else size + 1)
    if size == 0:  # a plain step
        p, d, a, dd = _brute(tr, probs, k, p_min, g + 1)
        return p + 1.0, d, a, dd + decodes
    out = [0.0, 0.0, 0.0, 0.0]
    reach = 1.0
    for i in range(size + 1):  # i drafted tokens accepted, then a rejection (or the draft's end)
        p_stop = 1.0 if i == size else 1.0 - probs[g + i]
        p, d, a, dd = _brute(tr, probs, k, p_min, g + i + 1)
        for j, v in enumerate((1.0 + p, size + d, i + a, decodes + dd)):
            out[j] += reach * p_stop * v
        if i < size:
            reach *= probs[g + i]
    return out[0], out[1], out[2], out[3]


@pytest.mark.parametrize("p_min", [0.0, 0.5])
def test_expected_sampled_is_every_outcome_weighed_by_its_probability(p_min: float) -> None:
    conf = [0.9, 0.4, 0.9, 0.9, 0.3, 0.9, 0.9, 0.9]  # at p-min 0.5 the first pass is a plain step
    tr = trace(list(T), conf)
    probs = [0.0, 0.9, 0.6, 0.75, 0.5, 0.95, 0.3, 0.8]
    for k in (1, 2, 3, 5):
        passes, drafted, accepted, _, decodes = expected_sampled(tr, probs, k, p_min)
        p, d, a, dd = _brute(tr, probs, k, p_min)
        # its passes count the prompt pass too
        assert (passes, drafted, accepted, decodes) == pytest.approx((p + 1.0, d, a, dd)), (k, p_min)


def _brute_batches(tr: PromptTrace, probs: list[float], k: int, p_min: float, g: int = 1) -> list[float]:
    """The expected number of target batches of each size (index: size - 1), as _brute."""
    n = len(tr.target)
    out = [0.0] * (k + 1)
    if g >= n:
        return out
    room = min(k, tr.n_predict - g - 1)
    size = 0
    while size < room and tr.draft_conf[g + size] >= p_min:
        size += 1
    if size == 0:
        rest = _brute_batches(tr, probs, k, p_min, g + 1)
        rest[0] += 1.0
        return rest
    reach = 1.0
    for i in range(size + 1):
        weight = reach * (1.0 if i == size else 1.0 - probs[g + i])
        for b, v in enumerate(_brute_batches(tr, probs, k, p_min, g + i + 1)):
            out[b] += weight * v
        out[size] += weight
        if i < size:
            reach *= probs[g + i]
    return out


@pytest.mark.parametrize("p_min", [0.0, 0.5])
def test_expected_batches_are_every_outcome_weighed_by_its_probability(p_min: float) -> None:
    conf = [0.9, 0.4, 0.9, 0.9, 0.3, 0.9, 0.9, 0.9]
    tr = trace(list(T), conf)
    probs = [0.0, 0.9, 0.6, 0.75, 0.5, 0.95, 0.3, 0.8]
    for k in (1, 2, 3, 5):
        want = _brute_batches(tr, probs, k, p_min)
        while want and want[-1] == 0.0:
            want.pop()
        assert expected_sampled(tr, probs, k, p_min)[3] == pytest.approx(tuple(want)), (k, p_min)


def test_a_two_token_generation_has_one_plain_step() -> None:
    two = trace([0, 11], target=(10, 11), n_predict=2)
    assert expected_sampled(two, [0.0, 1.0], 4) == (2.0, 0.0, 0.0, (1.0,), 0.0)
    assert replay(two, 4) == Counts(tokens=2, passes=2, batches=(1,))


def test_a_head_is_what_a_request_of_that_many_tokens_generates_and_drafts() -> None:
    """The probe's speculative calibration runs the recording's first tokens only: the head
    must replay as a real request of n_predict = m does (drafting capped by n_predict), not as
    the middle of the longer generation."""
    whole = trace(list(T), tails={2: (0.5,), 6: (0.4, 0.3)}, n_predict=12)
    head = whole.head(5)
    assert head.target == T[:5] and head.draft_top == T[:5] and head.n_predict == 5
    assert head.tails == {2: (0.5,)} and head.prompt_tokens == 5 and head.tail_limit == whole.tail_limit
    # one pass after the prompt: 5 - 1 - 1 = 3 drafted (n_predict's cap, not draft_max's 4)
    assert replay(head, draft_max=4) == Counts(tokens=5, passes=2, drafted=3, accepted=3, verifications=1,
                                               batches=(0, 0, 0, 1), draft_decodes=3)
    # the same positions in the whole recording draft the full 4
    assert replay(whole, draft_max=4).batches[4] >= 1
    assert whole.head(8) is whole and whole.head(20) is whole
