"""``bench`` and ``bench run`` at a workload, against the real llama-server (the pinned build) on
the real SmolLM2-135M-Instruct (Q4_1, from PyPI; tests/smollm.py), over real HTTP.

What the server itself says is the evidence: its ``/slots`` while bench runs (two requests really
in flight at once), ``tokens_evaluated`` and ``timings.cache_n`` (the depth reached, the prefix
reused), its own ``/apply-template`` and ``/tokenize`` (a chat log sent through the template).
Replies are short (8 to 16 tokens) and runs few: these test the workload, not the speed.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llamacpp_build
import pytest
import smollm
from cli_exit import exit_code

from paircheck.bench.compare import busy_ms
from paircheck.bench.measure import load_bench_result
from paircheck.llama_server.http import request_json
from paircheck.llama_server.process import RunningServer, llama_server, server_args

pytestmark = pytest.mark.slow  # starts the pinned llama-server

FLAGS = list(smollm.SERVER_FLAGS)


_cli = exit_code


@pytest.fixture(scope="module")
def binary() -> str:
    return str(llamacpp_build.ensure_tools()["llama-server"])


@pytest.fixture(scope="module")
def target() -> Path:
    return smollm.target()


@pytest.fixture(scope="module")
def one_slot(binary: str, target: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    log = tmp_path_factory.mktemp("one-slot")
    with llama_server(binary, server_args(str(target), None, 2048, FLAGS), ready_timeout=300, log_dir=log) as srv:
        yield srv


@pytest.fixture(scope="module")
def two_slots(binary: str, target: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    log = tmp_path_factory.mktemp("two-slots")
    args = server_args(str(target), None, 2048, FLAGS, parallel=2)
    with llama_server(binary, args, ready_timeout=300, log_dir=log) as srv:
        yield srv


def _bench(url: str, out: Path, *extra: str) -> dict[str, Any]:
    assert _cli(["bench", "--url", url, "--label", "x", "--output", str(out), *extra]) == 0
    return load_bench_result(str(out))


def test_parallel_2_really_has_two_requests_in_flight(two_slots: RunningServer, tmp_path: Path) -> None:
    busy: list[int] = []
    done = threading.Event()

    def watch() -> None:  # the server's own view: how many slots are processing right now
        while not done.is_set():
            slots = request_json(two_slots.url, "/slots", timeout=10)
            busy.append(sum(1 for s in slots if s.get("is_processing")))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        result = _bench(two_slots.url, tmp_path / "p2.json", "--parallel", "2", "--runs", "1", "--warmup", "0",
                        "--n-predict", "24")
    finally:
        done.set()
        watcher.join(10)
    assert max(busy) == 2, f"never two slots busy at once: {busy}"
    assert result["settings"]["parallel"] == 2 and result["complete"]
    reqs = result["requests"]
    assert len(reqs) == 2 * 3  # two clients, each every built-in prompt
    assert {(r["client"], r["id_slot"]) for r in reqs} == {(0, 0), (1, 1)}  # client c on slot c
    # both clients' requests overlapped in time: the run took less wall time than their sum
    assert busy_ms(reqs) < 0.8 * sum(r["client_ms"] for r in reqs)
    for c in (0, 1):  # each client sent every prompt, starting at a different one
        mine = sorted((r for r in reqs if r["client"] == c), key=lambda r: r["sent_ms"])
        assert {r["prompt_id"] for r in mine} == {"code", "prose", "list"}
    firsts = {min((r for r in reqs if r["client"] == c), key=lambda r: r["sent_ms"])["prompt_id"] for c in (0, 1)}
    assert len(firsts) == 2


def test_together_starts_every_slot_in_the_same_step(two_slots: RunningServer, tmp_path: Path) -> None:
    """--together: each pass's two requests as one request of two prompts, which the server
    evaluates in one batch and then generates in lockstep. Its own timings say so: the two
    prompts' evaluations took the same time (one batch), and so did the two generations of as
    many tokens (the same steps); two clients' requests arrive apart, and the server starts the
    later one a step or more after (measured here: prompt_ms 120 against 459)."""
    result = _bench(two_slots.url, tmp_path / "together.json", "--parallel", "2", "--together", "--runs", "2",
                    "--warmup", "0", "--n-predict", "24")
    assert result["settings"]["together"] is True and result["complete"]
    reqs = result["requests"]
    assert len(reqs) == 2 * 2 * 3  # two runs, two clients, each every built-in prompt
    by_request: dict[tuple[int, float], list[dict[str, Any]]] = {}
    for r in reqs:
        by_request.setdefault((r["run"], r["sent_ms"]), []).append(r)
    assert len(by_request) == 2 * 3 and all(len(pair) == 2 for pair in by_request.values())
    for pair in by_request.values():
        a, b = (r["timings"] for r in pair)
        assert {r["client"] for r in pair} == {0, 1} and pair[0]["prompt_id"] != pair[1]["prompt_id"]
        assert pair[0]["client_ms"] == pair[1]["client_ms"]  # one answer for both
        assert a["predicted_n"] == b["predicted_n"] == 24
        assert abs(a["prompt_ms"] - b["prompt_ms"]) <= 0.05 * max(a["prompt_ms"], b["prompt_ms"]), (a, b)
        assert abs(a["predicted_ms"] - b["predicted_ms"]) <= 0.05 * max(a["predicted_ms"], b["predicted_ms"]), (a, b)


def test_more_at_once_than_the_server_has_slots_is_one_line(one_slot: RunningServer, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["bench", "--url", one_slot.url, "--label", "x", "--output", str(tmp_path / "x.json"),
                 "--parallel", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has 1 slot (/props total_slots)" in err and "--parallel 2" in err


def test_depth_reaches_the_tokens_asked_and_the_prefix_is_reused(one_slot: RunningServer, tmp_path: Path) -> None:
    depth = 1000
    result = _bench(one_slot.url, tmp_path / "deep.json", "--context-tokens", str(depth), "--runs", "2",
                    "--n-predict", "8")
    assert result["settings"]["context_tokens"] == depth and result["settings"]["cache_prompt"] is True
    assert result["settings"]["context_source"] == "built-in"
    for prepared in result["prepared"]:
        # the server's own count of what was sent: the depth, within a word
        assert depth - 12 <= prepared["context_tokens"] <= depth + 4, prepared
        assert prepared["text"].startswith("Here is a document for context.")
    for r in result["requests"]:
        t = r["timings"]
        assert r["tokens_evaluated"] == t["cache_n"] + t["prompt_n"]
        assert depth - 12 <= r["tokens_evaluated"] <= depth + 4
        # measured runs reuse the prefix the warm-up evaluated: only the request's own tail is new
        assert t["cache_n"] >= depth - 100 and t["prompt_n"] < 100, t


def test_chat_logs_go_through_the_targets_template(one_slot: RunningServer, tmp_path: Path) -> None:
    messages = [{"role": "system", "content": "You answer in one short sentence."},
                {"role": "user", "content": "What is the capital of France?"}]
    prompts = tmp_path / "chat.jsonl"
    prompts.write_text(json.dumps({"id": "chat", "messages": messages}) + "\n"
                       + json.dumps({"id": "raw", "prompt": messages[1]["content"]}) + "\n")
    result = _bench(one_slot.url, tmp_path / "chat.json", "--prompts", str(prompts), "--runs", "1", "--warmup", "0",
                    "--n-predict", "8")
    rendered = request_json(one_slot.url, "/apply-template", {"messages": messages}, 30)["prompt"]
    assert "<|im_start|>system" in rendered  # SmolLM2's ChatML, as the server renders it
    tokens = request_json(one_slot.url, "/tokenize", {"content": rendered, "add_special": True,
                                                      "parse_special": True}, 30)["tokens"]
    by_id = {r["prompt_id"]: r for r in result["requests"]}
    assert by_id["chat"]["tokens_evaluated"] == len(tokens)  # exactly the template's rendering
    assert by_id["raw"]["tokens_evaluated"] < len(tokens) - 10  # a plain prompt is still sent raw
    prepared = {p["id"]: p for p in result["prepared"]}
    assert prepared["chat"]["template"] is True and prepared["chat"]["text"] == rendered
    assert prepared["raw"]["template"] is False
    # at a depth, the document goes into the first user message; the chat stays a chat
    deep = _bench(one_slot.url, tmp_path / "chat-deep.json", "--prompts", str(prompts), "--runs", "1",
                  "--n-predict", "8", "--context-tokens", "600")
    text = {p["id"]: p for p in deep["prepared"]}["chat"]["text"]
    assert text.startswith(rendered.split("<|im_start|>user")[0] + "<|im_start|>user\nHere is a document")
    assert text.endswith("What is the capital of France?<|im_end|>\n<|im_start|>assistant\n")
    for r in deep["requests"]:
        assert 600 - 12 <= r["tokens_evaluated"] <= 600 + 4


def test_bench_run_over_a_grid(binary: str, target: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    draft = smollm.quantized("Q8_0", llamacpp_build.ensure_tools()["llama-quantize"])
    out = tmp_path / "grid"
    code = _cli(["bench", "run", str(target), str(draft), "--llama-server", binary, "--output-dir", str(out),
                 "--context-tokens", "0,300", "--parallel", "1,2", "--n-predict", "8", "--runs", "1",
                 "--max-runs", "1", "--json", "--", *FLAGS])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    points = data["workloads"]
    # one entry per grid point, in the grid's order (context depth outermost)
    assert [(p["workload"]["context_tokens"], p["workload"]["parallel"], p["workload"]["n_predict"])
            for p in points] == [(0, 1, 8), (0, 2, 8), (300, 1, 8), (300, 2, 8)]
    # the top level is the first point, as before grids
    assert data["workload"] == points[0]["workload"] and data["speedup"] == points[0]["speedup"]
    assert data["files"] == points[0]["files"]
    for p in points:
        w = p["workload"]
        assert p["ctx_size"] == w["parallel"] * 4096 and p["ctx_per_slot"] == 4096
        for side in ("baseline", "draft"):
            agg = p[side]["aggregate_tokens_per_s"]
            assert agg["n"] == 1 and agg["median"] > 0
            result = load_bench_result(p["files"][side])
            command = result["server_command"]
            assert command[command.index("--parallel") + 1] == str(w["parallel"])
            assert command[command.index("--ctx-size") + 1] == str(p["ctx_size"])
            assert result["settings"]["context_tokens"] == w["context_tokens"]
            assert len(result["requests"]) == 3 * w["parallel"]
            assert Path(p["files"][side]).parent.name == f"ctx{w['context_tokens']}-n8-p{w['parallel']}"
        if p["speedup"] is not None:  # equal work: the aggregate ratio
            assert p["speedup"] == pytest.approx(
                p["draft"]["aggregate_tokens_per_s"]["median"] / p["baseline"]["aggregate_tokens_per_s"]["median"])
        assert p["acceptance_rate"] > 0.5  # its own Q8_0 copy drafts
    # the table: one verdict line per point, each saying it was measured and where
    from paircheck._format.text_bench_grid import render_grid
    from paircheck.bench.compare import compare

    comps = [compare(load_bench_result(p["files"]["baseline"]), load_bench_result(p["files"]["draft"])) for p in points]
    text = render_grid(comps, [p["ctx_size"] for p in points], width=80)
    heads = [line for line in text.splitlines() if line.startswith("MEASURED")]
    assert len(heads) == 4
    assert heads[0].startswith("MEASURED at short prompts, 1 at once, 8-token replies")
    assert any(h.startswith("MEASURED at ctx 300, 2 at once") for h in heads)
    assert all(len(line) <= 80 for line in text.splitlines())
