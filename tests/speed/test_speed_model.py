"""The speed model on cases small enough to price by hand (paircheck/speed/model.py).

The real check of the model is tests/probe/test_speed_differential.py (prediction against a
real llama-server's measurement); these pin each term so a wrong one fails with a readable cause.
"""

from __future__ import annotations

import pytest

from paircheck.speed.model import (
    MIN_GAIN,
    Costs,
    SlotSteps,
    Work,
    assumed_costs,
    best_assumed,
    expected_tokens_per_round,
    expected_work,
    fit_round_costs,
    for_slots,
    interpolate,
    pair_ms,
    predict,
    target_ms,
)


def test_interpolation_is_linear_between_points_and_extends_the_end_segments() -> None:
    points = ((1, 10.0), (3, 14.0), (7, 30.0))
    assert interpolate(points, 1) == 10.0
    assert interpolate(points, 2) == 12.0
    assert interpolate(points, 5) == 22.0
    assert interpolate(points, 9) == 38.0  # past the last point: the last segment's slope (4 ms/token)
    assert interpolate(((4, 5.0),), 9) == 5.0


def test_every_term_of_a_pair_is_priced() -> None:
    costs = Costs(target_decode_ms=20.0, draft_decode_ms=5.0, target_batch_ms=((1, 15.0), (5, 27.0)),
                  draft_batch_ms=((1, 4.0), (5, 8.0)), round_ms=2.0, round_token_ms=0.5)
    # a batch of 5: the target's decode plus what 4 more tokens add to one evaluation (27 - 15),
    # the draft re-evaluating it (8), the round (2 + 0.5 * 5)
    assert costs.batch(5) == pytest.approx(20.0 + 12.0 + 8.0 + 2.0 + 2.5)
    assert costs.batch(1) == pytest.approx(20.0 + 4.0 + 2.0 + 0.5)
    work = Work(tokens=11.0, batches=(1.0, 0.0, 0.0, 0.0, 2.0), draft_decodes=8.0)
    assert pair_ms(work, costs) == pytest.approx(costs.batch(1) + 2 * costs.batch(5) + 8 * 5.0)
    assert target_ms(work, costs) == pytest.approx(10 * 20.0)
    pred = predict(work, costs)
    assert pred is not None
    assert pred.speedup == pytest.approx(200.0 / pair_ms(work, costs))
    assert pred.target_tokens_per_s == pytest.approx(11 * 1000 / 200.0)
    assert pred.pair_tokens_per_s == pytest.approx(11 * 1000 / pair_ms(work, costs))


def test_two_slots_are_priced_by_their_measured_steps_else_as_one_longer_batch() -> None:
    costs = Costs(target_decode_ms=20.0, draft_decode_ms=5.0, target_batch_ms=((1, 18.0), (9, 42.0)),
                  draft_batch_ms=((1, 4.0), (9, 12.0)), round_ms=2.0, round_token_ms=0.5)
    # measured steps of two slots (b tokens each): dearer than one sequence of 2b, as at a deep
    # context, where each slot reads its own cache
    target_steps, draft_steps = SlotSteps(((1, 30.0), (5, 60.0))), SlotSteps(((1, 7.0), (5, 15.0)))
    two = for_slots(costs, 2, 5, target_steps, draft_steps)
    # the target alone: the step of two slots of one token each, as measured
    assert two.target_decode_ms == pytest.approx(30.0)
    # a verification of 5 tokens a slot: that step, as measured, beyond the step of 1 token a slot
    assert two.target_batch(5) == pytest.approx(two.target_decode_ms + (60.0 - 30.0))
    assert two.draft_batch(3) == pytest.approx(11.0)  # between the measured steps
    assert two.draft_decode_ms == pytest.approx(7.0)  # a drafting step: one token a slot
    assert (two.round_ms, two.round_token_ms) == (4.0, 1.0)  # per slot
    # the two slots generating together, timed: a token's step at that cost (a prompt's one-token
    # step carries the request's launch), and 5 tokens a slot what the curve adds from 1 to 5
    timed = for_slots(costs, 2, 5, SlotSteps(target_steps.points, 26.0), SlotSteps(draft_steps.points, 6.0))
    assert timed.target_decode_ms == pytest.approx(26.0)
    assert timed.target_batch(5) == pytest.approx(26.0 + (60.0 - 30.0))
    assert timed.draft_decode_ms == pytest.approx(6.0)
    assert timed.draft_batch(3) == pytest.approx(11.0)  # the draft's re-evaluation: the curve as timed
    # unmeasured: one sequence of 2b tokens on the one-slot curve
    modelled = for_slots(costs, 2, 5)
    assert modelled.target_decode_ms == pytest.approx(costs.target_batch(2))  # 20 + (21 - 18)
    assert modelled.target_batch(5) == pytest.approx(modelled.target_decode_ms + (interpolate(
        costs.target_batch_ms, 10) - interpolate(costs.target_batch_ms, 2)))
    assert modelled.draft_decode_ms == 5.0  # max(decode, the draft's batch of 2: 5.0)
    assert for_slots(costs, 1, 5, target_steps, draft_steps) is costs


def test_each_generation_first_token_is_free_on_both_sides() -> None:
    costs = Costs(10.0, 1.0)
    assert target_ms(Work(20.0, (18.0,), 0.0, generations=2), costs) == pytest.approx(18 * 10.0)
    assert predict(Work(1.0, (), 0.0), costs) is None  # nothing decoded after the prompt pass


def test_assumed_costs_are_leviathans_formula() -> None:
    # E / (k c + 1) for the i.i.d. work, as estimate has always modelled it
    for a, k, c in ((0.8, 3, 0.1), (0.5, 1, 0.266), (1.0, 4, 0.25), (0.9, 8, 0.05)):
        pred = predict(expected_work(a, k), assumed_costs(c))
        assert pred is not None and pred.target_tokens_per_s is None  # relative costs: no tokens/s
        assert pred.speedup == pytest.approx(expected_tokens_per_round(a, k) / (k * c + 1), rel=1e-9)


def test_assumed_verification_and_round_costs_slow_long_drafts_down() -> None:
    free = predict(expected_work(0.8, 8), assumed_costs(0.1))
    dear = predict(expected_work(0.8, 8), assumed_costs(0.1, verify_growth=0.1, round_cost=0.2))
    assert free is not None and dear is not None
    # a batch of 9 costs 1 + 0.1 * 8 decodes and a round 0.2 more
    assert dear.speedup == pytest.approx(expected_tokens_per_round(0.8, 8) / (1 + 0.8 + 0.2 + 8 * 0.1))
    assert best_assumed(0.8, 0.1, 0.1, 0.2)[0] < best_assumed(0.8, 0.1)[0]


def test_the_round_fit_recovers_planted_costs_exactly() -> None:
    base = Costs(20.0, 5.0, ((1, 15.0), (17, 60.0)), ((1, 4.0), (17, 12.0)))
    planted = Costs(20.0, 5.0, base.target_batch_ms, base.draft_batch_ms, round_ms=3.0, round_token_ms=0.7)
    works = [Work(128.0, (10.0, 40.0), 40.0), Work(128.0, (2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 18.0), 144.0)]
    fit = fit_round_costs(base, [(w, pair_ms(w, planted)) for w in works])
    assert (fit.round_ms, fit.round_token_ms) == pytest.approx((3.0, 0.7))
    assert fit.residuals == pytest.approx((0.0, 0.0), abs=1e-6)


def test_the_round_fit_never_takes_off_more_than_the_drafts_re_evaluation() -> None:
    base = Costs(20.0, 5.0)
    works = [Work(100.0, (10.0, 40.0), 40.0), Work(100.0, (0.0, 0.0, 0.0, 20.0), 60.0)]
    # runs faster than the other costs explain, with no re-evaluation timed to take it from:
    # no negative cost is invented
    fit = fit_round_costs(base, [(w, pair_ms(w, base) - 50.0) for w in works])
    assert fit.round_ms >= 0.0 and fit.round_token_ms >= 0.0
    assert fit_round_costs(base, []).round_ms == 0.0
    # a draft whose batches, timed on its own server, cost more than in the pair's runs (2 ms
    # a round and -1.5 ms a token planted): the fit takes it off, each batch still dearer than
    # the target's verification alone
    timed = Costs(20.0, 5.0, ((1, 15.0), (17, 60.0)), ((1, 4.0), (17, 36.0)))
    planted = Costs(20.0, 5.0, timed.target_batch_ms, timed.draft_batch_ms, round_ms=2.0, round_token_ms=-1.5)
    works = [Work(128.0, (10.0, 40.0), 40.0), Work(128.0, (2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 18.0), 144.0)]
    fit = fit_round_costs(timed, [(w, pair_ms(w, planted)) for w in works])
    assert (fit.round_ms, fit.round_token_ms) == pytest.approx((2.0, -1.5))
    assert all(planted.batch(b) > planted.target_batch(b) for b in range(1, 18))
    # the same runs priced with a draft timed at nothing a batch: that much cannot be taken off
    free = Costs(20.0, 5.0, timed.target_batch_ms, ((1, 0.5), (17, 0.5)))
    fit = fit_round_costs(free, [(w, pair_ms(w, free) - 1.5 * w.batch_tokens) for w in works])
    assert fit.round_ms >= 0.0 and fit.round_token_ms >= 0.0


def test_faster_means_at_least_the_stated_margin() -> None:
    costs = Costs(10.0, 0.0)
    just_below = predict(Work(100.0, (99.0 / (MIN_GAIN - 0.001),), 0.0), costs)
    at = predict(Work(100.0, (99.0 / MIN_GAIN,), 0.0), costs)
    assert just_below is not None and not just_below.faster
    assert at is not None and at.faster
