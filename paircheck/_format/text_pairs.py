"""The registry's documented pairs for people (``paircheck pairs``): a table whose names
wrap rather than being cut, and for one target what each source shows."""

from __future__ import annotations

from collections.abc import Sequence

from paircheck._format.interface import RenderOptions
from paircheck._format.text_base import cell, wrap
from paircheck._registry.entry import Measurement, RegistryEntry, engines_label, evidence_label, evidence_text
from paircheck._registry.identity import ModelIdentity

# Short source kinds keep the terminal table narrow; json/csv/markdown use the full enum.
SOURCE_KIND_SHORT = {"official-docs": "docs", "model-card": "card"}


def render_pairs_table(entries: Sequence[RegistryEntry], options: RenderOptions) -> str:
    """One row per pair. Names wrap inside their column instead of being cut, so two drafts
    of one family (Coder 0.5B and 1.5B) never look alike; every engine is shown."""
    headers = ("target", "draft", "method", "evidence", "engines", "source")
    rows = [
        (
            e.target.name,
            e.draft.name,
            e.method,
            evidence_label(e, with_figure=False),
            engines_label(e, sep=", "),
            SOURCE_KIND_SHORT.get(e.source.kind, e.source.kind),
        )
        for e in entries
    ]
    fixed = [max([len(headers[i])] + [len(r[i]) for r in rows]) for i in (2, 3, 5)]
    from tabulate import tabulate

    # Names and engines share what the short columns leave; tabulate pads a little beyond
    # the text, so measure the rendered table and give less room until it fits.
    room = max(36, options.width - sum(fixed) - 2 * (len(headers) - 1))
    longest = max([len(r[0]) for r in rows] + [len(r[1]) for r in rows])
    while True:
        # Whole names when they fit (rows must stay tellable apart); engines wrap at ", ".
        names = max(12, min(longest, (room - 12) // 2))
        engines = max(10, room - 2 * names)
        cells = [
            (cell(a, names, True), cell(b, names, True), c, d, cell(e, engines), f) for a, b, c, d, e, f in rows
        ]
        text = str(tabulate(cells, headers=headers, tablefmt="simple", disable_numparse=True))
        if max(len(line) for line in text.splitlines()) <= options.width:
            return text
        if room <= 36:  # six columns cannot fit: one block per pair instead of a table
            return "\n".join(_pair_block(row, options) for row in rows)
        room -= 1


def _pair_block(row: tuple[str, ...], options: RenderOptions) -> str:
    target, draft, method, evidence, engines, source = row
    return "\n".join([*wrap(f"{target} + {draft}", options.width, "", "    "),
                      *wrap(f"{method}, {evidence}, {engines} ({source})", options.width, "  ", "  ")])


# What each measured quantity is, in words: "32.49 to 55.473 tok/s" read as a range when it
# was the target alone and then with the draft.
_QUANTITY_WORDS = {
    "speedup": "{v}x the speed without speculation",
    "acceptance_rate": "{v} of drafted tokens accepted",
    "accepted_per_pass": "{v} tokens per target pass (acceptance length)",
    "tokens_per_second": "{v} tok/s with the draft",
    "baseline_tokens_per_second": "{v} tok/s without it (the target alone)",
}


def _measured_line(m: Measurement) -> str:
    scale, unit = (100, "%") if m.quantity == "acceptance_rate" else (1, "")  # a fraction, shown as one
    value = f"{m.value * scale:g}" + (f" to {m.value_max * scale:g}" if m.value_max is not None else "") + unit
    words = _QUANTITY_WORDS.get(m.quantity, m.quantity + " {v}").format(v=value)
    k = f"draft length {m.draft_max}" if m.draft_max is not None else None
    where = "; ".join(x for x in (m.engine, m.hardware, k) if x)
    return f"{words} ({where})" if where else words


def _measured_lines(e: RegistryEntry, options: RenderOptions) -> list[str]:
    """Every measured number with what it is, under the source it was measured in."""
    by_source: dict[str, list[Measurement]] = {}
    for m in e.measured:
        by_source.setdefault(m.url or e.quote_source(), []).append(m)
    lines: list[str] = []
    for url, numbers in by_source.items():
        if url == e.source.url:
            lines.append("  measured, in the source above:")
        else:
            lines += ["  measured, in:", f"    {url}"]  # a URL alone on its line: never wrapped
        for m in numbers:
            lines += wrap(_measured_line(m), options.width, "    ", "      ")
    return lines


def render_pairs_details(entries: Sequence[RegistryEntry], options: RenderOptions) -> list[str]:
    """Per entry: what the source shows (never "works" for a suggestion), its quote, caveats."""
    lines: list[str] = []
    for e in entries:
        lines += wrap(f"{e.target.name} + {e.draft.name} ({e.method}): {evidence_text(e)}", options.width, "", "    ")
        lines += wrap(f'"{e.quote}"', options.width, "  ", "   ")
        for caveat in e.caveats:
            lines += wrap(f"caveat: {caveat.shown()}", options.width, "  ", "    ")
            lines += wrap(f"basis: {caveat.reason}", options.width, "    ", "       ") if caveat.reason else []
        # A URL cannot be wrapped; on a line of its own it still copies cleanly.
        lines += ["  source:", f"    {e.source.url}"]
        lines += _measured_lines(e, options)
    return lines


def render_pairs(entries: Sequence[RegistryEntry], query: ModelIdentity | None, options: RenderOptions) -> str:
    if not entries:
        return f"no documented drafts for {query.display()}" if query else "no documented pairs match the filters"
    lines = [f"Documented drafts for {query.display()}:"] if query is not None else []
    lines.append(render_pairs_table(entries, options))
    if query is not None:  # one target's drafts are few: say what each source shows
        lines += ["", *render_pairs_details(entries, options)]
    lines += [
        "",
        *wrap(
            f"{len(entries)} pair(s). Evidence: measured, ran = a source shows the pair running; recommended, "
            "computed = nothing shown running; fails = documented failing; !engine = documented to fail there. "
            "--format json adds quotes, caveats and notes.",
            options.width,
        ),
    ]
    return "\n".join(lines)
