"""Run paircheck's command line in-process, as the tests of one command do, and give its exit code."""

from __future__ import annotations

from paircheck.cli import main


def exit_code(argv: list[str]) -> int:
    """``main(argv)``'s exit code: click ends with SystemExit; returning normally is 0."""
    try:
        main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0
