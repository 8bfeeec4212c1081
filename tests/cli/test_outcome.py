"""A verdict never says "compatible" for a pair paircheck knows will crash, and a launch
script can choose what stops it (issue 26, point 1).

llama-spm + phi-3 (llama.cpp's real vocab files, shipped in fixtures/examples/) is accepted
by llama.cpp at load, but phi-3 has 64 ids past llama-spm's 32000, 11 of them real tokens:
llama-server aborts the first time the draft proposes one. That is its own verdict
(ABORTS AT RUN TIME, JSON "aborts", exit 4), and `--fail-on` / `--strict` pick which
predicted problems fail a check, a `run` and a `lint-cmd`.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import ggufgen
import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "fixtures" / "examples"
SPM = EXAMPLES / "ggml-vocab-llama-spm.gguf"
PHI3 = EXAMPLES / "ggml-vocab-phi-3.gguf"
BAICHUAN = EXAMPLES / "ggml-vocab-baichuan.gguf"


def run(*args: str | Path, env: dict[str, str] | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "COLUMNS": "80", **(env or {})}
    environ.pop("NO_COLOR", None)
    return subprocess.run([sys.executable, "-m", "paircheck", *map(str, args)], capture_output=True, text=True,
                          env=environ, cwd=cwd, timeout=120)


@pytest.fixture
def padded_pair(tmp_path: Path) -> tuple[Path, Path]:
    """A draft whose only extra ids are padding: a warning (LW101), not a predicted abort."""
    tokens = ggufgen.default_tokens("llama", 100)
    target = ggufgen.write_vocab_gguf(tmp_path / "target.gguf", tokens=tokens)
    draft = ggufgen.write_vocab_gguf(tmp_path / "draft.gguf", tokens=[*tokens, "[PAD100]", "[PAD101]"])
    return target, draft


def test_a_pair_that_will_abort_is_not_called_compatible() -> None:
    done = run(SPM, PHI3)
    assert done.returncode == 4, done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("ABORTS AT RUN TIME for llama.cpp draft-simple"), first
    assert "COMPATIBLE" not in done.stdout.split("\n\n")[0]
    words = " ".join(done.stdout.split())  # as read, whatever the wrapping
    assert "11 real tokens the target lacks" in words and "(LW101)" in words
    # Never the launch line of a server predicted to die.
    assert not any(line.strip().startswith("llama-server") and " -md " in line for line in done.stdout.splitlines())
    assert "abort LW101 vocab_tail" in done.stdout


def test_the_json_has_its_own_value_and_the_exit_code() -> None:
    data = json.loads(run("--json", SPM, PHI3).stdout)
    assert data["schema_version"] == 3
    assert data["verdict"] == "aborts" and data["first_abort"] == "vocab_tail"
    assert data["compatible"] is True  # accepted at load: schema 1's meaning is kept
    assert data["exit_code"] == 4 and data["fail_on"] == "crash"
    tail = next(w for w in data["warnings"] if w["code"] == "LW101")
    assert tail["details"]["aborts"] is True and tail["details"]["real_tokens"] == 11
    assert not any(step.startswith("llama-server -m") and "-md" in step for step in data["next_steps"])


def test_padding_only_is_a_warning_not_an_abort(padded_pair: tuple[Path, Path]) -> None:
    target, draft = padded_pair
    done = run(target, draft)
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("COMPATIBLE for llama.cpp draft-simple (1 warning)")
    data = json.loads(run("--json", target, draft).stdout)
    assert data["verdict"] == "accepted" and data["first_abort"] is None
    assert next(w for w in data["warnings"] if w["code"] == "LW101")["details"]["aborts"] is False


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_fail_on_levels(padded_pair: tuple[Path, Path]) -> None:
    target, draft = padded_pair
    assert run("-q", "--fail-on", "refused", SPM, PHI3).returncode == 0  # the script accepts the risk
    assert run("-q", "--fail-on", "crash", SPM, PHI3).returncode == 4
    assert run("-q", SPM, BAICHUAN).returncode == 1  # refused stays 1 at every level
    assert run("-q", "--fail-on", "refused", SPM, BAICHUAN).returncode == 1
    # A warning that cannot hurt (a tail of padding, never sampled): 0 at every level (issue 34).
    assert run("-q", target, draft).returncode == 0
    assert run("-q", "--fail-on", "slow", target, draft).returncode == 0
    assert run("-q", "--fail-on", "warning", target, draft).returncode == 0
    assert run("-q", "--strict", target, draft).returncode == 0
    # The same file twice: every draft token costs a full target pass (PW001, "slow").
    assert run("-q", target, target).returncode == 0
    assert run("-q", "--fail-on", "slow", target, target).returncode == 5
    assert run("-q", "--strict", target, target).returncode == 5
    data = json.loads(run("--json", "--strict", target, target).stdout)
    assert data["fail_on"] == "warning" and data["exit_code"] == 5


def test_strict_and_another_level_is_a_usage_error() -> None:
    done = run("--strict", "--fail-on", "crash", SPM, PHI3)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--strict" in done.stderr


def test_every_engine_row_says_abort() -> None:
    done = run("--engine", "all", SPM, PHI3)
    row = next(line for line in done.stdout.splitlines() if line.startswith("llama.cpp"))
    assert row.split()[1] == "abort", row
    data = json.loads(run("--engine", "all", "--json", SPM, PHI3).stdout)
    assert data["aborts_for"] == ["llama.cpp"] and "llama.cpp" not in data["compatible_with"]


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_lint_cmd_follows_the_same_rule() -> None:
    line = f"llama-server -m {SPM} -md {PHI3} --spec-type draft-simple"
    done = run("lint-cmd", line)
    assert done.returncode == 4, done.stdout
    assert done.stdout.startswith("ABORTS AT RUN TIME: llama-server: draft-simple:")
    data = json.loads(run("lint-cmd", "--json", line).stdout)
    assert data["status"] == "aborts" and data["exit_code"] == 4 and data["pairs"][0]["verdict"] == "aborts"
    assert run("lint-cmd", "-q", "--fail-on", "refused", line).returncode == 0


def _fake_server(folder: Path) -> Path:
    """A stand-in llama-server on PATH that records that it was started."""
    marker = folder / "started"
    script = folder / "llama-server"
    script.write_text(f"#!/bin/sh\ntouch {marker}\nexit 0\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return marker


def test_run_does_not_start_a_server_predicted_to_abort(tmp_path: Path) -> None:
    marker = _fake_server(tmp_path)
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    args = ["run", "--", "llama-server", "-m", SPM, "-md", PHI3, "--spec-type", "draft-simple"]
    done = run(*args, env=env)
    assert done.returncode == 4 and not marker.exists(), done.stdout + done.stderr
    assert "not starting the command" in done.stderr
    assert run("run", "--dry-run", *args[1:], env=env).returncode == 4 and not marker.exists()
    # The script says it accepts the risk: the command is started (exec: its exit code is ours).
    started = run("run", "--fail-on", "refused", *args[1:], env=env)
    assert started.returncode == 0 and marker.exists(), started.stdout + started.stderr
