"""The draft-simple replay on hand-made traces, one rule of the pinned llama.cpp per test.

The differential test (test_probe_llamacpp.py) checks the replay against the real
llama-server; these pin each rule on a case small enough to count by hand, so a wrong
rule fails here with a readable cause.
"""

from __future__ import annotations

import pytest

from paircheck.probe.replay import Counts, PromptTrace, TailTooShort, expected_sampled, greedy_agreement, replay
from paircheck.probe.run import ProbeSettings
from paircheck.probe.summary import DEFAULT_P_MIN, KindSummary, Row, accept_probabilities, summarize
from paircheck.speed.model import Costs

T = (10, 11, 12, 13, 14, 15, 16, 17)  # the target's greedy tokens; T[0] comes from the prompt pass


def trace(top: list[int], conf: list[float] | None = None, tails: dict[int, tuple[float, ...]] | None = None,
          n_predict: int | None = None, target: tuple[int, ...] = T, tail_limit: float = 1.0) -> PromptTrace:
    return PromptTrace(target, tuple(top), tuple(conf or [0.9] * len(target)), tails or {},
                       n_predict or len(target), prompt_tokens=5, tail_limit=tail_limit)


def test_a_perfect_draft_is_capped_by_n_predict_minus_one() -> None:
    # get_n_draft_max: min(k, n_predict - n_decoded - 1). With 8 tokens and k=16: one pass
    # after the prompt's token drafts 6 (8 - 1 - 1), all accepted, plus the pass's own token.
    c = replay(trace(list(T)), draft_max=16)
    # one batch of 7 (the sampled token and 6 drafted); the draft decoded its last sampled token
    # and 5 of its 6 drafts (it stops at n_max without decoding the 6th)
    assert c == Counts(tokens=8, passes=2, drafted=6, accepted=6, verifications=1, batches=(0, 0, 0, 0, 0, 0, 1),
                      draft_decodes=6)
    assert c.accepted_per_pass == 3.0


def test_k1_with_a_perfect_draft_doubles_the_tokens_per_pass() -> None:
    # each pass: 1 drafted + accepted, plus its own; the last token (n_predict reached)
    # comes from a plain step because no room is left to draft.
    c = replay(trace(list(T)), draft_max=1)
    # g=1: draft 1 -> g=3; g=3 -> 5; g=5 -> 7; g=7: room 8-7-1=0 -> plain step -> 8
    assert c == Counts(tokens=8, passes=5, drafted=3, accepted=3, verifications=3, batches=(1, 3), draft_decodes=3)


def test_a_mismatch_stops_acceptance_but_the_draft_keeps_drafting() -> None:
    top = list(T)
    top[2] = 99  # the draft is wrong at position 2 only
    c = replay(trace(top), draft_max=4)
    # g=1: drafts pos 1..4 = [11, 99, x, x]: accepted 1 (11), then the target's 12 -> g=3
    # g=3: drafts pos 3..6 = [13, 14, 15, 16] (room 8-3-1=4): all accepted -> g=8
    assert c == Counts(tokens=8, passes=3, drafted=8, accepted=5, verifications=2, batches=(0, 0, 0, 0, 2),
                      draft_decodes=8)


def test_p_min_stops_drafting_before_a_low_confidence_token() -> None:
    conf = [0.9] * 8
    conf[3] = 0.4
    c = replay(trace(list(T), conf), draft_max=4, p_min=0.5)
    # g=1: pos1 0.9, pos2 0.9, pos3 0.4 < 0.5 -> drafts [11, 12]: both accepted -> g=4
    # g=4: pos4..6 (room 8-4-1=3) all 0.9 -> 3 accepted -> g=8
    # a p-min stop costs one decode more than the tokens kept: the token below p-min was
    # sampled from a decode (draft_simple::draft) and dropped
    assert c == Counts(tokens=8, passes=3, drafted=5, accepted=5, verifications=2, batches=(0, 0, 1, 1),
                      draft_decodes=3 + 3)


def test_a_draft_cut_to_nothing_is_a_plain_step() -> None:
    conf = [0.1] * 8
    c = replay(trace(list(T), conf), draft_max=4, p_min=0.5)
    # g = 1..6 try to draft (one decode each, nothing kept), g = 7 has no room to try
    assert c == Counts(tokens=8, passes=8, drafted=0, accepted=0, verifications=0, batches=(7,), draft_decodes=6)


def test_after_a_mismatch_p_min_reads_the_drafts_own_tail() -> None:
    top = list(T)
    top[1] = 99
    # after proposing 99 at position 1 the draft continues on its own text: 0.8, then 0.3
    c = replay(trace(top, tails={1: (0.8, 0.3)}, tail_limit=0.5), draft_max=8, p_min=0.5)
    # g=1: 99 (0.9) then tail 0.8, then 0.3 < 0.5 stops: drafted 2, accepted 0 -> g=2
    # the rest of the path is right: g=2 drafts pos 2..7 (room 8-2-1=5) all accepted -> g=8
    assert c == Counts(tokens=8, passes=3, drafted=2 + 5, accepted=5, verifications=2, batches=(0, 0, 1, 0, 0, 1),
                      draft_decodes=3 + 5)
    # at p_min 0 the tail's confidences do not matter: the draft always fills k
    assert replay(trace(top), draft_max=8).drafted == 6 + 5


def test_a_tail_recorded_with_a_higher_limit_cannot_answer_a_lower_p_min() -> None:
    top = list(T)
    top[1] = 99
    recorded = trace(top, tails={1: (0.95, 0.85)}, tail_limit=0.9)  # stopped at 0.85 < 0.9
    assert replay(recorded, draft_max=8, p_min=0.9).drafted == 2 + 5
    with pytest.raises(TailTooShort):
        replay(recorded, draft_max=8, p_min=0.5)  # 0.85 >= 0.5: drafting would go on, unrecorded


def test_n_min_drops_a_short_draft() -> None:
    conf = [0.9] * 8
    conf[2] = 0.1
    # g=1: only pos 1 passes p_min -> 1 token < n_min 2 -> dropped: a plain step
    c = replay(trace(list(T), conf), draft_max=4, p_min=0.5, n_min=2)
    # g=2: pos 2 is 0.1 -> nothing drafted: a plain step; g=3: pos 3..6 (room 8-3-1=4) -> g=8
    # the dropped draft still cost its decodes (2 at g=1, 1 at g=2)
    assert c == Counts(tokens=8, passes=4, drafted=4, accepted=4, verifications=1, batches=(2, 0, 0, 0, 1),
                      draft_decodes=2 + 1 + 4)
    # without n_min the single token at g=1 is drafted and accepted
    assert replay(trace(list(T), conf), draft_max=4, p_min=0.5).drafted == 5


def test_an_accepted_end_of_generation_ends_the_pass() -> None:
    # the target stops at its end-of-generation token (position 3) well before n_predict
    target = (10, 11, 12, 2)
    c = replay(trace([0, 11, 12, 2], target=target, n_predict=16), draft_max=8)
    # g=1: room 16-1-1=14 -> draft 8: 11, 12, 2 on the path then 5 more past the end;
    # 11 and 12 accepted, then the EOG matches but drafted tokens follow it: it ends the
    # pass as the target's own token (common_sampler_sample_and_accept_n), not as accepted.
    assert c == Counts(tokens=4, passes=2, drafted=8, accepted=2, verifications=1,
                      batches=(0, 0, 0, 0, 0, 0, 0, 0, 1), draft_decodes=8)


def test_a_trailing_end_of_generation_is_accepted_and_the_pass_still_counts() -> None:
    # common_sampler_sample_and_accept_n (pinned common/sampling.cpp): "a trailing EOG is still
    # accepted" when it is the last drafted token; process_token then stops the generation
    # before the pass's own sampled token. Passes: the prompt pass and this verification = 2,
    # though tokens - accepted = 1.
    c = replay(trace([0, 2], target=(10, 2), n_predict=16), draft_max=1)
    assert (c.tokens, c.accepted, c.verifications, c.passes) == (2, 1, 1, 2)
    assert c.batches == (0, 1) and c.draft_decodes == 1


def test_the_context_limit_caps_drafting() -> None:
    # get_n_draft_max's n_ctx - n_tokens - 2, where slot.prompt holds the prompt and every
    # generated token but the last sampled one: 9 - (5 + 1 - 1) - 2 = 2 at the first pass
    c = replay(trace(list(T)), draft_max=8, n_ctx=9)
    # g=1: 2 drafted, both accepted -> g=4; g=4: 9 - (5 + 3) - 2 < 0: plain steps to the end
    assert c == Counts(tokens=8, passes=6, drafted=2, accepted=2, verifications=1, batches=(4, 0, 1),
                      draft_decodes=2)
    # one more slot of context: 3 at the first pass (-> g=5), then 10 - (5 + 4) - 2 < 0
    assert replay(trace(list(T)), draft_max=8, n_ctx=10) == Counts(
        tokens=8, passes=5, drafted=3, accepted=3, verifications=1, batches=(3, 0, 0, 1), draft_decodes=3)
    # a context this large caps nothing: n_predict does (8 - 1 - 1 = 6)
    assert replay(trace(list(T)), draft_max=8, n_ctx=100) == replay(trace(list(T)), draft_max=8)
    assert replay(trace(list(T)), draft_max=8, n_ctx=100).drafted == 6


def test_greedy_agreement_counts_every_drafted_position() -> None:
    top = list(T)
    top[2] = top[5] = 99
    assert greedy_agreement(trace(top)) == (5, 7)


def test_expected_sampled_equals_the_greedy_replay_when_acceptance_is_certain() -> None:
    top = list(T)
    top[4] = 99
    tr = trace(top)
    probs = [1.0 if top[j] == T[j] else 0.0 for j in range(len(T))]
    for k in (1, 2, 3, 5, 8):
        exact = replay(tr, k)
        passes, drafted, accepted, batches, decodes = expected_sampled(tr, probs, k)
        assert (passes, drafted, accepted, decodes) == pytest.approx(
            (exact.passes, exact.drafted, exact.accepted, exact.draft_decodes))
        assert batches == pytest.approx(exact.batches)


def test_expected_sampled_weighs_each_outcome_by_its_probability() -> None:
    # 3 tokens: the prompt's, then one pass of k=1 (room 3-1-1=1) accepting with p=0.25,
    # then (if rejected) a plain step... with p: accepted -> g=3 done (2 passes); rejected -> g=2, then
    # room 3-2-1=0 -> a plain step (3 passes).
    tr = trace([0, 11, 12], target=(10, 11, 12), n_predict=3)
    passes, drafted, accepted, batches, decodes = expected_sampled(tr, [0.0, 0.25, 1.0], 1)
    assert drafted == pytest.approx(1.0)
    assert accepted == pytest.approx(0.25)
    assert passes == pytest.approx(0.25 * 2 + 0.75 * 3)
    # always one batch of 2 (the verification); a plain batch of 1 only when rejected
    assert batches == pytest.approx((0.75, 1.0)) and decodes == pytest.approx(1.0)


def test_accept_probabilities_read_the_targets_candidates() -> None:
    tr = trace([0, 11, 50, 13, 14, 15, 16, 17])
    cands = [{}, {11: 0.7, 12: 0.3}, {12: 0.9}, {13: 1.0}, {}, {}, {}, {}]
    probs = accept_probabilities(tr, cands)
    assert probs[1] == 0.7 and probs[2] == 0.0 and probs[3] == 1.0 and probs[4] == 0.0


def test_summary_picks_the_draft_length_with_the_best_predicted_speed() -> None:
    top = list(T)
    top[3] = 99
    costs = Costs(10.0, 2.0, ((1, 4.0), (17, 20.0)), ((1, 1.0), (17, 3.0)), 1.5, 0.25)
    s = summarize("d.gguf", [("p", "code")], [trace(top)], [0.0], costs)
    # every row priced by hand from its replayed work: the target alone (8 - 1) decodes, the pair
    # each batch (target, draft re-evaluation, round costs) and each draft decode
    def by_hand(r: Row) -> float:
        pair = r.draft_decodes * 2.0 + sum(n * (10.0 + (4.0 + (b - 1) - 4.0) + (1.0 + (b - 1) / 8) + 1.5 + 0.25 * b)
                                          for b, n in enumerate(r.batches, 1))
        return 7 * 10.0 / pair
    speeds = {r.draft_max: by_hand(r) for r in s.rows}
    assert {r.draft_max: r.predicted_speedup for r in s.rows} == pytest.approx(speeds)
    assert s.best_draft_max == max(speeds, key=lambda k: (round(speeds[k], 6), -k))
    assert s.predicted_speedup == pytest.approx(speeds[s.best_draft_max])
    assert s.rows[0].predicted_tokens_per_s == pytest.approx(8 * 1000 / (7 * 10.0 / speeds[1]))
    assert s.acceptance_rate == pytest.approx(6 / 7)
    free = summarize("d.gguf", [("p", "code")], [trace(top)], [0.0], None)
    assert free.best_draft_max is None and free.predicted_speedup is None and free.recommended is None


def test_a_draft_predicted_slower_is_never_recommended() -> None:
    # a draft as dear as the target: no setting gains, so the summary recommends none
    costs = Costs(10.0, 10.0, ((1, 10.0), (17, 30.0)), ((1, 10.0), (17, 30.0)))
    s = summarize("d.gguf", [("p", "code")], [trace(list(T))], [0.0], costs)
    assert s.best is not None and s.best.predicted_speedup is not None and s.best.predicted_speedup < 1.0
    assert s.recommended is None


COSTS = Costs(10.0, 2.0, ((1, 4.0), (17, 20.0)), ((1, 1.0), (17, 3.0)), 1.5, 0.25)


def by_hand(r: Row) -> float:
    """A row's speedup priced by hand from its replayed work at COSTS (as in the test above)."""
    pair = r.draft_decodes * 2.0 + sum(n * (10.0 + (b - 1) + (1.0 + (b - 1) / 8) + 1.5 + 0.25 * b)
                                      for b, n in enumerate(r.batches, 1))
    return (r.tokens - r.generations) * 10.0 / pair


def test_on_a_tie_the_shorter_draft_and_the_lower_p_min_win() -> None:
    # 3 tokens: the one pass after the prompt's has room for 1 draft (3 - 1 - 1), so every
    # draft length and both p-mins replay the same work: a 16-way tie at every p-min
    tr = trace([0, 11, 12], target=(10, 11, 12), n_predict=3)
    s = summarize("d.gguf", [("p", "code")], [tr], [0.0, 0.5], COSTS)
    assert len({r.predicted_speedup for r in s.rows}) == 1
    assert s.best_draft_max == 1  # "on a tie the shorter draft": less work for the same gain
    assert s.best is not None and (s.best.draft_max, s.best.p_min) == (1, 0.0)
    assert s.kinds[0].best_draft_max == 1


def test_a_faster_longer_draft_beats_a_shorter_one() -> None:
    # the opposite of a tie: a perfect draft gains with every token it may draft
    s = summarize("d.gguf", [("p", "code")], [trace(list(T))], [0.0], COSTS)
    speeds = {r.draft_max: by_hand(r) for r in s.rows}
    assert speeds[6] > speeds[1] and s.best_draft_max == max(speeds, key=lambda k: (round(speeds[k], 6), -k)) == 6


def test_each_kind_of_prompt_is_summarized_on_its_own_prompts() -> None:
    good = trace(list(T))  # the draft agrees everywhere
    top = [99] * len(T)
    top[1] = 11  # one agreement in 7
    bad = trace(top)
    prompts = [("a", "code"), ("b", "chat"), ("c", "code")]
    s = summarize("d.gguf", prompts, [good, bad, good], [0.0], COSTS)
    assert [k.kind for k in s.kinds] == ["code", "chat"]  # in the order the kinds first appear
    code, chat = s.kinds
    assert isinstance(code, KindSummary) and code.acceptance_rate == 1.0
    assert chat.acceptance_rate == pytest.approx(1 / 7)
    assert s.acceptance_rate == pytest.approx(15 / 21) and (s.agreed, s.compared) == (15, 21)
    # the perfect draft's best length (priced by hand: 6, the n_predict cap) and, there, its
    # accepted tokens per pass: the prompt pass and one verification of 6
    assert code.best_draft_max == 6 and code.accepted_per_pass == pytest.approx(6 / 2)
    # the chat prompts' own best, from their rows alone
    chat_rows = summarize("d.gguf", [("b", "chat")], [bad], [0.0], COSTS).rows
    speeds = {r.draft_max: by_hand(r) for r in chat_rows}
    best = max(speeds, key=lambda k: (round(speeds[k], 6), -k))
    assert chat.best_draft_max == best
    assert chat.accepted_per_pass == pytest.approx(next(r for r in chat_rows if r.draft_max == best).accepted_per_pass)
    assert [p.acceptance_rate for p in s.prompts] == pytest.approx([1.0, 1 / 7, 1.0])
    assert [p.prompt_id for p in s.prompts] == ["a", "b", "c"] and s.prompts[1].kind == "chat"
    # without costs no length is best, and the kind reads k=1: 3 accepted in 5 passes (k=1 above)
    free = summarize("d.gguf", prompts, [good, bad, good], [0.0], None)
    assert free.kinds[0].best_draft_max is None and free.kinds[0].accepted_per_pass == pytest.approx(0.6)


def test_the_library_defaults_replay_llamacpps_p_min_and_the_clis() -> None:
    # llama.cpp's default --spec-draft-p-min is 0 (common/common.h); the library's default
    # settings replay it first, and the same values as `paircheck probe --p-min`'s default
    from paircheck.cli.probe import probe as probe_command

    assert DEFAULT_P_MIN[0] == 0.0 and ProbeSettings().p_min == DEFAULT_P_MIN == (0.0, 0.5, 0.75, 0.9)
    cli_default = next(p.default for p in probe_command.params if p.name == "p_min")
    assert tuple(float(x) for x in str(cli_default).split(",")) == DEFAULT_P_MIN
    # the tails are recorded down to the lowest positive p-min
    assert ProbeSettings().tail_limit == 0.5 and ProbeSettings(p_min=(0.0,)).tail_limit > 1.0
    # replay's own default is llama.cpp's: p-min 0 drafts through any confidence
    low = trace(list(T), [0.01] * 8)
    assert replay(low, draft_max=4) == replay(low, draft_max=4, p_min=0.0) and replay(low, draft_max=4).drafted > 0
