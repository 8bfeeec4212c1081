"""``paircheck bench`` when the server misbehaves: a stand-in llama-server on 127.0.0.1.

Only faults are tested here (the real llama-server cannot be made to fail on cue):
a server that goes away mid-run, 503 while loading, malformed JSON, an answer that
never comes, and Ctrl-C. Each must end with one error line, exit code 2, in bounded
time, and the requests measured so far kept in the file with ``complete: false``.
The measurement itself is tested against the real llama-server in test_bench_llamacpp.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import interrupt
import pytest
from cli_exit import exit_code

from paircheck.bench.measure import load_bench_result

ROOT = Path(__file__).resolve().parents[2]


class StandIn(ThreadingHTTPServer):
    """Answers like llama-server; ``mode`` picks the fault."""

    daemon_threads = True

    def __init__(self, mode: str, ok_before_fault: int = 0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode = mode
        self.ok_before_fault = ok_before_fault
        self.completions = 0
        self.release = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: StandIn

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.server.mode == "loading":
            self._send(503, b'{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}')
        elif self.path == "/health":
            self._send(200, b'{"status":"ok"}')
        else:
            self._send(200, json.dumps({"model_path": "stand-in.gguf", "build_info": "stand-in"}).encode())

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length))
        srv = self.server
        srv.completions += 1
        if srv.completions > srv.ok_before_fault:
            if srv.mode == "down":
                # The server process dies: the connection closes without an answer, and
                # the listening socket goes away so later requests are refused.
                threading.Thread(target=srv.shutdown, daemon=True).start()
                srv.socket.close()
                self.close_connection = True
                return
            if srv.mode == "malformed":
                self._send(200, b'{"content": "abc", "timings": {')
                return
            if srv.mode in ("slow", "interrupt"):
                srv.release.wait(30)
                return
        answer = {"content": f"echo {body['prompt'][:8]}", "stop_type": "limit", "stopping_word": "",
                  "tokens_predicted": body["n_predict"],
                  "timings": {"prompt_n": 5, "prompt_ms": 1.0, "predicted_n": body["n_predict"], "predicted_ms": 2.0}}
        self._send(200, json.dumps(answer).encode())


def _serve(mode: str, ok_before_fault: int = 0) -> Iterator[StandIn]:
    srv = StandIn(mode, ok_before_fault)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.release.set()
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def standin(request: pytest.FixtureRequest) -> Iterator[StandIn]:
    mode, ok = request.param
    yield from _serve(mode, ok)


_cli = exit_code


def _bench_args(url: str, out: Path, *extra: str) -> list[str]:
    return ["bench", "--url", url, "--label", "draft", "--output", str(out), "--runs", "2", "--n-predict", "4", *extra]


@pytest.mark.parametrize("standin", [("down", 4)], indirect=True)
def test_server_down_mid_run_keeps_partial_results(standin: StandIn, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    assert _cli(_bench_args(standin.url, out)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("paircheck: error: ") and "partial results kept" in err
    result = load_bench_result(str(out))
    # 3 warm-up requests, then one measured; the 5th request found the server gone.
    assert result["complete"] is False and result["error"]
    assert [(r["prompt_id"], r["run"]) for r in result["requests"]] == [("code", 0)]


@pytest.mark.parametrize("standin", [("loading", 0)], indirect=True)
def test_503_while_loading(standin: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    assert _cli(_bench_args(standin.url, out)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "503" in err and "Loading model" in err
    result = load_bench_result(str(out))
    assert result["complete"] is False and result["requests"] == []


@pytest.mark.parametrize("standin", [("malformed", 0)], indirect=True)
def test_malformed_json(standin: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(_bench_args(standin.url, tmp_path / "r.json")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "malformed JSON" in err and "/completion" in err


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
@pytest.mark.parametrize("standin", [("slow", 3)], indirect=True)
def test_slow_answer_is_bounded_by_the_timeout(standin: StandIn, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    start = time.monotonic()
    assert _cli(_bench_args(standin.url, out, "--timeout", "1", "--warmup", "0")) == 2
    assert time.monotonic() - start < 10
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no answer within 1 s" in err
    assert len(load_bench_result(str(out))["requests"]) == 3


def test_nothing_listening(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    srv = StandIn("ok")
    url = srv.url
    srv.server_close()  # the port is now closed
    assert _cli(_bench_args(url, tmp_path / "r.json")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot connect" in err


@pytest.mark.parametrize("standin", [("interrupt", 4)], indirect=True)
def test_ctrl_c_keeps_what_was_measured(standin: StandIn, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "paircheck", *_bench_args(standin.url, out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            preexec_fn=interrupt.default_sigint)
    deadline = time.monotonic() + 30
    while standin.completions < 5 and time.monotonic() < deadline:
        time.sleep(0.05)  # the 5th request hangs: 3 warm-up + 1 measured are done
    assert standin.completions >= 5
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=90)  # generous: a loaded CI machine is slow
    assert proc.returncode == 2
    assert err.decode().count("\n") == 1 and "interrupted" in err.decode()
    result = load_bench_result(str(out))
    assert result["complete"] is False and result["error"] == "interrupted"
    assert len(result["requests"]) == 1


def test_compare_refuses_broken_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": 1, "kind": "paircheck-bench", "requests": [')
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    for bad in (broken, other, tmp_path / "missing.json"):
        assert _cli(["bench", "compare", str(bad), str(bad)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(bad) in err


@pytest.mark.parametrize("standin", [("down", 8)], indirect=True)
def test_server_down_with_two_clients_is_one_line_and_keeps_what_was_measured(
        standin: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # two client threads: the one whose request finds the server gone stops the measurement; the
    # other's failure is not a second message, and nothing hangs
    out = tmp_path / "r.json"
    start = time.monotonic()
    assert _cli(_bench_args(standin.url, out, "--parallel", "2")) == 2
    assert time.monotonic() - start < 30
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("paircheck: error: ") and "partial results kept" in err
    result = load_bench_result(str(out))
    assert result["complete"] is False and result["error"]
    assert 0 < len(result["requests"]) < 2 * 3 * 2  # 6 warm-up requests, then some of the measured ones
    assert {r["client"] for r in result["requests"]} <= {0, 1}


@pytest.mark.parametrize("standin", [("interrupt", 8)], indirect=True)
def test_ctrl_c_with_two_clients_keeps_what_was_measured(standin: StandIn, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "paircheck", *_bench_args(standin.url, out, "--parallel", "2")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            preexec_fn=interrupt.default_sigint)
    deadline = time.monotonic() + 30
    while standin.completions < 10 and time.monotonic() < deadline:
        time.sleep(0.05)  # requests 9 and 10 hang, one per client: 6 warm-up + 2 measured are done
    assert standin.completions >= 10
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=90)
    assert proc.returncode == 2
    assert err.decode().count("\n") == 1 and "interrupted" in err.decode()
    result = load_bench_result(str(out))
    assert result["complete"] is False and result["error"] == "interrupted"
    assert len(result["requests"]) == 2
