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


Q14, Q05 = str(EX / "qwen2.5-14b-instruct.header.gguf"), str(EX / "qwen2.5-0.5b-instruct.header.gguf")


def test_every_command_of_the_command_line_is_a_function_of_the_face() -> None:
    # what the CLI calls (tests/test_architecture.py keeps it from calling anything else)
    for name in ("check", "check_every_engine", "compare_drafts", "scan_drafts", "fit_memory", "estimate",
                 "probe_drafts", "bench_server", "bench_compare", "bench_run", "lint_words", "lint_python",
                 "lint_modelfile", "lint_files", "plan_run", "pairs", "gpus", "explain", "rules"):
        assert callable(getattr(paircheck, name)), name


def test_estimate_takes_the_rate_llama_server_prints_at_its_draft_length() -> None:
    at_rate = paircheck.estimate(Q14, Q05, acceptance_rate=0.74, draft_max=5, gpu="RTX 4090")
    predicted = at_rate.predicted
    assert predicted is not None and predicted.acceptance_basis == "given" and "4090" in predicted.hardware.name
    assert predicted.target_tokens_per_s > 0 and predicted.reported is not None
    with pytest.raises(InputError, match="needs --draft-max"):
        paircheck.estimate(Q14, Q05, acceptance_rate=0.74)
    with pytest.raises(InputError, match="not several"):
        paircheck.estimate(Q14, Q05, acceptance=0.7, acceptance_rate=0.7, draft_max=3)
    with pytest.raises(InputError, match="--backend"):
        paircheck.estimate(Q14, Q05, gpu="RTX 4090", backend="opencl")


def test_fit_memory_against_a_named_budget_and_a_gpu_row() -> None:
    tight = paircheck.fit_memory(Q14, Q05, paircheck.FitOptions(ctx=16384), vram="12GiB")
    roomy = paircheck.fit_memory(Q14, Q05, paircheck.FitOptions(ctx=16384), gpu="RTX 4090")
    assert tight.fits is False and roomy.fits is True and roomy.device
    with pytest.raises(InputError, match="--ctx"):
        paircheck.fit_memory(Q14, None, paircheck.FitOptions(ctx=0))


def test_bench_compare_reads_two_results_and_refuses_one_compared_with_nothing(tmp_path: Path) -> None:
    comp = paircheck.bench_compare(str(EX / "bench" / "baseline.json"), str(EX / "bench" / "draft.json"))
    assert comp.equal_work is not None and comp.speedup is not None
    empty = tmp_path / "empty.json"
    empty.write_text('{"kind": "paircheck-bench", "requests": []}')
    with pytest.raises(InputError):
        paircheck.bench_compare(str(EX / "bench" / "baseline.json"), str(empty))


def test_lint_and_run_plan_check_the_pair_before_anything_starts(tmp_path: Path) -> None:
    compose = tmp_path / "compose.yaml"
    compose.write_text(f"services:\n  llm:\n    command: llama-server -m {SPM} -md {BAICHUAN}\n")
    found = paircheck.lint_files([str(tmp_path)])
    assert len(found.commands) == 1 and paircheck.lint_exit(found) == 1
    plan = paircheck.plan_run(["llama-server", "-m", SPM, "-md", BAICHUAN], dry_run=True)
    assert not plan.ok and plan.exit_code == 1 and not plan.missing
    with pytest.raises(InputError, match="command not found"):
        paircheck.plan_run(["no-such-program-here", "--flag"])


def test_check_adds_memory_and_every_engine_reads_each_side_once() -> None:
    report = paircheck.check(Q14, Q05, ctx=16384, vram="12GiB")
    assert report.memory is not None and report.memory.fits is False
    every = paircheck.check_every_engine(SPM, PHI3, fingerprint=False, registry=False)
    assert every.reports[0].engine == "llama.cpp" and not every.reports[0].fingerprints


def test_gpus_picks_a_row_and_refuses_an_unknown_name() -> None:
    assert [g.name for g in paircheck.gpus("4090").rows] == ["GeForce RTX 4090"]
    with pytest.raises(InputError, match="NAME"):
        paircheck.gpus("RTX 9999")


def test_no_name_of_the_face_is_also_a_module_of_the_package() -> None:
    # once `paircheck.probe` (the package) is imported, `paircheck.probe` is that module and the
    # face's function of the same name cannot be reached (it failed only when run after a test
    # that imported the package): the face names its functions apart
    package = Path(paircheck.__file__).parent
    modules = {p.stem for p in package.iterdir() if p.suffix == ".py" or (p.is_dir() and any(p.glob("*.py")))}
    assert "probe" in modules and not set(paircheck.FACE) & modules
