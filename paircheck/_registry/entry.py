"""One documented pair as loaded (RegistryEntry and its parts) and how its evidence reads.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from paircheck._registry.identity import ModelRef, ref_key
from paircheck._registry.schema import EVIDENCE, FAILS_EVIDENCE, RUNNING_EVIDENCE, WORKS_EVIDENCE

# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class Source:
    url: str
    kind: str
    checked: _dt.date  # the same date as Checked.on, kept here for callers that cite the source


@dataclass(frozen=True)
class Checked:
    """When the entry was last read against its sources, and which of them could be read."""

    on: _dt.date
    read: tuple[str, ...]
    unreadable: tuple[str, ...] = ()
    note: str | None = None


@dataclass(frozen=True)
class VocabPrint:
    """One side's vocabulary fingerprints and the files they were computed from.

    ``prefix`` (``v1p:``) is what a matching file is compared with; ``full`` (``v1:``)
    is given only when ``scope`` is "model" (the tokenizer files are the model's own).
    A fingerprint names a vocabulary, which many models share: a match says "a model
    with the vocabulary of <side>", never that the file is that model.
    """

    prefix: str
    scope: str
    tokenizer_of: str
    artifact: str
    file: str
    sha256: str
    vocab_size: int
    vocab_size_from: str
    full: str | None = None
    basis: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "prefix": self.prefix,
            "full": self.full,
            "scope": self.scope,
            "tokenizer_of": self.tokenizer_of,
            "artifact": self.artifact,
            "file": self.file,
            "sha256": self.sha256,
            "vocab_size": self.vocab_size,
            "vocab_size_from": self.vocab_size_from,
            "basis": self.basis,
        }


@dataclass(frozen=True)
class Measurement:
    """One number a source measured for the pair, with the words it comes from.

    ``quantity`` is one of schema.QUANTITIES: ``speedup`` (a ratio, 2.15 for +115%),
    ``acceptance_rate`` (a fraction 0..1), ``accepted_per_pass`` (mean tokens a target pass
    emits, the "acceptance length"), ``tokens_per_second`` and ``baseline_tokens_per_second``
    (the same run without speculation). ``value_max`` is set when the source gives a range
    (``value`` is then its low end). ``url`` is where ``quote`` is, when that is not the
    entry's quote_url or source. ``engine`` is None when the source does not say what the
    number was measured on (the entry then names no engine either).
    """

    quantity: str
    value: float
    quote: str
    engine: str | None
    engine_version: str | None = None
    target_quant: str | None = None
    draft_quant: str | None = None
    hardware: str | None = None
    draft_max: int | None = None
    settings: str | None = None
    url: str | None = None
    value_max: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "quantity": self.quantity,
            "value": self.value,
            "value_max": self.value_max,
            "engine": self.engine,
            "engine_version": self.engine_version,
            "target_quant": self.target_quant,
            "draft_quant": self.draft_quant,
            "hardware": self.hardware,
            "draft_max": self.draft_max,
            "settings": self.settings,
            "quote": self.quote,
            "url": self.url,
        }


@dataclass(frozen=True)
class EngineQuote:
    """The words that back one engine's claim (working or failing), and where they are."""

    engine: str
    quote: str
    url: str

    def to_dict(self) -> dict[str, Any]:
        return {"engine": self.engine, "quote": self.quote, "url": self.url}


@dataclass(frozen=True)
class Caveat:
    """One warning a user sees when their pair matches, and what it rests on.

    ``basis`` is "quote" (a plain string in the TOML: its facts are in the entry's own
    quotes), "source" (a ``[[pair.caveat]]`` whose facts are in ``quote``, words of ``url``,
    a page the entry cites and read) or "inference" (paircheck's own conclusion, ``reason``
    says from what). The registry lint (RL109) holds each to its basis.
    """

    text: str
    basis: str = "quote"
    url: str | None = None
    quote: str | None = None
    reason: str | None = None

    def shown(self) -> str:
        """The text as users see it: an inference says it is one (``reason`` is in the details)."""
        if self.basis == "inference":
            return f"{self.text.rstrip('.')} [paircheck's inference]."
        return self.text

    def full(self) -> str:
        """The shown text and, for an inference, what it rests on (the pairs page)."""
        return self.shown() + (f" Basis: {self.reason}" if self.reason else "")

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "basis": self.basis, "url": self.url, "quote": self.quote, "reason": self.reason}


@dataclass(frozen=True)
class RegistryEntry:
    id: str
    family: str
    target: ModelRef
    draft: ModelRef
    method: str
    engines: tuple[str, ...]
    source: Source
    status: str
    notes: str
    evidence: str = "recommended"
    quote: str = ""
    checked: Checked | None = None
    why: str | None = None
    fails_on: tuple[str, ...] = ()
    # Evidence per engine where it differs from ``evidence`` (always given for fails_on).
    # (engine, evidence) pairs, a tuple so entries stay hashable.
    engine_evidence: tuple[tuple[str, str], ...] = ()
    figure: str | None = None
    quote_url: str | None = None
    # In file order: the plain strings first, then the [[pair.caveat]] tables.
    caveats: tuple[Caveat, ...] = ()
    see_also: tuple[str, ...] = ()
    target_vocab: VocabPrint | None = None
    draft_vocab: VocabPrint | None = None
    # What the sources measured, each number with its quote (empty when nothing was measured).
    measured: tuple[Measurement, ...] = ()
    # Per-engine quotes: the words that back an engine the entry's own quote does not name.
    engine_quotes: tuple[EngineQuote, ...] = ()

    def quote_source(self) -> str:
        """The URL the entry's quote comes from."""
        return self.quote_url or self.source.url

    def evidence_for(self, engine: str) -> str | None:
        """The evidence for one engine: its own entry, else the entry's (None if not listed)."""
        own = dict(self.engine_evidence)
        if engine in own:
            return own[engine]
        if engine in self.engines:
            return self.evidence
        return None

    def source_unread(self) -> bool:
        """True when the cited source could not be re-read (the quote comes from elsewhere)."""
        return self.checked is not None and self.source.url in self.checked.unreadable

    def shown_running(self) -> bool:
        """True when the source shows the pair running on at least one engine (or, when it
        names no engine, shows it running at all: numbers measured on an engine it does not name)."""
        levels = [self.evidence_for(e) for e in self.engines] or [self.evidence]
        return self.status == "works" and any(level in RUNNING_EVIDENCE for level in levels)

    def best_evidence(self) -> str:
        """The strongest evidence over ``engines`` (for a "fails" entry: its failure evidence)."""
        levels = [self.evidence_for(e) or self.evidence for e in self.engines] or [self.evidence]
        order = WORKS_EVIDENCE if self.status == "works" else FAILS_EVIDENCE
        return min(levels, key=lambda v: order.index(v) if v in order else len(order))

    def sort_key(self) -> tuple[str, ...]:
        # Case-insensitive so "gemma-2-9b" and "Gemma 3 27B" interleave naturally;
        # the id breaks ties so the order never depends on file order.
        return (
            self.family,
            self.target.name.casefold(),
            self.draft.name.casefold(),
            self.method,
            self.id,
        )

    def pair_key(self) -> tuple[frozenset[str], frozenset[str], str]:
        """What makes two entries "the same pair" (used for the duplicate check)."""
        return (ref_key(self.target), ref_key(self.draft), self.method)

    def search_text(self) -> str:
        parts = [
            self.id,
            self.family,
            self.target.name,
            self.target.repo or "",
            self.draft.name,
            self.draft.repo or "",
            self.method,
            " ".join(self.engines),
            " ".join(self.fails_on),
            self.status,
            self.evidence,
            " ".join(level for _, level in self.engine_evidence),
            self.why or "",
            self.notes,
            " ".join(c.text for c in self.caveats),
            self.source.url,
            self.source.kind,
        ]
        return " ".join(parts).casefold()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; optional fields are present (null/empty) for a stable shape."""
        return {
            "id": self.id,
            "family": self.family,
            "target": {"name": self.target.name, "repo": self.target.repo},
            "draft": {
                "name": self.draft.name,
                "repo": self.draft.repo,
                "builtin": self.draft.builtin,
            },
            "method": self.method,
            "engines": list(self.engines),
            "status": self.status,
            "evidence": self.evidence,
            # Every engine in engines and fails_on with its evidence, so readers need no defaulting.
            "engine_evidence": {eng: self.evidence_for(eng) for eng in (*self.engines, *self.fails_on)},
            "figure": self.figure,
            "why": self.why,
            "fails_on": list(self.fails_on),
            "source": {
                "url": self.source.url,
                "kind": self.source.kind,
                "checked": self.source.checked.isoformat(),
            },
            "quote": self.quote,
            "quote_url": self.quote_url or self.source.url,
            # As users read them (an inference says so); caveat_bases says what each rests on.
            "caveats": [c.shown() for c in self.caveats],
            "caveat_bases": [c.to_dict() for c in self.caveats],
            "checked": {
                "on": self.source.checked.isoformat(),
                "read": list(self.checked.read) if self.checked else [],
                "unreadable": list(self.checked.unreadable) if self.checked else [],
                "note": self.checked.note if self.checked else None,
            },
            "see_also": list(self.see_also),
            "notes": self.notes,
            "target_vocab": self.target_vocab.to_dict() if self.target_vocab else None,
            "draft_vocab": self.draft_vocab.to_dict() if self.draft_vocab else None,
            "measured": [m.to_dict() for m in self.measured],
            "engine_quotes": [q.to_dict() for q in self.engine_quotes],
        }


# --------------------------------------------------------------------------- evidence text
# One wording for the check, `paircheck pairs` and the README, so no view says "works"
# for a pair that a source only recommends or computed.

_KIND_PHRASE = {
    "official-docs": "the docs",
    "model-card": "the model card",
    "paper": "the paper",
    "issue": "the issue",
    "blog": "a write-up",
    "code": "example code",
}
EVIDENCE_SHORT = {
    "measured": "measured",
    "ran": "ran",
    "recommended": "recommended",
    "computed": "computed",
    # Upper case so a failure stands out in a column of evidence levels.
    "run-failed": "FAILS run",
    "code-refuses": "FAILS code",
    "stated": "FAILS stated",
    "sibling": "FAILS sibling",
}


def _group(entry: RegistryEntry, engines: Iterable[str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for eng in engines:
        groups.setdefault(entry.evidence_for(eng) or entry.evidence, []).append(eng)
    return groups


def evidence_phrases(entry: RegistryEntry) -> list[str]:
    """One phrase per evidence level, strongest first, e.g. ``measured +115% on llama.cpp``.

    "recommended" and "computed" say that nothing was shown running, so a reader never
    takes a suggestion for a working pair.
    """
    kind = _KIND_PHRASE.get(entry.source.kind, entry.source.kind)
    # Engines whose own evidence differs from the entry's rest on another source (see_also).
    own = {eng for eng, level in entry.engine_evidence if level != entry.evidence}
    phrases: list[str] = []
    if not entry.engines:
        # The source names no engine: say what it is without implying one.
        phrases.append(_no_engine_phrase(entry.evidence, kind, entry.figure))
    groups = _group(entry, entry.engines)
    for level in EVIDENCE:
        names = groups.get(level)
        if not names:
            continue
        on = ", ".join(names)
        # The source kind only names who said it when the entry's own source did.
        by = f" by {kind}" if any(n not in own for n in names) else ""
        if level == "measured":
            figure = f" {entry.figure}" if entry.figure else ""
            phrases.append(f"measured{figure} on {on}")
        elif level == "ran":
            phrases.append(f"shown running on {on} (no figures)")
        elif level == "recommended":
            phrases.append(f"recommended{by} for {on} (no run shown)")
        elif level == "computed":
            phrases.append(f"only computed{by} for {on} (acceptance or compatibility, nothing ran)")
        elif level == "run-failed":
            phrases.append(f"shown failing on {on}")
        elif level == "code-refuses":
            phrases.append(f"refused by the code of {on}")
        elif level == "sibling":
            phrases.append(f"reported failing on {on} for a sibling pair, not this exact one")
        else:
            phrases.append(f"stated{by} to fail on {on} (no run shown)")
    fails = _group(entry, entry.fails_on) if entry.status == "works" else {}
    for level in FAILS_EVIDENCE:
        names = fails.get(level)
        if names:
            how = {
                "run-failed": "shown",
                "code-refuses": "refused by code",
                "stated": "stated, no run",
                "sibling": "reported for a sibling pair",
            }[level]
            phrases.append(f"fails on {', '.join(names)} ({how})")
    return phrases


def _no_engine_phrase(level: str, kind: str, figure: str | None = None) -> str:
    if level == "measured":
        return f"measured{f' {figure}' if figure else ''} (no engine named)"
    if level == "ran":
        return "shown running (no engine named, no figures)"
    if level == "computed":
        return f"only computed by {kind} (no engine named, nothing ran)"
    return f"recommended by {kind} (no engine named, no run shown)"


def evidence_text(entry: RegistryEntry) -> str:
    """``documented: measured 2.4x on lmstudio; fails on vllm (refused by code)``."""
    unread = "; the cited source could not be re-read" if entry.source_unread() else ""
    return "documented: " + "; ".join(evidence_phrases(entry)) + unread


def evidence_label(entry: RegistryEntry, *, with_figure: bool = True) -> str:
    """A short cell for tables: the strongest level, with the figure when measured."""
    best = entry.best_evidence()
    label = EVIDENCE_SHORT.get(best, best)
    if with_figure and best == "measured" and entry.figure:
        label += f" {entry.figure}"
    return label


def engines_label(entry: RegistryEntry, sep: str = ",") -> str:
    """Engines at the entry's strongest evidence first, then the others after their level
    ("vllm; recommended: tensorrt-llm, research"); ``!`` marks failing ones."""
    best = entry.best_evidence()
    groups: dict[str, list[str]] = {}
    for eng in entry.engines:
        groups.setdefault(entry.evidence_for(eng) or best, []).append(eng)
    parts = [sep.join(groups.pop(best, []))]
    parts += [
        f"{EVIDENCE_SHORT.get(level, level)}: {sep.join(groups[level])}"
        for level in sorted(groups, key=lambda lv: EVIDENCE.index(lv) if lv in EVIDENCE else len(EVIDENCE))
    ]
    parts.append(sep.join(f"!{eng}" for eng in entry.fails_on))
    return "; ".join(p for p in parts if p) or "(none named)"


