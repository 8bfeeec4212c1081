"""What a person sees: the output follows the real terminal's width, colour only on a
terminal (never piped, never with NO_COLOR), token texts cut once and never inside their
byte count, commands printed whole so they can be pasted.

The terminal cases run paircheck on a real pseudo-terminal whose window size the test
sets, as a terminal emulator would.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPM = REPO / "fixtures" / "examples" / "ggml-vocab-llama-spm.gguf"
PHI3 = REPO / "fixtures" / "examples" / "ggml-vocab-phi-3.gguf"
BAICHUAN = REPO / "fixtures" / "examples" / "ggml-vocab-baichuan.gguf"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
COMMANDS = ("llama-server", "paircheck")


def on_a_terminal(args: list[str], columns: int, env: dict[str, str] | None = None) -> str:
    """Run paircheck with stdout and stderr on a pty of ``columns`` x 40; return what it printed."""
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")}
    environ.update({"TERM": "xterm-256color", **(env or {})})
    pid, fd = pty.fork()
    if pid == 0:  # the child: the pty is its controlling terminal
        os.execvpe(sys.executable, [sys.executable, "-m", "paircheck", *args], environ)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    chunks: list[bytes] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child closed the pty
            break
        if not data:
            break
        chunks.append(data)
    os.waitpid(pid, 0)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def piped(args: list[str], env: dict[str, str] | None = None) -> str:
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")}
    environ.update(env or {})
    done = subprocess.run([sys.executable, "-m", "paircheck", *args], capture_output=True, text=True, env=environ,
                          timeout=60)
    return done.stdout


def too_long(text: str, width: int) -> list[str]:
    return [line for line in ANSI.sub("", text).splitlines()
            if len(line) > width and not line.lstrip().startswith(COMMANDS)]


@pytest.mark.parametrize("columns", [60, 80, 132])
def test_lines_fit_the_real_terminal(columns: int) -> None:
    for args in ([str(SPM), str(PHI3)], [str(SPM), str(BAICHUAN)], ["--engine", "all", str(SPM), str(PHI3)],
                 ["pairs", "--family", "qwen2.5"]):
        out = on_a_terminal(args, columns)
        assert out.strip(), args
        assert too_long(out, columns) == [], (args, columns)


def test_wider_terminal_uses_the_room() -> None:
    narrow = on_a_terminal(["pairs", "--family", "qwen2.5"], 60)
    wide = on_a_terminal(["pairs", "--family", "qwen2.5"], 160)
    assert len(wide.splitlines()) < len(narrow.splitlines())  # fewer wrapped names
    assert max(len(ANSI.sub("", line)) for line in wide.splitlines()) > 100


def test_colour_on_a_terminal_only() -> None:
    assert ANSI.search(on_a_terminal([str(SPM), str(BAICHUAN)], 100))
    assert not ANSI.search(on_a_terminal([str(SPM), str(BAICHUAN)], 100, {"NO_COLOR": "1"}))
    assert not ANSI.search(piped([str(SPM), str(BAICHUAN)]))


def test_piped_output_is_100_columns_or_what_columns_says() -> None:
    assert too_long(piped([str(SPM), str(BAICHUAN)]), 100) == []
    assert too_long(piped([str(SPM), str(BAICHUAN)], {"COLUMNS": "60"}), 60) == []
    # COLUMNS=200: the side table's text cells may use the room (no premature wrapping).
    wide = piped(["--engine", "all", str(SPM), str(PHI3)], {"COLUMNS": "200"})
    narrow = piped(["--engine", "all", str(SPM), str(PHI3)], {"COLUMNS": "80"})
    assert len(wide.splitlines()) < len(narrow.splitlines())


def test_next_command_is_whole_with_real_paths() -> None:
    # A refused pair's way forward (the n-gram methods) is a whole command with the real path.
    out = piped([str(SPM), str(BAICHUAN)], {"COLUMNS": "60"})
    command = next(line.strip() for line in out.splitlines() if line.strip().startswith("llama-server"))
    assert command.split() == ["llama-server", "-m", str(SPM), "--spec-type", "ngram-mod"]
    out = piped([str(SPM), str(PHI3)], {"COLUMNS": "60"})
    command = next(line.strip() for line in out.splitlines() if line.strip().startswith("paircheck scan"))
    assert command.split() == ["paircheck", "scan", str(SPM)]


def test_token_texts_are_cut_once_and_keep_their_byte_count(real_vocab) -> None:  # type: ignore[no-untyped-def]
    # DeepSeek's end-of-sentence token is 27 bytes of full-width text: too long to show whole.
    out = piped([str(real_vocab("deepseek-llm")), str(real_vocab("deepseek-coder"))], {"COLUMNS": "70"})
    for cut in re.finditer(r"\.\.\.\((\d+) bytes\)", out):
        assert int(cut.group(1)) > 0
    # A cut text is followed by its whole byte count, never by a fragment of it.
    assert not re.search(r"\.\.\.\d*\s*bytes\)|\.\.\.\(\d*$", out, re.M)
    assert "'<|end_of_text|'" not in out and "bytes), not added" not in out.replace(" bytes), not added", "")


def test_wrapped_bullets_continue_under_their_text() -> None:
    # A wrapped "  - fix" continues indented, never with a second dash (seen at 80 columns).
    out = piped(["--engine", "all", str(SPM), str(BAICHUAN)], {"COLUMNS": "60"})
    assert "Fixes:" in out
    bullets = out.split("Fixes:", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert bullets and bullets[0].startswith("  - ")
    for line in bullets:  # a new bullet ("  - X") or its continuation ("    X")
        assert re.match(r"  - \S|    [^\s-]", line), line
