"""How far off the probe can be at --spec-draft-p-min above 0, measured (issue 34, item 12).

llama-server writes the draft's cache from the k+1-token verification batch; the probe's
recording from single-token decodes (docs/probe.md). This script measures, on the pinned
llama-server with SmolLM2-135M (Q4_1 target, its Q2_K copy as the draft; tests/smollm.py
makes them):

1. how far the draft's confidence (top-10 softmax, as the draft sampler computes it) moves
   when the positions before it were evaluated as one batch of 8 instead of one by one;
2. the probe's prediction (record + replay) at k and p-min, and again with p-min moved by
   that distance either way (every near-cut decision flipped one way, then the other): the
   band a confidence error of that size allows;
3. what llama-server itself counts at k and p-min (timings.draft_n, draft_n_accepted).

    PYTHONPATH=. python benchmarks/pmin_numerics.py [--k 8] [--p-min 0.5] [--n-predict 48]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import llamacpp_build  # noqa: E402
import smollm  # noqa: E402

from paircheck.llama_server.http import request_json  # noqa: E402
from paircheck.llama_server.process import llama_server, server_args  # noqa: E402
from paircheck.llama_server.prompts import BUILTIN_PROMPTS, PROBE_PROMPTS  # noqa: E402
from paircheck.probe.record import generate, teacher_force  # noqa: E402
from paircheck.probe.replay import Counts, replay  # noqa: E402

FLAGS = [*smollm.SERVER_FLAGS, "--ctx-size", "1024", "--parallel", "1"]


def _confidence(entry: dict[str, Any]) -> float:
    values = [float(t["logprob"]) for t in entry["top_logprobs"][:10]]
    best = max(values)
    return 1.0 / sum(math.exp(v - best) for v in values)


def batch_shift(url: str, prompts: list[list[int]], n_predict: int) -> list[float]:
    """|confidence after single-token decodes - confidence after a batch of 8| per position."""
    shifts = []
    for toks in prompts:
        answer = request_json(url, "/completion", {"prompt": toks, "n_predict": n_predict, "temperature": 0.0,
                                                   "n_probs": 10, "cache_prompt": False, "return_tokens": True},
                              timeout=300)
        gen, single = answer["tokens"], [_confidence(e) for e in answer["completion_probabilities"]]
        for j in range(9, len(gen), 4):
            # The prefix, then the last 8 tokens as one batch on it (as a k+1 verification batch).
            request_json(url, "/completion", {"prompt": toks + gen[:j - 8], "n_predict": 0, "cache_prompt": True},
                         timeout=300)
            one = request_json(url, "/completion", {"prompt": toks + gen[:j], "n_predict": 1, "temperature": 0.0,
                                                    "n_probs": 10, "cache_prompt": True}, timeout=300)
            shifts.append(abs(_confidence(one["completion_probabilities"][0]) - single[j]))
    return shifts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--p-min", type=float, default=0.5)
    ap.add_argument("--n-predict", type=int, default=48)
    args = ap.parse_args()
    tools = llamacpp_build.ensure_tools()
    binary = str(tools["llama-server"])
    target = smollm.target()
    draft = smollm.quantized("Q2_K", tools["llama-quantize"])
    texts = [p.text for p in (*BUILTIN_PROMPTS, *PROBE_PROMPTS)]  # the raw texts of both sets

    with llama_server(binary, ["-m", str(target), *FLAGS], ready_timeout=300) as server:
        prompts = [request_json(server.url, "/tokenize", {"content": t})["tokens"] for t in texts]
        gens = [generate(server.url, f"p{i}", toks, args.n_predict, 0.0, 42, 300) for i, toks in enumerate(prompts)]
    with llama_server(binary, ["-m", str(draft), *FLAGS], ready_timeout=300) as server:
        shifts = sorted(batch_shift(server.url, prompts, args.n_predict))
        p90, top = shifts[int(len(shifts) * 0.9)], shifts[-1]
        lowest = max(0.01, args.p_min - top - 0.01)
        traces = [teacher_force(server.url, g, lowest, 300) for g in gens]

    def predicted(p: float) -> Counts:
        total = Counts()
        for trace in traces:
            total = total + replay(trace, args.k, p)
        return total

    with llama_server(binary, server_args(str(target), str(draft), 1024, [
            "--spec-draft-n-max", str(args.k), "--spec-draft-p-min", str(args.p_min), "-td", "1",
            *smollm.SERVER_FLAGS]), ready_timeout=300) as server:
        real_drafted = real_accepted = 0
        for g in gens:
            answer = request_json(server.url, "/completion", {
                "prompt": list(g.prompt_tokens), "n_predict": g.n_predict, "temperature": 0.0, "seed": 42,
                "cache_prompt": False, "return_tokens": True}, timeout=600)
            real_drafted += answer["timings"].get("draft_n", 0)
            real_accepted += answer["timings"].get("draft_n_accepted", 0)

    print(f"confidence shift, single-token decodes vs a batch of 8 (Q2_K draft, {len(shifts)} positions): "
          f"median {shifts[len(shifts) // 2]:.4f}, p90 {p90:.4f}, max {top:.4f}")
    print(f"k={args.k}, p-min {args.p_min}, {len(gens)} prompts x {args.n_predict} tokens:")
    for label, p in (("predicted", args.p_min), (f"p-min - max shift ({args.p_min - top:.3f})", args.p_min - top),
                     (f"p-min + max shift ({args.p_min + top:.3f})", args.p_min + top),
                     (f"p-min - p90 shift ({args.p_min - p90:.3f})", args.p_min - p90),
                     (f"p-min + p90 shift ({args.p_min + p90:.3f})", args.p_min + p90)):
        c = predicted(p)
        print(f"  {label}: drafted {c.drafted}, accepted {c.accepted}")
    print(f"  llama-server counted: drafted {real_drafted}, accepted {real_accepted}")


if __name__ == "__main__":
    main()
