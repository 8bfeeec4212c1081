"""Loading the shipped (or a given) registry and querying it: filters, look-ups, ranking.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from paircheck._registry.entry import Caveat, Checked, EngineQuote, Measurement, RegistryEntry, Source, VocabPrint
from paircheck._registry.identity import ModelIdentity, ModelRef, normalise_name, ref_key
from paircheck._registry.schema import SCHEMA_VERSION, RegistryError, _as_date, _check_document, _where
from paircheck._registry.where import default_registry_dir
from paircheck.constants import canonical_engine, canonical_method

# --------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class Registry:
    entries: tuple[RegistryEntry, ...]
    origin: Path | None = field(default=None, compare=False)

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[RegistryEntry]:
        return iter(self.entries)

    def sorted(self) -> Registry:
        return Registry(tuple(sorted(self.entries, key=RegistryEntry.sort_key)), self.origin)

    def families(self) -> tuple[str, ...]:
        return tuple(sorted({e.family for e in self.entries}))

    def get(self, entry_id: str) -> RegistryEntry | None:
        return next((e for e in self.entries if e.id == entry_id), None)

    def filter(
        self,
        *,
        family: str | None = None,
        method: str | None = None,
        engine: str | None = None,
        status: str | None = None,
        search: str | None = None,
        evidence: str | None = None,
    ) -> Registry:
        """Entries matching every given criterion, in stable sorted order.

        ``family`` matches exactly or as a prefix ("gemma" -> gemma2, gemma3, gemma4);
        ``engine`` matches an engine the pair works on *or* is documented failing on,
        because both answer "what is known about this engine"; ``search`` is a
        case-insensitive substring over names, repos, notes and URLs (all words must
        occur); ``evidence`` keeps entries with that evidence for at least one engine (for
        ``engine``, when one is given).
        """
        out: Iterable[RegistryEntry] = self.entries
        if family:
            fam = family.casefold()
            out = [e for e in out if e.family == fam or e.family.startswith(fam)]
        if method:
            # Any spelling: draft-simple, draft_model and the registry's draft-model are one method.
            wanted = canonical_method(method) or method.casefold()
            out = [e for e in out if (canonical_method(e.method) or e.method) == wanted]
        if engine:
            eng = canonical_engine(engine) or engine.casefold()
            out = [e for e in out if eng in e.engines or eng in e.fails_on]
        if status:
            out = [e for e in out if e.status == status.casefold()]
        if evidence:
            level = evidence.casefold()
            # With an engine, that engine's evidence: "--engine vllm --evidence measured" is a
            # pair measured on vLLM, not one measured elsewhere that vLLM only recommends.
            only = (canonical_engine(engine) or engine.casefold()) if engine else None
            out = [e for e in out
                   if any(e.evidence_for(x) == level for x in ((only,) if only else (*e.engines, *e.fails_on)))]
        if search:
            words = search.casefold().split()
            out = [e for e in out if all(w in e.search_text() for w in words)]
        return Registry(tuple(sorted(out, key=RegistryEntry.sort_key)), self.origin)


def _match_ref(ref: ModelRef, ident: ModelIdentity) -> str | None:
    if ref.builtin:
        return None
    if ref.repo and ident.repo and ref.repo.casefold() == ident.repo.casefold():
        return "repo"
    keys = ident.name_keys()
    if keys and (ref_key(ref) in keys or normalise_name(ref.name) in keys):
        return "name"
    return None


def match_model(ref: ModelRef, ident: ModelIdentity) -> str | None:
    """How ``ident`` matches one side of an entry: "repo", "name" or None."""
    return _match_ref(ref, ident)


def fingerprint_matches(documented: str | None, actual: str | None) -> bool:
    """Whether a registry fingerprint denotes the vocabulary fingerprint ``actual``.

    Same format version, and one hex string is a prefix of the other (entries may
    shorten it to 16 digits). A bare hex string is read as format v1.
    """
    if not documented or not actual:
        return False

    def split(value: str) -> tuple[str, str]:
        version, sep, digits = value.strip().casefold().partition(":")
        return ("v1", version) if not sep else (version, digits)

    (va, ha), (vb, hb) = split(documented), split(actual)
    short, long_ = sorted((ha, hb), key=len)
    return va == vb and len(short) >= 16 and long_.startswith(short)


# --------------------------------------------------------------------------- loading


@functools.lru_cache(maxsize=1)
def default_registry() -> Registry:
    """The shipped registry, loaded once per process (entries are immutable).

    For the pair check, which must stay fast: the shipped data is validated by the
    test suite and by ``paircheck pairs``, so this skips the validation pass unless
    the data fails to build, in which case the full load reports every problem.
    """
    root = default_registry_dir()
    try:
        files = sorted(root.glob("*.toml")) if root.is_dir() else []
        entries = []
        for f in files:
            with f.open("rb") as fh:
                raw = tomllib.load(fh)
            if raw.get("schema_version") != SCHEMA_VERSION:
                raise ValueError("schema_version")
            entries += [_build_entry(item) for item in raw["pair"]]
        if not entries:
            raise ValueError("empty")
        return Registry(tuple(sorted(entries, key=RegistryEntry.sort_key)), root)
    except Exception:
        return load_registry(root)


def load_registry(path: Path | None = None) -> Registry:
    """Load and validate every ``*.toml`` under ``path`` (a folder) or one TOML file.

    Raises RegistryError naming the file and every problem found, so one run shows
    all mistakes in the data instead of one per attempt.
    """
    root = path if path is not None else default_registry_dir()
    if root.is_dir():
        files = sorted(root.glob("*.toml"))
        if not files:
            raise RegistryError(str(root), "no *.toml registry files found")
    elif root.is_file():
        files = [root]
    else:
        raise RegistryError(str(root), "registry not found")

    problems: list[str] = []
    located: list[tuple[str, int, Mapping[str, Any]]] = []
    for f in files:
        try:
            with f.open("rb") as fh:
                raw = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise RegistryError(str(f), f"invalid TOML: {exc}") from exc
        except UnicodeDecodeError as exc:  # tomllib decodes the whole file first (found by fuzz/)
            raise RegistryError(str(f), f"invalid TOML: not UTF-8 at byte {exc.start}") from None
        except OSError as exc:
            raise RegistryError(str(f), f"cannot read: {exc.strerror or exc}") from exc
        doc_problems, items = _check_document(raw, f.name)
        problems += doc_problems
        located += items
    problems += _check_unique(located)
    if problems:
        where = str(files[0]) if len(files) == 1 else str(root)
        shown = problems[:20]
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise RegistryError(
            where,
            f"{len(problems)} problem(s) in registry data:\n  " + "\n  ".join(shown) + more,
        )
    entries = tuple(_build_entry(item) for _, _, item in located)
    return Registry(tuple(sorted(entries, key=RegistryEntry.sort_key)), root)


def _build_entry(item: Mapping[str, Any]) -> RegistryEntry:
    """Build an entry from an item that already passed _check_entry."""
    src = item["source"]
    raw_checked = item["checked"]
    on = _as_date(raw_checked["on"])
    assert on is not None  # validated before
    return RegistryEntry(
        id=item["id"],
        family=item["family"],
        target=_build_ref(item["target"]),
        draft=_build_ref(item["draft"]),
        method=item["method"],
        engines=tuple(item["engines"]),
        source=Source(url=src["url"], kind=src["kind"], checked=on),
        status=item["status"],
        notes=item["notes"].strip(),
        evidence=item["evidence"],
        quote=" ".join(item["quote"].split()),
        checked=Checked(
            on=on,
            read=tuple(raw_checked["read"]),
            unreadable=tuple(raw_checked.get("unreadable", ())),
            note=raw_checked.get("note"),
        ),
        why=item.get("why"),
        fails_on=tuple(item.get("fails_on", ())),
        engine_evidence=tuple(sorted(item.get("engine_evidence", {}).items())),
        figure=item.get("figure"),
        quote_url=item.get("quote_url"),
        caveats=(
            *(Caveat(" ".join(c.split())) for c in item.get("caveats", ())),
            *(_build_caveat(c) for c in item.get("caveat", ())),
        ),
        see_also=tuple(item.get("see_also", ())),
        target_vocab=_build_vocab(item.get("target_vocab")),
        draft_vocab=_build_vocab(item.get("draft_vocab")),
        measured=tuple(_build_measurement(m) for m in item.get("measured", ())),
        engine_quotes=tuple(
            EngineQuote(engine=q["engine"], quote=" ".join(q["quote"].split()), url=q["url"])
            for q in item.get("engine_quote", ())
        ),
    )


def _build_caveat(c: Mapping[str, Any]) -> Caveat:
    def words(key: str) -> str | None:
        return " ".join(c[key].split()) if c.get(key) else None

    text = " ".join(c["text"].split())
    return Caveat(text=text, basis=c["basis"], url=c.get("url"), quote=words("quote"), reason=words("reason"))


def _build_measurement(m: Mapping[str, Any]) -> Measurement:
    value_max = m.get("value_max")
    return Measurement(
        quantity=m["quantity"],
        value=float(m["value"]),
        quote=" ".join(m["quote"].split()),
        engine=m.get("engine"),
        engine_version=m.get("engine_version"),
        target_quant=m.get("target_quant"),
        draft_quant=m.get("draft_quant"),
        hardware=m.get("hardware"),
        draft_max=m.get("draft_max"),
        settings=m.get("settings"),
        url=m.get("url"),
        value_max=float(value_max) if value_max is not None else None,
    )


def _build_vocab(value: Mapping[str, Any] | None) -> VocabPrint | None:
    if value is None:
        return None
    return VocabPrint(
        prefix=value["prefix"],
        scope=value["scope"],
        tokenizer_of=value["tokenizer_of"],
        artifact=value["artifact"],
        file=value["file"],
        sha256=value["sha256"],
        vocab_size=value["vocab_size"],
        vocab_size_from=value["vocab_size_from"].strip(),
        full=value.get("full"),
        basis=" ".join(value["basis"].split()) if value.get("basis") else None,
    )


def _build_ref(value: Mapping[str, Any]) -> ModelRef:
    return ModelRef(name=value["name"].strip(), repo=value.get("repo"), builtin=bool(value.get("builtin", False)))


def _check_unique(items: Sequence[tuple[str, int, Mapping[str, Any]]]) -> list[str]:
    problems: list[str] = []
    seen_ids: dict[str, str] = {}
    seen_pairs: dict[tuple[frozenset[str], frozenset[str], str], str] = {}
    for origin, index, item in items:
        where = _where(origin, index, item)
        if item["id"] in seen_ids:
            problems.append(f"{where}: duplicate id, first used at {seen_ids[item['id']]}")
        else:
            seen_ids[item["id"]] = where
        entry = _build_entry(item)
        key = entry.pair_key()
        if key in seen_pairs:
            problems.append(
                f"{where}: duplicate pair (same target, draft and method as {seen_pairs[key]}); "
                "merge them (extra sources go in see_also)"
            )
        else:
            seen_pairs[key] = where
    return problems


def validate(raw: Mapping[str, Any], origin: str = "registry") -> list[str]:
    """Every problem in one parsed registry document (empty list = valid)."""
    problems, items = _check_document(raw, origin)
    return problems + _check_unique(items)
