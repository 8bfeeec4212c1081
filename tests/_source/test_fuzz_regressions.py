"""Inputs the fuzzing campaign (fuzz/) found, replayed through the same targets, and a
sample of the campaign's prefix-truncation sweep over real vocab files."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "fuzz"))

import prefixes  # noqa: E402
import targets  # noqa: E402

REGRESSIONS = Path(__file__).resolve().parents[1] / "fuzz_regressions"
CASES = sorted(p for p in REGRESSIONS.glob("*/*") if p.is_file() and p.name != "README.md")


def test_every_regression_folder_names_a_target() -> None:
    assert CASES, "no regression inputs checked in"
    assert {p.parent.name for p in CASES} <= set(targets.TARGETS)


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_crash_input_is_now_one_input_error_or_a_result(case: Path) -> None:
    targets.TARGETS[case.parent.name](case.read_bytes())  # raises on any other exception


def test_non_utf8_registry_is_one_line_naming_the_byte(tmp_path: Path) -> None:
    from paircheck._registry.load import load_registry
    from paircheck.errors import InputError

    bad = tmp_path / "r.toml"
    bad.write_bytes((REGRESSIONS / "registry_toml" / "not-utf8.toml").read_bytes())
    with pytest.raises(InputError, match=r"not UTF-8 at byte 16"):
        load_registry(bad)


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
@pytest.mark.parametrize("name", ["bert-bge", "llama-spm", "phi-3", "deepseek-coder", "baichuan"])
def test_prefix_truncation_sample_names_the_offset(real_vocab, name: str) -> None:
    data = real_vocab(name).read_bytes()
    from paircheck._source.gguf_reader import read_metadata

    meta, _ = read_metadata(targets.BytesSource(data))
    lengths = prefixes.prefix_lengths(data, meta.kv_end, head=64)
    sample = sorted(set(range(0, 64)) | set(random.Random(name).sample(lengths, 40)) | {meta.kv_end - 1})
    problems = {n: p for n in sample if (p := prefixes.check_prefix(data, n)) is not None}
    assert not problems, problems


def test_tokenizers_panic_is_one_line_on_stderr(tmp_path: Path) -> None:
    import json
    import os
    import subprocess

    crash = REGRESSIONS / "tokenizer_json" / "rust-panic-slice-range.json"
    (tmp_path / "tokenizer.json").write_bytes(crash.read_bytes())
    (tmp_path / "config.json").write_text(json.dumps(targets.SMALL_CONFIG))
    result = subprocess.run([sys.executable, "-m", "paircheck", str(tmp_path), str(tmp_path)],
                            capture_output=True, text=True, env={**os.environ, "RUST_BACKTRACE": "1"})
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "panicked" not in result.stderr, result.stderr
