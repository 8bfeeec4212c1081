"""Text that reads like an unfilled template (issue 26, point 5): every message shows the
values it is about, names the program the user ran, and says what it guessed."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "fixtures" / "examples"
SPM = EXAMPLES / "ggml-vocab-llama-spm.gguf"
GUIDE = "./main -m t.gguf --draft-model d.gguf --draft-min-accept-tokens 4"


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "paircheck", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


def words(text: str) -> str:
    return " ".join(text.split())


def test_llamacpp_own_words_carry_the_values(gguf_factory) -> None:  # type: ignore[no-untyped-def]
    target = gguf_factory("t.gguf", add_bos=True)
    draft = gguf_factory("d.gguf", add_bos=False)
    out = words(run(target, draft).stdout)
    # common/speculative.cpp: "... add: %d - %d, id: %d - %d)", with the values it prints.
    assert ("llama.cpp itself would say: 'draft model bos tokens must match target model to use speculation. "
            "add: 1 - 0, id: 1 - 1)', then 'failed to initialize speculative decoding context:") in out
    assert "..." not in out.split("itself would say:", 1)[1].split("Next:", 1)[0]


def test_a_target_that_does_not_load_is_named_by_its_path(gguf_factory) -> None:  # type: ignore[no-untyped-def]
    from gguf import GGUFValueType

    # Read whole, refused by llama.cpp's loader (a BOS id of the wrong type). A target cut
    # inside its metadata is not this case: it cannot be read at all (exit 2, test_cli.py).
    bad = gguf_factory("bad.gguf", raw_kv=[("tokenizer.ggml.bos_token_id", GGUFValueType.INT32, 1)])
    out = words(run(bad, SPM).stdout)
    assert f"llama.cpp itself would say: failed to load model, '{bad}', then: exiting due to model loading error" \
        in out
    assert "'...'" not in out


def test_lint_names_the_program_that_would_fail(tmp_path: Path) -> None:
    done = run("lint-cmd", "llama-cli -m missing.gguf -md d.gguf --spec-type draft-simple", cwd=tmp_path)
    out = words(done.stdout)
    assert "llama-cli would fail to load it" in out and "llama-server" not in out


def test_a_guessed_option_is_said_and_no_pair_check_is_claimed(tmp_path: Path) -> None:
    done = run("lint-cmd", "--no-check", GUIDE, cwd=tmp_path)
    out = done.stdout
    # No pair was checked: the corrected line must not lean on one.
    assert "Corrected command (flags only; the pair was not checked):" in out
    assert "pair check above" not in out
    assert "guessed: --draft-min-accept-tokens -> --spec-draft-n-min" in words(out)
    data = json.loads(run("lint-cmd", "--no-check", "--json", GUIDE, cwd=tmp_path).stdout)
    assert data["corrected_guesses"] == [{"given": "--draft-min-accept-tokens", "used": "--spec-draft-n-min"}]
    assert "--spec-draft-n-min 4" in data["corrected_command"]


def test_an_impossible_length_is_a_corrupt_file_not_a_cut_one(tmp_path: Path) -> None:
    # The header, one key, and that key's length: 2**63 bytes, in a 32-byte file.
    hostile = tmp_path / "hostile.gguf"
    hostile.write_bytes(b"GGUF" + struct.pack("<IQQQ", 3, 0, 1, 2**63))
    assert hostile.stat().st_size == 32
    done = run(hostile, SPM)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert "corrupt file" in done.stderr and "interrupted" not in done.stderr
    assert "string length 9223372036854775808 exceeds maximum 1073741824" in done.stderr
    # A draft really cut inside its keys is still a cut download (loadable fails, exit 1).
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(SPM.read_bytes()[:40])
    out = words(run(SPM, cut).stdout)
    assert "the download was probably interrupted" in out
