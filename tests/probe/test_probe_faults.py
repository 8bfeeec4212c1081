"""What the probe does when things go wrong, with the real llama-server and real models.

Each failure is one line on stderr and exit code 2, and what was measured before it stays
in the result file (``complete: false`` with the error): a draft the check refuses (nothing
is started or written), a server that cannot load its model, a server that dies mid-run, a
port in use, and Ctrl-C.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import interrupt
import pytest
import smollm
from gguf import GGUFWriter
from tiny_model import _copy_vocab, write_tiny_llama

pytestmark = pytest.mark.slow  # starts the pinned llama-server

ROOT = Path(__file__).resolve().parents[2]
SPM = ROOT / "fixtures" / "examples" / "ggml-vocab-llama-spm.gguf"


@pytest.fixture(scope="module")
def tools() -> dict[str, Path]:
    import llamacpp_build

    return llamacpp_build.ensure_tools()


@pytest.fixture(scope="module")
def target(tools: dict[str, Path]) -> Path:
    return smollm.target()


@pytest.fixture(scope="module")
def prompts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("prompts") / "p.jsonl"
    path.write_text('{"id": "a", "prompt": "The capital of France is", "kind": "prose"}\n'
                    '{"id": "b", "prompt": "def add(a, b):", "kind": "code"}\n')
    return path


def _argv(server: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "paircheck", "probe", "--llama-server", str(server), *args]


def _run(server: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_argv(server, *args), capture_output=True, text=True, timeout=timeout)


def _common(prompts: Path, out: Path, n: int = 8) -> list[str]:
    return ["--raw", "--prompts", str(prompts), "--n-predict", str(n), "--ctx-size", "512", "-o", str(out)]


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def test_a_draft_the_check_refuses_starts_nothing(target: Path, prompts: Path, tmp_path: Path) -> None:
    other = write_tiny_llama(tmp_path / "spm.gguf", SPM, seed=1)  # llama.cpp's SPM vocabulary: refused
    marker = tmp_path / "started"
    fake = tmp_path / "llama-server"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    fake.chmod(0o755)
    out = tmp_path / "r.json"
    done = _run(fake, str(target), str(other), *_common(prompts, out))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "llama.cpp refuses this pair (LC" in lines[0] and "nothing was loaded" in lines[0]
    assert str(other) in lines[0]
    assert not marker.exists() and not out.exists()


def _vocab_only(path: Path, vocab_from: Path) -> Path:
    writer = GGUFWriter(str(path), "llama")
    writer.add_name("vocab only")
    _copy_vocab(writer, vocab_from)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_server_that_cannot_load_its_model_keeps_the_targets_tokens(
    target: Path, tools: dict[str, Path], prompts: Path, tmp_path: Path
) -> None:
    # A vocab-only file: the pair check accepts its vocabulary, llama-server finds no weights.
    draft = _vocab_only(tmp_path / "vocab-only.gguf", target)
    out = tmp_path / "r.json"
    done = _run(tools["llama-server"], str(target), str(draft), *_common(prompts, out), "--", *smollm.SERVER_FLAGS)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "llama-server exited with code" in lines[0] and "before it was ready" in lines[0]
    assert f"what was measured is kept in {out}" in lines[0]
    data = _load(out)
    assert data["complete"] is False and "before it was ready" in data["error"]
    assert [g["prompt_id"] for g in data["generations"]] == ["a", "b"]  # the target's work is kept
    assert all(len(g["tokens"]) == 8 for g in data["generations"])


def _pids_serving(path: Path | None, started_by: int) -> list[int]:
    """The llama-servers serving `path` (any model when None) that process `started_by` started.

    Only its own descendants: under `pytest -n 2` another test may be serving the same
    file at the same moment, and killing (or counting) that one fails the wrong test."""
    parent: dict[int, int] = {}
    serving: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        # the command name in stat is in parentheses and may hold spaces; the ppid follows it
        parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        if any(b"llama-server" in part for part in cmd[:1]) and (path is None or str(path).encode() in cmd):
            serving.append(int(entry.name))

    def descends(pid: int) -> bool:
        seen = set()
        while pid in parent and pid not in seen:
            seen.add(pid)
            pid = parent[pid]
            if pid == started_by:
                return True
        return False

    return [pid for pid in serving if descends(pid)]


def _still_running(pids: list[int]) -> list[int]:
    alive = []
    for pid in pids:
        try:
            if b"llama-server" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]:
                alive.append(pid)
        except OSError:
            continue
    return alive


def test_a_server_that_dies_mid_run_is_one_line_and_keeps_the_traces(
    target: Path, tools: dict[str, Path], prompts: Path, tmp_path: Path
) -> None:
    draft = smollm.quantized("Q2_K", tools["llama-quantize"])
    out = tmp_path / "r.json"
    killed: list[int] = []
    proc = subprocess.Popen(_argv(tools["llama-server"], str(target), str(draft), *_common(prompts, out, n=64), "--",
                                  *smollm.SERVER_FLAGS), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def kill_the_draft_server() -> None:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and not killed:
            try:
                data = _load(out)
            except (OSError, ValueError):
                data = {}
            drafts = data.get("drafts") or []
            if drafts and drafts[0].get("traces"):  # the draft server is up and answering
                for pid in _pids_serving(draft, started_by=proc.pid):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            time.sleep(0.02)

    watcher = threading.Thread(target=kill_the_draft_server, daemon=True)
    watcher.start()
    _, stderr = proc.communicate(timeout=900)
    watcher.join(timeout=5)
    assert killed, "the draft server was never seen running"
    assert proc.returncode == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "llama-server exited with code -9 mid-run" in lines[0], lines
    data = _load(out)
    assert data["complete"] is False and "mid-run" in data["error"]
    assert len(data["generations"]) == 2 and len(data["drafts"][0]["traces"]) >= 1


def test_a_port_in_use_is_refused_at_once(target: Path, tools: dict[str, Path], prompts: Path,
                                          tmp_path: Path) -> None:
    draft = smollm.quantized("Q2_K", tools["llama-quantize"])
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = _run(tools["llama-server"], str(target), str(draft), *_common(prompts, tmp_path / "r.json"),
                    "--port", str(port), "--", *smollm.SERVER_FLAGS)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"127.0.0.1:{port}: the port is in use" in lines[0]


def test_ctrl_c_keeps_what_was_measured_and_stops_the_server(
    target: Path, tools: dict[str, Path], prompts: Path, tmp_path: Path
) -> None:
    draft = smollm.quantized("Q2_K", tools["llama-quantize"])
    out = tmp_path / "r.json"
    proc = subprocess.Popen(_argv(tools["llama-server"], str(target), str(draft), *_common(prompts, out, n=96), "--",
                                  *smollm.SERVER_FLAGS), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=interrupt.default_sigint)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            if _load(out)["generations"]:
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.02)
    servers = _pids_serving(None, started_by=proc.pid)
    assert servers, "the probe's server was never seen running"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    assert err.strip().splitlines() == [f"paircheck: error: {out}: interrupted; what was measured is kept there "
                                        "(complete: false)"]
    data = _load(out)
    assert data["complete"] is False and data["error"] == "interrupted"
    assert len(data["generations"]) >= 1
    assert not _still_running(servers), "a llama-server was left running"
