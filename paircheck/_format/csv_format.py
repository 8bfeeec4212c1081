"""CSV: the registry's pairs, one row each; list columns joined with ";"."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from paircheck._format.interface import Format
from paircheck._registry.entry import RegistryEntry

CSV_FIELDS = (
    "id", "family", "target_name", "target_repo", "draft_name", "draft_repo", "draft_builtin", "method",
    "engines", "status", "evidence", "engine_evidence", "figure", "why", "fails_on", "source_url",
    "source_kind", "checked", "quote", "quote_url", "caveats", "read", "unreadable", "see_also", "notes",
)


def _row(e: RegistryEntry) -> dict[str, str]:
    return {
        "id": e.id,
        "family": e.family,
        "target_name": e.target.name,
        "target_repo": e.target.repo or "",
        "draft_name": e.draft.name,
        "draft_repo": e.draft.repo or "",
        "draft_builtin": "true" if e.draft.builtin else "false",
        "method": e.method,
        # ";" inside a cell so list columns never clash with the CSV separator.
        "engines": ";".join(e.engines),
        "status": e.status,
        "evidence": e.evidence,
        "engine_evidence": ";".join(f"{x}={e.evidence_for(x)}" for x in (*e.engines, *e.fails_on)),
        "figure": e.figure or "",
        "why": e.why or "",
        "fails_on": ";".join(e.fails_on),
        "source_url": e.source.url,
        "source_kind": e.source.kind,
        "checked": e.source.checked.isoformat(),
        "quote": e.quote,
        "quote_url": e.quote_url or e.source.url,
        "caveats": ";".join(c.shown() for c in e.caveats),
        "read": ";".join(e.checked.read) if e.checked else "",
        "unreadable": ";".join(e.checked.unreadable) if e.checked else "",
        "see_also": ";".join(e.see_also),
        "notes": e.notes,
    }


def render_csv(entries: Sequence[RegistryEntry]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for e in entries:
        writer.writerow(_row(e))
    return buf.getvalue().rstrip("\n")


FORMAT = Format("csv", {"Pairs": lambda result, options: render_csv(result.entries)})
