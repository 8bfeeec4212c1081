"""What a verdict means for a launch script: the exit codes, and the ``--fail-on`` levels
that decide which predicted problems stop it.

One table for every command that checks a pair (``paircheck T D``, ``run``, ``lint-*``):

* 0: nothing at or above the ``--fail-on`` level;
* 1: refused (not compatible), or a lint error;
* 2: bad input (one line on stderr; with ``--json`` also a JSON object on stdout);
* 3: not checked, or not everything (lint commands; the check with ``--fail-on warning``
  when a deciding check could not be made);
* 4: accepted at load, predicted to abort at run time (``ABORTS AT RUN TIME``);
* 5: a warning that ``--fail-on slow`` or ``--fail-on warning`` asks to fail on.

Levels, each including the ones before it: ``refused`` (only a refusal fails), ``crash``
(the default: a predicted abort fails too), ``slow`` (and a draft that makes decoding
slower, PW001), ``warning`` (any warning that can hurt, and an unknown verdict;
``--strict``). A warning whose rule found nothing that can hurt (``details["harmless"]``:
a vocabulary tail of padding that is never sampled) is shown, and fails no level.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from paircheck.constants import ACCEPTED, REFUSED, UNKNOWN

if TYPE_CHECKING:  # `paircheck --version` loads this module, not the report classes
    from paircheck.findings import Report

EXIT_OK, EXIT_REFUSED, EXIT_ERROR, EXIT_UNCHECKED, EXIT_ABORTS, EXIT_WARNED = 0, 1, 2, 3, 4, 5

REFUSED_ONLY, CRASH, SLOW, WARNING = "refused", "crash", "slow", "warning"
FAIL_ON_LEVELS = (REFUSED_ONLY, CRASH, SLOW, WARNING)
DEFAULT_FAIL_ON = CRASH
# Warnings that say the pair works but decoding gets slower, not faster.
SLOW_CODES = frozenset({"PW001"})


def _at_least(fail_on: str, level: str) -> bool:
    if fail_on not in FAIL_ON_LEVELS:
        raise ValueError(f"unknown --fail-on level {fail_on!r} (known: {', '.join(FAIL_ON_LEVELS)})")
    return FAIL_ON_LEVELS.index(fail_on) >= FAIL_ON_LEVELS.index(level)


def slow_warnings(report: Report) -> list[str]:
    """Codes of the warnings that predict a slowdown."""
    return [w.code for w in report.warnings if w.code in SLOW_CODES]


def report_exit(report: Report, fail_on: str = DEFAULT_FAIL_ON) -> int:
    """The exit code of one engine's verdict on one pair at a ``--fail-on`` level."""
    if report.verdict == REFUSED:
        return EXIT_REFUSED
    if report.run_time_aborts and _at_least(fail_on, CRASH):
        return EXIT_ABORTS
    if report.verdict == UNKNOWN and _at_least(fail_on, WARNING):
        return EXIT_UNCHECKED
    if slow_warnings(report) and _at_least(fail_on, SLOW):
        return EXIT_WARNED
    if hurting_warnings(report) and _at_least(fail_on, WARNING):
        return EXIT_WARNED
    return EXIT_OK


def hurting_warnings(report: Report) -> list[str]:
    """Codes of the warnings that can hurt: all but those marked harmless by their rule."""
    return [w.code for w in report.warnings if not w.details.get("harmless")]


def matrix_exit(reports: Sequence[Report], fail_on: str = DEFAULT_FAIL_ON) -> int:
    """``--engine all``: 0 when at least one engine accepts the pair outright (an unknown
    verdict does not count) and passes ``fail_on``; otherwise the most telling reason no
    engine does: a predicted abort (4), a warning asked to fail on (5), else refused (1)."""
    codes = [report_exit(r, fail_on) for r in reports]
    if any(code == EXIT_OK and r.verdict != UNKNOWN for r, code in zip(reports, codes, strict=True)):
        return EXIT_OK
    for code in (EXIT_ABORTS, EXIT_WARNED):
        if code in codes:
            return code
    return EXIT_REFUSED


def accepted_outright(report: Report) -> bool:
    """Accepted with nothing undecided and no abort predicted."""
    return report.verdict == ACCEPTED
