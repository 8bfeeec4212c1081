"""``scan TARGET`` looks beside the target and says where it looked (issue 50, item 2): the
check's own `Next:` offers `paircheck scan TARGET`, which found nothing in a models folder
holding nine other GGUFs, and said "among 0 candidates" without saying where it had looked."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
E = REPO / "fixtures" / "examples"


def _scan(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    # A home without any model store: only what is beside the target can be found.
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "LLAMA_CACHE",
                        "OLLAMA_MODELS")}
    env.update(HOME=str(home), COLUMNS="80", PAIRCHECK_CACHE_HOME=str(home / "pc-cache"))
    return subprocess.run([sys.executable, "-m", "paircheck", "scan", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120, check=False)


def test_the_target_folder_is_searched_and_named(tmp_path: Path) -> None:
    models, home = tmp_path / "models", tmp_path / "home"
    (models / "below").mkdir(parents=True)
    home.mkdir()
    for name in ("llama-spm", "phi-3", "baichuan"):
        shutil.copy(E / f"ggml-vocab-{name}.gguf", models / f"{name}.gguf")
    shutil.copy(E / "ggml-vocab-phi-3.gguf", models / "below" / "not-walked.gguf")
    done = _scan("models/llama-spm.gguf", cwd=tmp_path, home=home)
    lines = done.stdout.splitlines()
    assert lines[0] == "0 usable drafts for llama-spm (llama.cpp) among 2 candidates", done.stdout
    searched = " ".join(" ".join(lines[1:3]).split())
    assert searched == ("searched here: models (beside the target); not on this machine: the Hugging Face cache, "
                        "LM Studio, llama.cpp's cache, Ollama's store"), done.stdout
    assert "models/phi-3.gguf" in done.stdout and "models/baichuan.gguf" in done.stdout
    assert "not-walked" not in done.stdout  # the target's folder itself, not the tree below it
    doc = json.loads(_scan("--json", "models/llama-spm.gguf", cwd=tmp_path, home=home).stdout)
    assert {os.path.basename(c["location"]) for c in doc["candidates"]} == {"phi-3.gguf", "baichuan.gguf"}
    assert "models" in doc["searched"]
    # A target in the working folder: "." is its folder.
    here = _scan("llama-spm.gguf", cwd=models, home=home)
    assert "searched here: . (beside the target)" in here.stdout and "among 2 candidates" in here.stdout
    # Only the folders given: nothing else, and it says so when none was given.
    alone = _scan("--no-default-dirs", "models/llama-spm.gguf", cwd=tmp_path, home=home)
    assert alone.stdout.splitlines()[:2] == ["0 usable drafts for llama-spm (llama.cpp) among 0 candidates",
                                             "searched here: nothing (--no-default-dirs, and no folder given)"]
