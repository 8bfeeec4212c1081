"""What the registry's notes claim is no more than what was matched (issue 34, item 14): a
vocabulary recognised by its prefix fingerprint only "shares the vocabulary prefix" of the
documented model (the qwen2 file is an older vocabulary than Qwen2.5's, with the same first
151,552 ids), and a documented draft with no engine named is offered without an empty list."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path


def _check_json(*args: str | Path) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-m", "paircheck", "--json", *map(str, args)], capture_output=True,
                          text=True, timeout=120, check=False)
    data: dict[str, object] = json.loads(done.stdout)
    return data


def test_a_prefix_match_says_prefix(real_vocab: Callable[[str], Path]) -> None:
    data = _check_json(real_vocab("qwen2"), real_vocab("qwen35"))
    notes = [f["message"] for f in data["registry"] if f["code"] == "RG001"]  # type: ignore[attr-defined]
    assert notes, data["registry"]
    assert all("shares the vocabulary prefix (ids below 151,552) of" in m for m in notes), notes
    assert not any("the vocabulary of Qwen2.5-14B" in m for m in notes), notes


def test_a_draft_without_engines_has_no_empty_list(gguf_factory: Callable[..., Path]) -> None:
    target = gguf_factory("r1.gguf", extra_kv={"general.name": "DeepSeek-R1-Distill-Qwen-32B",
                                              "general.basename": "DeepSeek-R1-Distill-Qwen",
                                              "general.size_label": "32B"})
    draft = gguf_factory("d.gguf", extra_kv={"general.name": "Some draft"})
    data = _check_json(target, draft)
    family = next(f["message"] for f in data["registry"] if f["code"] == "RG003")  # type: ignore[attr-defined]
    assert "DeepSeek-R1-DRAFT-Qwen2.5-0.5B (draft-model)" in family
    assert "; )" not in family


def test_every_measured_number_says_what_it_is_and_where_it_was_measured() -> None:
    """'measured 32.49 to 55.473 tok/s' read as a range: it is the target alone, then with the
    draft, both from llama.cpp issue 5877, which only the JSON named."""
    done = subprocess.run([sys.executable, "-m", "paircheck", "pairs", "--for", "meta-llama/Llama-3.1-8B-Instruct"],
                          capture_output=True, text=True, timeout=120, check=False, env={**os.environ, "COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    text = done.stdout.split("Llama-3.1-8B-Instruct + Llama-3.2-1B-Instruct (draft-model)", 1)[1]
    block = text.split("\nMeta-Llama", 1)[0]
    assert "  measured, in:\n    https://github.com/ggml-org/llama.cpp/issues/5877\n" in block
    assert "55.473 tok/s with the draft (llama.cpp; RTX 3060 12GB; draft length 5)" in block
    assert "32.49 tok/s without it (the target alone) (llama.cpp; RTX 3060 12GB)" in block
    assert "72.055% of drafted tokens accepted" in block
