"""A base for formats that render only some kinds of result: the rest say so with one
InputError line (``--format csv`` on a pair check, for example)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from paircheck._format.interface import RenderOptions
from paircheck.errors import InputError

if TYPE_CHECKING:  # types only: what a format refuses is never imported for it
    from paircheck._registry.entry import RegistryEntry
    from paircheck._registry.identity import ModelIdentity
    from paircheck.bench.compare import Comparison
    from paircheck.findings import Report
    from paircheck.fit.result import FitResult
    from paircheck.preflight.lint import LintResult
    from paircheck.preflight.lint_files import FilesLintResult
    from paircheck.scan import ScanResult
    from paircheck.speed.estimate import Estimate

if TYPE_CHECKING:
    from paircheck.probe.run import ProbeOutcome


def unsupported(fmt: str, what: str) -> InputError:
    return InputError("--format", f"{fmt} is not available for {what}")


class PartialFormat:
    """Every kind of result refused; a subclass overrides the ones it renders."""

    name = "partial"

    def report(self, report: Report, options: RenderOptions) -> str:
        raise unsupported(self.name, "a pair check")

    def matrix(self, reports: list[Report], options: RenderOptions) -> str:
        raise unsupported(self.name, "--engine all")

    def pairs(self, entries: Sequence[RegistryEntry], query: ModelIdentity | None, options: RenderOptions) -> str:
        raise unsupported(self.name, "documented pairs")

    def comparison(self, comp: Comparison, options: RenderOptions) -> str:
        raise unsupported(self.name, "bench compare")

    def estimate(self, est: Estimate, options: RenderOptions) -> str:
        raise unsupported(self.name, "estimate")

    def lint(self, result: LintResult, pair_check: bool, options: RenderOptions) -> str:
        raise unsupported(self.name, "lint results")

    def lint_files(self, result: FilesLintResult, pair_check: bool, options: RenderOptions) -> str:
        raise unsupported(self.name, "paircheck lint")

    def fit(self, result: FitResult, options: RenderOptions) -> str:
        raise unsupported(self.name, "fit")

    def scan(self, result: ScanResult, options: RenderOptions) -> str:
        raise unsupported(self.name, "scan")

    def probe(self, outcome: ProbeOutcome, options: RenderOptions) -> str:
        raise unsupported(self.name, "probe")
