"""Start and stop a llama-server on a free 127.0.0.1 port, for ``bench run`` and ``probe``.

The server's own output goes to a log file; when it exits before it is ready, the
error names the last lines of that log, which say why (a model it cannot load, a
flag it does not know).
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from paircheck.errors import InputError
from paircheck.llama_server.http import wait_ready

HOST = "127.0.0.1"
STOP_TIMEOUT_S = 15.0


def free_port() -> int:
    """A port nobody listens on right now (the kernel's choice for a bind to port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def find_llama_server(given: str | None) -> str:
    """``--llama-server PATH``, else ``llama-server`` on PATH."""
    if given:
        path = Path(given).expanduser()
        if not path.is_file():
            raise InputError(given, "no such file (--llama-server)")
        return str(path)
    found = shutil.which("llama-server")
    if not found:
        raise InputError("llama-server", "not found on PATH; give --llama-server PATH")
    return found


def server_args(target: str, draft: str | None, ctx_size: int, extra: Sequence[str] = (), parallel: int = 1
                ) -> list[str]:
    """Arguments of one run: baseline (``draft`` None) has speculation off, the other
    runs ``draft`` with draft-simple. Same context and slots for both (``parallel`` slots:
    llama-server splits ``ctx_size`` evenly across them)."""
    args = ["-m", target, "--ctx-size", str(ctx_size), "--parallel", str(parallel)]
    if draft is None:
        args += ["--spec-type", "none"]
    else:
        args += ["--model-draft", draft, "--spec-type", "draft-simple"]
    return args + list(extra)


def _log_path(log_dir: Path, port: int, args: Sequence[str]) -> Path:
    """One log per server, named for its model, never overwriting an earlier one."""
    model = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-m", "--model")), "server")
    stem = f"llama-server-{Path(model).stem}-{port}"
    log = log_dir / f"{stem}.log"
    n = 1
    while log.exists():
        n += 1
        log = log_dir / f"{stem}-{n}.log"
    return log


def _cpu_has_amx() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            return any(line.startswith("flags") and " amx_int8" in line for line in fh)
    except OSError:
        return False


# How a process repacking weights for AMX dies: a bad access on the first decode, or an
# illegal instruction before the server is even ready (both seen with the pinned build).
_AMX_SIGNALS = (-signal.SIGSEGV, -signal.SIGILL)


def crash_hint(code: int | None, args: Sequence[str], amx: bool | None = None) -> str:
    """Why a llama-server may have died with SIGSEGV or SIGILL, when paircheck can tell.

    The pinned llama.cpp, built for this CPU, repacks quantized weights for Intel AMX and
    then crashes in the repack path (llama.cpp#20824, open without a fix): SIGSEGV in
    ggml_backend_amx_mul_mat on the first decode, or SIGILL before the server is ready;
    ``--no-repack`` keeps the weights as they are and avoids both. ``amx``: whether this
    CPU has AMX (None: read /proc/cpuinfo).
    """
    if code not in _AMX_SIGNALS or "--no-repack" in args or "-nr" in args:
        return ""
    if not (_cpu_has_amx() if amx is None else amx):
        return ""
    signame = "SIGSEGV" if code == -signal.SIGSEGV else "SIGILL"
    return (f"; {signame} on a CPU with AMX: llama.cpp's repacked weights can crash the server "
            "(llama.cpp#20824): try again with --no-repack among the server flags (after --)")


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


@dataclass
class RunningServer:
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    command: list[str]

    def log_tail(self, lines: int = 5) -> str:
        try:
            text = self.log.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return " | ".join(line.strip() for line in text[-lines:] if line.strip())


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()  # llama-server shuts down cleanly on SIGTERM
    try:
        proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=STOP_TIMEOUT_S)


@contextmanager
def llama_server(
    binary: str, args: Sequence[str], ready_timeout: float = 600.0, log_dir: Path | None = None,
    port: int | None = None,
) -> Iterator[RunningServer]:
    """Run ``binary --host 127.0.0.1 --port P ARGS`` until ``/health`` answers; stop it on exit.

    ``port``: the one to use (refused at once when something listens there); default a free one.
    """
    if port is None:
        port = free_port()
    elif not port_is_free(port):
        raise InputError(f"{HOST}:{port}", "the port is in use (give another --port, or none for a free one)")
    command = [binary, "--host", HOST, "--port", str(port), *args]
    log_dir = Path(log_dir) if log_dir else Path(tempfile.mkdtemp(prefix="paircheck-bench-"))
    log = _log_path(log_dir, port, args)
    with open(log, "wb") as out:
        try:
            # Its own session: Ctrl-C reaches paircheck only, which keeps the partial
            # results and then stops the server, instead of the server dying mid-request.
            proc = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        except OSError as exc:
            raise InputError(binary, f"cannot start: {exc.strerror or exc}") from None
    server = RunningServer(f"http://{HOST}:{port}", proc, log, command)

    def alive() -> str | None:
        code = proc.poll()
        if code is None:
            return None
        return (f"llama-server exited with code {code} before it was ready: {server.log_tail()} (log: {log})"
                f"{crash_hint(code, args)}")

    try:
        wait_ready(server.url, ready_timeout, alive)
        yield server
    finally:
        _stop(proc)
