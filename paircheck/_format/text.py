"""The text format: for people. One renderer module per kind of result (text_report,
text_pairs, text_bench, text_estimate, text_lint, text_fit, scan_render, probe_text), all on
text_base; each renderer here imports its module when called, so a command pays only for its
own output. Lines fit the terminal's width; commands are never broken, so they can be pasted;
colour only when asked for (a terminal without NO_COLOR).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paircheck._format.interface import Format, RenderOptions

if TYPE_CHECKING:
    from paircheck._registry.consult import Pairs
    from paircheck.bench.compare import Comparison
    from paircheck.findings import EveryEngine, Report
    from paircheck.fit.result import FitResult
    from paircheck.hardware.table import GpuTable
    from paircheck.preflight.lint import LintResult
    from paircheck.preflight.lint_files import FilesLintResult
    from paircheck.probe.run import ProbeOutcome
    from paircheck.scan.result import ScanResult
    from paircheck.speed.estimate import Estimate


def _report(report: Report, options: RenderOptions) -> str:
    from paircheck._format.text_report import render_report

    return render_report(report, options)


def _every_engine(result: EveryEngine, options: RenderOptions) -> str:
    from paircheck._format.text_report import render_matrix

    return render_matrix(result.reports, options)


def _pairs(result: Pairs, options: RenderOptions) -> str:
    from paircheck._format.text_pairs import render_pairs

    return render_pairs(result.entries, result.query, options)


def _comparison(comp: Comparison, options: RenderOptions) -> str:
    from paircheck._format.text_bench import render_comparison

    return render_comparison(comp, width=options.width)


def _estimate(est: Estimate, options: RenderOptions) -> str:
    from paircheck._format.text_estimate import render_estimate

    return render_estimate(est, options.width)


def _lint(result: LintResult, options: RenderOptions) -> str:
    from paircheck._format.text_lint import render_lint

    return render_lint(result, options.pair_check, options)


def _lint_files(result: FilesLintResult, options: RenderOptions) -> str:
    from paircheck._format.text_lint_files import render_lint_files

    return render_lint_files(result, options.pair_check, options)


def _fit(result: FitResult, options: RenderOptions) -> str:
    from paircheck._format.text_fit import render_fit

    return render_fit(result, options)


def _scan(result: ScanResult, options: RenderOptions) -> str:
    from paircheck._format.scan_render import render_scan_text

    return render_scan_text(result, options)


def _probe(outcome: ProbeOutcome, options: RenderOptions) -> str:
    from paircheck._format.probe_text import render_probe

    return render_probe(outcome, options)


def _gpus(table: GpuTable, options: RenderOptions) -> str:
    from paircheck._format.text_gpus import render_gpus

    return render_gpus(table.rows, table.detected, options.width, full=table.one)


FORMAT = Format("text", {
    "Report": _report, "EveryEngine": _every_engine, "Pairs": _pairs, "Comparison": _comparison,
    "Estimate": _estimate, "LintResult": _lint, "FilesLintResult": _lint_files, "FitResult": _fit,
    "ScanResult": _scan, "ProbeOutcome": _probe, "GpuTable": _gpus,
})
