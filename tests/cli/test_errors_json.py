"""Bad input with ``--json`` (issue 26, point 9), and ``fit`` on a file without weights
(point 2): one clear line on stderr and exit 2, and with ``--json`` an error object on
stdout, so ``paircheck --json ... | python -m json.tool`` never meets an empty stream."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import fit_shapes
import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "fixtures" / "examples"
SPM = EXAMPLES / "ggml-vocab-llama-spm.gguf"
PHI3 = EXAMPLES / "ggml-vocab-phi-3.gguf"
ERROR_KEYS = {"schema_version", "kind", "paircheck_version", "code", "input", "message", "exit_code"}


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("PAIRCHECK_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "paircheck", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


def error_of(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("paircheck: error: ") and done.stderr.count("\n") == 1, done.stderr
    data = json.loads(done.stdout)  # what `| python -m json.tool` would parse
    assert set(data) == ERROR_KEYS and data["kind"] == "error" and data["exit_code"] == 2
    assert data["schema_version"] == 1 and isinstance(data["message"], str) and data["message"]
    # The stderr line says the same thing.
    assert str(data["message"]) in done.stderr
    return data


@pytest.mark.parametrize(
    ("args", "code", "where"),
    [
        (["--json", "missing.gguf", SPM], "input", "missing.gguf"),
        (["check", "--json", SPM, "nope/"], "input", None),
        (["--json", "--engine", "nope", SPM, PHI3], "usage", "--engine"),
        (["lint-cmd", "--json", "llama-server -m 'unbalanced"], "input", "command"),
        (["fit", "--json", "-c", "0", SPM], "input", "--ctx"),
        (["scan", "--json", "--no-default-dirs", "missing.gguf"], "input", "missing.gguf"),
        (["pairs", "--format", "json", "--for", "./missing.gguf"], "input", "./missing.gguf"),
        (["estimate", "--json", SPM, PHI3], "input", None),
    ],
)
def test_an_input_error_is_a_json_object_on_stdout(tmp_path: Path, args: list[str | Path], code: str,
                                                   where: str | None) -> None:
    data = error_of(run(*args, cwd=tmp_path))
    assert data["code"] == code
    if where is not None:
        assert data["input"] == where


def test_without_json_stdout_stays_empty(tmp_path: Path) -> None:
    done = run("missing.gguf", SPM, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1


def test_words_after_the_separator_belong_to_the_launch_command(tmp_path: Path) -> None:
    # `--json` after `--` is llama-server's business; paircheck's error stays a text line.
    done = run("run", "--", "no-such-program-here", "--json", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == "" and "command not found" in done.stderr


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_fit_refuses_a_file_without_tensors(tmp_path: Path) -> None:
    # A vocab-only GGUF holds no weights: no memory figure can be true for it.
    done = run("fit", "-c", "4096", "--vram", "24GiB", PHI3)
    assert done.returncode == 2 and done.stdout == "" and "no tensor infos" in done.stderr, done.stdout
    assert "fits" not in done.stderr
    data = error_of(run("fit", "--json", "-c", "4096", "--vram", "24GiB", PHI3))
    assert data["input"] == str(PHI3) and "vocab-only" in str(data["message"])
    # As a draft beside a real target too: the draft is named.
    target = fit_shapes.write("qwen2.5-0.5b", tmp_path)
    data = error_of(run("fit", "--json", "-c", "4096", target, PHI3))
    assert data["input"] == str(PHI3)
    # And the pair check's memory line refuses it the same way, rather than sizing nothing.
    data = error_of(run("--json", "--ctx", "4096", SPM, PHI3))
    assert "no tensor infos" in str(data["message"])
