"""HTML: the registry's pairs as one self-contained page (``paircheck pairs --format html``).

One file with inline CSS and a little JS (pairs_page.css, pairs_page.js, pairs_page.html:
kept as files so they read as what they are). It fetches nothing (a Content-Security-Policy
says so to the browser too) and works from ``file://``. Every pair is in the table as
HTML, so the page is complete without JavaScript; the script only filters, searches and
sorts, and keeps that state in the URL fragment so a filtered view is a link.

Everything that comes from the registry is escaped: text goes through ``_el`` (which
escapes any child that is not already ``Html``) and attribute values are always escaped.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from string import Template
from typing import Any

from paircheck._format.interface import Format
from paircheck._registry.entry import EVIDENCE_SHORT, RegistryEntry, VocabPrint, evidence_phrases
from paircheck._registry.identity import ModelIdentity, ModelRef
from paircheck._registry.launch import PROVENANCE, engines_without_line, launch_lines, pairs_command
from paircheck._registry.schema import ENGINES, EVIDENCE, METHODS

HUB = "https://huggingface.co/"

# (column key, header). The key names the cell's data-col and the fragment's sort=KEY.
COLUMNS = (
    ("target", "Target"),
    ("draft", "Draft"),
    ("method", "Method"),
    ("evidence", "Evidence per engine"),
    ("family", "Family"),
    ("checked", "Checked"),
)

# registry/README.md's evidence levels, in one sentence each (the legend and badge titles).
EVIDENCE_MEANING = {
    "measured": "The source reports a run of the pair with figures (speed, speedup, acceptance).",
    "ran": "The source shows the pair running (a command with its output, a user's report), without figures.",
    "recommended": "The source recommends, lists, ships or intends the pair, without showing a run.",
    "computed": "Only an acceptance rate or a compatibility property was worked out; nothing ran.",
    "run-failed": "The source shows a run of the pair failing: the error text or the wrong output.",
    "code-refuses": "The engine's code, or a pull request to it, shows the check that rejects the pair.",
    "stated": "The source says the pair fails, without a run or the code.",
    "sibling": "A failure was reported for a sibling pair (another size, quantization or build), not this exact one.",
}
# The filter's words for the failure levels (the badges use EVIDENCE_SHORT, as `paircheck pairs` does).
EVIDENCE_OPTION = {"run-failed": "FAILS: run failed", "code-refuses": "FAILS: code refuses",
                   "stated": "FAILS: stated", "sibling": "FAILS: for a sibling pair"}
SOURCE_KIND = {"official-docs": "official docs", "model-card": "model card", "paper": "paper", "issue": "issue",
               "blog": "write-up", "code": "example code"}

# --------------------------------------------------------------------------- escaping


class Html(str):
    """Markup that is already safe; any other str given to ``_el`` is escaped."""


def _esc(value: object) -> Html:
    return Html(html.escape(str(value), quote=True))


def _attrs(attrs: Mapping[str, object]) -> str:
    out = []
    for key, value in attrs.items():
        name = key.rstrip("_").replace("_", "-")  # class_ -> class, data_col -> data-col
        if value is None or value is False:
            continue
        out.append(f" {name}" if value is True else f' {name}="{_esc(value)}"')
    return "".join(out)


def _el(tag: str, *children: object, **attrs: object) -> Html:
    inner = "".join(c if isinstance(c, Html) else _esc(c) for c in children if c is not None and c != "")
    return Html(f"<{tag}{_attrs(attrs)}>{inner}</{tag}>")


def _join(parts: Iterable[object], sep: str = "") -> Html:
    return Html(sep.join(p if isinstance(p, Html) else _esc(p) for p in parts))


def _lines(parts: Iterable[object]) -> Html:
    """Parts one per line: a registry change shows as a few changed lines in the page's diff."""
    return Html("\n" + _join((p for p in parts if p is not None), "\n") + "\n")


def _link(url: str, text: object) -> Html:
    return _el("a", text, href=url)


@cache
def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


# --------------------------------------------------------------------------- cells


def sort_key(text: str) -> str:
    """A cell's sort key: case-insensitive, runs of digits compared as numbers (7B before 14B).

    The page compares keys as plain strings, so numbers are zero-padded here.
    """
    return re.sub(r"\d+", lambda m: m.group().zfill(8), text.casefold())


def _side(ref: ModelRef, col: str) -> Html:
    name: Html = _esc(ref.name) if not ref.builtin else _el("span", ref.name, class_="builtin")
    repo = _el("a", ref.repo, href=HUB + ref.repo, class_="repo") if ref.repo else None
    tag = "th" if col == "target" else "td"
    extra = {"scope": "row"} if tag == "th" else {}
    return _el(tag, name, repo, data_col=col, data_sort=sort_key(ref.name), **extra)


def _engine_levels(entry: RegistryEntry) -> list[tuple[str, str]]:
    """Every engine the entry names, working first, each with its evidence level."""
    return [(eng, entry.evidence_for(eng) or entry.evidence) for eng in (*entry.engines, *entry.fails_on)]


def _badge(engine: str, level: str) -> Html:
    # No title tooltip: the legend explains each level, for keyboard and touch users too.
    return _el("span", f"{engine} " if engine else None, _el("b", EVIDENCE_SHORT.get(level, level)),
               class_=f"badge ev-{level}")


def _pair_row(entry: RegistryEntry) -> Html:  # narrow-layout cell labels: the stylesheet's, by data-col
    best = entry.best_evidence()
    levels = _engine_levels(entry) or [("", entry.evidence)]  # no engine named: the level alone
    badges = _el("span", *[_badge(eng, level) for eng, level in levels], class_="badges")
    checked = entry.source.checked.isoformat()
    cells = [
        _side(entry.target, "target"),
        _side(entry.draft, "draft"),
        _el("td", entry.method, data_col="method", data_sort=sort_key(entry.method)),
        # Sorted by strength: measured first, the failure levels last.
        _el("td", badges, data_col="evidence", class_="evidence",
            data_sort=f"{EVIDENCE.index(best):02d}"),
        _el("td", entry.family, data_col="family", data_sort=sort_key(entry.family)),
        _el("td", _el("time", checked, datetime=checked), data_col="checked",
            data_sort=checked, class_="when"),
    ]
    return _el("tr", *cells, class_="pair")


def _value(value: object) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_value(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(f"{p[0]}={_value(p[1])}" if isinstance(p, tuple) and len(p) == 2 else _value(p)
                         for p in value)
    return str(value)


def _measured_item(item: Any, shown: set[str]) -> Html:
    """One structured measurement (``entry.measured``): the number, where and how, and its quote
    unless an earlier line or the entry's own quote already shows it (``shown``)."""
    def field(name: str) -> Any:
        return getattr(item, name, None)

    where = " ".join(str(x) for x in (field("engine") or "no engine named", field("engine_version")) if x)
    setup = [f"on {field('hardware')}" if field("hardware") else "",
             f"target {field('target_quant')}" if field("target_quant") else "",
             f"draft {field('draft_quant')}" if field("draft_quant") else "",
             f"draft max {field('draft_max')}" if field("draft_max") is not None else "",
             _value(field("settings")) if field("settings") else ""]
    context = "; ".join(x for x in (where, *setup) if x)
    text = field("quote")
    quote = _el("q", text) if text and " ".join(str(text).split()) not in shown else None
    if text:
        shown.add(" ".join(str(text).split()))
    return _el("li", _el("span", f"{field('quantity')}: {_value(field('value'))}", class_="figure"),
               f" ({context})" if context else None, _el("br") if quote else None, quote)


def _measured(entry: RegistryEntry) -> Html | None:
    # entry.measured (structured numbers, one per claim) when the registry has them, else the
    # entry's short figure; both are the source's numbers, the quote says where they come from.
    # (getattr for both: the structured numbers are being added to the registry while `figure` is there.)
    items = tuple(getattr(entry, "measured", ()) or ())
    if items:
        # One quote is often the source of several numbers, and often the entry's own quote
        # (printed just below): each quote is printed once, which keeps the page small.
        shown = {" ".join(entry.quote.split())} if entry.quote else set()
        return _el("ul", *[_measured_item(m, shown) for m in items], class_="measured", aria_label="Measured numbers")
    figure = getattr(entry, "figure", None)
    if figure:
        return _el("p", "Measured: ", _el("span", figure, class_="figure"), " (the source's figure)")
    return None


def _quote(entry: RegistryEntry) -> Html:
    url = entry.quote_url or entry.source.url
    kind = SOURCE_KIND.get(entry.source.kind, entry.source.kind)
    cite: list[object] = ["From ", _link(entry.source.url, kind), f", checked {entry.source.checked.isoformat()}"]
    if entry.source_unread():
        cite += ["; that source could not be re-read, the quote comes from ", _link(url, url)]
    if entry.see_also:
        cite += ["; see also ", _join((_link(u, u) for u in entry.see_also), ", ")]
    return _lines([_el("blockquote", entry.quote, cite=url), _el("p", *cite, ".", class_="cite")])


def _vocab(side: str, vocab: VocabPrint | None) -> Html | None:
    if vocab is None:
        return None
    scope = ("this model's own tokenizer files" if vocab.scope == "model"
             else f"the vocabulary family: {vocab.tokenizer_of}'s tokenizer")
    return _el("li", f"{side}: ", _el("code", vocab.prefix), f" ({scope}, {vocab.vocab_size} rows)")


def _command(label: str, text: str) -> Html:
    return _el("div", _el("div", label, class_="label"), _el("pre", _el("code", text)), class_="cmd")


def _commands(entry: RegistryEntry) -> list[Html]:
    out = [_command("Drafts documented for this target", pairs_command(entry))]
    for line in launch_lines(entry):
        if line.kind == "ui":
            out.append(_el("p", _el("b", f"{line.engine}: "), line.text))
        else:
            out.append(_command(f"{line.engine} ({'Python' if line.kind == 'python' else 'shell'})", line.text))
    missing = engines_without_line(entry)
    if missing:
        out.append(_el("p", f"No launch line for {', '.join(missing)}: paircheck's engine rules do not cover "
                       f"{entry.method} there; the source shows how it was run.", class_="muted"))
    return out


def _details(entry: RegistryEntry) -> Html:
    facts: list[Html] = []

    def fact(term: str, *value: object) -> None:
        facts.extend([_el("dt", term), _el("dd", *value)])

    unread = ["the cited source could not be re-read"] if entry.source_unread() else []
    fact("Evidence", "; ".join([*evidence_phrases(entry), *unread]))
    fact("Notes", entry.notes)
    prints = [p for p in (_vocab("target", entry.target_vocab), _vocab("draft", entry.draft_vocab)) if p]
    fact("Vocabulary", f"family {entry.family}; ", _el("ul", *prints) if prints else "no fingerprint")
    # The audit trail (checked.note) stays in the registry and `pairs --format json`: the page
    # links every source and dates the quote; leaving it out keeps the page under 300 KB.
    if entry.checked is not None and entry.checked.unreadable:
        fact("Unreadable", _join((_link(u, u) for u in entry.checked.unreadable), ", "))
    return _el("details", _lines([_el("summary", "Notes, vocabulary and commands"),
                                  _el("dl", _lines(facts), class_="facts"), *_commands(entry)]))


def _more_row(entry: RegistryEntry) -> Html:
    parts: list[Html | None] = []
    if entry.status == "fails" and entry.why:
        parts.append(_el("p", f"Fails: {entry.why}", class_="why"))
    parts.append(_measured(entry))
    parts.append(_quote(entry))
    if entry.caveats:
        parts.append(_el("ul", *(_el("li", c.full()) for c in entry.caveats), class_="caveats", aria_label="Caveats"))
    parts.append(_details(entry))
    return _el("tr", _el("td", _lines(parts), colspan=len(COLUMNS)), class_="more")


def _entry(entry: RegistryEntry, order: int) -> Html:
    levels = _engine_levels(entry)
    # One tbody per pair, so the pair's row and its details row sort and hide together.
    return _el(
        "tbody",
        _lines([_pair_row(entry), _more_row(entry)]),
        class_="entry",
        id=f"pair-{entry.id}",
        data_order=order,
        data_family=entry.family,
        data_method=entry.method,
        data_engines=" ".join(eng for eng, _ in levels),
        data_evidence=" ".join(dict.fromkeys(level for _, level in levels)),
        data_levels=" ".join(f"{eng}:{level}" for eng, level in levels),
        data_search=search_text(entry),
    )


def search_text(entry: RegistryEntry) -> str:
    """What the page's search looks in: both sides' names and repos (casefolded), and the id."""
    parts = (entry.id, entry.target.name, entry.target.repo, entry.draft.name, entry.draft.repo)
    return " ".join(p for p in parts if p).casefold()


# --------------------------------------------------------------------------- page parts


def _select(name: str, label: str, options: Sequence[tuple[str, str]]) -> Html:
    opts = [_el("option", "any", value="")] + [_el("option", text, value=value) for value, text in options]
    return _el("label", label, _el("select", *opts, name=name, id=f"f-{name}"))


def _controls(entries: Sequence[RegistryEntry]) -> Html:
    engines = {eng for e in entries for eng, _ in _engine_levels(e)}
    levels = {level for e in entries for _, level in _engine_levels(e)}
    return _join([
        _select("family", "Family", [(f, f) for f in sorted({e.family for e in entries})]),
        _select("engine", "Engine", [(x, x) for x in ENGINES if x in engines]),
        _select("method", "Method", [(m, m) for m in METHODS if m in {e.method for e in entries}]),
        _select("evidence", "Evidence", [(v, EVIDENCE_OPTION.get(v, v)) for v in EVIDENCE if v in levels]),
        _el("label", "Search names and repos",
            _el("input", type="search", name="q", id="f-q", autocomplete="off", spellcheck="false"),
            class_="search"),
    ], "\n")


def _table(entries: Sequence[RegistryEntry]) -> Html:
    heads = [_el("th", _el("button", text, type="button"), scope="col", data_col=key) for key, text in COLUMNS]
    return _el(
        "table",
        _el("caption", "One pair per group of rows: the pair, then its quote, caveats and details. "
                       "The column headers sort."),
        _el("thead", _el("tr", *heads)),
        _lines(_entry(e, i) for i, e in enumerate(entries)),
        id="pairs",
    )


def _legend() -> Html:
    items: list[Html] = []
    for level in EVIDENCE:
        items += [_el("dt", _badge("", level)), _el("dd", EVIDENCE_MEANING[level])]
    return _el(
        "section",
        _el("h2", "Evidence levels", id="legend"),
        _el("p", "Each engine of a pair has its own level. Only measured and ran mean a source shows the "
                 "pair running; recommended and computed do not, and a FAILS level says how a failure is "
                 "documented."),
        _el("dl", *items),
        _el("p", PROVENANCE),
        class_="legend",
        aria_labelledby="legend",
    )


def _are(n: int) -> str:
    return "is" if n == 1 else "are"


def render_html(entries: Sequence[RegistryEntry], query: ModelIdentity | None = None) -> str:
    """The whole page for these entries (in the order given)."""
    n = len(entries)
    running = sum(1 for e in entries if e.shown_running())
    failing = sum(1 for e in entries if e.status == "fails" or e.fails_on)
    dates = sorted(e.source.checked for e in entries)
    checked: list[object] = []
    if dates:
        first, last = (_el("time", d.isoformat(), datetime=d.isoformat()) for d in (dates[0], dates[-1]))
        checked = ([" Sources were last read between ", first, " and ", last, ". "] if dates[0] != dates[-1]
                   else [" Sources were last read on ", first, ". "])
    if query is None:
        heading = "Documented speculative-decoding pairs"
        scope = f"{n} target/draft pair{'' if n == 1 else 's'} from paircheck's registry"
    else:
        heading = f"Drafts documented for {query.display()}"
        scope = f"{n} pair{'' if n == 1 else 's'} from paircheck's registry for this target"
    intro = _el(
        "p",
        f"{scope}, each with its source, the evidence for each engine, the supporting quote and its "
        f"caveats. {running} {_are(running)} shown running by their source (measured or ran); {failing} "
        f"{_are(failing)} documented to fail on at least one engine.", *checked,
        _link("#legend", "What the evidence levels mean"), ".",
        class_="lede",
    )
    empty = _el("p", "No documented pairs match.", id="empty", class_="note", hidden=bool(entries))
    footer = _el("p", "Generated from paircheck's registry (registry/*.toml) by ",
                 _el("code", "paircheck pairs --format html"), ". Quotes are the sources' words; notes and "
                 "caveats are paraphrased. The page fetches nothing: every link opens the source itself.")
    page = Template(_asset("pairs_page.html")).substitute(
        title=_esc(f"{heading} · paircheck"),
        heading=_esc(heading),
        intro=intro,
        controls=_controls(entries),
        count=_esc(f"{n} of {n} pairs"),
        empty=empty,
        table=_table(entries),
        legend=_legend(),
        footer=footer,
        style=_asset("pairs_page.css").strip(),
        script=_asset("pairs_page.js").strip(),
    )
    return page


FORMAT = Format("html", {"Pairs": lambda result, options: render_html(result.entries, result.query)})


__all__ = ["FORMAT", "render_html"]
