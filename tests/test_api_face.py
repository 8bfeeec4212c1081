"""The public face (paircheck.api, issue 49): each command as a function, with the command's
own refusals as InputError (its exit 2), on the shipped example files."""

from __future__ import annotations

from pathlib import Path

import pytest

import paircheck
from paircheck.errors import InputError

EX = Path(__file__).resolve().parents[1] / "fixtures" / "examples"
SPM, PHI3, BAICHUAN = (str(EX / n) for n in ("ggml-vocab-llama-spm.gguf", "ggml-vocab-phi-3.gguf",
                                             "ggml-vocab-baichuan.gguf"))


def test_check_gives_the_report_the_command_renders() -> None:
    refused = paircheck.check(SPM, BAICHUAN)
    assert not refused.compatible and refused.first_failure is not None
    assert refused.first_failure.code.startswith("LC") and refused.engine == "llama.cpp"
    # the methods without a draft model take the target alone
    assert paircheck.check(SPM, None, method="ngram-simple").draftless


def test_check_every_engine_puts_llama_cpp_first() -> None:
    reports = paircheck.check_every_engine(SPM, PHI3).reports
    assert reports[0].engine == "llama.cpp" and len({r.engine for r in reports}) == len(reports) > 3


def test_pairs_filters_and_refuses_a_missing_file() -> None:
    found = paircheck.pairs(family="qwen2.5")
    assert found.entries and all(e.family.startswith("qwen2.5") for e in found.entries) and found.query is None
    with pytest.raises(InputError, match="no such file"):
        paircheck.pairs("./models/not-here.gguf")
    with pytest.raises(InputError, match="matches no family"):
        paircheck.pairs(family="no-such-family")


def test_explain_and_rules_are_the_catalog() -> None:
    assert paircheck.explain("lc003").code == "LC003" and paircheck.explain("bos").code == "LC003"
    assert [r.code for r in paircheck.rules()][:2] == ["LC001", "LC002"]
    with pytest.raises(InputError, match="no such rule"):
        paircheck.explain("XX999")


def test_estimate_refuses_a_draft_length_below_one() -> None:
    with pytest.raises(InputError, match="at least 1"):
        paircheck.estimate(str(EX / "qwen2.5-14b-instruct.header.gguf"), str(EX / "qwen2.5-0.5b-instruct.header.gguf"),
                           draft_max=0)


def test_lint_command_reads_a_launch_line() -> None:
    result = paircheck.lint_command(["llama-server", "-m", SPM, "-md", BAICHUAN])
    assert result.launcher == "llama-server" and result.reports and not result.reports[0].compatible


def test_scan_drafts_and_fit_pair_are_the_commands_results() -> None:
    found = paircheck.scan_drafts(SPM, [str(EX)], default_folders=False)
    assert str(EX) in found.searched and {c.location for c in found.candidates} >= {PHI3, BAICHUAN}
    assert not next(c for c in found.candidates if c.location == BAICHUAN).usable  # refused: LC005
    memory = paircheck.fit_pair(str(EX / "qwen2.5-14b-instruct.header.gguf"),
                                str(EX / "qwen2.5-0.5b-instruct.header.gguf"), ctx=4096)
    assert memory.draft is not None and memory.target.n_ctx == 4096
    assert memory.target.weights_device > 10 * memory.draft.weights_device > 0
