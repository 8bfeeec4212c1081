"""A header-only GGUF (every tensor info, no tensor data) is sized as the whole file would
be, and the shipped example pair (fixtures/examples/*.header.gguf) is what its script
writes (issue 50, item 4: `fit` and `estimate --gpu` can be tried from the README)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from paircheck.errors import InputError
from paircheck.fit import DraftOptions, FitOptions, fit, with_tensor_infos
from paircheck.fit.ggml_types import tensor_bytes
from paircheck.pipeline import describe

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "fixtures" / "examples"
TARGET = EXAMPLES / "qwen2.5-14b-instruct.header.gguf"
DRAFT = EXAMPLES / "qwen2.5-0.5b-instruct.header.gguf"


def _sized(path: Path):
    return with_tensor_infos(describe(str(path))).metadata


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "paircheck", *map(str, args)], check=False,
                          capture_output=True, text=True, timeout=120)


def _whole(tmp_path: Path) -> Path:
    """The shipped draft as the whole file it describes: the same bytes, then its data (a hole)."""
    whole = tmp_path / "whole.gguf"
    whole.write_bytes(DRAFT.read_bytes())
    last = describe(str(DRAFT)).metadata.tensors[-1]  # the header ends where the data begins
    end = DRAFT.stat().st_size + last.offset + tensor_bytes(last.ggml_type, last.shape)
    with open(whole, "r+b") as out:
        out.truncate(end)
    return whole


@pytest.mark.slow  # writes two 150k-token vocabularies: about 1.5 s here
def test_the_shipped_pair_is_what_the_script_writes(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "fixtures"))
    import header_only_examples

    for path in header_only_examples.write_pair(tmp_path):
        assert path.read_bytes() == (EXAMPLES / path.name).read_bytes(), path.name


def test_header_only_file_is_sized_as_the_whole_file(tmp_path: Path) -> None:
    whole = _whole(tmp_path)
    assert DRAFT.stat().st_size < 4 << 20 < whole.stat().st_size
    a, b = _sized(whole), _sized(DRAFT)
    assert a.tensors == b.tensors and len(b.tensors) == 2 + 24 * 12
    options = FitOptions(ctx=4096)
    assert fit(a, a, options, DraftOptions(), None, ("t", "d")) == fit(b, b, options, DraftOptions(), None, ("t", "d"))


def test_the_pair_check_names_a_header_only_file_for_what_it_is() -> None:
    out = _run(TARGET, DRAFT)
    said = " ".join(out.stdout.split())
    assert out.returncode == 1 and "target: a header-only file (its tensor infos, no weights)" in said, said
    assert "interrupted" not in said and "Resume the download" not in said


def test_a_file_cut_anywhere_else_is_still_refused(tmp_path: Path) -> None:
    # One byte short of the data section, or one byte of data: a cut download, not a header.
    whole = _whole(tmp_path)
    for delta in (-1, 1):
        cut = tmp_path / f"cut{delta}.gguf"
        with open(whole, "rb") as handle:
            cut.write_bytes(handle.read(DRAFT.stat().st_size + delta))
        with pytest.raises(InputError, match="cannot be sized"):
            _sized(cut)
        error = describe(str(cut)).metadata.tensor_error
        assert error is not None and error.incomplete and not error.header_only
    out = _run("fit", cut, DRAFT, "-c", "4096")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "cannot be sized" in out.stderr, out.stderr


def test_fit_and_estimate_gpu_run_on_the_shipped_pair() -> None:
    out = _run("fit", TARGET, DRAFT, "-c", "8192")
    assert out.returncode == 0 and out.stdout.startswith("memory: target + draft at -c 8192 need"), out.stderr
    out = _run("estimate", "--gpu", "RTX 4090", TARGET, DRAFT)
    # A prediction on the named device, whichever verdict it reaches (a draft helps, or not).
    first = out.stdout.split("\n", 1)[0]
    assert out.returncode == 0 and "PREDICTED" in first and "on GeForce RTX 4090" in first, out.stderr
