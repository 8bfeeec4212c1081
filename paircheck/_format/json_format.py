"""The machine-readable shapes (documented in the README, versioned).

schema_version 3 (``verdict`` has a fourth value, ``aborts``: accepted at load, predicted
to abort at run time, with ``first_abort``, ``fail_on`` and ``exit_code``; 2 made a side's
``loadable`` the file-level LC001 verdict; 1 had only ``vocab.loadable``, which meant "the
vocabulary loads"). Fields are only ever added within a version; a removal, a change of
meaning or a new value of an enumerated field bumps it.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from paircheck._format.interface import Format, RenderOptions
from paircheck._format.json_side import describe_side
from paircheck.findings import ABORTS, ACCEPTED, UNKNOWN, Finding, Report
from paircheck.outcome import DEFAULT_FAIL_ON, matrix_exit, report_exit
from paircheck.version import __version__

# The other kinds of result are imported by the functions that need them: a pair check
# loads no registry, bench, fit, pre-flight or scan code to print its report.
if TYPE_CHECKING:
    from paircheck._registry.entry import RegistryEntry
    from paircheck._registry.identity import ModelIdentity
    from paircheck.bench.compare import Comparison
    from paircheck.hardware.table import GpuTable
    from paircheck.preflight.lint import LintResult
    from paircheck.preflight.lint_files import FilesLintResult
    from paircheck.probe.run import ProbeOutcome
    from paircheck.scan.result import ScanResult
    from paircheck.speed.estimate import Estimate

SCHEMA_VERSION = 3


def _check(check: Finding) -> dict[str, Any]:
    return {
        "code": check.code,
        "name": check.name,
        "status": check.status,
        "message": check.message,
        "details": check.details,
        "fix": check.fix,
        # What the engine does when this check fails: stops, runs_without_speculation, runs_useless_draft.
        "effect": check.effect,
    }


def _finding(finding: Finding) -> dict[str, Any]:
    return {
        "code": finding.code,
        "name": finding.name,
        "message": finding.message,
        "details": finding.details,
        "fix": finding.fix,
    }


def _unknown(report: Report) -> list[dict[str, str]]:
    return [{"code": c.code, "name": c.name, "message": c.message} for c in report.unknowns]


def report_to_dict(report: Report, fail_on: str = DEFAULT_FAIL_ON) -> dict[str, Any]:
    first = report.first_failure
    aborts = report.run_time_aborts
    return {
        "schema_version": SCHEMA_VERSION,
        "paircheck_version": __version__,
        "engine": report.engine,
        "engine_version": report.engine_version,
        # The engine found on this machine whose version picked the rules; null when none was
        # looked for or found (an addition within schema 3: readers that ignore it lose nothing).
        "installed": None if report.installed is None else {
            "engine": report.installed.engine, "version": report.installed.version, "shown": report.installed.shown,
            "how": report.installed.how, "where": report.installed.where},
        "method": report.method,
        # accepted / refused / aborts (accepted at load, predicted to abort at run time) /
        # unknown (no check failed, but a deciding one could not be made).
        "verdict": report.verdict,
        # What the engine does with the pair: runs, stops (an error), runs_without_speculation
        # (a fallback) or runs_useless_draft (starts, the draft proposes other tokens); null if unknown.
        "outcome": report.outcome,
        "unknown": _unknown(report),
        # True unless refused: kept for schema 1 readers; "verdict" tells aborts and unknown apart.
        "compatible": report.compatible,
        "first_failure": None if first is None else first.name,
        # The warning that predicts the abort (its name), when the verdict is aborts.
        "first_abort": aborts[0].name if aborts else None,
        # The --fail-on level and the exit code it gives (paircheck.outcome).
        "fail_on": fail_on,
        "exit_code": report_exit(report, fail_on),
        "target": describe_side(report.target, report.fingerprints.get("target")),
        # null for the methods without a draft model (ngram-*, suffix).
        "draft": None if report.draftless else describe_side(report.draft, report.fingerprints.get("draft")),
        "checks": [_check(c) for c in report.checks],
        "warnings": [_finding(w) for w in report.warnings],
        "next_steps": list(report.next_steps),
        # Only with --ctx/--vram: memory of the pair (schema paircheck.fit/1, as `paircheck fit`).
        **({"memory": report.memory.to_json()} if report.memory is not None else {}),
        # What the registry of documented pairs says (never part of the verdict).
        "registry": [_finding(f) for f in report.registry],
    }


def matrix_to_dict(reports: list[Report], fail_on: str = DEFAULT_FAIL_ON) -> dict[str, object]:
    engines = []
    for r in reports:
        entry = report_to_dict(r, fail_on)
        # The sides are the same for every engine: given once at the top level.
        for key in ("target", "draft", "schema_version", "paircheck_version"):
            entry.pop(key, None)
        engines.append(entry)
    first = reports[0] if reports else None
    return {
        "schema_version": SCHEMA_VERSION,
        "paircheck_version": __version__,
        "engine": "all",
        # Engines that accept the pair outright; an unknown row is not listed here.
        "compatible_with": [r.engine for r in reports if r.verdict == ACCEPTED],
        "unknown_for": [r.engine for r in reports if r.verdict == UNKNOWN],
        # Engines that accept the pair at load, where paircheck predicts an abort at run time.
        "aborts_for": [r.engine for r in reports if r.verdict == ABORTS],
        "fail_on": fail_on,
        "exit_code": matrix_exit(reports, fail_on),
        "target": describe_side(first.target, first.fingerprints.get("target")) if first else None,
        "draft": describe_side(first.draft, first.fingerprints.get("draft")) if first and not first.draftless else None,
        "engines": engines,
    }


def pairs_to_dict(entries: Sequence[RegistryEntry], query: ModelIdentity | None = None) -> dict[str, object]:
    doc: dict[str, object] = {"schema_version": 1}
    if query is not None:
        doc["for"] = {
            "repo": query.repo,
            "name": query.name,
            "basename": query.basename,
            "size_label": query.size_label,
            "finetune": query.finetune,
        }
    doc["pairs"] = [e.to_dict() for e in entries]
    return doc


def _r(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def comparison_to_dict(comp: Comparison) -> dict[str, Any]:
    from paircheck.bench.compare import COMPARE_SCHEMA_VERSION

    data = asdict(comp)
    data = {"schema_version": COMPARE_SCHEMA_VERSION, "measured": True, **data, "problems": comp.stability_problems}
    for side in ("baseline", "draft"):  # per side, beside its stability: its speeds
        if isinstance(data.get(side), dict):
            data[side]["aggregate_tokens_per_s"] = data[f"{side}_aggregate_tokens_per_s"]
            data[side]["aggregate_decode_tokens_per_s"] = data[f"{side}_aggregate_decode_tokens_per_s"]
            data[side]["tokens_per_s"] = data[f"{side}_tokens_per_second"]
    return json.loads(json.dumps(data, default=str))


def bench_run_to_dict(points: Sequence[Any]) -> dict[str, Any]:
    """``bench run --json``: the first workload's comparison at the top level (as before grids),
    and ``workloads``: one comparison per grid point, each with its ``files`` and ``ctx_size``."""
    entries = []
    for point in points:
        assert point.comparison is not None
        entry = comparison_to_dict(point.comparison)
        entry["files"] = {"baseline": str(point.file("baseline")), "draft": str(point.file("draft"))}
        entry["ctx_size"] = point.ctx_size
        entry["ctx_per_slot"] = point.ctx_size // point.workload.parallel
        entries.append(entry)
    return {**entries[0], "workloads": entries}


def estimate_to_dict(est: Estimate) -> dict[str, Any]:
    data = asdict(est)
    data["warnings"] = [asdict(w) for w in est.warnings]
    data["predicted"] = est.predicted.to_dict() if est.predicted is not None else None
    data["workloads"] = [p.to_dict() for p in est.workloads]
    data["checks"] = [c.to_dict() for c in est.checks]
    data["reported"] = est.reported.to_dict() if est.reported is not None else None
    measured = est.costs_basis == "measured"
    model = ("paircheck.speed: the replayed counts priced at the costs a probe measured" if measured
             else "Leviathan et al. 2023: E = (1 - a^(k+1)) / (1 - a), speedup = E / (k*c + 1), with assumed "
                  "verify_growth and round_cost")
    head = {"schema_version": 2, "modelled": True, "model": model}
    return {**head, **data}


def lint_to_dict(result: LintResult, pair_check: bool = True, fail_on: str = DEFAULT_FAIL_ON) -> dict[str, object]:
    from paircheck.preflight.lint import EXIT_FOR, OK

    status = result.status(pair_check, fail_on)
    return {
        "launcher": result.launcher,
        "status": status,  # "ok", "not-ok", "not-checked", "aborts", "warned"
        "ok": status == OK,
        "fail_on": fail_on,
        "exit_code": EXIT_FOR[status],
        "findings": [asdict(f) for f in result.findings],
        "pairs": [report_to_dict(r, fail_on) for r in result.reports],
        "corrected_command": shlex.join(result.corrected) if result.corrected else None,
        # Options in corrected_command that are a guess (the nearest real option by name).
        "corrected_guesses": [{"given": given, "used": used} for given, used in result.guessed],
        # The llama.cpp program whose --help the flags were checked against (path, version), or None.
        "checked_against_build": result.build,
    }


def lint_files_to_dict(result: FilesLintResult, pair_check: bool = True,
                       fail_on: str = DEFAULT_FAIL_ON) -> dict[str, object]:
    """``paircheck lint --json``: schema_version 1. Each command is lint-cmd's shape (status,
    findings, pairs, corrected_command, ...) plus where it was found; each finding has a
    ``location`` (file, line, column: 1-based)."""
    from paircheck._format.lint_places import shown_path
    from paircheck.preflight.lint import EXIT_FOR, OK

    status = result.status(pair_check, fail_on)
    commands = []
    for c in result.commands:
        data = lint_to_dict(c.result, pair_check, fail_on)
        file = shown_path(c.command.file)
        for finding, pos in zip(data["findings"], c.places, strict=True):  # type: ignore[call-overload]
            finding["location"] = {"file": file, "line": pos.line, "column": pos.column}
        commands.append({"file": file, "line": c.command.pos.line, "column": c.command.pos.column,
                         "kind": c.kind, "where": c.command.where, "argv": c.command.argv,
                         "pair_location": {"file": file, "line": c.pair_place.line, "column": c.pair_place.column},
                         **data})
    return {
        "schema_version": 1,
        "status": status,  # "ok", "not-ok", "not-checked", "aborts", "warned": the worst command's
        "ok": status == OK,
        "fail_on": fail_on,
        "exit_code": EXIT_FOR[status],
        "files": [{"file": shown_path(path), "kind": kind} for path, kind in result.files],
        "commands": commands,
    }


def dumps(data: object) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


def gpus_to_dict(table: GpuTable) -> dict[str, object]:
    """``paircheck gpus --json`` (its own schema_version 1)."""
    doc: dict[str, object] = {"schema_version": 1, "gpus": [
        {**g.to_dict(), "aliases": list(g.aliases), "quote": g.quote, "note": g.note} for g in table.rows]}
    if table.detected is not None:
        found = table.detected
        doc["detected"] = {"command": found.command, "problems": list(found.problems),
                           "devices": [{"name": d.name, "total_bytes": d.total_bytes, "free_bytes": d.free_bytes}
                                       for d in found.devices]}
    return doc


def _probe(outcome: ProbeOutcome, options: RenderOptions) -> str:
    return dumps(outcome.data)


def _scan(result: ScanResult, options: RenderOptions) -> str:
    from paircheck._format.scan_render import scan_to_dict

    return dumps(scan_to_dict(result))


FORMAT = Format("json", {
    "Report": lambda report, options: dumps(report_to_dict(report, options.fail_on)),
    "EveryEngine": lambda result, options: dumps(matrix_to_dict(result.reports, options.fail_on)),
    "Pairs": lambda result, options: dumps(pairs_to_dict(result.entries, result.query)),
    "Comparison": lambda comp, options: dumps(comparison_to_dict(comp)),
    "LintResult": lambda result, options: dumps(lint_to_dict(result, options.pair_check, options.fail_on)),
    "FilesLintResult": lambda result, options: dumps(lint_files_to_dict(result, options.pair_check, options.fail_on)),
    "FitResult": lambda result, options: dumps(result.to_json()),
    "ScanResult": _scan,
    "Estimate": lambda est, options: dumps(estimate_to_dict(est)),
    "ProbeOutcome": _probe,
    "GpuTable": lambda table, options: json.dumps(gpus_to_dict(table), indent=2),
})
