"""Markdown: the registry's pairs as a GitHub table (also the README's generated table)."""

from __future__ import annotations

from collections.abc import Sequence

from paircheck._format._unsupported import PartialFormat
from paircheck._format.interface import RenderOptions
from paircheck._format.text_bench import render_comparison
from paircheck._format.text_pairs import SOURCE_KIND_SHORT
from paircheck._registry.entry import RegistryEntry, engines_label, evidence_label
from paircheck._registry.identity import ModelIdentity
from paircheck.bench.compare import Comparison


def _md(text: str) -> str:
    # A "|" inside a cell would end it in GitHub markdown.
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(entries: Sequence[RegistryEntry]) -> str:
    """A GitHub table one row per pair, with sources as numbered reference links below it.

    Rows are not padded to a common width and URLs sit under the table, so each line stays
    short enough to read in a terminal or a diff (repos and notes are in --format json).
    """
    # No family column: rows are sorted by family, and the names carry it.
    headers = ["Target", "Draft", "Method", "Evidence", "Engines", "Source"]
    refs: dict[str, int] = {}
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for e in entries:
        ref = refs.setdefault(e.source.url, len(refs) + 1)
        evidence = evidence_label(e)
        if e.status == "fails":
            evidence = f"**{evidence}**"
        cells = [
            _md(e.target.name),
            _md(e.draft.name),
            e.method,
            evidence,
            _md(engines_label(e, sep=", ")),
            f"[{SOURCE_KIND_SHORT.get(e.source.kind, e.source.kind)}][{ref}]",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines += [f"[{n}]: {url}" for url, n in refs.items()]
    return "\n".join(lines)


class MarkdownFormat(PartialFormat):
    name = "markdown"

    def pairs(self, entries: Sequence[RegistryEntry], query: ModelIdentity | None, options: RenderOptions) -> str:
        if not entries:
            return f"no documented drafts for {query.display()}" if query else "no documented pairs match the filters"
        return render_markdown(entries)

    def comparison(self, comp: Comparison, options: RenderOptions) -> str:
        return render_comparison(comp, markdown=True)
