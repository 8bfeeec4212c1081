"""Predicted against measured speed, on this machine, in the same run: ``paircheck probe``
predicts tokens/s and the speedup for every draft length from the costs it measures; ``bench
run`` then measures the same pairs at several draft lengths on the same prompts, and the two
are compared.

SmolLM2-135M-Instruct alone gives no pair that is faster on a CPU (a draft's full-vocabulary
output layer and sampling keep its cost near the target's), so the target is SmolLM2 in F32
(dequantized from the PyPI wheel's Q4_1) followed by 30 identity copies of its last block
(``smollm.speed_models``, ``deep_model``: attention-output and FFN-down zeroed, so the greedy output is the model's
own, asserted below, while every matmul still runs): a target that costs several times its
drafts. The pairs:

* its Q8_0 copy (agrees on ~99% of tokens, costs ~1/4): really faster;
* its Q4_1 original (agrees ~100%, but its batch kernels are slow here: the draft
  re-evaluating each verified batch costs much more than for Q8_0): about even;
* a random-weight model of the same vocabulary (agrees ~0%): really slower.

What is compared, per (pair, k): the predicted speedup against the measured decode speedup
(median decode tokens/s with the draft over without, interleaved runs), and the predicted
tokens/s of the pair against the measured; the sign (faster or slower) wherever the
prediction is clear of 1 by more than the tolerance. Every comparison is written to
``test-artifacts/speed-differential.txt``.

What it costs: 18 minutes on the 2-core machine, measured with nothing else running (the
probe of three drafts with its calibration about 3, twelve interleaved bench runs the rest,
the random draft's the slowest), up to twice that when the machine's speed drifts and points
are measured again (RETRIES); the slowest test of the suite.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import smollm

from paircheck.bench.measure import BenchSettings
from paircheck.bench.runner import run_pair
from paircheck.llama_server.prompts import Prompt
from paircheck.probe.run import Endpoints, ProbeSettings, probe_drafts

N_PREDICT = 64
# One server works at a time (bench interleaves, the probe runs one after the other), so each
# may use both cores.
FLAGS = ("--no-repack", "--threads", "2", "--threads-batch", "2")
K_VALUES = (2, 4, 8, 12)
# The goal is 10%. Measured on this 2-core VM: the same request to the target alone
# varies by up to 15% between runs a minute apart, nothing else running, and a prediction made
# minutes before a measurement cannot follow that. In the runs made while writing this test,
# the pair's tokens/s came within 7% on 9 of 11 points (14% on the worst) and the speedup
# within 11% on 10 of 11 (27% on the worst, a random draft whose baseline ran 20% slow), with
# other work on the machine for part of the run. The test holds them to bounds that such
# drift does not cross (a red CI lands nothing), so it catches a model that is wrong, not one
# that misses the 10% goal; docs/probe.md gives the errors measured.
TPS_TOLERANCE = 0.25
SPEEDUP_TOLERANCE = 0.35
# A speedup is the pair over the target alone, so it can be judged only when bench's target
# alone runs at the speed the probe calibrated. In one run on this VM (2026-12-02) the target
# alone measured 26-39 tokens/s between bench runs minutes apart against 26.6 calibrated, while
# the pair's tokens/s stayed within 11% of the prediction on all 12 points: the machine, not the
# model, moved. A point whose target alone is more than TPS_TOLERANCE off is measured again (up
# to RETRIES times); one still off is reported, its pair's tokens/s still held, its speedup not,
# and at most a third of the points may be such.
RETRIES = 2
PROMPTS = [
    Prompt("code", "Write a Python function merge_sorted(a, b) that merges two sorted lists of integers into "
                   "one sorted list in linear time, with a docstring.", "code"),
    Prompt("chat", "Explain in a short paragraph why the sky is blue.", "chat"),
]


@pytest.fixture(scope="module")
def models() -> dict[str, Path]:
    import llamacpp_build

    tools = llamacpp_build.ensure_tools()
    return {"server": tools["llama-server"], "plain": smollm.quantized("F32", tools["llama-quantize"]),
            **smollm.speed_models(tools["llama-quantize"])}


def test_the_deep_target_generates_exactly_what_its_model_generates(models: dict[str, Path]) -> None:
    from paircheck.llama_server.http import request_json
    from paircheck.llama_server.process import llama_server, server_args

    outputs = []
    for model in (models["plain"], models["target"]):
        with llama_server(str(models["server"]), server_args(str(model), None, 1024, FLAGS)) as server:
            answer = request_json(server.url, "/completion", {"prompt": PROMPTS[0].text, "n_predict": 32,
                                                              "temperature": 0.0, "return_tokens": True}, 300)
            outputs.append(answer["tokens"])
    assert outputs[0] == outputs[1] and len(outputs[0]) == 32


def test_predicted_speed_matches_bench_run(models: dict[str, Path], tmp_path: Path) -> None:
    drafts = ["q8_0", "q4_1", "random"]
    target = str(models["target"])
    binary = str(models["server"])
    outcome = probe_drafts(target, [str(models[d]) for d in drafts],
                           ProbeSettings(n_predict=N_PREDICT, server_args=FLAGS, ctx_size=1024),
                           Endpoints(binary=binary), tmp_path / "probe.json", PROMPTS)
    assert outcome.data["calibration"] is not None
    lines = [f"target {Path(target).name}; {N_PREDICT} tokens x {len(PROMPTS)} prompts, chat template; "
             f"tolerance: tokens/s {TPS_TOLERANCE:.0%}, speedup {SPEEDUP_TOLERANCE:.0%}",
             f"{'draft':<10} {'k':>3} {'pred tok/s':>10} {'meas tok/s':>10} {'pred x':>7} {'meas x':>7} "
             f"{'base pred':>9} {'base meas':>9}  verdict"]
    failures: list[str] = []
    drifted_rows: list[str] = []
    best_measured: dict[str, float] = {}
    for name, summary in zip(drafts, outcome.summaries, strict=True):
        for k in K_VALUES:
            row = summary.row(k, 0.0)
            assert row is not None and row.predicted is not None
            pred = row.predicted
            assert pred.pair_tokens_per_s is not None and pred.target_tokens_per_s is not None
            for attempt in range(RETRIES + 1):
                done = run_pair(target, str(models[name]), binary, tmp_path / f"bench-{name}-{k}-{attempt}",
                                BenchSettings(runs=3, n_predict=N_PREDICT, chat_template=True), PROMPTS, 1024,
                                FLAGS, max_runs=6, draft_args=["--spec-draft-n-max", str(k)])
                comp = done.comparison
                assert comp is not None and comp.outputs_equal, f"{name} k={k}: the pair changed the output"
                assert comp.decode_speedup is not None and comp.draft_tokens_per_second is not None
                base = comp.baseline_tokens_per_second.median if comp.baseline_tokens_per_second else float("nan")
                drift = abs(base - pred.target_tokens_per_s) / pred.target_tokens_per_s
                if drift <= TPS_TOLERANCE:
                    break
            measured_x, measured_tps = comp.decode_speedup, comp.draft_tokens_per_second.median
            best_measured[str(models[name])] = max(best_measured.get(str(models[name]), 0.0), measured_x)
            tps_err = abs(pred.pair_tokens_per_s - measured_tps) / measured_tps
            x_err = abs(pred.speedup - measured_x) / measured_x
            clear = abs(pred.speedup - 1.0) > SPEEDUP_TOLERANCE
            sign_ok = not clear or (pred.speedup > 1.0) == (measured_x > 1.0)
            drifted = drift > TPS_TOLERANCE
            ok = tps_err <= TPS_TOLERANCE and (drifted or (x_err <= SPEEDUP_TOLERANCE and sign_ok))
            said = (f"target alone {drift:.0%} off the calibration after {attempt + 1} runs: speedup not judged"
                    if drifted else f"speedup {x_err:.0%} off{', sign wrong' if not sign_ok else ''}"
                    + (f", measured {attempt + 1}x" if attempt else ""))
            lines.append(f"{name:<10} {k:>3} {pred.pair_tokens_per_s:>10.1f} {measured_tps:>10.1f} "
                         f"{pred.speedup:>6.2f}x {measured_x:>6.2f}x {pred.target_tokens_per_s:>9.1f} "
                         f"{base:>9.1f}  {'ok' if ok else 'FAIL'} (tok/s {tps_err:.0%} off, {said}"
                         f"{'' if comp.conclusive else ', runs unstable'})")
            if not ok:
                failures.append(lines[-1])
            if drifted:
                drifted_rows.append(lines[-1])
    folder = Path(os.environ.get("PAIRCHECK_ARTIFACTS", "test-artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "speed-differential.txt").write_text("\n".join(lines) + "\n")
    assert not failures, "\n".join(lines)
    assert len(drifted_rows) <= len(lines[2:]) // 3, "the machine drifted too much to judge:\n" + "\n".join(lines)
    # the recommendation follows the measurement: a draft measured (near) the fastest, never the random one
    rec = outcome.data["recommendation"]
    assert rec["draft"] is not None and rec["draft"] != str(models["random"])
    assert best_measured[rec["draft"]] >= (1 - SPEEDUP_TOLERANCE) * max(best_measured.values())
    assert outcome.summaries[drafts.index("random")].recommended is None
