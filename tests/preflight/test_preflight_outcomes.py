"""Lint outcomes and their exit codes (issue 15, issue 13's pre-flight items), and the one rule
catalog for pre-flight codes (issue 8): a check that did not happen is never OK."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from test_preflight import REPO, _paircheck, _stand_in
from test_preflight_guides import paircheck

from paircheck.catalog import find_rule
from paircheck.findings import Finding
from paircheck.preflight import codes as C
from paircheck.preflight.lint import FAIL, OK, UNCHECKED, LintResult, lint_llama
from paircheck.preflight.llama_command import parse

PACKAGE = Path(__file__).resolve().parents[2] / "paircheck"


def test_every_preflight_code_is_explained() -> None:
    """Every PF/VS/OM/PY code in the source is a declared Rule that `explain` prints."""
    sources = [*(PACKAGE / "preflight").glob("*.py"), PACKAGE / "cli" / "preflight.py"]
    found = {code for path in sources for code in re.findall(r"\b(?:PF|VS|OM|PY)\d{3}\b", path.read_text())}
    declared = {rule.code for rule in C.RULES}
    assert found <= declared, found - declared
    assert len(declared) == len(C.RULES)  # unique
    for rule in C.RULES:
        assert find_rule(rule.code) is rule and rule.title and rule.explanation and rule.fix
    assert C.UNCHECKED <= declared and C.PAIR_UNCHECKED <= C.UNCHECKED


def test_findings_come_from_rules_not_literals() -> None:
    for path in (PACKAGE / "preflight").glob("*.py"):
        if path.name == "codes.py":
            continue
        assert "LintFinding(" not in path.read_text(), path.name


def test_lint_finding_is_the_checks_finding_type() -> None:
    finding = C.emit(C.PF010, C.ERROR, "m", "f", argument="-md")
    assert isinstance(finding, Finding)
    assert (finding.code, finding.name, finding.message, finding.details, finding.fix, finding.status) == (
        "PF010", "draft_without_spec_type", "m", {"argument": "-md"}, "f", "fail")


def test_status_order() -> None:
    result = LintResult("x", [C.emit(C.PF020, C.INFO, "remote")])
    assert result.status() == UNCHECKED and not result.ok
    assert result.status(pair_check=False) == OK  # --no-check asked not to read the models
    result.findings.append(C.emit(C.PF002, C.ERROR, "removed"))
    assert result.status() == FAIL


@pytest.mark.parametrize(("line", "code", "exit_code"), [
    ("python3 -c 'print(1)'", "PF030", 3),
    ("llama-server -m t.gguf", "PF008", 3),
    ("llama-server -hf org/T-GGUF -hfd org/D-GGUF --spec-type draft-simple", "PF020", 3),
    (("vllm serve ./no-target --speculative-config '{\"method\": \"draft_model\", \"model\": \"./no-draft\", "
      "\"num_speculative_tokens\": 4}'"), "VS011", 3),
    ("vllm serve ./no-target", "VS002", 3),
    ("llama-server -m t.gguf -md d.gguf --draft-max 8", "PF002", 1),
])
def test_lint_cmd_outcomes(tmp_path: Path, real_vocab, line: str, code: str, exit_code: int) -> None:  # type: ignore[no-untyped-def]
    shutil.copyfile(real_vocab("qwen2"), tmp_path / "t.gguf")
    done = paircheck(["lint-cmd", "--json", line], tmp_path)
    data = json.loads(done.stdout)
    assert done.returncode == exit_code == data["exit_code"], done.stdout + done.stderr
    assert code in {f["code"] for f in data["findings"]}
    assert data["ok"] is False and data["status"] == ("not-checked" if exit_code == 3 else "not-ok")
    human = paircheck(["lint-cmd", line], tmp_path)
    assert human.returncode == exit_code
    assert not human.stdout.startswith("OK")
    assert human.stdout.startswith("NOT CHECKED" if exit_code == 3 else "NOT OK")


def test_no_check_is_ok_only_for_what_it_skips(tmp_path: Path) -> None:
    clean = _paircheck(["lint-cmd", "--no-check", "llama-server -m t.gguf -md d.gguf --spec-type draft-simple"],
                       tmp_path)
    assert clean.returncode == 0 and "pair not read (--no-check)" in clean.stdout
    unknown = _paircheck(["lint-cmd", "--no-check", "python3 serve.py"], tmp_path)
    assert unknown.returncode == 3 and "paircheck lint-py serve.py" in unknown.stdout


def test_run_unknown_program_is_not_started(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    done = _paircheck(["run", "--", "python3", "-c", f"open({str(marker)!r}, 'w')"], tmp_path)
    assert done.returncode == 3 and not marker.exists()
    assert done.stdout.startswith("NOT CHECKED: python3") and "OK" not in done.stdout.split("\n")[0][:3]
    assert "nothing was checked" in done.stdout
    forced = _paircheck(["run", "--force", "-q", "--", "python3", "-c", f"open({str(marker)!r}, 'w')"], tmp_path)
    assert forced.returncode == 0 and marker.exists()


def test_run_missing_binary_checks_the_pair_then_says_so(tmp_path: Path) -> None:
    # Issue 50: without llama-server here, run skipped the pair check and said only "command
    # not found"; the machine preparing a launch is often not the one that runs it.
    spm = str(REPO / "fixtures" / "examples" / "ggml-vocab-llama-spm.gguf")
    baichuan = str(REPO / "fixtures" / "examples" / "ggml-vocab-baichuan.gguf")
    line = ["llama-server", "-m", spm, "-md", spm, "--spec-type", "draft-simple"]
    nowhere = str(tmp_path / "no-programs")  # a PATH without llama-server, whatever this machine has
    done = _paircheck(["run", "--", *line], tmp_path, PATH=nowhere)
    assert done.returncode == 2 and done.stdout.startswith("OK: llama-server: 1 pair checked"), done.stdout
    assert done.stderr == ("paircheck: error: llama-server: command not found: the check above passes, "
                           "but nothing was started\n"), done.stderr
    # A refused pair keeps its exit code (1), and the missing program is said too.
    refused = _paircheck(["run", "--", *line[:4], baichuan, *line[5:]], tmp_path, PATH=nowhere)
    assert refused.returncode == 1 and refused.stdout.startswith("NOT OK"), refused.stdout
    assert "not starting the command" in refused.stderr and "not on this machine either" in refused.stderr
    legacy = _paircheck(["run", "--", "./main", "-m", "t.gguf"], tmp_path, PATH=nowhere)
    assert legacy.returncode == 1 and "renamed it llama-cli" in legacy.stderr and "PF040" in legacy.stdout
    # A program paircheck reads no launch line of: nothing to check, one line.
    other = _paircheck(["run", "--", "no-such-program-here", "-x"], tmp_path)
    assert other.returncode == 2 and other.stdout == "" and "command not found" in other.stderr


def test_run_starts_a_checked_command(tmp_path: Path, real_vocab) -> None:  # type: ignore[no-untyped-def]
    _stand_in(tmp_path)
    t = str(real_vocab("qwen2"))
    ok = _paircheck(["run", "--", "llama-server", "-m", t, "-md", t, "--spec-type", "draft-simple"], tmp_path)
    assert ok.returncode == 0 and ok.stdout.startswith("OK: llama-server: 1 pair checked") and '"argv"' in ok.stdout
    unchecked = _paircheck(["run", "--", "llama-server", "-m", t], tmp_path)
    assert unchecked.returncode == 3 and '"argv"' not in unchecked.stdout


def test_next_line_has_real_paths_quoted_and_is_indented(tmp_path: Path, real_vocab) -> None:  # type: ignore[no-untyped-def]
    models = tmp_path / "my models" / ("long folder name " * 4).strip()  # so the Next: line wraps
    models.mkdir(parents=True)
    target, draft = models / "target's.gguf", models / "d.gguf"
    shutil.copyfile(real_vocab("llama-spm"), target)
    shutil.copyfile(real_vocab("qwen2"), draft)
    line = f"llama-server -m {shlex.quote(str(target))} -md {shlex.quote(str(draft))} --spec-type draft-simple"
    done = paircheck(["lint-cmd", line], tmp_path)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    at = next(i for i, text in enumerate(lines) if text.lstrip().startswith("Next:"))
    assert lines[at] == "  Next:"
    following = lines[at + 1:]
    assert following and all(text.startswith("    ") for text in following)
    joined = " ".join(text.strip() for text in following)
    assert "TARGET" not in joined and shlex.quote(str(target)) in joined
    # The command is one whole line, never wrapped: it pastes, and the shell reads the
    # path back unchanged.
    command = next(text.strip() for text in following if text.strip().startswith("llama-server"))
    assert shlex.split(command)[:3] == ["llama-server", "-m", str(target)]


def test_removed_flag_fix_is_not_repeated(tmp_path: Path) -> None:
    done = _paircheck(["lint-cmd", "--no-check", "llama-server -m t.gguf --draft-max 8"], tmp_path)
    text = " ".join(done.stdout.split())
    assert text.count("use --spec-draft-n-max or --spec-ngram-mod-n-max") == 1
    removed = lint_llama(parse(["llama-server", "-m", "t.gguf", "--draft-max", "8"], env={}), None)
    pf002 = next(f for f in removed.findings if f.code == "PF002")
    assert pf002.fix is None and pf002.message.endswith("use --spec-draft-n-max or --spec-ngram-mod-n-max")


def test_modelfile_is_called_a_modelfile(tmp_path: Path) -> None:
    (tmp_path / "Modelfile").write_text("FROM llama3.2\n")
    done = _paircheck(["lint-modelfile", str(tmp_path / "Modelfile")], tmp_path)
    assert "ollama create" not in done.stdout and done.stdout.startswith("NOT CHECKED: Modelfile")
    assert done.returncode == 3  # no DRAFT: nothing to check


def test_vllm_v0_flags_are_errors_with_the_config_spelled(tmp_path: Path) -> None:
    line = "vllm serve T --speculative_model D --num-speculative-tokens=5 --port 8000"
    done = _paircheck(["lint-cmd", "--json", "--no-check", line], tmp_path)
    data = json.loads(done.stdout)
    assert done.returncode == 1
    assert [(f["code"], f["status"]) for f in data["findings"]] == [("VS001", "fail"), ("VS001", "fail")]
    spelled = '{"method": "draft_model", "model": "D", "num_speculative_tokens": 5}'
    # --no-check: the rewrite says the pair behind it was not checked (issue 26, point 3).
    assert data["findings"][0]["fix"] == (f"replace the old flags by --speculative-config '{spelled}' "
                                          "(the pair itself was not checked: --no-check)")
    assert shlex.split(data["corrected_command"]) == ["vllm", "serve", "T", "--port", "8000",
                                                      "--speculative-config", spelled]
    again = _paircheck(["lint-cmd", "--no-check", data["corrected_command"]], tmp_path)
    assert again.returncode == 0, again.stdout
