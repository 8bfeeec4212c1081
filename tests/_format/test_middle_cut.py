"""Long file names in the check's table are cut in the middle with an ellipsis, on one line
(issue 34, item 13: at COLUMNS=80 'qwen2.5-0.5b-instruct-q4_k_m.ggu' / 'f'); the full names
stay in JSON and in the paths of commands."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from paircheck._format.text_base import middle_cut

REPO = Path(__file__).resolve().parents[2]
VOCAB = REPO / "fixtures" / "examples" / "ggml-vocab-llama-spm.gguf"


def test_middle_cut() -> None:
    assert middle_cut("short.gguf", 32) == "short.gguf"
    cut = middle_cut("qwen2.5-0.5b-instruct-q4_k_m.gguf", 32)
    assert len(cut) == 32 and cut.startswith("qwen2.5-0.5b-in") and cut.endswith("q4_k_m.gguf") and "…" in cut


def test_the_check_table_keeps_a_file_name_on_one_line(tmp_path: Path) -> None:
    target = shutil.copyfile(VOCAB, tmp_path / "qwen2.5-14b-instruct-q4_k_m.gguf")
    draft = shutil.copyfile(VOCAB, tmp_path / "qwen2.5-0.5b-instruct-q4_k_m.gguf")
    env = {**os.environ, "COLUMNS": "80"}
    out = subprocess.run([sys.executable, "-m", "paircheck", str(target), str(draft)], capture_output=True,
                         text=True, env=env, timeout=60, check=False).stdout
    lines = out.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("file "))
    assert "…" in lines[row] and lines[row].rstrip().endswith("q4_k_m.gguf"), out
    assert lines[row + 1].startswith("architecture"), out  # nothing wrapped onto a second line
    assert f"-md {draft}" in out  # the command keeps the whole path
    data = json.loads(subprocess.run([sys.executable, "-m", "paircheck", "--json", str(target), str(draft)],
                                     capture_output=True, text=True, env=env, timeout=60, check=False).stdout)
    assert data["draft"]["location"] == str(draft)


def test_a_draft_fastest_at_two_workloads_keeps_what_tells_it_apart() -> None:
    """probe's workload table names the fastest draft per row: the same draft in two rows is one
    name, not two that share all but their last letters (printed '…gguf' before)."""
    from paircheck._format.probe_text import short_names

    q8, q4 = "SmolLM2-135M-Instruct.Q8_0.from-Q4_1.gguf", "SmolLM2-135M-Instruct.Q4_1.gguf"
    shown = short_names([q8, q8, "none", "none"], 15)
    assert shown[0] == shown[1] and shown[0].startswith("Smol") and shown[0].endswith("gguf"), shown
    shown = short_names([q8, q8, q4, "none"], 15)
    assert shown[0] == shown[1] != shown[2] and "Q8" in shown[0] and "Q4_1" in shown[2], shown
