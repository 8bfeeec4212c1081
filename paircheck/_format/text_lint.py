"""A linted launch line, Python file or Modelfile for people (``run``, ``lint-cmd``,
``lint-py``, ``lint-modelfile``): the outcome, the pair checks, the findings with their
fixes, and a corrected command that still pastes as one."""

from __future__ import annotations

import re
import shlex

from paircheck._format.interface import RenderOptions
from paircheck._format.text_base import cell, prose_or_command, wrap
from paircheck.findings import ABORTS as ABORTS_VERDICT
from paircheck.findings import REFUSED, Report
from paircheck.outcome import DEFAULT_FAIL_ON, SLOW, SLOW_CODES
from paircheck.preflight.codes import ERROR, SEVERITY_WORD, WARNING
from paircheck.preflight.lint import ABORTS, UNCHECKED, WARNED, LintResult
from paircheck.preflight.lint import FAIL as LINT_FAIL


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


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def headline(result: LintResult, pair_check: bool = True, fail_on: str = DEFAULT_FAIL_ON) -> str:
    status = result.status(pair_check, fail_on)
    errors = sum(f.status == ERROR for f in result.findings)
    bad_pairs = [r for r in result.reports if not r.compatible]
    if status == LINT_FAIL:
        parts = ([_plural(errors, "error")] if errors else []) + (
            [_plural(len(bad_pairs), "incompatible pair")] if bad_pairs else []
        )
        return f"NOT OK: {result.launcher}: " + ", ".join(parts)
    if status == ABORTS:
        aborting = [r for r in result.reports if r.run_time_aborts]
        said = "; ".join(f"{r.method}: {r.run_time_aborts[0].details.get('abort') or r.run_time_aborts[0].message} "
                         f"({r.run_time_aborts[0].code})" for r in aborting)
        return f"ABORTS AT RUN TIME: {result.launcher}: {said}"
    if status == UNCHECKED:
        unknown = [c for r in result.reports for c in r.unknowns]
        first = result.unchecked[0].message if result.unchecked else f"{unknown[0].code} {unknown[0].message}"
        return f"NOT CHECKED: {result.launcher}: {first}"
    if status == WARNED:
        warned = [w for r in result.reports for w in r.warnings] + [
            f for f in result.findings if f.status == WARNING]
        if fail_on == SLOW:
            warned = [w for w in warned if w.code in SLOW_CODES]
        codes = ", ".join(dict.fromkeys(w.code for w in warned))
        return f"WARNED (--fail-on {fail_on}): {result.launcher}: {_plural(len(warned), 'warning')} ({codes})"
    checked = (
        f"{_plural(len(result.reports), 'pair')} checked"
        if result.reports
        else ("flags checked, pair not read (--no-check)" if not pair_check else "flags checked")
    )
    against = f"; flags as {result.build} lists them" if result.build else ""
    return f"OK: {result.launcher}: {checked}{against}"


_PAIR_OK = {REFUSED: "NO", ABORTS_VERDICT: "abort"}


def _corrected_heading(result: LintResult) -> str:
    """What the corrected line fixes, and what it does not: it is only as good as the pair."""
    if not result.reports:
        return "Corrected command (flags only; the pair was not checked):"
    if any(r.verdict in (REFUSED, ABORTS_VERDICT) for r in result.reports):
        return "Corrected command (flags only: the pair check above still fails it):"
    return "Corrected command (the pair check above passes):"


def render_lint(result: LintResult, pair_check: bool, options: RenderOptions,
                places: list[str] | None = None) -> str:
    """``places[i]``: where ``result.findings[i]`` was written ("compose.yml:12:9"), for a
    command found in a file (``paircheck lint``)."""
    lines = wrap(headline(result, pair_check, options.fail_on), options.width)
    if result.reports:
        rows = []
        for r in result.reports:
            first = r.first_failure or (r.run_time_aborts[0] if r.run_time_aborts else None)
            said = (first.details.get("abort") or first.message) if first else ""
            reason = f"{first.code} {said}" if first else "; ".join(c.message for c in r.checks[-1:])
            rows.append((r.method, _PAIR_OK.get(r.verdict, "yes"), cell(reason, max(30, options.width - 30))))
        from tabulate import tabulate

        lines += ["", tabulate(rows, headers=("pair check", "ok", "reason"), tablefmt="simple", disable_numparse=True)]
    if result.findings:
        lines += ["", "Findings:"]
        for i, f in enumerate(result.findings):
            word = SEVERITY_WORD.get(f.status, f.status)
            at = f"{places[i]}: " if places is not None else ""
            lines += wrap(f"{at}{word} {f.code} {f.name}: {f.message}", options.width, "  ", "  ")
            if f.fix:
                lines += wrap(f"fix: {f.fix}", options.width, "    ", "  ")
    if result.corrected:
        lines += ["", _corrected_heading(result)]
        lines += shell_lines(result.corrected, options.width)
        for given, used in result.guessed:
            # A guess is said, never slipped silently into a line meant to be pasted.
            lines += wrap(f"guessed: {given} -> {used} (the nearest option by name; check that it means what "
                          "you meant)", options.width, "  ", "    ")
    for r in result.reports:
        first = r.first_failure
        if first is not None and first.fix:
            lines += wrap(f"{r.method} fix: {first.fix}", options.width, "  ", "  ")
        for w in r.warnings:
            label = "abort" if w.details.get("aborts") is True else "warning"
            lines += wrap(f"{label} {w.code} {w.name}: {w.message}", options.width, "  ", "  ")
        if r.verdict in (REFUSED, ABORTS_VERDICT) and r.next_steps:
            lines += [
                "  Next:",
                *(
                    line
                    for step in r.next_steps
                    for line in prose_or_command(pasteable(step, r), options.width - 4, "    ")
                ),
            ]
    return "\n".join(lines)
