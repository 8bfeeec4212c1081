"""Network faults, each from a real HTTP server on 127.0.0.1 that misbehaves on purpose.

Every case runs the real CLI in a subprocess and asserts the outcome (success, or exactly
one line on stderr and exit 2) and a bound on the wall time. The bounds are generous for
a loaded 2-core machine but far below what an unbounded wait or a retry storm costs.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from httpserver import ForwardProxy, TestServer

TIMEOUT = "1"  # PAIRCHECK_HTTP_TIMEOUT for these tests: a wait of more than 1 s is a fault
STARTUP = 6.0  # interpreter + imports of a CLI run, with room for a busy 2-core CI machine


def _run(args: list[str], **env: str) -> tuple[subprocess.CompletedProcess[str], float]:
    full = {**os.environ, "PAIRCHECK_HTTP_TIMEOUT": TIMEOUT, "HF_TOKEN": "", **env}
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "paircheck", *args], capture_output=True, text=True, env=full,
                            timeout=120)
    return result, time.monotonic() - start


def _one_error_line(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr and "Retry" not in result.stderr
    for word in words:
        assert word in result.stderr, (word, result.stderr)


@pytest.fixture
def model(gguf_factory) -> Path:
    # 4000 tokens: about 40 KB of metadata, enough for a trickle to outlast the deadline.
    return gguf_factory(n_tokens=4000)


def _fault_run(model: Path, fault: str, configure=None, **env: str):
    with TestServer() as server:
        server.stall_seconds = 15  # far above every bound below: waiting it out fails the test
        if configure is not None:
            configure(server)
        url = server.add_file("m.gguf", model)
        server.fault("m.gguf", fault)
        result, took = _run([url, str(model)], **env)
    return result, took, server


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
@pytest.mark.parametrize(
    ("fault", "words", "bound"),
    [
        ("416", ["HTTP 416"], 0),
        ("badrange", ["not bytes from 0", "Range"], 0),
        ("truncate", ["truncated"], 0),
        ("401", ["access denied", "HF_TOKEN"], 0),
        ("403", ["access denied"], 0),
        ("404", ["not found"], 0),
        ("loop", ["redirect loop"], 0),
        ("html", ["HTML page"], 0),
        # The body stops half-way: one read timeout (1 s), not the server's 6 s.
        ("stallbody", ["stalled for 1 s"], 2.5),
        # The answer never comes: one timeout.
        ("stall", ["no answer", "within 1 s"], 2.5),
        # A 206 whose Content-Length promises 1000 bytes more than its range holds.
        ("longlen", ["Content-Length", "disagrees"], 0),
        # A 200 (Range ignored) promising 1000 bytes more than ever come, connection held
        # open: the stream is read up to the promised end, so one read timeout.
        ("norange-longlen", ["stalled for 1 s"], 2.5),
        # Always 500: three attempts (0.5 s + 1 s of backoff), then one line.
        ("500", ["HTTP 500", "3 attempts"], 3.5),
    ],
)
def test_fault_gives_one_line_and_exit_2_in_bounded_time(model: Path, fault: str, words: list[str], bound: float):
    result, took, _ = _fault_run(model, fault)
    _one_error_line(result, *words)
    assert took < STARTUP + bound, took


def test_no_range_support_is_read_as_a_stream(model: Path, tmp_path: Path) -> None:
    # 32 MiB of tensor data after the metadata: a server that ignores Range sends it all,
    # and paircheck must stop reading (close the connection) once the metadata is parsed.
    big = tmp_path / "big.gguf"
    big.write_bytes(model.read_bytes() + b"\0" * (32 << 20))
    result, took, server = _fault_run(big, "norange")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("COMPATIBLE"), result.stdout
    # One request, answered 200 (the whole file), read as a stream: no retry, no range.
    assert [(entry[2] is not None, entry[3]) for entry in server.counters.log] == [(True, 200)]
    # What crossed the wire: the metadata and what the socket buffers took, never the tail.
    assert server.counters.body_bytes < model.stat().st_size + (8 << 20), server.counters.body_bytes
    assert took < STARTUP


def test_content_length_that_disagrees_with_content_range_is_named(model: Path) -> None:
    # The lie would leave 1000 bytes of body where the next answer's status line belongs.
    result, took, _ = _fault_run(model, "shortlen")
    _one_error_line(result, "Content-Length", "disagrees")
    assert took < STARTUP


def test_short_content_length_without_range_is_a_clean_truncation(model: Path, tmp_path: Path) -> None:
    # 200 to a range request (Range ignored) with a Content-Length 1000 bytes short: the
    # stream ends before the metadata does: the file the server offers is cut inside its
    # keys. As the target nothing can be judged of it (issue 50): one line, exit 2, with the
    # server named as the one whose copy is cut.
    result, took, _ = _fault_run(model, "norange-shortlen")
    _one_error_line(result, "ends inside its metadata", "the file on the server is itself cut short")
    assert "download was probably interrupted" not in result.stderr
    assert took < STARTUP


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_slow_trickle_hits_the_overall_deadline(model: Path) -> None:
    # 64 bytes every 0.1 s: every single wait is short, the whole read is not. With a
    # 0.5 s timeout the deadline is 5 s, far before the ~60 s the trickle would take.
    result, took, _ = _fault_run(model, "trickle", lambda s: setattr(s, "trickle_seconds", 0.1),
                                 PAIRCHECK_HTTP_TIMEOUT="0.5")
    _one_error_line(result, "too slow", "gave up after 5 s")
    assert took < STARTUP + 6.5, took


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_429_with_short_retry_after_is_waited_for(model: Path) -> None:
    result, took, server = _fault_run(model, "429x1", lambda s: setattr(s, "retry_after", "1"))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no retry chatter
    statuses = [entry[3] for entry in server.counters.log]
    assert statuses[0] == 429 and 206 in statuses
    assert 1.0 <= took < STARTUP + 2.5, took


def test_429_with_long_retry_after_is_reported_not_waited_for(model: Path) -> None:
    result, took, server = _fault_run(model, "429", lambda s: setattr(s, "retry_after", "3600"))
    _one_error_line(result, "HTTP 429", "3600 s")
    assert took < STARTUP, took
    assert server.counters.requests == 1


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_5xx_then_success_is_retried_a_bounded_number_of_times(model: Path) -> None:
    result, took, server = _fault_run(model, "503x2")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    statuses = [entry[3] for entry in server.counters.log]
    assert statuses[:2] == [503, 503] and statuses[2] == 206
    assert 1.5 <= took < STARTUP + 3, took  # 0.5 s + 1 s of backoff


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_5xx_more_often_than_the_retries_fails(model: Path) -> None:
    result, took, server = _fault_run(model, "503x3")
    _one_error_line(result, "HTTP 503", "3 attempts")
    assert [entry[3] for entry in server.counters.log] == [503, 503, 503]


def test_redirect_to_another_host_drops_the_token(model: Path, tmp_path: Path) -> None:
    with TestServer() as cdn, TestServer() as hub:
        target = cdn.add_file("blob/m.gguf", model)
        hub.fault("org/m/resolve/main/m.gguf", f"redirect:{target}")
        url = f"{hub.url}/org/m/resolve/main/m.gguf"
        result, took = _run([url, str(model)], HF_ENDPOINT=hub.url, HF_TOKEN="secret")
    assert result.returncode == 0, result.stderr
    assert hub.counters.auth and all(a == "Bearer secret" for a in hub.counters.auth)
    assert cdn.counters.auth and all(a is None for a in cdn.counters.auth)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("endpoint", ["closed", "http://no-such-host.invalid", "http://paircheck-no-such-host"])
def test_hub_id_without_network_fails_fast_in_one_line(endpoint: str, tmp_path: Path) -> None:
    if endpoint == "closed":
        endpoint = f"http://127.0.0.1:{_closed_port()}"
    result, took = _run(["Qwen/Qwen2.5-14B-Instruct", "Qwen/Qwen2.5-0.5B-Instruct"],
                        HF_ENDPOINT=endpoint, HF_HUB_CACHE=str(tmp_path / "cache"), PAIRCHECK_HTTP_TIMEOUT="20")
    _one_error_line(result)
    assert "cannot connect" in result.stderr or "cannot resolve host" in result.stderr, result.stderr
    # Retrying cannot fix these: no backoff, whatever the timeout.
    assert took < STARTUP + 2, took


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_http_timeout_setting_shortens_the_wait(model: Path) -> None:
    short, short_took, _ = _fault_run(model, "stall", PAIRCHECK_HTTP_TIMEOUT="0.5")
    longer, longer_took, _ = _fault_run(model, "stall", PAIRCHECK_HTTP_TIMEOUT="2.5")
    _one_error_line(short, "within 0.5 s")
    _one_error_line(longer, "within 2.5 s")
    assert longer_took - short_took > 1.2, (short_took, longer_took)


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_hub_api_faults(model: Path, tmp_path: Path) -> None:
    env = {"HF_HUB_CACHE": str(tmp_path / "cache")}
    with TestServer() as server:
        server.add_repo("org/m-GGUF", {"m-Q4_K_M.gguf": model})
        server.add_repo("org/html-GGUF", {"m-Q4_K_M.gguf": model})
        server.add_repo("org/flaky-GGUF", {"m-Q4_K_M.gguf": model})
        server.fault("/api/models/org/html-GGUF/revision/main", "html")
        server.fault("/api/models/org/flaky-GGUF/revision/main", "502x1")
        env["HF_ENDPOINT"] = server.url
        html, _ = _run(["org/html-GGUF", str(model)], **env)
        flaky, took = _run(["org/flaky-GGUF", str(model)], **env)
        missing, _ = _run(["org/none", str(model)], **env)
    _one_error_line(html, "not JSON")
    assert flaky.returncode == 0 and flaky.stderr == "", flaky.stderr
    _one_error_line(missing, "no such repository")


def test_http_proxy_from_the_environment_is_used(model: Path) -> None:
    # huggingface_hub honours http(s)_proxy; the Hub and range reads must too.
    with TestServer() as server, ForwardProxy() as proxy:
        url = server.add_file("m.gguf", model)
        result, _ = _run([url, str(model)], http_proxy=proxy.url, no_proxy="", NO_PROXY="")
    assert result.returncode == 0, result.stderr
    assert proxy.seen and all(seen.startswith(url) for seen in proxy.seen)
