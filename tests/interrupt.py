"""Ctrl-C for a process a test starts, whatever the test run's own SIGINT disposition.

A test run started in the background from a non-interactive shell (``nohup ... &``, as a CI
runner may start it) has SIGINT ignored, children inherit that, and a Python started so
installs no KeyboardInterrupt handler: the interrupt a test sends would never arrive. The
child gets SIGINT's default disposition back before it starts, so such a test checks
paircheck, not how the runner was started.
"""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """``preexec_fn`` for ``subprocess.Popen``: SIGINT's default disposition in the child,
    so its Python installs its own KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
