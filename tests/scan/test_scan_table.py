"""The scan table at 80 columns (issue 26, point 4): every row can be told apart (names wrap,
never cut from the left), Hub repo names are kept, a column that would only hold "-" is not
shown, and the copies of the target that were left out are named."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_scan import FakeHome, fake_home  # noqa: F401 (the fixture)

from paircheck._format import RenderOptions
from paircheck._format.scan_render import render_scan_text, wrap_name
from paircheck.scan import compare, scan

REPO = Path(__file__).resolve().parents[2]


def _table(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("#  draft"))
    end = lines.index("", start)
    return lines[start:end]


def too_long(text: str, width: int = 80) -> list[str]:
    """Lines past the width, but for a command or a path alone on its line, or followed by its
    label in parentheses (printed whole, to be pasted, whatever its length)."""
    return [line for line in text.splitlines() if len(line) > width and not line.startswith("llama-server")
            and not (line.startswith("  ") and Path(line.strip().split(" (", 1)[0]).exists())]


def _names(table: list[str]) -> list[str]:
    """Each row's name, its wrapped lines joined again."""
    width = table[1].split("  ")[1]  # the dashes under "draft"
    start = table[0].index("draft")
    names: list[str] = []
    for line in table[2:]:
        piece = line[start:start + len(width)].strip()
        if line[:start].strip():
            names.append(piece)
        else:
            names[-1] += piece
    return names


def test_names_that_differ_at_the_end_stay_apart(tmp_path: Path, real_vocab: Callable[[str], Path]) -> None:
    folder = tmp_path / "models" / "bartowski" / "Qwen_Qwen3.5-0.8B-Instruct-GGUF"
    folder.mkdir(parents=True)
    drafts = [folder / f"Qwen_Qwen3.5-0.8B-Instruct-{q}.gguf" for q in ("Q4_K_M", "Q8_0", "IQ4_XS")]
    for d, extra in zip(drafts, (b"", b"\0" * 7, b"\0" * 9), strict=True):
        d.write_bytes(real_vocab("qwen35").read_bytes() + extra)  # distinct sizes: not copies of each other
    target = shutil.copyfile(real_vocab("qwen2"), tmp_path / "models" / "Qwen2.5-7B-Instruct-Q4_K_M.gguf")
    copy = shutil.copyfile(real_vocab("qwen2"), tmp_path / "models" / "Qwen2.5-7B-Instruct-Q5_K_M.gguf")
    result = scan(str(target), [str(tmp_path / "models")], use_default_dirs=False, use_cache=False)
    text = render_scan_text(result, RenderOptions(width=80))
    table = _table(text)
    assert "…" not in text
    assert sorted(_names(table)) == sorted(str(d) for d in drafts)  # whole names, one per row
    assert too_long(text) == []
    # Vocab-only files: no cost, speed or memory to show, so no such columns, and it says why.
    assert table[0].split() == ["#", "draft", "usable", "known"]
    assert "cost, MODELLED, memory: not shown" in " ".join(text.split())
    # The copy of the target is named, not just counted.
    left = text.split("left out, the target itself or a copy of it", 1)[1]
    assert str(copy) in left and str(target) in left


def test_hub_repo_names_are_kept_at_80_columns(fake_home: FakeHome) -> None:  # noqa: F811
    fh = fake_home
    env = {**fh.env, "PYTHONPATH": str(REPO), "COLUMNS": "80"}
    done = subprocess.run([sys.executable, "-m", "paircheck", "scan", str(fh.target), str(fh.given)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    names = _names(_table(done.stdout))
    assert "microsoft/Phi-3-mini-4k-instruct-gguf: Phi-3-mini-4k-instruct-q4.gguf" in names
    assert "Qwen/Qwen2.5-7B-Instruct-GGUF: qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf" in names
    assert len(set(names)) == len(names)
    assert too_long(done.stdout) == [] and "…" not in done.stdout


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_columns_with_values_are_shown(tmp_path: Path, real_vocab: Callable[[str], Path]) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    import fit_shapes

    target = fit_shapes.write_shape(fit_shapes.qwen25("7B"), tmp_path / "t.gguf")
    draft = fit_shapes.write_shape(fit_shapes.qwen25("0.5B"), tmp_path / "d.gguf")
    vocab_only = shutil.copyfile(real_vocab("llama-spm"), tmp_path / "v.gguf")
    text = render_scan_text(compare(str(target), [str(vocab_only), str(draft)]), RenderOptions(width=80))
    header = _table(text)[0].split()
    assert {"fails", "cost", "MODELLED", "memory"} <= set(header)


def test_wrap_name_never_loses_a_character() -> None:
    for text in ("~/models/Qwen_Qwen3.5-0.8B-Instruct-Q4_K_M.gguf", "a" * 50, "org/repo: file-name.gguf", "x"):
        for width in (5, 12, 16, 30, 80):
            lines = wrap_name(text, width).split("\n")
            assert "".join(lines).replace(" ", "") == text.replace(" ", "")
            assert max(len(line) for line in lines) <= width
    assert os.sep == "/"
