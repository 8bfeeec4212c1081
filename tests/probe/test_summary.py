"""The probe's summary on the paths the mutation run found untested: rows for sampled
decoding (the expectation summed over prompts), every field of the summary, the row lookup,
and the target's acceptance read from its candidates.
"""

from __future__ import annotations

import pytest

from paircheck.probe.replay import Counts, PromptTrace, add_batches, expected_sampled, replay
from paircheck.probe.summary import K_MAX, accept_probabilities, rows_for, summarize
from paircheck.speed.model import Costs

T = (10, 11, 12, 13, 14, 15, 16, 17)
COSTS = Costs(10.0, 2.0, ((1, 4.0), (17, 20.0)), ((1, 1.0), (17, 3.0)), 1.5, 0.25)


def trace(top: list[int], conf: list[float]) -> PromptTrace:
    tails = {j: tuple(conf[j + 1:]) for j in range(len(T)) if top[j] != T[j]}
    tails[len(T) - 1] = ()
    return PromptTrace(T, tuple(top), tuple(conf), tails, len(T), prompt_tokens=5, tail_limit=0.0)


A = trace([0, 11, 12, 99, 14, 15, 16, 17], [0.9, 0.9, 0.6, 0.9, 0.9, 0.4, 0.9, 0.9])
B = trace([0, 11, 12, 13, 14, 15, 99, 17], [0.9, 0.8, 0.9, 0.3, 0.9, 0.9, 0.9, 0.9])
PA = [0.0, 0.9, 0.7, 0.1, 0.5, 0.6, 0.8, 1.0]
PB = [0.0, 0.6, 0.9, 0.8, 0.7, 0.4, 0.2, 0.9]


def test_greedy_rows_sum_each_prompts_replay_at_each_p_min() -> None:
    rows = rows_for([A, B], [0.0, 0.5], COSTS, k_max=5)
    assert [(r.draft_max, r.p_min) for r in rows] == [(k, p) for p in (0.0, 0.5) for k in range(1, 6)]
    for r in rows:
        total = replay(A, r.draft_max, r.p_min) + replay(B, r.draft_max, r.p_min)
        assert (r.tokens, r.passes, r.drafted, r.accepted, r.batches, r.draft_decodes, r.generations) == (
            total.tokens, total.passes, total.drafted, total.accepted, total.batches, total.draft_decodes, 2)
        assert r.predicted is not None
    # p-min matters on these traces: the rows at 0.5 are not those at 0
    assert [r.drafted for r in rows[:5]] != [r.drafted for r in rows[5:]]
    assert len(rows_for([A], [0.0], None)) == K_MAX and rows_for([A], [0.0], None)[-1].draft_max == K_MAX


def test_sampled_rows_sum_each_prompts_expectation_with_its_own_probabilities() -> None:
    rows = rows_for([A, B], [0.0, 0.5], COSTS, [PA, PB], k_max=4)
    assert [(r.draft_max, r.p_min) for r in rows] == [(k, p) for p in (0.0, 0.5) for k in range(1, 5)]
    for r in rows:
        a = expected_sampled(A, PA, r.draft_max, r.p_min)
        b = expected_sampled(B, PB, r.draft_max, r.p_min)
        assert r.tokens == 16 and r.generations == 2
        assert (r.passes, r.drafted, r.accepted, r.draft_decodes) == pytest.approx(
            (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[4] + b[4]))
        assert r.batches == pytest.approx(add_batches(a[3], b[3]))
        assert r.predicted is not None and r.predicted.speedup > 0
    # each prompt is read with its own probabilities: B's twice is another answer
    other = rows_for([A, B], [0.0], None, [PB, PB], k_max=4)
    assert [r.accepted for r in other] != pytest.approx([r.accepted for r in rows[:4]])
    assert all(r.predicted is None for r in other)


def test_a_sampled_summary_reads_each_prompts_and_kinds_own_probabilities() -> None:
    prompts = [("a", "code"), ("b", "chat")]
    s = summarize("d.gguf", prompts, [A, B], [0.0, 0.5], COSTS, [PA, PB], k_max=4)
    assert s.path == "d.gguf" and s.costs is COSTS
    assert [r.accepted for r in s.prompts[0].rows] == pytest.approx(
        [r.accepted for r in rows_for([A], [0.0, 0.5], COSTS, [PA], k_max=4)])
    assert [r.accepted for r in s.prompts[1].rows] == pytest.approx(
        [r.accepted for r in rows_for([B], [0.0, 0.5], COSTS, [PB], k_max=4)])
    assert [r.accepted for r in s.rows] == pytest.approx(
        [r.accepted for r in rows_for([A, B], [0.0, 0.5], COSTS, [PA, PB], k_max=4)])
    for kind, tr, probs in (("code", A, PA), ("chat", B, PB)):
        (k,) = [k for k in s.kinds if k.kind == kind]
        own = rows_for([tr], [0.0], COSTS, [probs], k_max=4)
        best = max(own, key=lambda r: (round(r.predicted_speedup or 0.0, 6), -r.draft_max))
        assert k.best_draft_max == best.draft_max
        assert k.accepted_per_pass == pytest.approx(best.accepted_per_pass)
    # greedy agreement: A agrees at 6 of 7 positions, B at 6 of 7
    assert (s.agreed, s.compared) == (12, 14) and s.acceptance_rate == pytest.approx(12 / 14)
    assert [p.acceptance_rate for p in s.prompts] == pytest.approx([6 / 7, 6 / 7])
    assert [p.kind for p in s.prompts] == ["code", "chat"]


def test_the_row_lookup_and_the_headline() -> None:
    s = summarize("d.gguf", [("a", "code")], [A], [0.0, 0.5], COSTS, k_max=4)
    r = s.row(3, 0.5)
    assert r is not None and (r.draft_max, r.p_min) == (3, 0.5)
    default = s.row(3)
    assert default is not None and default.p_min == 0.0  # p-min 0 unless asked
    assert s.row(9) is None and s.row(3, 0.75) is None
    assert s.best_draft_max is not None
    head = s.row(s.best_draft_max, 0.0)
    assert head is not None and s.predicted_speedup == head.predicted_speedup
    assert s.best is not None and s.best.predicted_speedup == max(x.predicted_speedup or 0 for x in s.rows)


def test_a_row_carries_every_count_it_was_made_from() -> None:
    (r,) = [x for x in rows_for([A], [0.0], COSTS, k_max=2) if x.draft_max == 2]
    c = replay(A, 2)
    assert isinstance(c, Counts)
    assert (r.tokens, r.passes, r.drafted, r.accepted, r.batches, r.draft_decodes) == (
        c.tokens, c.passes, c.drafted, c.accepted, c.batches, c.draft_decodes)
    assert r.acceptance_rate == pytest.approx(c.accepted / c.drafted)
    assert r.accepted_per_pass == pytest.approx(c.accepted / c.passes)
    assert r.work.tokens == c.tokens and r.work.generations == 1
    assert r.predicted_tokens_per_s is not None and r.predicted_tokens_per_s > 0


def test_no_positions_compared_has_no_rate() -> None:
    one = PromptTrace((10,), (0,), (0.9,), {}, 1, prompt_tokens=5)
    s = summarize("d.gguf", [("a", "code")], [one], [0.0], None, k_max=2)
    assert s.acceptance_rate is None and s.prompts[0].acceptance_rate is None and s.kinds[0].acceptance_rate is None


def test_accept_probabilities_past_the_recorded_candidates_are_zero() -> None:
    cands = [{}, {11: 0.7}, {12: 0.25, 13: 0.75}]  # recorded for 3 of 8 positions
    probs = accept_probabilities(A, cands)
    assert probs == [0.0, 0.7, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert all(isinstance(p, float) for p in probs)


def test_prompts_traces_and_probabilities_must_pair_up() -> None:
    with pytest.raises(ValueError):
        summarize("d.gguf", [("a", "code"), ("b", "chat")], [A], [0.0], None, k_max=2)
    with pytest.raises(ValueError):
        rows_for([A, B], [0.0], None, [PA], k_max=2)


def test_every_part_of_a_summary_is_priced_and_bounded_by_k_max() -> None:
    perfect = trace(list(T), [0.9] * 8)
    s = summarize("d.gguf", [("a", "code")], [perfect], [0.0], COSTS, k_max=1)
    assert all(r.predicted is not None for p in s.prompts for r in p.rows)
    assert s.kinds[0].best_draft_max == 1 and s.best_draft_max == 1  # longer drafts were not asked for
    sampled = summarize("d.gguf", [("a", "code")], [perfect], [0.0], COSTS, [[1.0] * 8], k_max=1)
    assert sampled.kinds[0].best_draft_max == 1 and len(sampled.rows) == 1


def test_the_first_position_is_never_a_draft_to_accept() -> None:
    # position 0 comes from the prompt pass: its placeholder is never priced, even when the
    # target's candidates there happen to hold it
    probs = accept_probabilities(A, [{0: 1.0}, {11: 0.5}])
    assert probs[0] == 0.0 and probs[1] == 0.5
