"""``paircheck probe`` against the real llama-server, on a real model and real drafts.

The differential test: the probe measures each draft once (the target generates, the
draft is teacher-forced) and predicts, for every --spec-draft-n-max and --spec-draft-p-min,
the ``draft_n`` and ``draft_n_accepted`` that llama-server reports. Here the real
llama-server runs every pair with speculation on, at k in {1, 2, 4, 8} and p-min in
{0, 0.5}, on the same prompts (raw, greedy, same n_predict, no prefix reuse), and its own
``timings`` are compared with the prediction: they must agree within 5% of the drafted
tokens. The pairs: SmolLM2-135M-Instruct Q4_1 (the target) with its Q8_0 and Q2_K copies
(real acceptance between 0 and 1), with itself (acceptance 1) and with a random-weight
model of the same vocabulary (acceptance near 0).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import smollm

from paircheck.llama_server.http import request_json
from paircheck.llama_server.process import llama_server, server_args
from paircheck.llama_server.prompts import BUILTIN_PROMPTS

pytestmark = pytest.mark.slow  # starts the pinned llama-server

N_PREDICT = 48
CTX = 1024
K_VALUES = (1, 2, 4, 8)
P_MINS = (0.0, 0.5)
TOLERANCE = 0.05  # of the drafted tokens


@pytest.fixture(scope="session")
def tools() -> dict[str, Path]:
    import llamacpp_build

    return llamacpp_build.ensure_tools()


@pytest.fixture(scope="session")
def smol(tools: dict[str, Path]) -> dict[str, Path]:
    return smollm.drafts(tools["llama-quantize"])


def _probe_cli(args: list[str], server: Path, **kw: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "paircheck", "probe", "--llama-server", str(server), *args],
                          capture_output=True, text=True, env=env, timeout=1800, **kw)


@pytest.fixture(scope="session")
def prompts_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("prompts") / "prompts.jsonl"
    path.write_text("".join(json.dumps({"id": p.id, "prompt": p.text, "kind": p.kind}) + "\n"
                            for p in BUILTIN_PROMPTS))
    return path


@pytest.fixture(scope="session")
def probe_file(probed: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.getbasetemp() / "probe-result.json"
    path.write_text(json.dumps(probed))
    return path


@pytest.fixture(scope="session")
def probed(smol: dict[str, Path], tools: dict[str, Path], prompts_file: Path,
           tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("probe") / "probe.json"
    drafts = [smol[name] for name in ("q8_0", "q2_k", "target", "random")]
    done = _probe_cli([str(smol["target"]), *map(str, drafts), "--raw", "--n-predict", str(N_PREDICT),
                       "--p-min", ",".join(map(str, P_MINS)), "--prompts", str(prompts_file),
                       "--ctx-size", str(CTX), "--json", "-o", str(out), "--no-calibrate", "--",
                       *smollm.SERVER_FLAGS],
                      tools["llama-server"])
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert json.loads(out.read_text()) == data  # the file and --json are the same document
    return data


def _artifacts() -> Path:
    folder = Path(os.environ.get("PAIRCHECK_ARTIFACTS", "test-artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _entry(data: dict[str, Any], path: Path) -> dict[str, Any]:
    (found,) = [d for d in data["drafts"] if d["path"] == str(path)]
    return found


def _predicted(entry: dict[str, Any], k: int, p: float) -> tuple[int, int]:
    (row,) = [r for r in entry["by_draft_max"] if r["draft_max"] == k and r["p_min"] == p]
    return row["drafted"], row["accepted"]


def _real(binary: Path, target: Path, draft: Path, data: dict[str, Any], k: int, p: float,
          log_dir: Path) -> tuple[int, int, bool]:
    """llama-server's own draft_n and draft_n_accepted over the probe's prompts, and
    whether its outputs equal the target's tokens the probe recorded."""
    extra = ["--spec-draft-n-max", str(k), "--spec-draft-p-min", str(p), "-td", "1", *smollm.SERVER_FLAGS]
    args = server_args(str(target), str(draft), CTX, extra)
    drafted = accepted = 0
    same = True
    with llama_server(str(binary), args, ready_timeout=300, log_dir=log_dir) as server:
        for gen in data["generations"]:
            answer = request_json(server.url, "/completion", {
                "prompt": gen["prompt_tokens"], "n_predict": gen["n_predict"], "temperature": 0.0,
                "seed": 42, "cache_prompt": False, "return_tokens": True}, timeout=600)
            timings = answer["timings"]
            drafted += timings.get("draft_n", 0)
            accepted += timings.get("draft_n_accepted", 0)
            same = same and answer["tokens"] == gen["tokens"]
    return drafted, accepted, same


@pytest.mark.parametrize("name", ["q8_0", "q2_k", "target", "random"])
def test_predicted_drafted_and_accepted_match_llama_server(
    name: str, probed: dict[str, Any], smol: dict[str, Path], tools: dict[str, Path], tmp_path: Path
) -> None:
    entry = _entry(probed, smol[name])
    misses = []
    report = _artifacts() / "probe-differential.txt"
    for p in P_MINS:
        for k in K_VALUES:
            want_d, want_a = _predicted(entry, k, p)
            got_d, got_a, same = _real(tools["llama-server"], smol["target"], smol[name], probed, k, p, tmp_path)
            with report.open("a") as fh:  # every comparison, for the README's account of them
                fh.write(f"{name} k={k} p_min={p}: predicted {want_d}/{want_a} llama-server {got_d}/{got_a} "
                         f"same output {same}\n")
            slack = TOLERANCE * max(got_d, want_d, 1)
            if abs(want_d - got_d) > slack or abs(want_a - got_a) > slack:
                misses.append(f"k={k} p_min={p}: predicted {want_d} drafted / {want_a} accepted, "
                              f"llama-server {got_d} / {got_a} (same output: {same})")
    assert not misses, "\n".join(misses)


def test_the_drafts_acceptance_is_what_each_pair_must_give(probed: dict[str, Any], smol: dict[str, Path]) -> None:
    rate = {name: _entry(probed, smol[name])["acceptance_rate"] for name in ("q8_0", "q2_k", "target", "random")}
    assert rate["target"] == 1.0  # the target drafting for itself agrees everywhere
    assert rate["random"] < 0.05  # random weights almost never guess the target's token
    assert 0.5 < rate["q2_k"] < rate["q8_0"] < 1.0  # real, different, between 0 and 1
    # the same file as draft: every drafted token is accepted, at every length
    for row in _entry(probed, smol["target"])["by_draft_max"]:
        assert row["accepted"] == row["drafted"]


def test_the_json_names_scripts_rely_on(probed: dict[str, Any]) -> None:
    assert probed["schema_version"] == 2 and probed["complete"] is True and probed["error"] is None
    assert probed["calibration"] is None  # --no-calibrate: assumed costs
    assert set(probed["recommendation"]) >= {"draft", "draft_max", "p_min"}
    assert probed["template"] == "raw" and probed["n_predict"] == N_PREDICT
    assert [p["id"] for p in probed["prompts"]] == [p.id for p in BUILTIN_PROMPTS]
    assert {"path", "server"} <= set(probed["target"])
    for draft in probed["drafts"]:
        assert {"path", "acceptance_rate", "best_draft_max", "predicted_speedup", "predicted_best", "by_draft_max",
                "prompts_detail", "costs_basis"} <= set(draft)
        assert draft["costs_basis"] == "assumed"
        ks = sorted({r["draft_max"] for r in draft["by_draft_max"]})
        assert ks == list(range(1, 17))
        for row in draft["by_draft_max"]:
            assert {"draft_max", "p_min", "passes", "drafted", "accepted", "accepted_per_pass", "batches",
                    "draft_decodes", "predicted_tokens_per_s", "predicted_speedup"} <= set(row)
            assert row["passes"] == 1 * len(draft["prompts_detail"]) + sum(row["batches"])
            assert row["accepted_per_pass"] == pytest.approx(row["accepted"] / row["passes"], abs=1e-4)
        # the overall counts are the sums of the per-prompt ones
        for row in draft["by_draft_max"]:
            parts = [next(r for r in d["by_draft_max"] if r["draft_max"] == row["draft_max"]
                          and r["p_min"] == row["p_min"]) for d in draft["prompts_detail"]]
            assert row["drafted"] == sum(r["drafted"] for r in parts)
            assert row["accepted"] == sum(r["accepted"] for r in parts)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "paircheck", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "80"}, timeout=600)


def test_estimate_models_the_speed_on_the_measured_counts(probe_file: Path, probed: dict[str, Any],
                                                          smol: dict[str, Path]) -> None:
    done = _cli("estimate", str(smol["target"]), str(smol["q2_k"]), "--from", str(probe_file), "--json")
    assert done.returncode == 0, done.stderr
    est = json.loads(done.stdout)
    entry = _entry(probed, smol["q2_k"])
    assert est["acceptance_basis"] == "measured" and est["acceptance"] == entry["acceptance_rate"]
    assert est["best_draft_max"] == entry["best_draft_max"]
    row = next(r for r in entry["by_draft_max"] if r["draft_max"] == est["draft_max"] and r["p_min"] == 0)
    assert est["expected_tokens_per_pass"] == pytest.approx(row["tokens"] / row["passes"])
    assert est["speedup"] == pytest.approx(row["predicted_speedup"], rel=1e-3)
    text = " ".join(_cli("estimate", str(smol["target"]), str(smol["q2_k"]), "--from", str(probe_file)).stdout.split())
    assert text.startswith("MODELLED speed from MEASURED acceptance")
    assert f"acceptance MEASURED: {probe_file}: measured on llama-server (greedy" in text
    # without a measurement the acceptance is said to be assumed
    plain = " ".join(_cli("estimate", str(smol["target"]), str(smol["q2_k"])).stdout.split())
    # and, with no device named or found, no speed is predicted: the command says what would answer
    assert plain.startswith("NO SPEED PREDICTED") and "paircheck probe" in plain and "--gpu NAME" in plain


def test_estimate_on_a_gpu_prices_the_probes_measured_counts(probe_file: Path, probed: dict[str, Any],
                                                             smol: dict[str, Path]) -> None:
    """Issue 33: `estimate --from probe.json --gpu NAME`: the work the probe replayed (exact for
    greedy decoding), priced by the roofline for the named GPU instead of the probe machine."""
    from paircheck.hardware.pick import pick
    from paircheck.hardware.table import load_gpus
    from paircheck.pipeline import describe
    from paircheck.speed.model import Work, predict
    from paircheck.speed.on_gpu import DEFAULT_CONTEXT, shapes
    from paircheck.speed.roofline import roofline_costs

    done = _cli("estimate", str(smol["target"]), str(smol["q2_k"]), "--from", str(probe_file), "--gpu", "4090",
                "--json")
    assert done.returncode == 0, done.stderr
    pred = json.loads(done.stdout)["predicted"]
    entry = _entry(probed, smol["q2_k"])
    assert pred["acceptance_basis"] == "measured" and pred["acceptance"] == entry["acceptance_rate"]
    assert pred["gpu"]["name"] == "GeForce RTX 4090" and pred["costs_basis"] == "roofline"
    picked = pick(load_gpus(), "4090")
    assert picked is not None and picked.hardware is not None
    t_shape, d_shape = shapes(describe(str(smol["target"])), describe(str(smol["q2_k"])), None, None)
    costs = roofline_costs(t_shape, d_shape, picked.hardware, DEFAULT_CONTEXT)
    rows = {r["draft_max"]: r for r in entry["by_draft_max"] if r["p_min"] == 0}
    assert {p["draft_max"] for p in pred["by_draft_max"]} == set(rows)
    for point in pred["by_draft_max"]:
        r = rows[point["draft_max"]]
        work = Work(float(r["tokens"]), tuple(float(b) for b in r["batches"]), float(r["draft_decodes"]),
                    float(r["generations"]))
        expected = predict(work, costs)
        assert expected is not None and point["speedup"] == pytest.approx(expected.speedup, abs=2e-3)
    assert pred["speedup"] == max(p["speedup"] for p in pred["by_draft_max"])
    text = " ".join(_cli("estimate", str(smol["target"]), str(smol["q2_k"]), "--from", str(probe_file), "--gpu",
                         "4090").stdout.split())
    assert "on GeForce RTX 4090" in text and "from the probe's MEASURED counts" in text
    assert f"acceptance MEASURED: {probe_file}" in text


def test_the_checks_launch_line_takes_the_measured_draft_length(probe_file: Path, probed: dict[str, Any],
                                                               smol: dict[str, Path]) -> None:
    from paircheck.speed.model import MIN_GAIN

    for name in ("q8_0", "q2_k"):
        best = _entry(probed, smol[name])["predicted_best"]
        done = _cli(str(smol["target"]), str(smol[name]), "--probe", str(probe_file), "--json")
        steps = json.loads(done.stdout)["next_steps"]
        if best["speedup"] >= MIN_GAIN:
            setting = f"--spec-draft-n-max {best['draft_max']}" + (f" --spec-draft-p-min {best['p_min']:g}"
                                                                    if best["p_min"] else "")
            assert any(s.endswith(f"--spec-type draft-simple {setting}") for s in steps), steps
            assert any(f"{setting} is the fastest setting paircheck probe found" in s for s in steps)
        else:  # the probe predicts this draft slower: the launch line runs the target alone
            assert not any("-md" in s.split() for s in steps if s.startswith("llama-server")), steps
            assert any("predicts no setting of it faster than the target alone" in s for s in steps)
    # a draft the probe never measured: one clear line, exit 2
    other = _cli(str(smol["target"]), str(smol["random"]) + ".missing", "--probe", str(probe_file))
    assert other.returncode == 2


def _summaries(data: dict[str, Any]) -> list[Any]:
    """Each draft's summary recomputed from the recorded traces in the result file."""
    from paircheck.probe.replay import PromptTrace
    from paircheck.probe.summary import summarize
    from paircheck.speed.model import assumed_costs

    gens = {g["prompt_id"]: g for g in data["generations"]}
    kinds = [(p["id"], p["kind"]) for p in data["prompts"]]
    out = []
    for d in data["drafts"]:
        traces = [PromptTrace(tuple(gens[t["prompt_id"]]["tokens"]), tuple(t["draft_top"]), tuple(t["draft_conf"]),
                              {int(k): tuple(v) for k, v in t["tails"].items()}, gens[t["prompt_id"]]["n_predict"],
                              len(gens[t["prompt_id"]]["prompt_tokens"]), data["settings"]["tail_limit"],
                              {int(k): v for k, v in t["near_ties"].items()})
                  for t in d["traces"]]
        costs = assumed_costs(d["cost_ratio"]) if d["cost_ratio"] is not None else None
        out.append(summarize(d["path"], kinds, traces, data["settings"]["p_min"], costs))
    return out


def test_the_recorded_traces_replay_to_the_same_numbers(probed: dict[str, Any]) -> None:
    # The result file holds what was measured, not only the summary: replaying it gives the
    # summary's numbers again, so nothing depends on the run that wrote it.
    from paircheck.probe.result import summary_to_dict

    for d, summary in zip(probed["drafts"], _summaries(probed), strict=True):
        again = summary_to_dict(summary)
        assert again["by_draft_max"] == d["by_draft_max"]
        assert again["best_draft_max"] == d["best_draft_max"]


def test_the_summary_ranks_the_drafts_and_labels_every_number(probed: dict[str, Any]) -> None:
    from paircheck._format.interface import RenderOptions
    from paircheck._format.probe_text import render_probe
    from paircheck.probe.run import ProbeOutcome

    text = render_probe(ProbeOutcome(probed, _summaries(probed)), RenderOptions(width=80))
    lines = text.splitlines()
    head = " ".join(text.split("\n\n")[0].split())
    assert lines[0].startswith("RUN WITHOUT A DRAFT") or "is the fastest draft: MODELLED" in lines[0]
    assert "speeds MODELLED from assumed costs (--no-calibrate)" in head
    assert "tok/s: not known without a calibration; speedup: MODELLED" in " ".join(text.split())
    for line in lines:
        assert len(line) <= 80 or line.startswith("  llama-server "), line  # commands are never wrapped
    # the ranking table: the random-weight draft comes last, the target itself (no gain
    # possible at cost 1) is never first
    start = next(i for i, line in enumerate(lines) if line.startswith("#"))
    end = next(i for i in range(start, len(lines)) if not lines[i].strip())
    table = lines[start + 2:end]
    assert len(table) == 4
    # best first by the modelled speedup on the measured counts, and at 80 columns the
    # shortened names still tell the four drafts apart
    speeds = [float(row.split()[6].rstrip("x")) for row in table]
    assert speeds == sorted(speeds, reverse=True)
    assert len({row.split()[1] for row in table}) == 4
