"""``pairs --for`` gives one model the same documented pairs however it is named (issue 26,
point 8): its Hub repo id, its GGUF repo, a GGUF file of it named in its metadata, or that
file's name. Only a file that carries no name at all is matched by its vocabulary (and size),
which a family shares, and then it says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from gguf import GGUFValueType
from gguf_mutate import make_kv, rewrite_gguf

REPO = Path(__file__).resolve().parents[2]


def pairs_for(spec: str | Path) -> tuple[list[str], str]:
    env = {**os.environ, "COLUMNS": "100"}
    done = subprocess.run([sys.executable, "-m", "paircheck", "pairs", "--for", str(spec), "--format", "json"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return [p["id"] for p in json.loads(done.stdout)["pairs"]], done.stderr


def _gguf(src: Path, dest: Path, name: str | None) -> Path:
    """The real Qwen2 vocabulary, as a GGUF of Qwen2.5-14B-Instruct would carry it."""

    def edit(meta):  # type: ignore[no-untyped-def]
        at = meta.index("general.name")
        if name is None:
            meta.kvs.pop(at)
        else:
            meta.kvs[at] = make_kv("general.name", name, GGUFValueType.STRING)
            meta.kvs.append(make_kv("general.basename", "Qwen2.5", GGUFValueType.STRING))
            meta.kvs.append(make_kv("general.finetune", "Instruct", GGUFValueType.STRING))
        meta.kvs.append(make_kv("general.size_label", "14B", GGUFValueType.STRING))

    rewrite_gguf(src, dest, edit)
    return dest


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_one_model_one_set_of_pairs(tmp_path: Path, real_vocab: Callable[[str], Path]) -> None:
    named = _gguf(real_vocab("qwen2"), tmp_path / "model.gguf", "Qwen2.5 14B Instruct")
    by_repo, _ = pairs_for("Qwen/Qwen2.5-14B-Instruct")
    assert by_repo == ["qwen2.5-14b-instruct--qwen2.5-0.5b-instruct"]
    for spec in (named, "Qwen/Qwen2.5-14B-Instruct-GGUF", "qwen2.5-14b-instruct-q4_k_m.gguf"):
        assert pairs_for(spec)[0] == by_repo, spec


def test_a_file_without_a_name_is_matched_by_vocabulary_and_says_so(
    tmp_path: Path, real_vocab: Callable[[str], Path]
) -> None:
    nameless = _gguf(real_vocab("qwen2"), tmp_path / "renamed.gguf", None)
    ids, note = pairs_for(nameless)
    assert "qwen2.5-14b-instruct--qwen2.5-0.5b-instruct" in ids and len(ids) > 1
    assert "recognised by vocabulary fingerprint" in note and "not by name" in note
