"""The text format: for people. One renderer module per kind of result (text_report,
text_pairs, text_bench, text_estimate, text_lint, text_fit, scan_render), all on text_base; this class
only picks the renderer, imported when used, so a command pays only for its own output.
Lines fit the terminal's width; commands are never broken, so they can be pasted; colour
only when asked for (a terminal without NO_COLOR).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from paircheck._format.interface import RenderOptions

if TYPE_CHECKING:
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


class TextFormat:
    name = "text"

    def probe(self, outcome: ProbeOutcome, options: RenderOptions) -> str:
        from paircheck._format.probe_text import render_probe

        return render_probe(outcome, options)

    def fit(self, result: FitResult, options: RenderOptions) -> str:
        from paircheck._format.text_fit import render_fit

        return render_fit(result, options)

    def scan(self, result: ScanResult, options: RenderOptions) -> str:
        from paircheck._format.scan_render import render_scan_text

        return render_scan_text(result, options)

    def lint(self, result: LintResult, pair_check: bool, options: RenderOptions) -> str:
        from paircheck._format.text_lint import render_lint

        return render_lint(result, pair_check, options)

    def lint_files(self, result: FilesLintResult, pair_check: bool, options: RenderOptions) -> str:
        from paircheck._format.text_lint_files import render_lint_files

        return render_lint_files(result, pair_check, options)

    def comparison(self, comp: Comparison, options: RenderOptions) -> str:
        from paircheck._format.text_bench import render_comparison

        return render_comparison(comp, width=options.width)

    def estimate(self, est: Estimate, options: RenderOptions) -> str:
        from paircheck._format.text_estimate import render_estimate

        return render_estimate(est, options.width)

    def pairs(self, entries: Sequence[RegistryEntry], query: ModelIdentity | None, options: RenderOptions) -> str:
        from paircheck._format.text_pairs import render_pairs

        return render_pairs(entries, query, options)

    def report(self, report: Report, options: RenderOptions) -> str:
        from paircheck._format.text_report import render_report

        return render_report(report, options)

    def matrix(self, reports: list[Report], options: RenderOptions) -> str:
        from paircheck._format.text_report import render_matrix

        return render_matrix(reports, options)
