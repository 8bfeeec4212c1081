"""What an output format is: a name and one renderer per kind of result it renders, as
pip-audit's formats each have one ``format()``.

``text`` is for people (a verdict line, a compact table, reasons and the fix), ``json`` for
machines (a documented, versioned shape), ``sarif`` and ``github`` for the review tools that
show ``paircheck lint``'s findings on their line, ``markdown``, ``csv`` and ``html`` for the
registry's pairs. A format that has no renderer for a kind of result refuses it with one
InputError line (``--format csv`` on a pair check). A new command adds one renderer to each
format that can show its result, and nothing to the others. Formats know nothing of files or
sources: they render the results they are given, to a string.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from paircheck.errors import InputError
from paircheck.outcome import DEFAULT_FAIL_ON

DEFAULT_WIDTH = 100
MIN_WIDTH = 40

# Each kind of result by its class's name (so that a format's table names what it renders
# without importing it: the check loads only its own renderer), and what a refusal calls it.
KINDS: dict[str, str] = {
    "Report": "a pair check",
    "EveryEngine": "--engine all",
    "Pairs": "documented pairs",
    "Comparison": "bench compare",
    "Estimate": "estimate",
    "LintResult": "lint results",
    "FilesLintResult": "paircheck lint",
    "FitResult": "fit",
    "ScanResult": "scan",
    "ProbeOutcome": "probe",
    "GpuTable": "the GPU table",
}


@dataclass(frozen=True)
class RenderOptions:
    """How to render: for text, the terminal's width and whether colour is wanted; for a
    verdict, the ``--fail-on`` level its outcome and exit code are stated at, and (lint)
    whether the pair was to be checked (``--no-check``: an unchecked pair is not a finding)."""

    width: int = DEFAULT_WIDTH
    verbose: bool = False
    color: bool = False
    fail_on: str = DEFAULT_FAIL_ON
    pair_check: bool = True

    def __post_init__(self) -> None:
        # A very narrow terminal still gets readable (if wrapped) output.
        object.__setattr__(self, "width", max(MIN_WIDTH, self.width))


Renderer = Callable[[Any, RenderOptions], str]


@dataclass(frozen=True)
class Format:
    """One output format: its ``--format`` name and its renderers by kind of result (a key of
    KINDS). A renderer imports what it needs when called."""

    name: str
    renderers: Mapping[str, Renderer]

    def __post_init__(self) -> None:
        unknown = set(self.renderers) - set(KINDS)
        if unknown:
            raise ValueError(f"{self.name}: renderers for unknown kinds {sorted(unknown)}")

    def renders(self, kind: str) -> bool:
        return kind in self.renderers

    def render(self, result: object, options: RenderOptions) -> str:
        """``result`` in this format, or an InputError naming what it cannot render."""
        # a subclass (a Hub scan's result is a ScanResult) is rendered as its nearest kind
        kinds = [cls.__name__ for cls in type(result).__mro__ if cls.__name__ in KINDS]
        renderer = next((self.renderers[k] for k in kinds if k in self.renderers), None)
        if renderer is None:
            kind = kinds[0] if kinds else type(result).__name__
            raise InputError("--format", f"{self.name} is not available for {KINDS.get(kind, kind)}")
        return renderer(result, options)
