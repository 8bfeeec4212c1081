"""Measure a pair that should speed up, with ``paircheck bench run``, next to what ``estimate`` models.

The pair is built so that the draft agrees with the target on every token while reading
a quarter of its weight bytes: both are random-weight llamas of one seed and width whose
layers add nothing to the residual stream (tests/tiny_model.py, ``residual=False``), so
both predict from the same embedding and head; the target has 16 wide layers, the draft
one narrow layer. Acceptance is then 100% by construction and the measured speedup shows
what the hardware makes of it (on a CPU, verifying k+1 tokens in one batch is not free,
which the memory-bound model assumes).

    python benchmarks/bench_speculative.py [--runs 5] [--n-predict 64] [--threads 1] [--keep DIR]

Needs llama-server from tests/llamacpp_build.py (built on first use; cmake and a C++ compiler).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import llamacpp_build  # noqa: E402 - tests/ is put on sys.path just above
from tiny_model import TinyShape, write_tiny_llama  # noqa: E402

VOCAB = REPO / "fixtures" / "examples" / "ggml-vocab-llama-spm.gguf"
TARGET = TinyShape(n_embd=256, n_layer=16, n_head=4, n_head_kv=4, n_ff=2048)
DRAFT = TinyShape(n_embd=256, n_layer=1, n_head=4, n_head_kv=4, n_ff=256)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--n-predict", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--keep", type=Path, default=None, help="keep models and results in this folder")
    args = parser.parse_args()
    server = str(llamacpp_build.ensure_tools()["llama-server"])
    with tempfile.TemporaryDirectory(prefix="paircheck-bench-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        target = write_tiny_llama(work / "deep.gguf", VOCAB, seed=3, shape=TARGET, residual=False)
        draft = write_tiny_llama(work / "shallow.gguf", VOCAB, seed=3, shape=DRAFT, residual=False)
        paircheck = [sys.executable, "-m", "paircheck"]
        run = subprocess.run(
            [*paircheck, "bench", "run", str(target), str(draft), "--llama-server", server, "--output-dir",
             str(work / "results"), "--ctx-size", "512", "--runs", str(args.runs), "--n-predict", str(args.n_predict),
             "--", "--threads", str(args.threads), "--threads-batch", str(args.threads)],
            check=False,
        )
        if run.returncode != 0:
            return run.returncode
        print()
        return subprocess.run(
            [*paircheck, "estimate", str(target), str(draft), "--from", str(work / "results" / "draft.json")],
            check=False,
        ).returncode


if __name__ == "__main__":
    sys.exit(main())
