"""Predicted against measured speed at the user's workload (issue 47, item 7): ``probe`` at two
context depths and two slot counts predicts the aggregate tokens/s and the speedup of two
drafts; ``bench run``'s machinery then measures the same grid, the same prompt filled to the
same depths, with every side interleaved, and each (draft, depth, slots) point is compared.
At two slots bench sends each pass's two requests as one request of two prompts (``--together``),
so that the server starts both slots in the same step, as the probe prices slots under steady
load: two clients' requests reached the server 100-230 ms apart, the server then started the
later one a step or two late, and its last rounds ran alone, a quarter of a 32-token reply at
a draft of 8 (CI, 2026-12-07: two slots at 512 tokens decoded in 2,857 ms when started
together, 3,209-3,390 ms when started apart, four runs of five; that point missed by 11%).

The pair is the speed differential's (``test_speed_differential.py``): the slow SmolLM2 target
(F32, 30 real and 30 identity blocks) with its Q8_0 copy and its Q4_1 original as drafts, one
thread per server. The depths: 512 tokens, where both drafts are faster at one slot, and 4,096,
where the target's verification of a batch costs so much more than one decode that both are
slower (measured here: the target alone 18 tokens/s at 512, 7 at 4,096). One slot and two: at
two slots the target alone gains from batching the slots' decodes and the drafts' gain shrinks.

What is compared per point. The probe replays llama-server's drafting on its recording; where
the draft's two best tokens were within a few tenths of a nat (a near tie, record.NEAR_TIE_NATS),
the server, which evaluates the draft's context in other batches (a cached prefix, two slots
in one batch), may propose either, and one swapped tie costs a whole rejected draft. Measured
here at 512 tokens, Q8_0, k 15: 29 drafted and 29 accepted on a fresh prompt, 42 and 28 with the
prefix cached; the probe lists both outcomes (replay.replay_outcomes). So, per (draft, depth,
slots) point:

* every request's (drafted, accepted) must be one of the replay's outcomes for that recording
  and draft length: the acceptance at depth and across slots is what the probe says can happen;
* the speedup predicted for the outcomes the server took (the probe's costs at that depth and
  slot count, probe.result.costs_in, on the replayed work of those outcomes) within TOLERANCE
  of bench's aggregate decode speedup (the tokens of a run over the wall time while a request
  was generating, with the draft over without: the prefix is cached, and the evaluation of the
  prompt's tail is not what the model prices), and the sign right on every point;
* the probe's own figure (the recording's outcome) and its range over the near ties are
  printed beside it, and the measurement must lie in that range, widened by TOLERANCE;
* one point of the eight may miss by up to NEAR_MISS (reported); a measured speedup within 5%
  of 1.00 (MIN_GAIN, the gain paircheck requires before it recommends a draft) is a tie, whose
  sign decides nothing.

Every comparison is written to ``test-artifacts/workload-differential.txt``.

What it costs (this 2-core machine, quiet, 2026-12-07): 25.5 minutes, the probe of two drafts at
the four points 7 and the bench 18 (three servers per slot count; at 4,096 tokens each slot of
each server evaluates the deep target's prefix once, about 75 s at one thread); with the steps
of two slots timed by the probe (each of its servers fills a second slot at each depth), 29
minutes. The first run of it (2026-12-07): every point within 9%, the server's outcomes all
among the replay's. A CI run then missed four points, three at two slots (two slots' step was
priced as one sequence's batch; it is measured now): afterwards seven points within 4%, one 11%.
The next CI run missed two points by 11%, both at two slots with the draft of 8: its slots had
started apart (above). With the slots started together and a step of two slots generating
timed as such (2026-12-07, 31 minutes): every point within 8%, six within 5%.
A failure prints every cost the probe measured (calibration_lines).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import smollm

from paircheck.bench.compare import compare
from paircheck.bench.measure import BenchSettings
from paircheck.bench.runner import Side, run_grid
from paircheck.llama_server.prompts import Prompt
from paircheck.probe.replay import Counts, PromptTrace, replay_outcomes
from paircheck.probe.result import costs_in
from paircheck.probe.run import Endpoints, ProbeSettings, probe_drafts
from paircheck.speed.model import MIN_GAIN, Work, interpolate, predict
from paircheck.workload import Workload

# starts the pinned llama-server for many minutes and measures speed: alone under -n 2
pytestmark = [pytest.mark.slow, pytest.mark.timing]

FLAGS = ("--no-repack", "--threads", "1", "--threads-batch", "1")  # why one thread: test_speed_differential
N_PREDICT = 32
DEPTHS = (512, 4096)
SLOTS = (1, 2)
# One draft length per draft, two lengths in all: the Q8_0 copy at a long draft, the Q4_1
# original at a short one.
DRAFTS = {"q8_0": 8, "q4_1": 4}
TOLERANCE = 0.10
# As in the speed differential: one point of the eight may lie between TOLERANCE and NEAR_MISS,
# reported as a near miss (the Q4_1 draft came 6-9% under its measurement at three points on
# 2026-12-07: a red CI for one noisy point would land nothing); every other point is held to
# TOLERANCE.
NEAR_MISS = 0.15
PROMPTS = [Prompt("code", "Write a Python function that reverses a string.", "code")]


@pytest.fixture(scope="module")
def models() -> dict[str, Path]:
    import llamacpp_build

    tools = llamacpp_build.ensure_tools()
    return {"server": tools["llama-server"], **smollm.speed_models(tools["llama-quantize"])}


def _grid() -> tuple[Workload, ...]:
    return tuple(Workload(depth, N_PREDICT, slots) for depth in DEPTHS for slots in SLOTS)


def _trace(data: dict[str, Any], index: int, depth: int) -> PromptTrace:
    """The probe's recording at ``depth`` and its ``index``-th draft's guesses, from its file."""
    gen = next(g for g in data["generations"] if g["context_tokens"] == depth)
    tr = next(t for t in data["drafts"][index]["traces"] if t["context_tokens"] == depth)
    return PromptTrace(tuple(gen["tokens"]), tuple(tr["draft_top"]), tuple(tr["draft_conf"]),
                       {int(k): tuple(v) for k, v in tr["tails"].items()}, gen["n_predict"],
                       len(gen["prompt_tokens"]), data["settings"]["tail_limit"],
                       {int(k): v for k, v in tr["near_ties"].items()})


def judge(data: dict[str, Any], points: list[tuple[Workload, dict[str, dict[str, Any]]]], drafts: dict[str, str],
          target_name: str) -> tuple[list[str], list[str], list[str]]:
    """Each (draft, depth, slots) point of ``points`` (bench's results by side label) against the
    probe's result ``data``: the comparison's lines, the failures and the near misses."""
    predicted: dict[tuple[int, int], dict[str, Any]] = {
        (w["context_tokens"], w["parallel"]): w for w in data["workloads"]}
    assert sorted(predicted) == sorted((w.context_tokens, w.parallel) for w in _grid())
    filled = {f["context_tokens"]: f["tokens"] for f in data["context"]["filled"]}

    lines = [f"target {target_name}; {len(PROMPTS)} prompt, {N_PREDICT}-token replies, chat template; "
             "PREDICTED by probe, MEASURED by bench run's interleaved servers minutes later; tolerance "
             f"{TOLERANCE:.0%} on the aggregate decode speedup, the sign on every point",
             f"{'draft':<6} {'k':>3} {'ctx':>5} {'slots':>5} {'probe x':>7} {'range':>11} {'at meas':>7} "
             f"{'meas x':>7} {'alone pred':>10} {'alone meas':>10} {'pair pred':>9} {'pair meas':>9}  verdict"]
    failures: list[str] = []
    near_misses: list[str] = []
    for w, results in points:
        entry = predicted[(w.context_tokens, w.parallel)]
        base = results["baseline"]
        # the same workload: bench's prompt reaches the depth the probe's did, as the server counts it
        assert [p["context_tokens"] for p in base["prepared"]] == [filled[w.context_tokens]], w
        for index, (name, k) in enumerate(DRAFTS.items()):
            comp = compare(base, results[name])
            assert comp.equal_work is not None, f"{name} {w}: not equal work ({comp.warnings})"
            measured = comp.aggregate_decode_speedup
            assert measured is not None
            row = next(r for d in entry["drafts"] if d["path"] == drafts[name]
                       for r in d["by_draft_max"] if r["draft_max"] == k and r["p_min"] == 0.0)
            costs = costs_in(data, index, w.context_tokens, w.parallel)
            assert costs is not None
            outcomes = replay_outcomes(_trace(data, index, w.context_tokens), k)
            speeds = [predict(Work(c.tokens, c.batches, c.draft_decodes), costs) for c in outcomes.values()]
            low, high = min(p.speedup for p in speeds if p), max(p.speedup for p in speeds if p)
            taken = [(r["timings"]["draft_n"], r["timings"]["draft_n_accepted"])
                     for r in results[name]["requests"]]
            unknown = sorted(set(taken) - set(outcomes))
            work = sum((outcomes[t] for t in taken if t in outcomes), Counts())
            at = predict(Work(work.tokens, work.batches, work.draft_decodes, len(taken)), costs)
            assert at is not None
            err = abs(at.speedup - measured) / measured
            # faster or slower, where the measurement tells them apart: a speedup within MIN_GAIN of
            # 1.00 is a tie (0.93x predicted, 1.01x measured, runs unstable, on 2026-12-07), and
            # paircheck recommends no draft predicted under MIN_GAIN, so a tie decides nothing
            tie = 1 / MIN_GAIN < measured < MIN_GAIN
            sign_ok = tie or (at.speedup > 1.0) == (measured > 1.0)
            # the measurement within TOLERANCE of the probe's range, by the same measure as err
            outside = max(low - measured, measured - high, 0.0) / measured
            in_range = outside <= TOLERANCE
            spread = comp.baseline_aggregate_decode_tokens_per_s
            alone = spread.median if spread is not None else float("nan")
            pair_spread = comp.draft_aggregate_decode_tokens_per_s
            pair = pair_spread.median if pair_spread is not None else float("nan")
            ok = err <= TOLERANCE and sign_ok and in_range and not unknown
            near = not ok and err <= NEAR_MISS and sign_ok and outside <= NEAR_MISS and not unknown
            said = ", ".join(x for x in (f"speedup {err:.0%} off", "" if sign_ok else "sign wrong",
                                         "a tie: within 5% of 1.00" if tie else "",
                                         "" if in_range else "outside the probe's range",
                                         f"outcomes the replay does not give: {unknown}" if unknown else "",
                                         "" if comp.conclusive else "runs unstable") if x)
            line = (f"{name:<6} {k:>3} {w.context_tokens:>5} {w.parallel:>5} {row['predicted_speedup']:>6.2f}x "
                    f"{low:>5.2f}-{high:<4.2f}x {at.speedup:>6.2f}x {measured:>6.2f}x "
                    f"{entry['target_tokens_per_s']:>10.1f} {alone:>10.1f} "
                    f"{(at.pair_tokens_per_s or 0.0) * w.parallel:>9.1f} {pair:>9.1f}  "
                    f"{'ok' if ok else 'NEAR MISS' if near else 'FAIL'} ({said})")
            lines.append(line)
            if not ok:
                (near_misses if near else failures).append(line)
    lines.append("probe x: the probe's figure (its recording's outcome); range: over the near ties the server may "
                 "swap; at meas: predicted for the (drafted, accepted) the server reported; meas x: bench's aggregate "
                 "decode speedup; alone, pair: aggregate tokens/s of the target alone and with the draft (at the "
                 "outcomes taken), predicted and measured")
    return lines + calibration_lines(data), failures, near_misses


def calibration_lines(data: dict[str, Any]) -> list[str]:
    """What the probe measured at each depth, in ms, so that a miss can be traced to a cost
    from CI's output alone: decode, batches of 1/2/17 tokens, steps of N slots of 1/17 tokens a
    slot, and each pair's fitted per-round costs."""
    calib = data["calibration"]

    def curve(model: dict[str, Any]) -> str:
        pts = tuple((n, ms) for n, ms in model["batch_ms"])
        steps = "; ".join(f"{st['parallel']} slots {st.get('decode_ms', float('nan')):.0f} generating, "
                          f"{interpolate(tuple(map(tuple, st['batch_ms'])), 1):.0f}/"
                          f"{interpolate(tuple(map(tuple, st['batch_ms'])), 17):.0f}"
                          for st in model.get("streams", []))
        return (f"decode {model['decode_ms']:.1f}, batch 1/2/17 {interpolate(pts, 1):.0f}/{interpolate(pts, 2):.0f}/"
                f"{interpolate(pts, 17):.0f}" + (f", {steps}" if steps else ""))

    lines = ["measured by the probe (ms): decode, batch of 1/2/17 tokens, step of N slots generating together "
             "and of 1/17 tokens a slot"]
    for depth in calib["depths"]:
        lines.append(f"ctx {depth['context_tokens']}: target {curve(depth['target'])}")
        for name, model in zip(DRAFTS, depth["drafts"], strict=True):
            lines.append(f"  {name}: {curve(model)}")
    for name, fit in zip(DRAFTS, calib["drafts"], strict=True):
        runs = ", ".join(f"k{r['draft_max']} {r['predicted_ms']:.0f}" for r in fit.get("spec_runs", []))
        lines.append(f"{name} per round {fit.get('round_ms')} + {fit.get('round_token_ms')}/token (residuals "
                     f"{fit.get('round_fit_residual_ms')}); target alone between its runs {fit.get('target_decode_ms')}"
                     f"; runs {runs}")
    return lines


def test_predicted_speed_at_each_workload_matches_bench_run(models: dict[str, Path], tmp_path: Path) -> None:
    target, binary = str(models["target"]), str(models["server"])
    drafts = [str(models[name]) for name in DRAFTS]
    outcome = probe_drafts(target, drafts, ProbeSettings(n_predict=N_PREDICT, server_args=FLAGS, workloads=_grid()),
                           Endpoints(binary=binary), tmp_path / "probe.json", PROMPTS)
    sides = [Side("baseline")] + [Side(name, str(models[name]), ("--spec-draft-n-max", str(k)))
                                  for name, k in DRAFTS.items()]
    # together: two slots start in the same step, as the probe prices them (see the docstring)
    settings = BenchSettings(runs=3, n_predict=N_PREDICT, chat_template=True, together=True)
    points = run_grid(target, sides, binary, tmp_path / "bench", settings, PROMPTS, list(_grid()), None, FLAGS,
                      max_runs=6)

    lines, failures, near_misses = judge(outcome.data, [(p.workload, p.results) for p in points],
                                         {name: str(models[name]) for name in DRAFTS}, models["target"].name)
    folder = Path(os.environ.get("PAIRCHECK_ARTIFACTS", "test-artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "workload-differential.txt").write_text("\n".join(lines) + "\n")
    (folder / "workload-differential-probe.json").write_text(json.dumps(outcome.data, indent=1))
    print("\n".join(lines))
    assert not failures and len(near_misses) <= 1, "\n".join(lines)
