"""The one conversion of an acceptance as engines print it into the per-token rate the speed
model prices (paircheck.speed.acceptance), and the drafting it implies at a p-min."""

from __future__ import annotations

import pytest

from paircheck.speed.acceptance import PER_PASS, PER_TOKEN, RATE, SHARE, Acceptance, Drafting, per_token
from paircheck.speed.model import expected_tokens_per_round, expected_work


@pytest.mark.parametrize("a", [0.0, 0.3, 0.7, 0.95, 1.0])
@pytest.mark.parametrize("k", [1, 3, 16])
def test_at_p_min_0_the_work_is_leviathans(a: float, k: int) -> None:
    ours, theirs = Drafting(a).work(k), expected_work(a, k)
    assert ours.tokens == theirs.tokens
    assert ours.draft_decodes == pytest.approx(theirs.draft_decodes)
    assert ours.batches == pytest.approx(theirs.batches)
    drafted, accepted, decodes = Drafting(a).per_round(k)
    assert (drafted, decodes) == (k, k) and accepted + 1 == pytest.approx(expected_tokens_per_round(a, k))


@pytest.mark.parametrize("kind", [RATE, SHARE, PER_PASS])
@pytest.mark.parametrize(("k", "p_min", "n_min"), [(5, 0.0, 0), (16, 0.75, 0), (3, 0.5, 0), (16, 0.4, 4)])
@pytest.mark.parametrize("a", [0.93, 0.97, 0.99])
def test_a_reported_figure_gives_back_the_rate_it_came_from(kind: str, k: int, p_min: float, n_min: int,
                                                            a: float) -> None:
    figure = Drafting(a).reported(kind, k, p_min, n_min)
    assert per_token(figure, kind, k, p_min, n_min) == pytest.approx(a, abs=2e-3)


def test_accepted_over_drafted_is_not_the_per_token_rate() -> None:
    # llama.cpp#5877's RTX 3060 run: 72.055% accepted at n_draft 5 is a per-token 0.89, not 0.72
    # (accepted / drafted counts the tail of a draft the target cut as drafted).
    a = per_token(0.72055, RATE, 5)
    assert a == pytest.approx(0.8927, abs=1e-3)
    k = 5
    assert sum(a ** i for i in range(1, k + 1)) / k == pytest.approx(0.72055, rel=1e-6)
    # The per-token rate is the rate itself; an acceptance length is tokens per pass.
    assert per_token(0.72, PER_TOKEN) == 0.72
    assert per_token(expected_tokens_per_round(0.8, 4), PER_PASS, 4) == pytest.approx(0.8, abs=1e-6)


def test_a_p_min_above_0_stops_drafting_at_an_unconfident_token() -> None:
    d = Drafting(0.8)
    at0, at75 = d.per_round(16, 0.0), d.per_round(16, 0.75)
    assert at75[0] < at0[0] / 4  # far fewer drafted
    assert at75[1] / at75[0] > at0[1] / at0[0]  # a higher share of them accepted
    # The batches the target verifies are D + 1 for each D the cut gives, summing to the rounds.
    w = d.work(16, 0.75)
    assert sum(w.batches) == pytest.approx(w.rounds) and w.batches[0] > 0


def test_a_rate_at_a_p_min_has_two_readings_and_the_drafting_one_is_taken() -> None:
    # At p-min 0.75 and draft max 16, a weak draft (a 0.5) and a strong one (a 0.96) both print
    # about 0.74; the one that drafts is taken: draftbench's M4 Max 72B + 0.5B point.
    assert Drafting(0.5).reported(RATE, 16, 0.75) == pytest.approx(0.84, abs=0.01)
    a = per_token(0.7429, RATE, 16, 0.75)
    assert 0.95 < a < 0.98
    assert Drafting(a).reported(RATE, 16, 0.75) == pytest.approx(0.7429, abs=1e-4)
    # Below the lowest the model gives (about 0.59 there): the draft at that lowest point.
    low = per_token(0.3, RATE, 16, 0.75)
    assert Drafting(low).reported(RATE, 16, 0.75) == pytest.approx(min(
        Drafting(i / 400).reported(RATE, 16, 0.75) for i in range(1, 400)), abs=1e-9)


def test_a_figure_needs_the_setting_it_was_measured_at_and_says_what_it_is() -> None:
    with pytest.raises(ValueError):
        per_token(0.7, RATE)  # accepted / drafted at which draft length?
    acc = Acceptance(0.74, RATE, 16, 0.75, basis="given")
    said = acc.said()
    assert "acceptance rate 0.74" in said and "accepted/drafted at draft max 16, p-min 0.75" in said
    assert f"per-token {acc.per_token:.2f}" in said
    assert Acceptance(0.8).said() == "per-token acceptance 0.80"
    assert acc.to_dict()["per_token"] == round(acc.per_token, 4)
