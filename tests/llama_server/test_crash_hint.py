"""The hint for a llama-server that dies on this machine's AMX CPU (llama.cpp#20824): the
pinned build crashes in the AMX repack path with SIGSEGV on the first decode, or with SIGILL
before it is even ready; both are named, with --no-repack as the way round."""

from __future__ import annotations

import signal
import stat
from pathlib import Path

import pytest

from paircheck.errors import InputError
from paircheck.llama_server.process import crash_hint, llama_server


@pytest.mark.parametrize("sig", [signal.SIGSEGV, signal.SIGILL])
def test_both_signals_name_no_repack_on_amx(sig: signal.Signals) -> None:
    hint = crash_hint(-sig, ["-m", "t.gguf"], amx=True)
    assert "--no-repack" in hint and "llama.cpp#20824" in hint and sig.name in hint


def test_no_hint_where_it_cannot_be_the_cause() -> None:
    assert crash_hint(-signal.SIGILL, ["-m", "t.gguf"], amx=False) == ""  # no AMX
    assert crash_hint(-signal.SIGILL, ["-m", "t.gguf", "--no-repack"], amx=True) == ""  # already off
    assert crash_hint(1, ["-m", "t.gguf"], amx=True) == ""  # an exit, not a crash
    assert crash_hint(-signal.SIGABRT, ["-m", "t.gguf"], amx=True) == ""  # an assertion: its own message


def test_a_server_killed_by_sigill_before_ready_says_so(tmp_path: Path) -> None:
    """A real process dying of SIGILL before /health answers: the error says the code, and the
    hint this CPU calls for (whatever the CPU: the same function decides)."""
    fake = tmp_path / "llama-server"
    fake.write_text("#!/bin/sh\nkill -ILL $$\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(InputError) as caught:
        with llama_server(str(fake), ["-m", "t.gguf"], ready_timeout=30, log_dir=tmp_path):
            pass
    message = str(caught.value)
    assert "exited with code -4 before it was ready" in message
    assert crash_hint(-signal.SIGILL, ["-m", "t.gguf"]) in message
