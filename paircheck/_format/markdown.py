"""Markdown: the registry's pairs as a GitHub table (also the README's generated table)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from paircheck._format.interface import Format, RenderOptions
from paircheck._format.text_bench import render_comparison
from paircheck._format.text_pairs import SOURCE_KIND_SHORT
from paircheck._registry.entry import RegistryEntry, engines_label, evidence_label

if TYPE_CHECKING:
    from paircheck._registry.consult import Pairs


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


def _elide_shared(draft: str, target: str, limit: int) -> str:
    """The draft's name in ``limit`` characters if words it shares with the target can go.

    Runs of shared words (case-insensitive) become "…", longest run first, only as many as
    needed: beside "Llama-4-Scout-17B-16E-Instruct", "sglang-EAGLE3-…-v1" still says which head.
    """
    words = draft.split("-")
    in_target = {w.casefold() for w in target.split("-")}
    runs: list[tuple[int, int]] = []  # [start, end) of each run of shared words
    i = 0
    while i < len(words):
        if words[i].casefold() in in_target:
            j = i
            while j < len(words) and words[j].casefold() in in_target:
                j += 1
            runs.append((i, j))
            i = j
        else:
            i += 1
    gone: set[tuple[int, int]] = set()
    out = draft
    for run in sorted(runs, key=lambda r: -len("-".join(words[r[0]:r[1]]))):
        if len(out) <= limit:
            break
        gone.add(run)
        parts: list[str] = []
        i = 0
        while i < len(words):
            end = next((e for s, e in gone if s == i), None)
            if end is None:
                parts.append(words[i])
                i += 1
            else:
                parts.append("…")
                i = end
        out = "-".join(parts)
    return out


def shorten(name: str, limit: int) -> str:
    """``name`` in at most ``limit`` characters, cut in the middle: the ends tell names apart."""
    if len(name) <= limit:
        return name
    keep = max(limit - 1, 2)
    return name[: keep - keep // 2] + "…" + name[len(name) - keep // 2:]


def render_markdown_summary(entries: Sequence[RegistryEntry], width: int = 100) -> str:
    """A GitHub table that fits ``width`` columns: names, method, strongest evidence, engines.

    For the README: figures, sources and quotes are in ``--format markdown`` and the HTML page.
    A row that would be wider has its longer names shortened in the middle ("…").
    """
    headers = ["Target", "Draft", "Method", "Evidence", "Engines"]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for e in entries:
        evidence = evidence_label(e, with_figure=False)
        if e.status == "fails":
            evidence = f"**{evidence}**"
        engines = engines_label(e, sep=", ")
        # Names need about 24 columns; a long engine list gives way first: its strongest
        # engines stay, the others are counted (the page and `paircheck pairs` list them).
        fixed = len("| " + " | ".join(["", "", e.method, evidence, ""]) + " |")
        if fixed + len(engines) + 24 > width and "; " in engines:
            head, _, tail = engines.partition("; ")
            engines = f"{head}; +{len(tail.split(', '))} more"
        rest = [e.method, evidence, _md(engines)]
        target, draft = _md(e.target.name), _md(e.draft.name)
        budget = width - len("| " + " | ".join(["", "", *rest]) + " |")
        if len(target) + len(draft) > budget:
            draft = _elide_shared(draft, target, budget - len(target))
        # Still too wide: the draft gives way first (rows are read by their target), in the middle.
        t_len, d_len = len(target), len(draft)
        while t_len + d_len > budget and max(t_len, d_len) > 12:
            if d_len > 12:
                d_len -= 1
            else:
                t_len -= 1
        lines.append("| " + " | ".join([shorten(target, t_len), shorten(draft, d_len), *rest]) + " |")
    return "\n".join(lines)


def _pairs(result: Pairs, options: RenderOptions) -> str:
    if not result.entries:
        return (f"no documented drafts for {result.query.display()}" if result.query
                else "no documented pairs match the filters")
    return render_markdown(result.entries)


FORMAT = Format("markdown", {
    "Pairs": _pairs,
    "Comparison": lambda comp, options: render_comparison(comp, markdown=True),
})
