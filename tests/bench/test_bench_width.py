"""Width (issue 26, point 6): ``bench compare`` and ``estimate`` follow COLUMNS like every
other command, so their output fits 80 columns (the comparison table was ~150 wide)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import fit_shapes
import pytest
from test_bench_compare import BASE, DRAFT, _result

REPO = Path(__file__).resolve().parents[2]


def run(*args: str | Path, columns: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run([sys.executable, "-m", "paircheck", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=120)


def widest(text: str) -> int:
    """The widest line, but for a line that is one URL: wrapping cannot cut it (text_base.wrap
    keeps words whole, so that a link stays one link)."""
    return max(len(line) for line in text.splitlines() if not _one_url(line))


def _one_url(line: str) -> bool:
    word = line.strip().strip("()")
    return " " not in word and "://" in word


def test_bench_compare_fits_80_columns(tmp_path: Path) -> None:
    # Long labels and a differing output: the cases that made the table wide.
    base = {**BASE, "label": "qwen2.5-7b-instruct-alone"}
    draft = _result("qwen2.5-7b-with-0.5b-draft", [dict(r, content="hello World") if r["prompt_id"] == "a" else r
                                                   for r in DRAFT["requests"]])
    (tmp_path / "b.json").write_text(json.dumps(base))
    (tmp_path / "d.json").write_text(json.dumps(draft))
    done = run("bench", "compare", tmp_path / "b.json", tmp_path / "d.json", columns=80)
    assert done.returncode == 0, done.stderr
    assert widest(done.stdout) <= 80, done.stdout
    out = " ".join(done.stdout.split())
    assert "instruct-" in done.stdout and "with-0.5b-" in done.stdout  # long labels wrap in their header
    assert "outputs differ at char 6" in out and "all prompts" in out
    # The markdown table is for documents, not terminals: one row per prompt, every column.
    md = run("bench", "compare", "--format", "markdown", tmp_path / "b.json", tmp_path / "d.json", columns=80)
    assert md.stdout.count("| all prompts") == 1


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_estimate_follows_columns(tmp_path: Path) -> None:
    target, draft = fit_shapes.write("qwen2.5-7b", tmp_path), fit_shapes.write("qwen2.5-0.5b", tmp_path)
    # without a device: no table, the prose wraps at 80
    bare = run("estimate", target, draft, "--per-token-acceptance", "0.7", columns=80)
    assert bare.returncode == 0 and bare.stdout.startswith("NO SPEED PREDICTED"), bare.stdout
    assert widest(bare.stdout) <= 80, bare.stdout
    # on a device: the tables and the prose follow the columns
    narrow = run("estimate", target, draft, "--per-token-acceptance", "0.7", "--gpu", "RTX 3090", columns=80)
    assert narrow.returncode == 0, narrow.stderr
    assert widest(narrow.stdout) <= 80, narrow.stdout
    assert narrow.stdout.startswith(("PREDICTED on GeForce RTX 3090", "RUN WITHOUT A DRAFT on GeForce RTX 3090"))
    wide = run("estimate", target, draft, "--per-token-acceptance", "0.7", "--gpu", "RTX 3090", columns=200)
    assert len(wide.stdout.splitlines()) < len(narrow.stdout.splitlines())


def test_a_one_point_bench_runs_workload_line_follows_columns() -> None:
    from dataclasses import replace

    from paircheck._format.text_bench_grid import workload_line
    from paircheck.bench.compare import compare

    comp = replace(compare(BASE, DRAFT), workload={"context_tokens": 32768, "n_predict": 512, "parallel": 4})
    narrow = workload_line(comp, 4 * 33792, 80)
    assert widest(narrow) <= 80 and len(narrow.splitlines()) == 2, narrow
    assert " ".join(narrow.split()) == " ".join(workload_line(comp, 4 * 33792, 200).split())
    assert "--parallel 4 --ctx-size 135168 (33,792 tokens per slot)" in " ".join(narrow.split())
