"""``paircheck lint`` for people: one verdict line for the whole run, then each launch command
found, at its file and line: an OK one in one line, any other as ``lint-cmd`` prints it, each
finding prefixed by the file, line and column it is about."""

from __future__ import annotations

from dataclasses import replace

from paircheck._format.interface import RenderOptions
from paircheck._format.lint_places import shown_path
from paircheck._format.text_base import wrap
from paircheck._format.text_lint import headline, render_lint
from paircheck.preflight.lint import ABORTS, FAIL, OK, UNCHECKED, WARNED
from paircheck.preflight.lint_files import FilesLintResult

WORDS = {FAIL: "NOT OK", ABORTS: "ABORTS AT RUN TIME", UNCHECKED: "NOT CHECKED", WARNED: "WARNED", OK: "OK"}
COUNTED = {FAIL: "not ok", ABORTS: "abort at run time", UNCHECKED: "not checked", WARNED: "warned", OK: "ok"}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def files_headline(result: FilesLintResult, pair_check: bool, fail_on: str) -> str:
    status = result.status(pair_check, fail_on)
    files = _plural(len(result.files), "launch file")
    if not result.commands:
        said = " (--allow-empty)" if status == OK else ""
        return f"{WORDS[status]}: no launch command found in {files}{said}"
    counts: dict[str, int] = {}
    for c in result.commands:
        s = c.result.status(pair_check, fail_on)
        counts[s] = counts.get(s, 0) + 1
    parts = ", ".join(f"{counts[s]} {COUNTED[s]}" for s in (FAIL, ABORTS, UNCHECKED, WARNED, OK) if s in counts)
    return f"{WORDS[status]}: {_plural(len(result.commands), 'launch command')} in {files}: {parts}"


def render_lint_files(result: FilesLintResult, pair_check: bool, options: RenderOptions) -> str:
    lines = wrap(files_headline(result, pair_check, options.fail_on), options.width)
    inner = replace(options, width=options.width - 2)
    for c in result.commands:
        file = shown_path(c.command.file)
        at = f"{file}:{c.command.pos.line}" + (f": {c.command.where}" if c.command.where else "")
        status = c.result.status(pair_check, options.fail_on)
        lines.append("")
        if status == OK:
            lines += wrap(f"{at}: {headline(c.result, pair_check, options.fail_on)}", options.width)
            continue
        lines += wrap(f"{at}:", options.width)
        # In the file's order, as a reader goes down it (the checks find them in their own order).
        order = sorted(range(len(c.places)), key=lambda i: (c.places[i].line, c.places[i].column))
        places = [f"{c.places[i].line}:{c.places[i].column}" for i in order]
        shown = replace(c.result, findings=[c.result.findings[i] for i in order])
        body = render_lint(shown, pair_check, inner, places)
        lines += [f"  {line}" if line else "" for line in body.split("\n")]
    return "\n".join(lines)
