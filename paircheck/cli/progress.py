"""Progress for a person watching a long remote read: one self-overwriting stderr line.

Sources only call a ``progress(bytes_done, bytes_expected)`` callback they are given; the
drawing lives here, in the CLI, and only when stderr is a terminal.
"""

from __future__ import annotations

import sys
import time


class TerminalProgress:
    """One self-overwriting stderr line, refreshed at most ten times a second."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.last = 0.0
        self.shown = False

    def __call__(self, done: int, expected: int | None) -> None:
        now = time.monotonic()
        if now - self.last < 0.1:
            return
        self.last = now
        total = f" of ~{expected / 1e6:.1f} MB" if expected else ""
        sys.stderr.write(f"\rpaircheck: reading metadata of {self.label}: {done / 1e6:.1f} MB{total}\x1b[K")
        sys.stderr.flush()
        self.shown = True

    def finish(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def terminal_progress(label: str) -> TerminalProgress | None:
    """A progress line for ``label`` when stderr is a terminal, else None."""
    return TerminalProgress(label) if sys.stderr.isatty() else None
