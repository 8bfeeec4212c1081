"""``probe`` at the user's workload (issue 47): a context filled to a depth, replies of several
lengths, several requests at once, with the real llama-server and SmolLM2 (its Q4_1 original
as the target and its Q8_0 copy as the draft, one thread a server).

What is held: each depth is really reached (the target's own tokenizer, through its chat
template); each depth has its own recording and its own costs, timed after a cached prefix of
that depth, and the steps of two slots timed there; every grid point is in ``workloads``
in the grid's order, with per-request and aggregate figures that agree with each other and
with the costs measured at its depth (speed.model.for_slots); a shorter reply is the longer
recording's head. Bad workload options are refused before anything starts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import smollm

from paircheck.probe.calibrate import STREAM_SIZES
from paircheck.probe.replay import PromptTrace, replay
from paircheck.speed.model import Costs, SlotSteps, Work, for_slots, predict

FLAGS = ("--", "--no-repack", "--threads", "1", "--threads-batch", "1")
DEPTH = 400


def _cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "paircheck", "probe", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--parallel", "0", "--parallel: 0 is outside"), ("--context-tokens", "lots", "--context-tokens: expected whole"),
    ("--n-predict", "1", "--n-predict: must be at least 2"), ("--context-file", "/nonexistent/doc.txt", "no such file"),
])
def test_a_bad_workload_is_one_line_and_exit_2_before_anything_starts(option: str, value: str, said: str,
                                                                      tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[2] / "fixtures" / "examples"
    done = _cli(str(examples / "ggml-vocab-llama-spm.gguf"), str(examples / "ggml-vocab-llama-spm.gguf"),
                option, value, "--llama-server", "/nonexistent/llama-server", "-o", str(tmp_path / "p.json"))
    assert done.returncode == 2 and said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "p.json").exists()


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    import llamacpp_build

    tools = llamacpp_build.ensure_tools()
    folder = tmp_path_factory.mktemp("workload")
    prompts = folder / "p.jsonl"
    prompts.write_text('{"id": "code", "prompt": "Write a Python function that reverses a string.", "kind": "code"}\n')
    out = folder / "probe.json"
    done = _cli(str(smollm.target()), str(smollm.quantized("Q8_0", tools["llama-quantize"])), "--llama-server",
                str(tools["llama-server"]), "--prompts", str(prompts), "--n-predict", "16,32", "--context-tokens",
                f"0,{DEPTH}", "--parallel", "1,2", "-o", str(out), *FLAGS)
    assert done.returncode == 0, done.stderr
    return {"data": json.loads(out.read_text()), "text": done.stdout}


@pytest.mark.slow
def test_every_grid_point_is_predicted_in_order(probed: dict[str, Any]) -> None:
    data = probed["data"]
    grid = [(w["context_tokens"], w["n_predict"], w["parallel"]) for w in data["workloads"]]
    assert grid == [(c, n, p) for c in (0, DEPTH) for n in (16, 32) for p in (1, 2)]
    assert data["workload_grid"] == [{"context_tokens": c, "n_predict": n, "parallel": p} for c, n, p in grid]
    for w in data["workloads"]:
        assert w["target_tokens_per_s"] == pytest.approx(w["target_tokens_per_s_per_request"] * w["parallel"],
                                                         abs=2e-3)
        for d in w["drafts"]:
            for r in d["by_draft_max"]:
                assert r["predicted_tokens_per_s"] == pytest.approx(
                    r["predicted_tokens_per_s_per_request"] * w["parallel"], abs=2e-3)
    # the top level is the first grid point, as before grids
    first = data["workloads"][0]["drafts"][0]
    assert data["drafts"][0]["predicted_best"]["speedup"] == first["predicted_best"]["speedup"]
    # the table says which workload is which
    text = " ".join(probed["text"].split())
    assert "By workload:" in text and f"{DEPTH} 32 2 " in text


@pytest.mark.slow
def test_each_depth_is_reached_recorded_and_timed_there(probed: dict[str, Any]) -> None:
    data = probed["data"]
    deep = [g for g in data["generations"] if g["context_tokens"] == DEPTH]
    shallow = [g for g in data["generations"] if g["context_tokens"] == 0]
    assert len(deep) == len(shallow) == 1
    assert DEPTH - 12 <= len(deep[0]["prompt_tokens"]) <= DEPTH < len(shallow[0]["prompt_tokens"]) + DEPTH
    assert data["context"]["filled"][0]["tokens"] == len(deep[0]["prompt_tokens"])
    assert data["settings"]["ctx_size"] >= DEPTH + 32 + 34
    depths = data["calibration"]["depths"]
    assert [d["context_tokens"] for d in depths] == [0, DEPTH]
    assert depths[1]["prefix_tokens"] >= len(deep[0]["prompt_tokens"])
    for d in depths:
        for model in (d["target"], d["drafts"][0]):
            # one sequence's batches out to 2 x 17 tokens (what prices two slots when their steps
            # cannot be measured), and the steps of two slots measured at every depth
            assert max(n for n, *_ in model["batch_ms_measured"]) == 34
            steps = [s for s in model["streams"] if s["parallel"] == 2]
            assert len(steps) == 1 and [n for n, *_ in steps[0]["batch_ms_measured"]] == list(STREAM_SIZES)
            # a step of two slots of one token each evaluates two tokens: dearer than one
            one = next(ms for n, ms, *_ in model["batch_ms_measured"] if n == 1)
            assert steps[0]["batch_ms"][0][1] > one, (steps, one)
            # and the two slots generating together: a step decodes a token of each, dearer than
            # one slot's decode
            low, high = steps[0]["decode_ms_range"]
            assert low <= steps[0]["decode_ms"] <= high and steps[0]["decode_ms"] > model["decode_ms"], (steps, model)


@pytest.mark.slow
def test_the_prediction_at_depth_uses_that_depths_costs_and_recording(probed: dict[str, Any]) -> None:
    """Recomputed from the file: the deep workload's speedups are for_slots of the costs measured
    at that depth (round costs from the calibration; two slots priced by the steps of two slots
    measured there) applied to the replay of that depth's recording, cut to the reply's length."""
    data = probed["data"]
    calib = data["calibration"]
    deep = calib["depths"][1]
    fit = calib["drafts"][0]
    costs = Costs(deep["target"]["decode_ms"], deep["drafts"][0]["decode_ms"],
                  tuple((n, ms) for n, ms in deep["target"]["batch_ms"]),
                  tuple((n, ms) for n, ms in deep["drafts"][0]["batch_ms"]), fit["round_ms"], fit["round_token_ms"])
    gen = next(g for g in data["generations"] if g["context_tokens"] == DEPTH)
    tr = next(t for t in data["drafts"][0]["traces"] if t["context_tokens"] == DEPTH)
    trace = PromptTrace(tuple(gen["tokens"]), tuple(tr["draft_top"]), tuple(tr["draft_conf"]),
                        {int(k): tuple(v) for k, v in tr["tails"].items()}, gen["n_predict"],
                        len(gen["prompt_tokens"]), data["settings"]["tail_limit"],
                        {int(k): v for k, v in tr["near_ties"].items()})
    for w in data["workloads"]:
        if w["context_tokens"] != DEPTH:
            continue
        row = next(r for r in w["drafts"][0]["by_draft_max"] if r["draft_max"] == 4 and r["p_min"] == 0)
        counts = replay(trace.head(w["n_predict"]), 4, 0.0)
        found = [next(s for s in model["streams"] if s["parallel"] == w["parallel"]) if w["parallel"] > 1 else None
                 for model in (deep["target"], deep["drafts"][0])]
        # the steps of N slots: the curve, and the slots generating together (a token's step)
        steps = [SlotSteps(tuple((n, ms) for n, ms in f["batch_ms"]), f["decode_ms"]) if f else None for f in found]
        pred = predict(Work(counts.tokens, counts.batches, counts.draft_decodes),
                       for_slots(costs, w["parallel"], 17, *steps))
        assert pred is not None and row["predicted_speedup"] == pytest.approx(pred.speedup, rel=2e-3), w
    agreement = data["workloads"][-1]["drafts"][0]["agreement_by_position"]
    assert sum(a["compared"] for a in agreement) == len(gen["tokens"]) - 1
