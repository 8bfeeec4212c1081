"""The registry's documented pairs for people (``paircheck pairs``): a table whose long names
are cut in the middle where the cut still tells them apart, and for one target what each
source shows."""

from __future__ import annotations

from collections.abc import Sequence

from paircheck._format.interface import RenderOptions
from paircheck._format.text_base import cell, distinct_cut, simple_table, wrap
from paircheck._registry.entry import Measurement, RegistryEntry, engines_label, evidence_label, evidence_text
from paircheck._registry.identity import ModelIdentity

# Short source kinds keep the terminal table narrow; json/csv/markdown use the full enum.
SOURCE_KIND_SHORT = {"official-docs": "docs", "model-card": "card"}


def render_pairs_table(entries: Sequence[RegistryEntry], options: RenderOptions) -> str:
    """One row per pair, one line where it can be: a name longer than its column is cut in the
    middle ("phind-…-34b-v2"), at a cut that still tells it apart from every other name in that
    column (Coder 0.5B and 1.5B never look alike). A name that no cut at that width tells
    apart wraps instead. Full names are in --for's details, JSON and CSV; every engine is shown."""
    return _pairs_table(entries, options)[0]


def _pairs_table(entries: Sequence[RegistryEntry], options: RenderOptions) -> tuple[str, bool]:
    """The table and whether a name in it was cut."""
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
    fixed = sum(max([len(headers[i])] + [len(r[i]) for r in rows]) for i in (2, 3, 5))
    room = options.width - fixed - 2 * (len(headers) - 1)  # what names and engines share
    targets, drafts = list(dict.fromkeys(r[0] for r in rows)), list(dict.fromkeys(r[1] for r in rows))
    engines_need = max(max(len(r[4]) for r in rows), len(headers[4]))
    names = room - min(engines_need, _ENGINES_MIN)
    if names < 2 * _NAME_MIN:  # six columns cannot fit: one block per pair instead of a table
        return "\n".join(_pair_block(row, options) for row in rows), False
    target_width, draft_width = _name_widths(targets, drafts, names)
    engines = max(len(headers[4]), min(engines_need, room - target_width - draft_width))
    shown_targets, shown_drafts = _shown(targets, target_width), _shown(drafts, draft_width)
    cells = [(shown_targets[a], shown_drafts[b], c, d, cell(e, engines, hyphens=True), f) for a, b, c, d, e, f in rows]
    cut = any("…" in v for v in (*shown_targets.values(), *shown_drafts.values()))
    return simple_table(headers, cells), cut


_NAME_MIN, _ENGINES_MIN = 12, 12  # "transformers", "(none named)": an engine is never split


def _shown(names: Sequence[str], width: int) -> dict[str, str]:
    """Each name as its column shows it: whole, cut in the middle, or wrapped (no cut tells it
    apart from the others)."""
    return {n: distinct_cut(n, names, width) or cell(n, width, hyphens=True) for n in names}


def _name_widths(targets: Sequence[str], drafts: Sequence[str], room: int) -> tuple[int, int]:
    """How ``room`` is shared by the target and draft columns: whole names when they fit;
    else the split that wraps the fewest names, then cuts the fewest, then cuts drafts the
    least (the draft is what is being chosen; --for's heading names the target), then is the
    most even."""
    longest_target, longest_draft = max(map(len, targets)), max(map(len, drafts))
    if longest_target + longest_draft <= room:
        return longest_target, longest_draft
    best: tuple[tuple[int, int, int, int], int] | None = None
    for width in range(max(_NAME_MIN, room - longest_draft), min(longest_target, room - _NAME_MIN) + 1):
        split = (width, room - width)
        wrapped = sum(distinct_cut(n, names, w) is None
                      for names, w in ((targets, split[0]), (drafts, split[1])) for n in names)
        cut_drafts = sum(len(n) > split[1] for n in drafts)
        score = (wrapped, sum(len(n) > split[0] for n in targets) + cut_drafts, cut_drafts,
                 abs(split[0] - split[1]))
        if best is None or score < best[0]:
            best = (score, width)
    width = best[1] if best is not None else room // 2
    return width, room - width


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
    where = "; ".join(x for x in (m.engine or "no engine named", m.hardware, k) if x)
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
    table, cut = _pairs_table(entries, options)
    lines.append(table)
    if query is not None:  # one target's drafts are few: say what each source shows
        lines += ["", *render_pairs_details(entries, options)]
    where = "the details above" if query is not None else "--for TARGET, --format json or csv"
    whole = f" Names with … are cut in the middle: {where} give them whole." if cut else ""
    lines += [
        "",
        *wrap(
            f"{len(entries)} pair(s). Evidence: measured, ran = a source shows the pair running; recommended, "
            "computed = nothing shown running; fails = documented failing; !engine = documented to fail there. "
            f"--format json adds quotes, caveats and notes.{whole}",
            options.width,
        ),
    ]
    return "\n".join(lines)
