"""The command line as a user runs it: real processes, exit codes, stdout/stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "fixtures" / "examples"
SPM = EXAMPLES / "ggml-vocab-llama-spm.gguf"
PHI3 = EXAMPLES / "ggml-vocab-phi-3.gguf"
BAICHUAN = EXAMPLES / "ggml-vocab-baichuan.gguf"


def run(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PAIRCHECK_DEBUG"}
    return subprocess.run(
        [sys.executable, "-m", "paircheck", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def test_readme_example_pairs() -> None:
    # Accepted by llama.cpp at load; phi-3's 11 real tokens past 32000 abort llama-server at run time.
    ok = run(SPM, PHI3)
    assert ok.returncode == 4, ok.stderr
    assert ok.stdout.startswith("ABORTS AT RUN TIME for llama.cpp draft-simple")
    assert "32000..32063" in ok.stdout  # the draft's tail the target lacks
    bad = run(SPM, BAICHUAN)
    assert bad.returncode == 1
    first = bad.stdout.splitlines()[0]
    assert first.startswith("NOT COMPATIBLE for llama.cpp draft-simple: different tokenizers")
    verdict = " ".join(bad.stdout.split("  rules:")[0].split())  # the verdict paragraph, unwrapped
    assert "LC005 vocab_size" in verdict and "32000" in verdict and "64000" in verdict
    assert "token 5 differs" in bad.stdout
    # The README says what paircheck says llama.cpp does with the second pair (issue 50: it
    # said "refuses the second pair outright" while the server runs on without speculation).
    intro = " ".join((REPO / "README.md").read_text(encoding="utf-8").split("```sh")[0].split())
    assert "refuses the second pair as a draft: llama-server logs that speculative decoding could not start and " \
           "runs on without it" in intro and "outright" not in intro
    assert "the server then runs without speculation" in " ".join(bad.stdout.split())
    # Prose fits 100 columns when piped; a command to paste is never wrapped, whatever its paths.
    prose = [line for line in bad.stdout.splitlines() if not line.lstrip().startswith("llama-server")]
    assert max(len(line) for line in prose) <= 100


def test_check_subcommand_and_default_are_the_same() -> None:
    assert run("check", SPM, BAICHUAN).stdout == run(SPM, BAICHUAN).stdout


def test_json_shape() -> None:
    result = run("--json", SPM, BAICHUAN)
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["schema_version"] == 3
    assert (data["engine"], data["method"], data["compatible"]) == ("llama.cpp", "draft-simple", False)
    assert data["first_failure"] == "vocab_size"
    assert [c["name"] for c in data["checks"]] == [
        "loadable", "loadable", "vocab_type", "bos", "eos", "vocab_size", "token_text",
    ]
    assert {c["status"] for c in data["checks"]} <= {"pass", "fail", "skip"}
    assert data["target"]["vocab"]["n_tokens"] == 32000 and data["draft"]["vocab"]["n_tokens"] == 64000
    assert data["target"]["path"].endswith("ggml-vocab-llama-spm.gguf")
    size = next(c for c in data["checks"] if c["name"] == "vocab_size")
    assert size["details"]["difference"] == 32000 and size["code"] == "LC005"
    assert isinstance(data["warnings"], list)


def test_json_warnings_for_a_compatible_pair() -> None:
    data = json.loads(run("--json", SPM, PHI3).stdout)
    assert data["compatible"] is True and data["first_failure"] is None
    tail = [w for w in data["warnings"] if w["name"] == "vocab_tail"]
    assert tail and tail[0]["details"]["first_id"] == 32000 and tail[0]["code"] == "LW101"


def test_quiet_prints_nothing() -> None:
    result = run("--quiet", SPM, BAICHUAN)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", "")
    assert run("-q", SPM, PHI3).returncode == 4
    assert run("-q", "--fail-on", "refused", SPM, PHI3).returncode == 0


def test_explain() -> None:
    listing = run("explain")
    assert listing.returncode == 0 and "LC005" in listing.stdout and "vocab_tail" in listing.stdout
    one = run("explain", "LC006")
    assert one.returncode == 0 and "token_text" in one.stdout and "Fix:" in one.stdout
    assert run("explain", "bos").stdout.startswith("LC003 bos")
    assert run("explain", "NOPE").returncode == 2


def _assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("paircheck: error: ")
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_bad_inputs_exit_2_with_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    text = tmp_path / "notes.gguf"
    text.write_text("hello world, not a model\n")
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(SPM.read_bytes()[:5000])
    _assert_one_line_error(run(tmp_path / "missing.gguf", SPM), "missing.gguf", "no such file")
    _assert_one_line_error(run(SPM, tmp_path), "directory")
    _assert_one_line_error(run(empty, SPM), "empty.gguf", "empty file")
    _assert_one_line_error(run(SPM, text), "notes.gguf", "not a GGUF")
    # Cut inside the keys: described, loadable fails (exit 1); cut inside the counts: unreadable.
    cut_kv = run(SPM, truncated)
    assert cut_kv.returncode == 1 and "ends inside its metadata at 5,000 bytes" in " ".join(cut_kv.stdout.split())
    truncated.write_bytes(SPM.read_bytes()[:20])
    _assert_one_line_error(run(SPM, truncated), "truncated.gguf", "truncated")
    _assert_one_line_error(run(SPM), "Missing argument")
    _assert_one_line_error(run("--engine", "nope", SPM, PHI3), "not an engine paircheck has rules for")
    _assert_one_line_error(run("--override-kv", "garbage", SPM, PHI3), "KEY=TYPE:VALUE")


def test_a_target_cut_inside_its_keys_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # As a draft a cut file is a finding (LC001, exit 1, above); as the target nothing at all
    # can be judged: the check, --engine all, candidates mode and scan each say the one line
    # scan --help promises, never a refusal table or the same LC001 on every candidate row.
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(SPM.read_bytes()[:5000])
    said = "cut.gguf: the file ends inside its metadata at 5,000 bytes"
    _assert_one_line_error(run(cut, PHI3), said)
    _assert_one_line_error(run("--engine", "all", cut, PHI3), said)
    _assert_one_line_error(run(cut, PHI3, BAICHUAN), said)
    _assert_one_line_error(run("scan", "--no-default-dirs", "--no-cache", cut, EXAMPLES), said)
    as_json = run("--json", cut, PHI3)
    assert as_json.returncode == 2 and json.loads(as_json.stdout)["code"] == "input"


def test_a_file_llamacpp_refuses_is_exit_1_not_2(gguf_factory) -> None:
    from gguf import GGUFValueType

    bad = gguf_factory(raw_kv=[("tokenizer.ggml.bos_token_id", GGUFValueType.INT32, 1)])
    result = run(gguf_factory(), bad)
    assert result.returncode == 1
    assert "llama.cpp refuses to load it" in result.stdout.splitlines()[0]
    assert "wrong type i32 but expected type u32" in result.stdout


def test_split_model_shard_uses_first(tmp_path: Path) -> None:
    first = tmp_path / "model-00001-of-00003.gguf"
    first.write_bytes(SPM.read_bytes())
    third = tmp_path / "model-00003-of-00003.gguf"
    third.write_bytes(b"tensor data only")
    result = run("--json", third, SPM)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["target"]["path"].endswith("model-00001-of-00003.gguf")
    (first).unlink()
    _assert_one_line_error(run(third, SPM), "model-00001-of-00003.gguf")


def test_version_and_help() -> None:
    assert run("--version").stdout.startswith("paircheck, version")
    assert "TARGET DRAFT" in run("--help").stdout
