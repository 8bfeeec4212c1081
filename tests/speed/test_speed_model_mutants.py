"""The speed model's formulas pinned on cases small enough to compute by hand: the edges the
mutation run (benchmarks/mutation.py, docs/mutation.md) found that test_speed_model.py left
open (interpolation off the ends, an empty generation, ties, the round fit's fall-backs).
"""

from __future__ import annotations

import pytest

from paircheck.speed.model import (
    Costs,
    Work,
    assumed_costs,
    assumed_speedup,
    best_assumed,
    expected_tokens_per_round,
    expected_work,
    fit_round_costs,
    interpolate,
    pair_ms,
    predict,
    target_ms,
)


def test_interpolate_on_every_segment_and_off_both_ends() -> None:
    pts = ((1, 4.0), (5, 12.0), (9, 14.0))
    assert interpolate(((3, 7.0),), 100) == 7.0  # one point: a constant
    assert interpolate(pts, 1) == 4.0 and interpolate(pts, 5) == 12.0 and interpolate(pts, 9) == 14.0
    assert interpolate(pts, 3) == pytest.approx(8.0)  # first segment: slope 2
    assert interpolate(pts, 7) == pytest.approx(13.0)  # second segment: slope 0.5
    assert interpolate(pts, 13) == pytest.approx(16.0)  # past the end: along the last segment
    assert interpolate(((2, 4.0), (4, 8.0)), 1) == pytest.approx(2.0)  # before the start: the first


def test_a_batch_costs_the_decode_plus_what_more_tokens_add() -> None:
    c = Costs(10.0, 2.0, ((1, 4.0), (17, 20.0)), ((1, 1.0), (17, 3.0)), round_ms=1.5, round_token_ms=0.25)
    assert c.target_batch(1) == 10.0 and c.target_batch(0) == 10.0
    assert c.target_batch(5) == pytest.approx(10.0 + (8.0 - 4.0))
    assert c.draft_batch(5) == pytest.approx(1.5) and c.draft_batch(1) == pytest.approx(1.0)
    assert c.batch(5) == pytest.approx(14.0 + 1.5 + 1.5 + 0.25 * 5)
    # no batch points: a batch costs one decode, and the draft's re-evaluation nothing
    bare = Costs(10.0, 2.0)
    assert bare.target_batch(8) == 10.0 and bare.draft_batch(8) == 0.0 and bare.batch(8) == 10.0
    # a batch is never cheaper than one decode, even from noisy points
    noisy = Costs(10.0, 2.0, ((1, 6.0), (4, 5.0)))
    assert noisy.target_batch(4) == 10.0


def test_assumed_costs_are_in_units_of_one_target_decode() -> None:
    c = assumed_costs(0.1, verify_growth=0.2, round_cost=0.3)
    assert (c.target_decode_ms, c.draft_decode_ms, c.round_ms, c.round_token_ms) == (1.0, 0.1, 0.3, 0.0)
    assert c.target_batch_ms == ((1, 1.0), (2, 1.2)) and c.draft_batch_ms == ()
    assert c.absolute is False and c.basis == "assumed"
    assert c.target_batch(6) == pytest.approx(1.0 + 0.2 * 5)


def test_target_time_and_the_prediction_by_hand() -> None:
    c = Costs(10.0, 2.0)
    assert target_ms(Work(8, (), 0), c) == 70.0
    assert target_ms(Work(3, (), 0, generations=3), c) == 0.0 and target_ms(Work(2, (), 0, generations=3), c) == 0.0
    w = Work(8, (1, 0, 2), 6)  # one plain step, two batches of 3, six draft decodes
    assert pair_ms(w, c) == pytest.approx(6 * 2.0 + 1 * 10.0 + 2 * 10.0)
    p = predict(w, c)
    assert p is not None
    assert p.speedup == pytest.approx(70.0 / 42.0)
    assert p.target_tokens_per_s == pytest.approx(8000.0 / 70.0) and p.pair_tokens_per_s == pytest.approx(8000.0 / 42.0)
    rel = predict(w, assumed_costs(0.2))
    assert rel is not None and rel.target_tokens_per_s is None and rel.pair_tokens_per_s is None
    assert rel.speedup == pytest.approx(7.0 / (6 * 0.2 + 3))
    assert predict(Work(1, (), 0), c) is None  # nothing generated after the first token
    assert predict(Work(8, (), 0), c) is None  # no pair time: nothing to compare


def test_leviathans_expected_tokens_per_round() -> None:
    assert expected_tokens_per_round(1.0, 4) == 5.0 and expected_tokens_per_round(1.2, 4) == 5.0
    assert expected_tokens_per_round(0.5, 2) == pytest.approx(1.75)
    assert expected_tokens_per_round(0.0, 3) == pytest.approx(1.0)
    w = expected_work(0.5, 2, tokens=8.0)
    assert w.tokens == 8.0 and w.batches == pytest.approx((0.0, 0.0, 7.0 / 1.75))
    assert w.draft_decodes == pytest.approx(8.0)
    assert expected_work(0.5, 2).tokens == 1000.0
    assert expected_work(0.5, 2).batches[2] == pytest.approx(999.0 / 1.75)


@pytest.mark.parametrize(("growth", "round_cost", "per_round"), [(0.0, 0.0, 1.4), (0.1, 0.0, 1.8), (0.0, 0.2, 1.6)])
def test_the_assumed_speedup_is_tokens_per_round_over_the_round_cost(growth: float, round_cost: float,
                                                                      per_round: float) -> None:
    # a = 0.8, k = 4, c = 0.1: E = (1 - 0.8^5) / 0.2 = 3.3616 tokens per round; a round costs
    # k c + 1 decodes, plus 4 x growth for the batch of 5, plus the round cost
    assert assumed_speedup(0.8, 4, 0.1, growth, round_cost) == pytest.approx(3.3616 / per_round)


def test_best_assumed_takes_the_fastest_and_the_shortest_on_a_tie() -> None:
    def by_hand(a: float, k: int, c: float) -> float:
        e = k + 1 if a >= 1 else (1 - a ** (k + 1)) / (1 - a)
        return e / (k * c + 1)

    for a, c in ((0.9, 0.05), (0.7, 0.02), (0.6, 0.3)):
        k, speed = best_assumed(a, c, k_max=12)
        speeds = {j: by_hand(a, j, c) for j in range(1, 13)}
        assert k == max(speeds, key=lambda j: (round(speeds[j], 9), -j)) and speed == pytest.approx(speeds[k])
    # a free draft that is never accepted: every length gives 1.0, the shortest wins
    assert best_assumed(0.0, 0.0, k_max=8) == (1, pytest.approx(1.0))
    # a perfect free draft: the longest allowed
    assert best_assumed(1.0, 0.0, k_max=8)[0] == 8
    assert best_assumed(1.0, 0.0)[0] == 32  # the default k_max


def _run(batches: tuple[int, ...], decodes: int, r0: float, r1: float, costs: Costs) -> tuple[Work, float]:
    w = Work(sum((b + 1) * n for b, n in enumerate(batches)), batches, decodes)
    planted = Costs(costs.target_decode_ms, costs.draft_decode_ms, costs.target_batch_ms, costs.draft_batch_ms,
                    round_ms=r0, round_token_ms=r1)
    return w, pair_ms(w, planted)


COSTS = Costs(10.0, 2.0, ((1, 4.0), (17, 20.0)), ((1, 1.0), (17, 3.0)), round_ms=9.0, round_token_ms=9.0)


def test_the_round_fit_ignores_the_round_costs_it_is_given_and_recovers_both() -> None:
    runs = [_run((2, 0, 3), 9, 1.5, 0.25, COSTS), _run((0, 4, 0, 1), 12, 1.5, 0.25, COSTS),
            _run((5,), 0, 1.5, 0.25, COSTS)]
    fit = fit_round_costs(COSTS, runs)
    assert (fit.round_ms, fit.round_token_ms) == pytest.approx((1.5, 0.25))
    assert fit.residuals == pytest.approx((0.0, 0.0, 0.0), abs=1e-9) and len(fit.residuals) == 3
    none = fit_round_costs(COSTS, [])
    assert (none.round_ms, none.round_token_ms, none.residuals) == (0.0, 0.0, ())


def test_runs_that_cannot_tell_the_costs_apart_give_a_cost_per_round() -> None:
    # every batch has 2 tokens: per-token and per-round costs are proportional
    runs = [_run((0, 3), 3, 2.0, 0.5, COSTS), _run((0, 5), 5, 2.0, 0.5, COSTS)]
    fit = fit_round_costs(COSTS, runs)
    assert fit.round_token_ms == 0.0 and fit.round_ms == pytest.approx(2.0 + 2 * 0.5)
    assert fit.residuals == pytest.approx((0.0, 0.0), abs=1e-9)


def test_a_negative_fit_falls_back_to_the_better_one_parameter_fit() -> None:
    # unexplained ms planted as 3 x rounds - 0.5 x batch tokens: least squares says r1 < 0, and
    # at 17 tokens it would take 5.5 ms off a batch whose re-evaluation by the draft costs 3
    runs = [_run((4, 0, 0), 0, 3.0, -0.5, COSTS), _run((0, 0, 2), 0, 3.0, -0.5, COSTS),
            _run((1, 1, 1), 0, 3.0, -0.5, COSTS)]
    rows = [(float(sum(w.batches)), float(w.batch_tokens), 3.0 * sum(w.batches) - 0.5 * w.batch_tokens)
            for w, _ in runs]
    per_round = sum(x0 * y for x0, _, y in rows) / sum(x0 * x0 for x0, _, _ in rows)
    per_token = sum(x1 * y for _, x1, y in rows) / sum(x1 * x1 for _, x1, _ in rows)

    def sse(r0: float, r1: float) -> float:
        return sum((y - r0 * x0 - r1 * x1) ** 2 for x0, x1, y in rows)

    fit = fit_round_costs(COSTS, runs)
    options = [(max(0.0, per_round), 0.0), (0.0, max(0.0, per_token))]
    best = min(options, key=lambda p: sse(*p))
    assert (fit.round_ms, fit.round_token_ms) == pytest.approx(best)
    assert fit.round_ms >= 0 and fit.round_token_ms >= 0 and (fit.round_ms == 0 or fit.round_token_ms == 0)
    assert fit.residuals == pytest.approx(tuple(y - best[0] * x0 - best[1] * x1 for x0, x1, y in rows))
    assert sse(*best) < sse(*[o for o in options if o != best][0])


def test_predict_needs_time_on_both_sides_however_small() -> None:
    c = Costs(10.0, 2.0)
    assert predict(Work(1, (1,), 0), c) is None  # a pass but no token after the first: no time alone
    rel = assumed_costs(0.1)
    one = predict(Work(2, (1,), 0), rel)  # one decode alone (1.0), one plain step (1.0)
    assert one is not None and one.speedup == pytest.approx(1.0)
    cheap = predict(Work(2, (), 5), rel)  # the pair's time is 5 draft decodes: 0.5 of one target decode
    assert cheap is not None and cheap.speedup == pytest.approx(2.0)


def test_the_defaults_of_the_assumed_speedup_are_no_growth_and_no_round_cost() -> None:
    assert assumed_speedup(0.8, 4, 0.1) == pytest.approx(3.3616 / 1.4)
    assert best_assumed(0.8, 0.1, k_max=4)[1] == pytest.approx(max(
        assumed_speedup(0.8, k, 0.1) for k in range(1, 5)))


def test_best_assumed_prices_growth_and_round_costs() -> None:
    def by_hand(k: int, growth: float, round_cost: float) -> float:
        e = (1 - 0.85 ** (k + 1)) / 0.15
        return e / (k * 0.05 + 1 + growth * k + round_cost)

    for growth, round_cost in ((0.1, 0.0), (0.0, 0.5), (0.05, 0.2)):
        speeds = {k: by_hand(k, growth, round_cost) for k in range(1, 17)}
        k, speed = best_assumed(0.85, 0.05, growth, round_cost, k_max=16)
        assert k == max(speeds, key=lambda j: speeds[j]) and speed == pytest.approx(speeds[k])
    # the round cost favours longer drafts, the growth shorter ones
    assert best_assumed(0.85, 0.05, 0.0, 0.5, k_max=16)[0] > best_assumed(0.85, 0.05, 0.1, 0.0, k_max=16)[0]


def test_a_small_positive_round_cost_is_kept_as_fitted() -> None:
    runs = [_run((2, 0, 3), 9, 0.5, 0.25, COSTS), _run((0, 4, 0, 1), 12, 0.5, 0.25, COSTS),
            _run((5,), 0, 0.5, 0.25, COSTS)]
    fit = fit_round_costs(COSTS, runs)
    assert (fit.round_ms, fit.round_token_ms) == pytest.approx((0.5, 0.25))


def test_a_negative_fit_within_the_drafts_re_evaluation_is_kept_as_fitted() -> None:
    # planted -0.5 x rounds + 0.5 x batch tokens, and 0.5 x rounds - 0.02 x batch tokens: each
    # takes less off a batch than the draft's re-evaluation of it costs (1 ms at 1 token)
    for r0, r1 in ((-0.5, 0.5), (0.5, -0.02)):
        runs = [_run((4, 0, 0), 0, r0, r1, COSTS), _run((0, 0, 2), 0, r0, r1, COSTS),
                _run((1, 1, 1), 0, r0, r1, COSTS)]
        fit = fit_round_costs(COSTS, runs)
        assert (fit.round_ms, fit.round_token_ms) == pytest.approx((r0, r1))
        assert fit.residuals == pytest.approx((0.0, 0.0, 0.0), abs=1e-9)



def test_runs_without_batches_fit_nothing() -> None:
    w = Work(1, (), 0)
    fit = fit_round_costs(COSTS, [(w, 3.0), (w, 5.0)])
    assert (fit.round_ms, fit.round_token_ms) == (0.0, 0.0) and fit.residuals == (3.0, 5.0)
