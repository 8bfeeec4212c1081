"""Near ties of the draft: the one way the pair's server drafts otherwise than the replay says.

Seen on an AVX2 CPU (2026-12-07, docs/testing.md): the speed differential test's calibration
run of the Q8_0 draft at --spec-draft-n-max 8 on the 'code' prompt, 32 tokens, reported
28 drafted / 27 accepted where the replay said 27 / 27 (and 21 / 20 against 20 / 20 at 2).
The server's own log: at the 8th position the draft proposed 'a' (p 0.519 over 'list' 0.459
in its top-10 softmax) where the target said 'list'; teacher forcing had recorded 'list'
over 'a' by 0.05 nats. One draft pass fewer accepted token, one pass more, and the last pass
drafts one token more (n_predict caps it one token later). These tests rebuild that case from
its token counts, and the recording side on the server's own answer format.
"""

from __future__ import annotations

import math

import pytest

from paircheck.probe.record import NEAR_TIE_NATS, Guess, _token_and_confidence
from paircheck.probe.replay import PromptTrace, replay, replay_outcomes
from paircheck.probe.result import row_to_dict, workload_to_dict
from paircheck.probe.summary import summarize
from paircheck.speed.model import Costs, Work, predict
from paircheck.workload import Workload

# 32 tokens as the calibration's head generated them: the first from the prompt pass, then 31
# the draft agreed on when teacher forced; position 8 a near tie ('list' 2402 over 'a' 81).
TARGET = tuple(range(1000, 1032))
TIE_AT, RUNNER_UP = 8, 81


def _recorded(near_ties: dict[int, int]) -> PromptTrace:
    return PromptTrace(TARGET, TARGET, (0.9,) * len(TARGET), n_predict=32, prompt_tokens=63, near_ties=near_ties)


def test_the_server_counts_seen_are_the_replay_with_the_near_tie_swapped() -> None:
    trace = _recorded({TIE_AT: RUNNER_UP})
    for k, replayed, server in ((8, (27, 27), (28, 27)), (2, (20, 20), (21, 20))):
        counts = replay(trace, k)
        assert (counts.drafted, counts.accepted) == replayed
        outcomes = replay_outcomes(trace, k)
        assert set(outcomes) == {replayed, server}
        assert outcomes[replayed] == counts
    # the work behind the server's outcome at 8: its last pass verifies 4 drafted tokens, not 3
    outcomes = replay_outcomes(trace, 8)
    assert outcomes[(27, 27)].batches == (0, 0, 0, 1, 0, 0, 0, 0, 3)
    assert outcomes[(28, 27)].batches == (0, 0, 0, 0, 1, 0, 0, 0, 3)
    # without the near tie recorded there is one outcome, the replay's
    assert set(replay_outcomes(_recorded({}), 8)) == {(27, 27)}


def test_a_near_tie_the_recording_lost_can_be_won_by_the_server() -> None:
    """The draft's top was not the target's token, its runner-up was: swapped, it is accepted."""
    top = list(TARGET)
    top[5] = 7  # the recording's mismatch at 5, the target's token its runner-up
    trace = PromptTrace(TARGET, tuple(top), (0.9,) * 32, n_predict=32, prompt_tokens=63, near_ties={5: TARGET[5]})
    lost, won = replay(trace, 8), replay(PromptTrace(TARGET, TARGET, (0.9,) * 32, n_predict=32), 8)
    assert (lost.drafted, lost.accepted) != (won.drafted, won.accepted)
    assert set(replay_outcomes(trace, 8)) == {(lost.drafted, lost.accepted), (won.drafted, won.accepted)}


def test_every_combination_of_near_ties_is_an_outcome() -> None:
    ties = {4: 1, 12: 2, 20: 3}
    outcomes = replay_outcomes(_recorded(ties), 3)
    singles = [replay(PromptTrace(TARGET, tuple(t if i != pos else tok for i, t in enumerate(TARGET)), (0.9,) * 32,
                                  n_predict=32), 3) for pos, tok in ties.items()]
    for counts in singles:
        assert (counts.drafted, counts.accepted) in outcomes
    every = tuple(t if i not in ties else ties[i] for i, t in enumerate(TARGET))
    allswapped = replay(PromptTrace(TARGET, every, (0.9,) * 32, n_predict=32), 3)
    assert (allswapped.drafted, allswapped.accepted) in outcomes


def test_a_head_keeps_the_near_ties_inside_it() -> None:
    trace = _recorded({3: 1, TIE_AT: RUNNER_UP, 20: 2})
    assert trace.head(10).near_ties == {3: 1, TIE_AT: RUNNER_UP}
    assert trace.head(100).near_ties == trace.near_ties


def _event(*candidates: tuple[int, float], token: int | None = None) -> dict[str, object]:
    """One streamed token as the pinned llama-server sends it with n_probs."""
    top = [{"id": t, "logprob": lp, "token": str(t)} for t, lp in candidates]
    return {"completion_probabilities": [{"id": candidates[0][0] if token is None else token, "top_logprobs": top}]}


def test_the_recording_names_a_runner_up_only_within_the_near_tie() -> None:
    (close,) = _token_and_confidence(_event((2402, -0.6973), (81, -0.7497), (92, -4.5)), "here")
    assert close == Guess(2402, close.confidence, 81)
    expected = 1.0 / sum(math.exp(v + 0.6973) for v in (-0.6973, -0.7497, -4.5))
    assert math.isclose(close.confidence, expected)
    (far,) = _token_and_confidence(_event((5367, -0.0165), (198, -4.6942)), "here")
    assert far.runner_up is None
    (edge,) = _token_and_confidence(_event((1, -1.0), (2, -1.0 - NEAR_TIE_NATS)), "here")
    assert edge.runner_up is None  # exactly the threshold apart is not a near tie
    # a greedy token listed a hair below a tied one: its runner-up is the other
    (listed,) = _token_and_confidence(_event((5, -0.70), (6, -0.70001), token=6), "here")
    assert listed.token == 6 and listed.runner_up == 5


def _costs() -> Costs:
    # a target decode of 100 ms, a draft decode of 10, verification of b tokens 100 + 20 (b - 1)
    return Costs(100.0, 10.0, ((1, 100.0), (17, 420.0)), ((1, 10.0), (17, 170.0)), 2.0, 0.0)


def test_a_near_tie_gives_each_greedy_row_its_range_of_speedups() -> None:
    """The summary prices every outcome the server may take: the row's figure is the
    recording's (the fast end here, where the recording won the tie), its range reaches down to
    the outcome where the server loses it, each end what speed.model predicts for that work."""
    trace = _recorded({TIE_AT: RUNNER_UP})
    costs = _costs()
    summary = summarize("d.gguf", [("code", "code")], [trace], (0.0, 0.5), costs)
    row = summary.row(8)
    assert row is not None and row.predicted is not None and row.near_tie_speedups is not None
    low, high = row.near_tie_speedups
    lost = PromptTrace(TARGET, TARGET[:TIE_AT] + (RUNNER_UP,) + TARGET[TIE_AT + 1:], (0.9,) * 32, n_predict=32,
                       prompt_tokens=63)
    swapped = replay(lost, 8, 0.0)
    slow = predict(Work(swapped.tokens, swapped.batches, swapped.draft_decodes), costs)
    assert slow is not None
    assert high == pytest.approx(row.predicted.speedup) and low == pytest.approx(slow.speedup) and low < high
    # only greedy rows at p-min 0 are ranged (the swaps are replayed at p-min 0)
    at_half = summary.row(8, 0.5)
    assert at_half is not None and at_half.near_tie_speedups is None
    # without a near tie nothing is ranged
    plain = summarize("d.gguf", [("code", "code")], [_recorded({})], (0.0,), costs)
    assert all(r.near_tie_speedups is None for r in plain.rows)
    # the JSON carries the range, in the top-level rows and in each workload's
    assert row_to_dict(row)["predicted_speedup_near_ties"] == [round(low, 4), round(high, 4)]
    entry = workload_to_dict(Workload(0, 32, 1), [summary], [False], [[trace]])
    at8 = next(r for r in entry["drafts"][0]["by_draft_max"] if r["draft_max"] == 8 and r["p_min"] == 0)
    assert at8["predicted_speedup_near_ties"] == [round(low, 4), round(high, 4)]
