"""A refused pair's `Next:` offers a draft first (issue 50, item 3): the draft the registry
documents for the target and the scan that finds one among the user's models, then the
draftless n-gram methods, which were all it offered."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "examples"


def _check(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "paircheck", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "80"}, timeout=120, check=False)


def test_a_documented_draft_and_the_scan_come_before_the_ngram_line(
    real_vocab: Callable[[str], Path], tmp_path: Path
) -> None:
    target = shutil.copy(real_vocab("qwen2"), tmp_path / "Qwen2.5-14B-Instruct-Q4_K_M.gguf")
    draft = shutil.copy(real_vocab("llama-bpe"), tmp_path / "Llama-3.2-1B-Instruct-Q4_K_M.gguf")
    doc = json.loads(_check("--json", target, draft).stdout)
    steps = doc["next_steps"]
    assert doc["compatible"] is False
    assert steps[0].startswith("Use a draft documented for this target: Qwen2.5-0.5B-Instruct;"), steps
    assert steps[1] == f"paircheck scan {target}"
    ngram = next(i for i, s in enumerate(steps) if s.startswith("No draft needed"))
    assert ngram > 1 and steps[ngram + 1].startswith(f"llama-server -m {target} --spec-type ngram-mod")
    text = _check(target, draft).stdout
    assert text.index(f"  paircheck scan {target}") < text.index("--spec-type ngram-mod")


def test_without_a_documented_draft_the_scan_is_still_offered() -> None:
    spm, baichuan = EXAMPLES / "ggml-vocab-llama-spm.gguf", EXAMPLES / "ggml-vocab-baichuan.gguf"
    steps = json.loads(_check("--json", spm, baichuan).stdout)["next_steps"]
    assert steps[:2] == ["Use a draft of the target's own tokenizer; to rank the models you have as drafts for it:",
                         f"paircheck scan {spm}"], steps
    # Never for a method whose draft is a head: ranking the models at hand does not find one.
    head = json.loads(_check("--json", "--method", "draft-eagle3", spm, baichuan).stdout)["next_steps"]
    assert not any(s.startswith("paircheck scan") for s in head), head
