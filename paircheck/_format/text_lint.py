"""A linted launch line, Python file or Modelfile for people (``run``, ``lint-cmd``,
``lint-py``, ``lint-modelfile``): the outcome, the pair checks, the findings with their
fixes, and a corrected command that still pastes as one."""

from __future__ import annotations

import re
import shlex

from paircheck._format.interface import RenderOptions
from paircheck._format.text_base import cell, prose_or_command, wrap
from paircheck.findings import Report
from paircheck.preflight.codes import ERROR, SEVERITY_WORD
from paircheck.preflight.lint import FAIL as LINT_FAIL
from paircheck.preflight.lint import UNCHECKED, LintResult


def shell_lines(argv: list[str], width: int) -> list[str]:
    """A command as shell lines of at most ``width`` columns, joined by backslash-newline, so
    the wrapped text still pastes as one command."""
    words: list[str] = []
    for word in argv:  # an option and its value stay on one line
        quoted = shlex.quote(word)
        if words and words[-1].startswith("-") and " " not in words[-1] and not word.startswith("-"):
            words[-1] += " " + quoted
        else:
            words.append(quoted)
    lines: list[str] = []
    current = "  "
    for word in words:
        if current.strip() and len(current) + 1 + len(word) + 2 > width:
            lines.append(current + " \\")
            current = "      " + word
        else:
            current = f"{current} {word}" if current.strip() else current + word
    return lines + [current]


def pasteable(step: str, report: Report) -> str:
    """A "Next:" command with the real paths in place of TARGET and DRAFT, shell-quoted."""
    target = report.target.resolved_path or report.target.location
    draft = report.draft.resolved_path or report.draft.location
    step = re.sub(r"\bTARGET\b", lambda _: shlex.quote(target), step)
    return re.sub(r"\bDRAFT\b", lambda _: shlex.quote(draft), step)


def headline(result: LintResult, pair_check: bool = True) -> str:
    status = result.status(pair_check)
    errors = sum(f.status == ERROR for f in result.findings)
    bad_pairs = [r for r in result.reports if not r.compatible]
    if status == LINT_FAIL:
        parts = ([f"{errors} error{'s' if errors != 1 else ''}"] if errors else []) + (
            [f"{len(bad_pairs)} incompatible pair{'s' if len(bad_pairs) != 1 else ''}"] if bad_pairs else []
        )
        return f"NOT OK: {result.launcher}: " + ", ".join(parts)
    if status == UNCHECKED:
        first = result.unchecked[0]
        return f"NOT CHECKED: {result.launcher}: {first.message}"
    checked = (
        f"{len(result.reports)} pair{'s' if len(result.reports) != 1 else ''} checked"
        if result.reports
        else ("flags checked, pair not read (--no-check)" if not pair_check else "flags checked")
    )
    return f"OK: {result.launcher}: {checked}"


def render_lint(result: LintResult, pair_check: bool, options: RenderOptions) -> str:
    lines = wrap(headline(result, pair_check), options.width)
    if result.reports:
        rows = []
        for r in result.reports:
            first = r.first_failure
            reason = f"{first.code} {first.message}" if first else "; ".join(c.message for c in r.checks[-1:])
            rows.append((r.method, "yes" if r.compatible else "NO", cell(reason, max(30, options.width - 30))))
        from tabulate import tabulate

        lines += ["", tabulate(rows, headers=("pair check", "ok", "reason"), tablefmt="simple", disable_numparse=True)]
    if result.findings:
        lines += ["", "Findings:"]
        for f in result.findings:
            word = SEVERITY_WORD.get(f.status, f.status)
            lines += wrap(f"{word} {f.code} {f.name}: {f.message}", options.width, "  ", "  ")
            if f.fix:
                lines += wrap(f"fix: {f.fix}", options.width, "    ", "  ")
    if result.corrected:
        lines += ["", "Corrected command (flags only; the pair check above still applies):"]
        lines += shell_lines(result.corrected, options.width)
    for r in result.reports:
        first = r.first_failure
        if first is not None and first.fix:
            lines += wrap(f"{r.method} fix: {first.fix}", options.width, "  ", "  ")
        for w in r.warnings:
            lines += wrap(f"warning {w.code} {w.name}: {w.message}", options.width, "  ", "  ")
        if not r.compatible and r.next_steps:
            lines += [
                "  Next:",
                *(
                    line
                    for step in r.next_steps
                    for line in prose_or_command(pasteable(step, r), options.width - 4, "    ")
                ),
            ]
    return "\n".join(lines)
