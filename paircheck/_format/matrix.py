"""``--engine all``: one row per engine (verdict, the rule's reason, how that engine fails)."""

from __future__ import annotations

import json

from tabulate import tabulate

from paircheck import __version__
from paircheck._format.json_format import SCHEMA_VERSION, describe_side, report_to_dict
from paircheck._format.wrap import wrap
from paircheck.findings import SKIP, Report

WIDTH = 100
REASON_WIDTH = 44
FAILS_WIDTH = 30


def verdict(report: Report) -> str:
    if not report.compatible:
        return "NO"
    if any(c.status == SKIP for c in report.checks):
        return "yes?"  # accepted on what could be checked; something was unknown
    return "yes"


def reason(report: Report) -> str:
    first = report.first_failure
    if first is not None:
        return f"{first.code} {first.message}"
    skipped = next((c for c in report.checks if c.status == SKIP and "not used" not in c.message), None)
    if skipped is not None:
        return f"{skipped.code} {skipped.message}"
    return "; ".join(c.message for c in report.checks[-1:])


def _cell(text: str, width: int) -> str:
    return "\n".join(wrap(text, width, break_long_words=True)) or "-"


def render_matrix(reports: list[Report]) -> str:
    accepted = [r.engine for r in reports if r.compatible]
    head = f"{len(accepted)} of {len(reports)} engines accept this pair"
    if reports:
        head += f" ({reports[0].target.display_name} + {reports[0].draft.display_name})"
    rows = []
    for r in reports:
        fails = r.engine_says if r.first_failure is not None and r.engine_says else ("-" if r.compatible else "")
        rows.append((f"{r.engine}\n{r.method}", verdict(r), _cell(reason(r), REASON_WIDTH), _cell(fails, FAILS_WIDTH)))
    table = tabulate(rows, headers=("engine", "ok", "reason", "how it fails"), tablefmt="simple",
                     disable_numparse=True)
    lines = [head, "", table, ""]
    lines.append("ok: yes = accepted, yes? = accepted on what could be checked (a value was unknown), NO = refused")
    lines.append("Versions the verdicts are for:")
    for r in reports:
        lines += wrap(f"{r.engine}: {r.engine_version}", WIDTH, initial_indent="  ", subsequent_indent="    ")
    fixes = {r.first_failure.fix for r in reports if r.first_failure is not None and r.first_failure.fix}
    if fixes:
        lines += ["", "Fixes:"]
        for fix in sorted(fixes):
            lines += wrap(fix, WIDTH, initial_indent="  - ", subsequent_indent="    ")
    lines += ["", "Details for one engine: paircheck --engine NAME TARGET DRAFT; a rule: paircheck explain CODE"]
    return "\n".join(lines)


def matrix_to_dict(reports: list[Report]) -> dict[str, object]:
    engines = []
    for r in reports:
        entry = report_to_dict(r)
        # The sides are the same for every engine: given once at the top level.
        entry.pop("target", None)
        entry.pop("draft", None)
        entry.pop("schema_version", None)
        entry.pop("paircheck_version", None)
        engines.append(entry)
    first = reports[0] if reports else None
    return {
        "schema_version": SCHEMA_VERSION,
        "paircheck_version": __version__,
        "engine": "all",
        "compatible_with": [r.engine for r in reports if r.compatible],
        "target": describe_side(first.target) if first else None,
        "draft": describe_side(first.draft) if first else None,
        "engines": engines,
    }


def render_matrix_json(reports: list[Report]) -> str:
    return json.dumps(matrix_to_dict(reports), indent=2, ensure_ascii=False)
