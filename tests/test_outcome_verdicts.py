"""The verdict order of a Report and the exit codes of outcome.py, in process.

tests/cli/test_outcome.py checks the same table through real `paircheck` processes on real
pairs; these pin each branch on reports built from findings, so a swapped level or a
changed order fails here with a readable cause (issue 37: the order of unknown and aborts,
and 4 over 5 for `--engine all --fail-on warning`, were unpinned).
"""

from __future__ import annotations

from pathlib import Path

import ggufgen
import pytest

from paircheck import outcome, pipeline
from paircheck._engine import llamacpp
from paircheck.constants import ABORTS, ACCEPTED, REFUSED, UNKNOWN
from paircheck.findings import FAIL, INFO, PASS, RUNS, SKIP, STOPS, WARN, Finding, Report, Rule
from paircheck.model import ModelDescription

EXAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "examples" / "ggml-vocab-llama-spm.gguf"

RULE = Rule("TX001", "thing", "A thing", "Why it matters.", "Do this.", effect="runs_useless_draft")


@pytest.fixture(scope="module")
def desc() -> ModelDescription:
    return pipeline.describe(str(EXAMPLE))


def passed() -> Finding:
    return RULE.result(PASS, "fine")


def failed() -> Finding:
    return RULE.result(FAIL, "broken")


def undecided(message: str = "could not read the thing") -> Finding:
    return RULE.result(SKIP, message)


def aborts() -> Finding:
    return Finding("LW101", "vocab_tail", WARN, "dies later", {"aborts": True})


def warns(code: str = "LW102", harmless: bool = False) -> Finding:
    return Finding(code, "w", WARN, "costs you", {"harmless": True} if harmless else {})


def report(desc: ModelDescription, checks: list[Finding], warnings: list[Finding] | None = None,
           method: str = "draft") -> Report:
    return Report("llama.cpp", method, desc, desc, checks, warnings or [])


def test_a_rule_attaches_its_fix_only_to_a_failure() -> None:
    assert failed().fix == "Do this." and failed().effect == "runs_useless_draft"
    assert passed().fix is None and undecided().fix is None
    assert (RULE.code, RULE.name) == (failed().code, failed().name)
    w = RULE.warn("careful", n=3)
    assert (w.code, w.name, w.status, w.message, w.fix, w.details) == ("TX001", "thing", WARN, "careful", "Do this.",
                                                                       {"n": 3})
    assert Rule("TX002", "n", "t", "e", "").warn("careful").fix is None  # no empty fix shown
    n = RULE.note("for your information", fix="maybe this", k=1)
    assert (n.code, n.name, n.status, n.fix, n.details, n.message) == ("TX001", "thing", INFO, "maybe this", {"k": 1},
                                                                       "for your information")
    assert RULE.note("plain").fix is None


def test_the_verdict_order_refused_then_aborts_then_unknown(desc: ModelDescription) -> None:
    assert report(desc, [passed()]).verdict == ACCEPTED
    assert report(desc, [passed(), undecided()]).verdict == UNKNOWN
    # a predicted abort outranks an unknown: it is what paircheck knows (Report.verdict)
    assert report(desc, [passed(), undecided()], [aborts()]).verdict == ABORTS
    assert report(desc, [failed(), undecided()], [aborts()]).verdict == REFUSED
    # a warning that does not predict an abort changes nothing
    assert report(desc, [passed()], [warns()]).verdict == ACCEPTED
    # "aborts" must be literally true, not merely present
    assert report(desc, [passed()], [Finding("X", "x", WARN, "m", {"aborts": "no"})]).verdict == ACCEPTED
    # a check skipped because it is not used for this method is not an unknown
    assert report(desc, [passed(), undecided("not used by this method")]).verdict == ACCEPTED


def test_the_outcome_follows_the_first_failure_then_aborts_then_unknown(desc: ModelDescription) -> None:
    other = Rule("TX003", "o", "t", "e", "f").result(FAIL, "also broken")  # effect STOPS
    r = report(desc, [passed(), failed(), other], [aborts()])
    assert r.first_failure is r.checks[1] and r.failures == [r.checks[1], other]
    assert r.outcome == "runs_useless_draft"
    assert report(desc, [other, failed()]).outcome == STOPS
    assert report(desc, [passed(), undecided()], [aborts()]).outcome == ABORTS
    assert report(desc, [passed(), undecided()]).outcome is None
    assert report(desc, [passed()]).outcome == RUNS
    assert report(desc, [passed()]).first_failure is None and report(desc, [passed()]).compatible
    assert not report(desc, [failed()]).compatible


def test_finding_looks_in_checks_then_warnings_then_registry(desc: ModelDescription) -> None:
    r = report(desc, [passed()], [warns("LW102")])
    note = Finding("RG001", "registry", INFO, "documented")
    r.registry.append(note)
    assert r.finding("TX001") is r.checks[0]
    assert r.finding("LW102") is r.warnings[0]
    assert r.finding("RG001") is note
    assert r.finding("NOPE") is None


def test_a_draftless_method_has_no_draft(desc: ModelDescription) -> None:
    assert report(desc, [passed()], method="ngram-simple").draftless
    assert not report(desc, [passed()], method="draft").draftless


@pytest.mark.parametrize(("level", "expected"), [
    ("refused", outcome.EXIT_OK), ("crash", outcome.EXIT_ABORTS),
    ("slow", outcome.EXIT_ABORTS), ("warning", outcome.EXIT_ABORTS)])
def test_a_predicted_abort_fails_from_crash_up(desc: ModelDescription, level: str, expected: int) -> None:
    assert outcome.report_exit(report(desc, [passed()], [aborts()]), level) == expected


def test_each_level_of_report_exit(desc: ModelDescription) -> None:
    refused = report(desc, [failed()])
    unknown = report(desc, [passed(), undecided()])
    slow = report(desc, [passed()], [warns("PW001")])
    hurting = report(desc, [passed()], [warns("LW102")])
    harmless = report(desc, [passed()], [warns("LW101", harmless=True)])
    table = {
        "refused": (1, 0, 0, 0, 0),
        "crash": (1, 0, 0, 0, 0),
        "slow": (1, 0, 5, 0, 0),
        "warning": (1, 3, 5, 5, 0),
    }
    for level, codes in table.items():
        got = tuple(outcome.report_exit(r, level) for r in (refused, unknown, slow, hurting, harmless))
        assert got == codes, level
    assert outcome.report_exit(slow) == outcome.EXIT_OK  # the default level is crash
    assert outcome.DEFAULT_FAIL_ON == outcome.CRASH
    assert outcome.slow_warnings(slow) == ["PW001"] and outcome.slow_warnings(hurting) == []
    assert outcome.hurting_warnings(harmless) == [] and outcome.hurting_warnings(hurting) == ["LW102"]
    with pytest.raises(ValueError, match=r"^unknown --fail-on level 'loud' \(known: refused, crash, slow, warning\)$"):
        outcome.report_exit(unknown, "loud")


def test_engine_all_an_abort_wins_over_a_warning(desc: ModelDescription) -> None:
    # `--engine all --fail-on warning`: one engine predicts an abort (4), another only
    # warns (5); the most telling reason is the abort
    aborting = report(desc, [passed()], [aborts()])
    warning = report(desc, [passed()], [warns("LW102")])
    refused = report(desc, [failed()])
    assert outcome.matrix_exit([warning, aborting], "warning") == outcome.EXIT_ABORTS
    assert outcome.matrix_exit([aborting, warning], "warning") == outcome.EXIT_ABORTS
    assert outcome.matrix_exit([refused, warning], "warning") == outcome.EXIT_WARNED
    assert outcome.matrix_exit([refused, refused], "warning") == outcome.EXIT_REFUSED
    # one engine accepting outright is enough, whichever comes first
    accepted = report(desc, [passed()])
    assert outcome.matrix_exit([aborting, accepted], "warning") == outcome.EXIT_OK
    assert outcome.matrix_exit([accepted, refused]) == outcome.EXIT_OK
    # an unknown that passes the level is not an acceptance
    unknown = report(desc, [passed(), undecided()])
    assert outcome.matrix_exit([unknown, refused]) == outcome.EXIT_REFUSED
    assert outcome.matrix_exit([warning, refused]) == outcome.EXIT_OK  # crash: the warning passes
    assert outcome.accepted_outright(accepted) and not outcome.accepted_outright(unknown)


def _vocab(tmp_path: Path, name: str, tokens: list[str]) -> ModelDescription:
    return pipeline.describe(str(ggufgen.write_vocab_gguf(tmp_path / name, tokens=tokens)))


@pytest.mark.parametrize("extra", [127, 128])
def test_the_vocab_tail_is_judged_up_to_exactly_128_extra_ids(tmp_path: Path, extra: int) -> None:
    tokens = ggufgen.default_tokens("llama", 200)
    target = _vocab(tmp_path, "t.gguf", tokens)
    draft = _vocab(tmp_path, "d.gguf", [*tokens, *(f"word{i}" for i in range(extra))])
    assert llamacpp.check_vocab_size(target.vocab, draft.vocab).status == PASS
    tail = llamacpp.warn_vocab_tail(target.vocab, draft.vocab)
    assert tail is not None and tail.details["aborts"] is True
    assert (tail.details["first_id"], tail.details["last_id"], tail.details["real_tokens"]) == (200, 199 + extra, extra)
    # either way round: the target's own extra ids cannot be mirrored by the draft
    swapped = llamacpp.warn_vocab_tail(draft.vocab, target.vocab)
    assert swapped is not None and swapped.details["larger"] == "target" and swapped.details["aborts"] is True


def test_129_extra_ids_fail_at_load_and_have_no_tail_warning(tmp_path: Path) -> None:
    tokens = ggufgen.default_tokens("llama", 200)
    target = _vocab(tmp_path, "t.gguf", tokens)
    draft = _vocab(tmp_path, "d.gguf", [*tokens, *(f"word{i}" for i in range(129))])
    assert llamacpp.check_vocab_size(target.vocab, draft.vocab).status == FAIL
    assert llamacpp.warn_vocab_tail(target.vocab, draft.vocab) is None


def test_a_padding_tail_is_harmless_and_does_not_abort(tmp_path: Path) -> None:
    tokens = ggufgen.default_tokens("llama", 200)
    target = _vocab(tmp_path, "t.gguf", tokens)
    draft = _vocab(tmp_path, "d.gguf", [*tokens, "[PAD200]", "[PAD201]"])
    tail = llamacpp.warn_vocab_tail(target.vocab, draft.vocab)
    assert tail is not None and tail.details["aborts"] is False and tail.details["harmless"] is True
    assert "abort" not in tail.details
    assert llamacpp.warn_vocab_tail(target.vocab, target.vocab) is None
