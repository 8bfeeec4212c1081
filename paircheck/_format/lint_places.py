"""What every rendering of ``paircheck lint`` shares: a path as the user gave it (relative to
where paircheck runs), each finding with its place, and the pair checks' own findings."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paircheck.findings import FAIL, INFO, WARN, Finding

if TYPE_CHECKING:
    from paircheck.preflight.lint_files import CommandLint


def shown_path(path: str) -> str:
    """Relative to the current folder when under it (what an editor, SARIF and GitHub expect)."""
    full = os.path.abspath(path)
    here = os.getcwd()
    if full == here or full.startswith(here.rstrip(os.sep) + os.sep):
        return os.path.relpath(full, here).replace(os.sep, "/")
    return full.replace(os.sep, "/")


@dataclass(frozen=True)
class Placed:
    finding: Finding
    file: str
    line: int
    column: int
    about: str  # "" for the command's own findings, else the pair check's method ("draft-simple pair")


def placed_findings(command: CommandLint) -> list[Placed]:
    """The command's findings, then the pair checks' failures, warnings and unknowns, each placed."""
    file = shown_path(command.command.file)
    own = zip(command.result.findings, command.places, strict=True)
    out = [Placed(f, file, pos.line, pos.column, "") for f, pos in own]
    at = command.pair_place
    for report in command.result.reports:
        about = f"{report.engine} {report.method} pair"
        picked = [c for c in report.checks if c.status == FAIL] + list(report.warnings) + list(report.unknowns)
        for check in picked:
            out.append(Placed(check, file, at.line, at.column, about))
    return out


LEVELS = {FAIL: "error", WARN: "warning", INFO: "note"}
