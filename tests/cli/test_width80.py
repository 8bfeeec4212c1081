"""Every output fits 80 columns at COLUMNS=80, piped (issue 26: "Every output must fit 80
columns"): help texts, the rule list, every kind of result. A command to paste (with its
backslash-continued lines) and a path alone on its line are printed whole, whatever their length."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
E = REPO / "fixtures" / "examples"
SPM, PHI3, BAICHUAN = (str(E / f"ggml-vocab-{n}.gguf") for n in ("llama-spm", "phi-3", "baichuan"))
COMMANDS = ("llama-server", "llama-cli", "paircheck", "vllm", "ollama", "./llama-cli")

CASES = [
    [SPM, PHI3], [SPM, BAICHUAN], ["-v", SPM, PHI3], ["--engine", "all", SPM, PHI3], ["--method", "ngram-mod", SPM],
    [SPM, PHI3, BAICHUAN], ["explain"], ["explain", "LW101"], ["explain", "PW002"], ["pairs"],
    ["pairs", "--for", "Qwen/Qwen2.5-14B-Instruct"],
    ["lint-cmd", f"llama-cli -m {SPM} -md {PHI3} --spec-type draft-simple"],
    ["lint-cmd", "--no-check", "./main -m t.gguf --draft-model d.gguf --draft-min-accept-tokens 4"],
    ["lint", "--no-check", str(REPO / "fixtures" / "launch" / "compose-bad"), str(REPO / "fixtures" / "launch" / "k8s"),
     str(REPO / "fixtures" / "launch" / "serve.sh")],
    ["--help"], ["check", "--help"], ["scan", "--help"], ["fit", "--help"], ["run", "--help"], ["lint-cmd", "--help"],
    ["lint", "--help"],
    ["lint-py", "--help"], ["bench", "--help"], ["bench", "compare", "--help"], ["estimate", "--help"],
    ["pairs", "--help"], ["explain", "--help"],
]


@pytest.mark.parametrize("args", CASES, ids=lambda a: " ".join(Path(x).name if "/" in x else x for x in a)[:60])
def test_fits_80_columns(args: list[str]) -> None:
    env = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run([sys.executable, "-m", "paircheck", *args], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.stdout.strip(), done.stderr
    lines = done.stdout.splitlines()
    # A line continuing a backslash-continued command is part of that command, printed whole.
    long = [line for i, line in enumerate(lines) if len(line) > 80 and not line.lstrip().startswith(COMMANDS)
            and not Path(line.strip()).exists() and not (i and lines[i - 1].endswith("\\"))]
    assert long == [], "\n".join(long)
