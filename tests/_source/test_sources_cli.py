"""What the CLI makes of its inputs: missing local paths, progress lines on a terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest
from httpserver import TestServer

from paircheck._source.hub import parse_hub_spec
from paircheck._source.resolve import looks_local


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paircheck", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "PAIRCHECK_HTTP_TIMEOUT": "1", **(env or {})},
    )


@pytest.mark.parametrize(
    "spec",
    [
        "./x.gguf",
        "../x.gguf",
        "~/no/such/x.gguf",
        "/no/such/x.gguf",
        "x.gguf",
        "a/b.gguf",
        "models/a/b.gguf",
        "models/a/b/c.gguf",
    ],
)
def test_missing_local_paths_say_no_such_file(spec: str, gguf_factory, tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()  # models/... exists in part: a local path
    path = gguf_factory()
    done = _run([spec, str(path)], tmp_path)
    assert done.returncode == 2, done.stdout
    assert done.stderr.count("\n") == 1, done.stderr
    assert "no such file" in done.stderr and "Hub" not in done.stderr and "HF_HUB_OFFLINE" not in done.stderr
    assert done.stderr.startswith(f"paircheck: error: {spec}: ")


def testlooks_local_keeps_hub_forms() -> None:
    for spec in (
        "org/name/file.gguf",
        "org/name/sub/file.gguf",
        "hf://org/name/file.gguf",
        "org/name",
        "org/name:Q4_K_M",
    ):
        assert not looks_local(spec), spec
        assert parse_hub_spec(spec) is not None
    for spec in (
        "./org/name/file.gguf",
        "~/m.gguf",
        "C:\\m\\x.gguf",
        "C:/m/x.gguf",
        "dir\\x.gguf",
        "x.gguf",
        "a/b.gguf",
    ):
        assert looks_local(spec), spec


def test_hub_file_form_still_goes_to_the_hub(gguf_factory, tmp_path: Path) -> None:
    path = gguf_factory()
    done = _run(["org/name/file.gguf", str(path)], tmp_path)  # offline: the Hub's own error
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "HF_HUB_OFFLINE" in done.stderr
    done = _run(["hf://org/name/file.gguf", str(path)], tmp_path)
    assert done.returncode == 2 and "HF_HUB_OFFLINE" in done.stderr


def _run_with_tty_stderr(args: list[str]) -> tuple[int, str, bytes]:
    """Run the CLI with stderr on a pseudo-terminal (so progress may show), stdout piped."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "paircheck", *args],
        stdout=subprocess.PIPE,
        stderr=slave,
        env={**os.environ, "PAIRCHECK_HTTP_TIMEOUT": "5"},
    )
    os.close(slave)
    err = b""
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        err += chunk
    out = proc.stdout.read().decode() if proc.stdout else ""
    proc.wait(30)
    os.close(master)
    return proc.returncode, out, err


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_json_and_quiet_print_nothing_on_stderr_for_a_remote_read(gguf_factory) -> None:
    path = gguf_factory()
    with TestServer() as server:
        url = server.add_file("m/a.gguf", path)
        code, out, err = _run_with_tty_stderr([url, str(path)])
        assert code == 0 and b"reading metadata of" in err  # the terminal sees progress
        assert err.endswith(b"\r\x1b[K")  # and the line is wiped when done
        code, out, err = _run_with_tty_stderr(["--json", url, str(path)])
        assert code == 0 and out.startswith("{") and err == b""
        code, out, err = _run_with_tty_stderr(["--quiet", url, str(path)])
        assert code == 0 and out == "" and err == b""
        code, out, err = _run_with_tty_stderr(["--engine", "all", "--json", url, str(path)])
        assert code == 0 and err == b""
