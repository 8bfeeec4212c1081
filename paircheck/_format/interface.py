"""What an output format is: one module per format, each rendering the same results.

``text`` is for people (a verdict line, a compact table, reasons and the fix), ``json`` for
machines (a documented, versioned shape), ``sarif`` and ``github`` for the review tools that
show ``paircheck lint``'s findings on their line, ``markdown`` and ``csv`` for the registry's pairs
(a format that cannot render a kind of result says so with an InputError). Formats know
nothing of files or sources: they render the reports and results they are given, to a string.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # types only: a command imports the results it renders, not every kind
    from paircheck._registry.entry import RegistryEntry
    from paircheck._registry.identity import ModelIdentity
    from paircheck.bench.compare import Comparison
    from paircheck.findings import Report
    from paircheck.fit.result import FitResult
    from paircheck.preflight.lint import LintResult
    from paircheck.preflight.lint_files import FilesLintResult
    from paircheck.probe.run import ProbeOutcome
    from paircheck.scan import ScanResult
    from paircheck.speed.estimate import Estimate

from paircheck.outcome import DEFAULT_FAIL_ON

DEFAULT_WIDTH = 100
MIN_WIDTH = 40


@dataclass(frozen=True)
class RenderOptions:
    """How to render: for text, the terminal's width and whether colour is wanted; for a
    verdict, the ``--fail-on`` level its outcome and exit code are stated at."""

    width: int = DEFAULT_WIDTH
    verbose: bool = False
    color: bool = False
    fail_on: str = DEFAULT_FAIL_ON

    def __post_init__(self) -> None:
        # A very narrow terminal still gets readable (if wrapped) output.
        object.__setattr__(self, "width", max(MIN_WIDTH, self.width))


class Format(Protocol):
    @property
    def name(self) -> str: ...

    def report(self, report: Report, options: RenderOptions) -> str:
        """One engine's verdict on one pair."""
        ...

    def matrix(self, reports: list[Report], options: RenderOptions) -> str:
        """Every engine's verdict on one pair (``--engine all``)."""
        ...

    def pairs(self, entries: Sequence[RegistryEntry], query: ModelIdentity | None, options: RenderOptions) -> str:
        """Documented pairs from the registry (``paircheck pairs``); ``query``: the --for target."""
        ...

    def comparison(self, comp: Comparison, options: RenderOptions) -> str:
        """A measured baseline/draft comparison (``paircheck bench compare`` and ``bench run``)."""
        ...

    def estimate(self, est: Estimate, options: RenderOptions) -> str:
        """The modelled speedup (``paircheck estimate``): always labelled as a model."""
        ...

    def lint(self, result: LintResult, pair_check: bool, options: RenderOptions) -> str:
        """A linted launch line, Python file or Modelfile (``run``, ``lint-*``)."""
        ...

    def lint_files(self, result: FilesLintResult, pair_check: bool, options: RenderOptions) -> str:
        """Every launch command found in files and folders, each at its place (``paircheck lint``)."""
        ...

    def fit(self, result: FitResult, options: RenderOptions) -> str:
        """Memory of a target and its draft at a context (``paircheck fit``)."""
        ...

    def scan(self, result: ScanResult, options: RenderOptions) -> str:
        """Candidate drafts for one target, ranked (``paircheck scan``, ``paircheck T D1 D2 ...``)."""
        ...

    def probe(self, outcome: ProbeOutcome, options: RenderOptions) -> str:
        """Measured acceptance of one or more drafts (``paircheck probe``)."""
        ...
