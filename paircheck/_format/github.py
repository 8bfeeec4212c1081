"""``paircheck lint --format github``: GitHub Actions workflow commands, which the runner shows
as annotations on the offending line of the pull request's diff:
``::error file=F,line=L,col=C,title=T::MESSAGE`` (``warning``, ``notice``), escaped as the
runner's toolkit escapes them (``%``, CR and LF in the message; also ``:`` and ``,`` in the
properties). The last line is the run's verdict, as the text format says it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paircheck._format.interface import Format
from paircheck._format.lint_places import placed_findings
from paircheck.findings import FAIL, WARN

if TYPE_CHECKING:
    from paircheck.preflight.lint_files import FilesLintResult

COMMANDS = {FAIL: "error", WARN: "warning"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_commands(result: FilesLintResult, pair_check: bool, fail_on: str) -> list[str]:
    from paircheck._format.text_lint_files import files_headline

    lines = []
    for command in result.commands:
        for placed in placed_findings(command):
            f = placed.finding
            title = f"paircheck {f.code} {f.name}"
            text = (f"{placed.about}: " if placed.about else "") + f.message + (f" (fix: {f.fix})" if f.fix else "")
            props = f"file={escape_property(placed.file)},line={placed.line},col={placed.column}," \
                    f"title={escape_property(title)}"
            lines.append(f"::{COMMANDS.get(f.status, 'notice')} {props}::{escape_data(text)}")
    return lines + [files_headline(result, pair_check, fail_on)]


FORMAT = Format("github", {
    "FilesLintResult": lambda result, options: "\n".join(
        workflow_commands(result, options.pair_check, options.fail_on)),
})
