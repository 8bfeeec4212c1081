"""Tables measured in terminal columns, not characters (issue 50, item 11): DeepSeek's
'<｜begin▁of▁sentence｜>' (full-width bars, two columns each) threw the check table's columns
out of line and past 80; `--engine all` was 81 columns; scan's "why" repeated one line for
every candidate refused for the same reason."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path


def _columns(text: str) -> int:
    # Independent of paircheck's own measure: East Asian Wide and Fullwidth take two columns.
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _run(*args: str | Path) -> str:
    done = subprocess.run([sys.executable, "-m", "paircheck", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "80"}, timeout=120, check=False)
    assert done.returncode in (0, 1, 4), done.stderr
    return done.stdout


def _prose_and_tables(out: str) -> list[str]:
    return [line for line in out.splitlines()
            if not line.lstrip().startswith(("llama-server ", "paircheck ", "hf "))]  # commands: never wrapped


def test_the_check_table_keeps_its_columns_with_wide_token_texts(real_vocab: Callable[[str], Path]) -> None:
    out = _run(real_vocab("deepseek-llm"), real_vocab("deepseek-coder"))
    lines = out.splitlines()
    dashes = next(i for i, line in enumerate(lines) if line.startswith("------------  "))
    draft_at = [m.start() for m in re.finditer(r"-+", lines[dashes])][2]  # the draft column's first column
    table = lines[dashes + 1:lines.index("", dashes)]
    bos = next(line for line in table if line.startswith("BOS"))
    draft_cell = "32013 '<｜begin▁of▁sentence｜>',"
    assert draft_cell in bos, table
    assert _columns(bos[:bos.index(draft_cell)]) == draft_at, table  # in line, counted in columns
    assert all(_columns(line) <= 80 for line in _prose_and_tables(out))


def test_engine_all_fits_80_columns(real_vocab: Callable[[str], Path]) -> None:
    out = _run("--engine", "all", real_vocab("qwen2"), real_vocab("llama-bpe"))
    wide = [line for line in _prose_and_tables(out) if _columns(line) > 80]
    assert wide == [], wide


def test_scan_groups_candidates_refused_for_the_same_reason(real_vocab: Callable[[str], Path],
                                                            tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    for i in range(4):
        shutil.copy(real_vocab("llama-spm"), models / f"spm-{i}.gguf")
    out = _run("scan", "--no-default-dirs", "--no-cache", real_vocab("qwen2"), models)
    why = out[out.index("why:"):].splitlines()
    assert why[1].startswith("1-4  LC002: vocab types differ"), why
    assert not any(line.lstrip().startswith(("1  ", "2  ", "3  ", "4  ")) for line in why[1:])
