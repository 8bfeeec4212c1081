"""``bench`` and ``bench run`` at a workload, without a server: bad input is one line and exit 2
before anything starts, chat logs are read, and the arithmetic of concurrent runs (the wall time
while any request was outstanding, the aggregate tokens/s) on request records of known times.

The measurement itself, on the real llama-server, is in test_bench_workload_llamacpp.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_exit import exit_code

from paircheck.bench.compare import busy_ms, compare, complete_runs, decode_busy_ms, run_aggregates, run_totals
from paircheck.bench.runner import check_ctx_size, ctx_size_for, point_folder
from paircheck.errors import InputError
from paircheck.llama_server.prompts import Prompt, load_prompts
from paircheck.workload import Workload

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "fixtures" / "examples"
TARGET, DRAFT = str(EXAMPLES / "ggml-vocab-llama-spm.gguf"), str(EXAMPLES / "ggml-vocab-llama-spm.gguf")


_cli = exit_code


def _one_line(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    captured = capsys.readouterr()
    err = captured.err
    assert err.count("\n") == 1 and err.startswith("paircheck: error: "), err
    assert "Traceback" not in err and not captured.out
    for word in words:
        assert word in err, (word, err)
    return err


# A server binary that must never be started: every case below fails before.
NO_SERVER = ["--llama-server", "/nonexistent/llama-server", "--output-dir"]


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--parallel", "0", "--parallel: 0 is outside 1..256"),
    ("--parallel", "two", "--parallel: expected whole numbers"),
    ("--context-tokens", "abc", "--context-tokens: expected whole numbers"),
    ("--context-tokens", "-5", "--context-tokens: expected whole numbers"),
    ("--n-predict", "0", "--n-predict: 0 is outside"),
    ("--context-tokens", "1,2,3,4,5,6,7,8,9", "grid points; at most 64"),
])
def test_bad_workload_is_one_line_before_anything_starts(option: str, value: str, said: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    extra = ["--parallel", "1,2,3,4,5,6,7,8"] if said.startswith("grid") else []
    code = _cli(["bench", "run", TARGET, DRAFT, *NO_SERVER, str(tmp_path / "out"), option, value, *extra])
    assert code == 2
    _one_line(capsys, said)
    assert not (tmp_path / "out").exists()


def test_bad_input_through_the_real_entry_point_is_one_line(tmp_path: Path) -> None:
    # python -m paircheck, as a user runs it: exit 2, one line, no traceback
    proc = subprocess.run([sys.executable, "-m", "paircheck", "bench", "run", TARGET, DRAFT, "--parallel", "0"],
                          capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "--parallel" in proc.stderr and "Traceback" not in proc.stderr
    assert not list(tmp_path.iterdir())  # no results folder: nothing was measured


@pytest.mark.parametrize(("lines", "said"), [
    ('{"id": "a", "prompt": "x"\n', "not JSON"),
    ('{"messages": "hello"}\n', '"messages" must be a non-empty list'),
    ('{"messages": []}\n', '"messages" must be a non-empty list'),
    ('{"messages": [{"role": "user"}]}\n', "message #1 is not"),
    ('{"messages": [{"role": "user", "content": [{"type": "text"}]}]}\n', "with text content"),
    ('{"messages": [{"role": "system", "content": "be brief"}]}\n', 'no "user" message'),
    ('{"prompt": "x", "messages": [{"role": "user", "content": "y"}]}\n', "not both"),
])
def test_broken_prompt_files_are_one_line(lines: str, said: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    prompts = tmp_path / "p.jsonl"
    prompts.write_text(lines)
    for argv in (["bench", "run", TARGET, DRAFT, *NO_SERVER, str(tmp_path / "out"), "--prompts", str(prompts)],
                 ["bench", "--url", "http://127.0.0.1:9", "--label", "x", "--output", str(tmp_path / "x.json"),
                  "--prompts", str(prompts)]):
        assert _cli(argv) == 2
        _one_line(capsys, f"{prompts}:1", said)
    assert not (tmp_path / "out").exists() and not (tmp_path / "x.json").exists()


def test_other_bad_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = ["bench", "run", TARGET, DRAFT, *NO_SERVER, str(tmp_path / "out")]
    # a context size that cannot hold two slots of 4096 tokens and the reply
    assert _cli([*run, "--context-tokens", "4096", "--parallel", "2", "--ctx-size", "8192"]) == 2
    _one_line(capsys, "--ctx-size: 8192 gives each of 2 slot(s) 4096 tokens", "give at least 8960")
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n")
    assert _cli([*run, "--context-tokens", "512", "--context-file", str(empty)]) == 2
    _one_line(capsys, "is empty")
    assert _cli([*run, "--context-tokens", "512", "--context-file", str(tmp_path / "missing.txt")]) == 2
    _one_line(capsys, "no such file (--context-file)")
    assert _cli([*run, "--runs", "0"]) == 2
    _one_line(capsys, "--runs must be >= 1")
    # bench measures one server into one file: one value each
    assert _cli(["bench", "--url", "http://127.0.0.1:9", "--label", "x", "--output", str(tmp_path / "x.json"),
                 "--parallel", "1,2"]) == 2
    _one_line(capsys, "one value each here")
    assert not (tmp_path / "out").exists() and not (tmp_path / "x.json").exists()


def test_chat_logs_are_read_only_where_they_can_be_sent(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"id": "agent", "n_predict": 9, "messages": [
        {"role": "system", "content": "You are terse."}, {"role": "user", "content": "First question"},
        {"role": "assistant", "content": "First answer"}, {"role": "user", "content": "Second question"}]})
        + "\n" + json.dumps({"prompt": "plain"}) + "\n")
    chat, plain = load_prompts(str(path), allow_messages=True)
    assert chat.id == "agent" and chat.n_predict == 9 and chat.text == "Second question"
    assert chat.messages is not None and [m["role"] for m in chat.messages] == ["system", "user", "assistant", "user"]
    assert plain.messages is None and plain.text == "plain"
    with pytest.raises(InputError, match="chat logs"):  # probe does not send chat logs (yet): it says so
        load_prompts(str(path))


def test_ctx_size_holds_every_slot() -> None:
    assert ctx_size_for([Workload(0, 128, 1)]) == 4096  # as bench run always had
    assert ctx_size_for([Workload(0, 128, 4)]) == 4 * 4096
    assert ctx_size_for([Workload(4096, 128, 2), Workload(0, 256, 2)]) == 2 * 4608  # 4096 + 256 + 256
    assert ctx_size_for([Workload(8192, 128, 1)], [Prompt("p", "x", n_predict=600)]) == 9216  # 8192 + 600 + 256
    check_ctx_size(8448, [Workload(4096, 128, 2)])  # 4096 + 128 per slot: it fits
    with pytest.raises(InputError, match="fewer than --context-tokens 4096"):
        check_ctx_size(8192, [Workload(4096, 128, 2)])
    assert point_folder(Workload(4096, 64, 2)) == "ctx4096-n64-p2"


def _req(pid: str, run: int, client: int, sent: float, ms: float, gen_ms: float, n: int = 10,
         content: str = "same") -> dict[str, Any]:
    return {"prompt_id": pid, "run": run, "client": client, "sent_ms": sent, "client_ms": ms, "content": content,
            "timings": {"prompt_n": 1, "prompt_ms": 1.0, "predicted_n": n, "predicted_ms": gen_ms}}


def _result(requests: list[dict[str, Any]], parallel: int, label: str) -> dict[str, Any]:
    return {"label": label, "complete": True, "settings": {"parallel": parallel, "n_predict": 10, "context_tokens": 0},
            "requests": requests, "machine": {}}


def test_concurrent_run_time_is_the_wall_time_while_any_request_was_outstanding() -> None:
    # two clients, two prompts each: client 0 from 0 to 1000 ms, client 1 from 100 to 1500 ms
    reqs = [_req("a", 0, 0, 0, 500, 400), _req("b", 0, 0, 500, 500, 400),
            _req("b", 0, 1, 100, 700, 300), _req("a", 0, 1, 800, 700, 600)]
    assert busy_ms(reqs) == pytest.approx(1500)  # not the 2,400 ms of summed client times
    # generating: [100, 500], [600, 1000], [500, 800], [900, 1500] -> [100, 1500] less nothing
    assert decode_busy_ms(reqs) == pytest.approx(1400)
    result = _result(reqs, 2, "x")
    (run,) = complete_runs(result, ["a", "b"])
    assert sorted(map(id, run)) == sorted(map(id, reqs))
    agg, gen = run_aggregates(result, ["a", "b"])
    assert agg == [pytest.approx(40 * 1000 / 1500)] and gen == [pytest.approx(40 * 1000 / 1400)]
    totals, per_request = run_totals(result, ["a", "b"])
    assert totals == [pytest.approx(1500)] and per_request == [pytest.approx(40 * 1000 / 1700)]
    # a run missing one client's request is left out, as an interrupted run always was
    assert complete_runs(_result(reqs[:3], 2, "x"), ["a", "b"]) == []


def test_one_at_a_time_the_run_time_is_the_sum_of_client_times_as_before() -> None:
    old = [{k: v for k, v in r.items() if k not in ("client", "sent_ms")}
           for r in (_req("a", 0, 0, 0, 500, 400), _req("b", 0, 0, 520, 300, 250))]
    new = [_req("a", 0, 0, 0, 500, 400), _req("b", 0, 0, 520, 300, 250)]
    assert busy_ms(old) == busy_ms(new) == 800  # the 20 ms between the requests is the client's, not counted
    assert decode_busy_ms(old) == decode_busy_ms(new) == 650


def _side(parallel: int, label: str, scale: float, texts: dict[int, str] | None = None) -> dict[str, Any]:
    reqs = []
    for run in range(3):
        for client in range(parallel):
            for i, pid in enumerate(("a", "b")):
                start = i * 500 * scale
                reqs.append(_req(pid, run, client, start, 500 * scale, 450 * scale,
                                 content=(texts or {}).get(client, "same")))
    return _result(reqs, parallel, label)


def test_speedup_at_two_at_once_is_the_aggregate_ratio() -> None:
    comp = compare(_side(2, "baseline", 1.0), _side(2, "draft", 0.5))
    assert comp.workload == {"context_tokens": 0, "n_predict": 10, "parallel": 2}
    assert comp.speedup == pytest.approx(2.0) and comp.equal_work == "outputs"
    assert comp.baseline_aggregate_tokens_per_s is not None and comp.draft_aggregate_tokens_per_s is not None
    assert comp.draft_aggregate_tokens_per_s.median == pytest.approx(2 * comp.baseline_aggregate_tokens_per_s.median)
    assert comp.baseline_aggregate_tokens_per_s.median == pytest.approx(40 * 1000 / 1000)  # 2 clients x 2 x 10
    assert any("2 clients at once" in n for n in comp.notes)


def test_texts_that_differ_in_one_slot_are_equal_work_in_tokens_only_with_several_at_once() -> None:
    draft = _side(2, "draft", 0.5, texts={1: "other"})
    comp = compare(_side(2, "baseline", 1.0), draft)
    assert comp.outputs_equal is False and comp.equal_work == "tokens" and comp.speedup == pytest.approx(2.0)
    assert any("same number of tokens" in w for w in comp.warnings)
    # one request at a time the rule stays: different text, no speedup
    one = compare(_side(1, "baseline", 1.0), _side(1, "draft", 0.5, texts={0: "other"}))
    assert one.equal_work is None and one.speedup is None and one.time_ratio == pytest.approx(2.0)
