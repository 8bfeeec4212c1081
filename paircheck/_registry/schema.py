"""The registry's schema: enums, limits and the validation of raw TOML data.

The schema is described in ``registry/README.md``; extend an enum here *and* there.
"""

from __future__ import annotations

import datetime as _dt
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover - Python 3.10
    pass

from paircheck.constants import KNOWN_ENGINES
from paircheck.errors import InputError

SCHEMA_VERSION = 2

# Enums are tuples (immutable, ordered for help texts). Extend them here *and* in
# registry/README.md when the data needs a new value; validation rejects the rest so
# typos ("lm-studio", "eagle-3") cannot silently split a filter.
METHODS: tuple[str, ...] = (
    "draft-model",  # independent small LM sharing the target's vocabulary
    "eagle",  # EAGLE-1/2 feature-level head trained for one target
    "eagle3",
    "medusa",
    "mlp-speculator",
    "dflash",
    "dspark",
    "mtp",  # native multi-token prediction layers/companion file
    "ngram",  # model-free: n-gram / prompt lookup
    "suffix",
    "cross-vocab",  # draft with another tokenizer, bridged by the engine (UAD, TLI)
)
# The engines a documented pair may name: one spelling each, kept in constants.
ENGINES: tuple[str, ...] = KNOWN_ENGINES
SOURCE_KINDS: tuple[str, ...] = ("official-docs", "model-card", "paper", "issue", "blog", "code")
STATUSES: tuple[str, ...] = ("works", "fails")
# How strong a source's word is, strongest first. "works" entries (and the engines in
# `engines`) take one of WORKS_EVIDENCE; "fails" entries (and the engines in `fails_on`)
# one of FAILS_EVIDENCE. Only "measured" and "ran" show the pair running: renderers never
# call a "recommended" or "computed" pair working.
WORKS_EVIDENCE: tuple[str, ...] = (
    "measured",  # the source reports a run of the pair with figures (speed, acceptance)
    "ran",  # the source shows the pair running (a command and its output, a user's report), no figures
    "recommended",  # the source recommends, lists or intends the pair; no run is shown
    "computed",  # only an acceptance rate or a compatibility property was computed, nothing ran
)
FAILS_EVIDENCE: tuple[str, ...] = (
    "run-failed",  # the source shows a run of the pair failing (error text or wrong output)
    "code-refuses",  # the engine's code (or a PR to it) shows the check that rejects the pair; no run shown
    "stated",  # the source says the pair fails, without a run or the code
    # The failure is reported for a sibling pair (another size, quantization or build of the
    # same models) or for a class of pairs this one belongs to, not for this exact pair.
    "sibling",
)
EVIDENCE: tuple[str, ...] = WORKS_EVIDENCE + FAILS_EVIDENCE
RUNNING_EVIDENCE = frozenset({"measured", "ran"})
MAX_QUOTE = 320  # "a sentence, not a paragraph"
MAX_FIGURE = 48
MAX_CAVEAT = 240
# What a measured number is (registry/README.md, "Measured numbers"): a speedup is a ratio
# (2.15 for +115%), an acceptance rate a fraction 0..1, accepted tokens per pass the mean
# number of tokens a target pass emits (what EAGLE and SGLang call the acceptance length).
QUANTITIES: tuple[str, ...] = (
    "speedup",
    "acceptance_rate",
    "accepted_per_pass",
    "tokens_per_second",
    "baseline_tokens_per_second",
)
# `engine` too, unless the entry names no engine (`engines = []`): a number whose source
# does not say what measured it is recorded without one, never with a guessed engine.
_MEASURED_REQUIRED = ("quantity", "value", "quote")
_MEASURED_TEXT = ("engine_version", "target_quant", "draft_quant", "hardware", "settings", "url")
_MEASURED_KEYS = frozenset(_MEASURED_REQUIRED) | frozenset(_MEASURED_TEXT) | {"engine", "draft_max", "value_max"}
_ENGINE_QUOTE_KEYS = frozenset({"engine", "quote", "url"})
# What a [[pair.caveat]] table rests on (a plain caveat string rests on the entry's quotes):
# "source": words of another page the entry cites and read (url, quote); "inference":
# paircheck's own conclusion, with the reason it rests on.
CAVEAT_BASES: tuple[str, ...] = ("source", "inference")
_CAVEAT_KEYS = frozenset({"text", "basis", "url", "quote", "reason"})

_ID_RE = re.compile(r"^[a-z0-9](?:[a-z0-9.]|-(?!-{2}))*[a-z0-9]$")
_FAMILY_RE = re.compile(r"^[a-z0-9][a-z0-9.-]*[a-z0-9]$")
_REPO_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_URL_RE = re.compile(r"^https://[^\s/]+\.[^\s/]+(?:/\S*)?$")
# paircheck.fingerprint's full and prefix fingerprints, exactly as it prints them.
_FULL_RE = re.compile(r"^v1:[0-9a-f]{32}$")
_PREFIX_RE = re.compile(r"^v1p:[0-9a-f]{32}$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
# How far a side's vocabulary fingerprint speaks for that model (see registry/README.md):
# "model": the hashed tokenizer files are this model's own; "family": they are a sibling
# release's, so only the prefix (the regular tokens, before any added special token) is claimed.
VOCAB_SCOPES: tuple[str, ...] = ("model", "family")
_VOCAB_REQUIRED = ("prefix", "scope", "tokenizer_of", "artifact", "file", "sha256", "vocab_size", "vocab_size_from")
_VOCAB_KEYS = frozenset(_VOCAB_REQUIRED) | {"full", "basis"}
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

_TOP_KEYS = frozenset({"schema_version", "pair"})
_ENTRY_REQUIRED = (
    "id", "family", "target", "draft", "method", "engines", "status", "evidence", "quote", "source", "checked", "notes"
)
_ENTRY_OPTIONAL = (
    "why", "fails_on", "engine_evidence", "figure", "quote_url", "caveats", "see_also",
    "target_vocab", "draft_vocab", "measured", "engine_quote", "caveat",
)
_MODEL_KEYS = frozenset({"name", "repo", "builtin"})
_SOURCE_KEYS = frozenset({"url", "kind"})
_CHECKED_REQUIRED = frozenset({"on", "read"})
_CHECKED_KEYS = _CHECKED_REQUIRED | {"unreadable", "note"}


class RegistryError(InputError):
    """The registry data cannot be loaded; ``where`` names the file (or folder)."""


def _check_document(
    raw: Any, origin: str
) -> tuple[list[str], list[tuple[str, int, Mapping[str, Any]]]]:
    problems: list[str] = []
    items: list[tuple[str, int, Mapping[str, Any]]] = []
    if not isinstance(raw, Mapping):
        return [f"{origin}: top level must be a table"], items
    for key in sorted(set(raw) - _TOP_KEYS):
        problems.append(f"{origin}: unknown top-level key {key!r}")
    version = raw.get("schema_version")
    if version != SCHEMA_VERSION:
        problems.append(f"{origin}: schema_version must be {SCHEMA_VERSION}, got {version!r}")
    pairs = raw.get("pair")
    if not isinstance(pairs, list) or not pairs:
        problems.append(f"{origin}: no [[pair]] entries")
        return problems, items
    for i, item in enumerate(pairs):
        where = _where(origin, i, item)
        if not isinstance(item, Mapping):
            problems.append(f"{where}: must be a table")
            continue
        entry_problems = _check_entry(item)
        problems += [f"{where}: {p}" for p in entry_problems]
        if not entry_problems:
            items.append((origin, i, item))
    return problems, items


def _where(origin: str, index: int, item: Any) -> str:
    ident = item.get("id") if isinstance(item, Mapping) else None
    return f"{origin}: pair[{index}]" + (f" (id {ident!r})" if isinstance(ident, str) else "")


def _check_entry(item: Mapping[str, Any]) -> list[str]:
    p: list[str] = []
    for key in _ENTRY_REQUIRED:
        if key not in item:
            p.append(f"missing required field {key!r}")
    for key in sorted(set(item) - set(_ENTRY_REQUIRED) - set(_ENTRY_OPTIONAL)):
        p.append(f"unknown field {key!r}")

    def text(key: str, value: Any) -> bool:
        if not isinstance(value, str) or not value.strip():
            p.append(f"{key} must be a non-empty string")
            return False
        return True

    if "id" in item and text("id", item["id"]) and not _ID_RE.match(item["id"]):
        p.append(f"id {item['id']!r} is not a slug (lowercase letters, digits, '.', '-')")
    if "family" in item and text("family", item["family"]) and not _FAMILY_RE.match(item["family"]):
        p.append(f"family {item['family']!r} is not a lowercase slug")
    for side in ("target", "draft"):
        if side in item:
            p += [f"{side}: {msg}" for msg in _check_model(item[side], allow_builtin=side == "draft")]
    if "method" in item:
        p += _check_enum("method", item["method"], METHODS)
    if "engines" in item:
        # A works entry may name no engine: a model card that publishes a draft for a target
        # without saying what runs it. A failure always names where it fails.
        p += _check_enum_list("engines", item["engines"], ENGINES, allow_empty=item.get("status") == "works")
    if "fails_on" in item:
        p += _check_enum_list("fails_on", item["fails_on"], ENGINES, allow_empty=True)
    if "source" in item:
        p += _check_source(item["source"])
    if "status" in item:
        p += _check_enum("status", item["status"], STATUSES)
        if item["status"] == "fails" and not (isinstance(item.get("why"), str) and item["why"].strip()):
            p.append("status 'fails' needs a non-empty 'why'")
        if item["status"] == "works" and "why" in item:
            p.append("'why' is only for status 'fails' (use notes)")
    if "notes" in item and not isinstance(item["notes"], str):
        p.append("notes must be a string")
    if "see_also" in item:
        urls = item["see_also"]
        if not isinstance(urls, list):
            p.append("see_also must be a list of URLs")
        else:
            p += [f"see_also: {msg}" for u in urls for msg in _check_url(u)]
    p += _check_evidence(item)
    p += _check_quote_and_checked(item)
    p += _check_engine_quotes(item)
    p += _check_measured(item)
    p += _check_caveat_tables(item)
    if "caveats" in item:
        caveats = item["caveats"]
        if not isinstance(caveats, list) or not all(isinstance(c, str) and c.strip() for c in caveats):
            p.append("caveats must be a list of non-empty strings")
        else:
            p += [f"caveat longer than {MAX_CAVEAT} characters: {c[:40]!r}..." for c in caveats if len(c) > MAX_CAVEAT]
    for key in ("target_vocab", "draft_vocab"):
        if key in item:
            p += [f"{key}: {msg}" for msg in _check_vocab(item[key])]
    if isinstance(item.get("draft"), Mapping) and item["draft"].get("builtin") and "draft_vocab" in item:
        p.append("draft_vocab: a builtin draft has no vocabulary of its own")
    return p


def _check_vocab(value: Any) -> list[str]:
    """A side's vocabulary fingerprints and where they were computed from."""
    if not isinstance(value, Mapping):
        return ["must be a table"]
    p = [f"missing required field {k!r}" for k in _VOCAB_REQUIRED if k not in value]
    p += [f"unknown field {k!r}" for k in sorted(set(value) - _VOCAB_KEYS)]
    if "prefix" in value and not (isinstance(value["prefix"], str) and _PREFIX_RE.match(value["prefix"])):
        p.append("prefix must be a prefix fingerprint: 'v1p:' and 32 lowercase hex digits")
    if "full" in value and not (isinstance(value["full"], str) and _FULL_RE.match(value["full"])):
        p.append("full must be a fingerprint: 'v1:' and 32 lowercase hex digits")
    scope = value.get("scope")
    if "scope" in value and scope not in VOCAB_SCOPES:
        p.append(f"scope {scope!r} is not one of: {', '.join(VOCAB_SCOPES)}")
    if scope == "family":
        if "full" in value:
            p.append("full is only for scope 'model': a sibling release's special tokens differ")
        if not (isinstance(value.get("basis"), str) and value["basis"].strip()):
            p.append("scope 'family' needs a 'basis': why the model shares the vocabulary up to the prefix end")
    tokenizer_of = value.get("tokenizer_of")
    if "tokenizer_of" in value and not (isinstance(tokenizer_of, str) and _REPO_RE.match(tokenizer_of)):
        p.append("tokenizer_of must be a Hugging Face repo id (org/name)")
    for key in ("artifact", "file", "vocab_size_from"):
        if key in value and not (isinstance(value[key], str) and value[key].strip()):
            p.append(f"{key} must be a non-empty string")
    if "sha256" in value and not (isinstance(value["sha256"], str) and _SHA256_RE.match(value["sha256"])):
        p.append("sha256 must be 64 lowercase hex digits (of the file named in 'file')")
    size = value.get("vocab_size")
    if "vocab_size" in value and (isinstance(size, bool) or not isinstance(size, int) or size <= 0):
        p.append("vocab_size must be a positive integer (the model's config vocab_size)")
    return p


def _check_evidence(item: Mapping[str, Any]) -> list[str]:
    """``evidence`` fits the status, ``engine_evidence`` fits each engine's side, ``figure`` needs a measurement."""
    p: list[str] = []
    status = item.get("status")
    allowed = FAILS_EVIDENCE if status == "fails" else WORKS_EVIDENCE
    evidence = item.get("evidence")
    if "evidence" in item:
        if evidence not in EVIDENCE:
            p.append(f"evidence {evidence!r} is not one of: {', '.join(EVIDENCE)}")
        elif status in STATUSES and evidence not in allowed:
            p.append(f"evidence {evidence!r} does not fit status {status!r} (use one of: {', '.join(allowed)})")
    engines: list[Any] = item["engines"] if isinstance(item.get("engines"), list) else []
    fails_on: list[Any] = item["fails_on"] if isinstance(item.get("fails_on"), list) else []
    per_engine = item.get("engine_evidence", {})
    if not isinstance(per_engine, Mapping):
        return p + ["engine_evidence must be a table of engine = evidence"]
    for eng, level in per_engine.items():
        if eng in fails_on and eng not in engines:
            side = FAILS_EVIDENCE
        elif eng in engines:
            side = allowed
        else:
            p.append(f"engine_evidence names {eng!r}, which is in neither engines nor fails_on")
            continue
        if level not in side:
            p.append(f"engine_evidence {eng!r} = {level!r} is not one of: {', '.join(side)}")
    if status == "works":
        for eng in fails_on:
            if eng not in per_engine:
                p.append(f"fails_on engine {eng!r} needs its failure evidence in engine_evidence")
    if "figure" in item:
        figure = item["figure"]
        # An entry that names no engine has its evidence for the pair as a whole.
        levels = [per_engine.get(e, evidence) for e in engines] or [evidence]
        if not (isinstance(figure, str) and figure.strip()) or len(figure) > MAX_FIGURE:
            p.append(f"figure must be a short non-empty string (at most {MAX_FIGURE} characters)")
        elif "measured" not in levels:
            p.append("figure is only for measured evidence")
    return p


def _read_urls(item: Mapping[str, Any]) -> set[str]:
    checked = item.get("checked")
    read = checked.get("read") if isinstance(checked, Mapping) else None
    return {u for u in read if isinstance(u, str)} if isinstance(read, list) else set()


def _check_one_quote(where: str, quote: Any) -> list[str]:
    if not isinstance(quote, str) or not quote.strip():
        return [f"{where}: quote must be a non-empty string (words of the source)"]
    if len(quote) > MAX_QUOTE or "\n" in quote.strip():
        return [f"{where}: quote must be one short passage (at most {MAX_QUOTE} characters, no line breaks)"]
    return []


def _check_engine_quotes(item: Mapping[str, Any]) -> list[str]:
    """``[[pair.engine_quote]]``: the words that back one engine's claim, from a URL that was read."""
    if "engine_quote" not in item:
        return []
    quotes = item["engine_quote"]
    if not isinstance(quotes, list) or not quotes:
        return ["engine_quote must be a list of tables ([[pair.engine_quote]])"]
    p: list[str] = []
    named = _listed(item, "engines") | _listed(item, "fails_on")
    read = _read_urls(item)
    for i, q in enumerate(quotes):
        where = f"engine_quote[{i}]"
        if not isinstance(q, Mapping):
            p.append(f"{where}: must be a table with engine, quote and url")
            continue
        p += [f"{where}: unknown field {k!r}" for k in sorted(set(q) - _ENGINE_QUOTE_KEYS)]
        p += [f"{where}: missing required field {k!r}" for k in sorted(_ENGINE_QUOTE_KEYS - set(q))]
        if "engine" in q and q["engine"] not in named:
            p.append(f"{where}: engine {q['engine']!r} is in neither engines nor fails_on")
        if "quote" in q:
            p += _check_one_quote(where, q["quote"])
        if "url" in q and q["url"] not in read:
            p.append(f"{where}: url must be one of the URLs in checked.read")
    return p


def _check_measured(item: Mapping[str, Any]) -> list[str]:
    """``[[pair.measured]]``: one number the source measured, with the words it comes from."""
    if "measured" not in item:
        return []
    rows = item["measured"]
    if not isinstance(rows, list) or not rows:
        return ["measured must be a list of tables ([[pair.measured]])"]
    p: list[str] = []
    engines = _listed(item, "engines")
    read = _read_urls(item)
    for i, m in enumerate(rows):
        where = f"measured[{i}]"
        if not isinstance(m, Mapping):
            p.append(f"{where}: must be a table with quantity, value, quote and engine")
            continue
        p += [f"{where}: unknown field {k!r}" for k in sorted(set(m) - _MEASURED_KEYS)]
        p += [f"{where}: missing required field {k!r}" for k in _MEASURED_REQUIRED if k not in m]
        if "engine" not in m and engines:
            p.append(f"{where}: missing required field 'engine'")
        quantity = m.get("quantity")
        if "quantity" in m and quantity not in QUANTITIES:
            p.append(f"{where}: quantity {quantity!r} is not one of: {', '.join(QUANTITIES)}")
        for key in ("value", "value_max"):
            if key not in m:
                continue
            v = m[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                p.append(f"{where}: {key} must be a positive number")
            elif quantity == "acceptance_rate" and v > 1:
                p.append(f"{where}: an acceptance rate is a fraction from 0 to 1, got {v}")
        if isinstance(m.get("value"), (int, float)) and isinstance(m.get("value_max"), (int, float)):
            if m["value_max"] <= m["value"]:
                p.append(f"{where}: value_max must be above value (value is a range's low end)")
        if "quote" in m:
            p += _check_one_quote(where, m["quote"])
        if "engine" in m and m["engine"] not in engines:
            p.append(f"{where}: engine {m['engine']!r} is not in engines")
        for key in _MEASURED_TEXT:
            if key in m and not (isinstance(m[key], str) and m[key].strip()):
                p.append(f"{where}: {key} must be a non-empty string")
        if "url" in m and isinstance(m["url"], str) and m["url"] not in read:
            p.append(f"{where}: url must be one of the URLs in checked.read")
        n = m.get("draft_max")
        if "draft_max" in m and (isinstance(n, bool) or not isinstance(n, int) or n <= 0):
            p.append(f"{where}: draft_max must be a positive integer (draft tokens per step)")
    return p


def _check_caveat_tables(item: Mapping[str, Any]) -> list[str]:
    """``[[pair.caveat]]``: a caveat with what it rests on, another read page's words or a reason."""
    if "caveat" not in item:
        return []
    rows = item["caveat"]
    if not isinstance(rows, list) or not rows:
        return ["caveat must be a list of tables ([[pair.caveat]])"]
    p: list[str] = []
    read = _read_urls(item)
    for i, c in enumerate(rows):
        where = f"caveat[{i}]"
        if not isinstance(c, Mapping):
            p.append(f"{where}: must be a table with text and basis")
            continue
        p += [f"{where}: unknown field {k!r}" for k in sorted(set(c) - _CAVEAT_KEYS)]
        p += [f"{where}: missing required field {k!r}" for k in ("text", "basis") if k not in c]
        for key in ("text", "url", "quote", "reason"):
            if key in c and not (isinstance(c[key], str) and c[key].strip()):
                p.append(f"{where}: {key} must be a non-empty string")
        if isinstance(c.get("text"), str) and len(c["text"]) > MAX_CAVEAT:
            p.append(f"{where}: text longer than {MAX_CAVEAT} characters")
        basis = c.get("basis")
        if "basis" in c and basis not in CAVEAT_BASES:
            p.append(f"{where}: basis {basis!r} is not one of: {', '.join(CAVEAT_BASES)} "
                     "(a caveat its entry's quotes support is a plain string in caveats)")
        if basis == "source":
            p += [f"{where}: a 'source' caveat needs {k!r}" for k in ("url", "quote") if k not in c]
            if "reason" in c:
                p.append(f"{where}: reason is for an 'inference' caveat (a 'source' one quotes its page)")
            if "quote" in c:
                p += _check_one_quote(where, c["quote"])
            if isinstance(c.get("url"), str) and c["url"] not in read:
                p.append(f"{where}: url must be one of the URLs in checked.read")
        elif basis == "inference":
            if "reason" not in c:
                p.append(f"{where}: an 'inference' caveat needs a 'reason': what paircheck concludes it from")
            if "url" in c or "quote" in c:
                p.append(f"{where}: an 'inference' caveat has a reason, not url or quote (quoted words: 'source')")
            if isinstance(c.get("reason"), str) and len(c["reason"]) > MAX_CAVEAT:
                p.append(f"{where}: reason longer than {MAX_CAVEAT} characters")
    return p


def _listed(item: Mapping[str, Any], key: str) -> set[str]:
    value = item.get(key)
    return {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()


def _check_quote_and_checked(item: Mapping[str, Any]) -> list[str]:
    """The quote is one short sentence from a source that was read; ``checked`` accounts for every URL."""
    p: list[str] = []
    quote = item.get("quote")
    if "quote" in item:
        if not isinstance(quote, str) or not quote.strip():
            p.append("quote must be a non-empty string (a sentence from the source)")
        elif len(quote) > MAX_QUOTE or "\n" in quote.strip():
            p.append(f"quote must be one short sentence (at most {MAX_QUOTE} characters, no line breaks)")
    if "checked" not in item:
        return p
    checked = item["checked"]
    if not isinstance(checked, Mapping):
        return p + ["checked must be a table: { on = DATE, read = [URLs], unreadable = [URLs], note = TEXT }"]
    p += [f"checked: unknown field {k!r}" for k in sorted(set(checked) - _CHECKED_KEYS)]
    p += [f"checked: missing required field {k!r}" for k in sorted(_CHECKED_REQUIRED - set(checked))]
    if "on" in checked and _as_date(checked["on"]) is None:
        p.append(f"checked: on must be an ISO date (YYYY-MM-DD), got {checked['on']!r}")
    if "note" in checked and not (isinstance(checked["note"], str) and checked["note"].strip()):
        p.append("checked: note must be a non-empty string")
    lists: dict[str, list[str]] = {}
    for key in ("read", "unreadable"):
        value = checked.get(key, [])
        if not isinstance(value, list) or not all(isinstance(u, str) for u in value):
            p.append(f"checked: {key} must be a list of URLs")
            value = []
        lists[key] = value
    src = item.get("source")
    source_url = src.get("url") if isinstance(src, Mapping) else None
    see_also: list[Any] = item["see_also"] if isinstance(item.get("see_also"), list) else []
    known = {u for u in [source_url, *see_also] if isinstance(u, str)}
    read, unreadable = set(lists["read"]), set(lists["unreadable"])
    if not read:
        p.append("checked: read must name at least one source that was read (the quote comes from it)")
    for url in sorted((read | unreadable) - known):
        p.append(f"checked: {url!r} is neither the source nor in see_also")
    for url in sorted(read & unreadable):
        p.append(f"checked: {url!r} is listed both as read and unreadable")
    for url in sorted(known - read - unreadable):
        p.append(f"checked: {url!r} is in neither read nor unreadable (say whether it was read)")
    quote_url = item.get("quote_url")
    if quote_url is not None:
        if quote_url not in read:
            p.append("quote_url must be one of the URLs in checked.read")
    elif source_url is not None and source_url in unreadable:
        p.append("the source could not be read: set quote_url to the read URL the quote comes from")
    return p


def _check_model(value: Any, *, allow_builtin: bool) -> list[str]:
    if not isinstance(value, Mapping):
        return ["must be a table with 'name' (and optional 'repo')"]
    p = [f"unknown field {k!r}" for k in sorted(set(value) - _MODEL_KEYS)]
    name = value.get("name")
    if not isinstance(name, str) or not name.strip():
        p.append("missing or empty 'name'")
    repo = value.get("repo")
    if repo is not None and not (isinstance(repo, str) and _REPO_RE.match(repo)):
        p.append(f"repo {repo!r} is not a Hub repo id like 'org/name'")
    builtin = value.get("builtin", False)
    if not isinstance(builtin, bool):
        p.append("builtin must be true or false")
    elif builtin and not allow_builtin:
        p.append("only the draft can be builtin")
    elif builtin and repo is not None:
        p.append("a builtin draft has no repo")
    return p


def _check_source(value: Any) -> list[str]:
    if not isinstance(value, Mapping):
        return ["source must be a table with url and kind"]
    p = [f"source: unknown field {k!r}" for k in sorted(set(value) - _SOURCE_KEYS)]
    for key in sorted(_SOURCE_KEYS - set(value)):
        p.append(f"source: missing required field {key!r}")
    if "url" in value:
        p += [f"source: {msg}" for msg in _check_url(value["url"])]
    if "kind" in value:
        p += [f"source: {msg}" for msg in _check_enum("kind", value["kind"], SOURCE_KINDS)]
    return p


def _check_url(value: Any) -> list[str]:
    if not isinstance(value, str) or not _URL_RE.match(value):
        return [f"url {value!r} must look like https://host/path"]
    return []


def _check_enum(key: str, value: Any, allowed: Sequence[str]) -> list[str]:
    if value not in allowed:
        return [f"{key} {value!r} is not one of: {', '.join(allowed)}"]
    return []


def _check_enum_list(key: str, value: Any, allowed: Sequence[str], *, allow_empty: bool) -> list[str]:
    if not isinstance(value, list) or (not value and not allow_empty):
        return [f"{key} must be a {'' if allow_empty else 'non-empty '}list"]
    p: list[str] = []
    for v in value:
        p += _check_enum(f"{key} entry", v, allowed)
    if len(set(map(str, value))) != len(value):
        p.append(f"{key} lists an engine twice")
    return p


def _as_date(value: Any) -> _dt.date | None:
    # tomllib gives a date for a bare TOML date; a quoted "2026-11-29" is accepted too.
    if isinstance(value, _dt.datetime):
        return None  # a timestamp is not "the date it was checked"
    if isinstance(value, _dt.date):
        return value
    if isinstance(value, str) and _DATE_RE.match(value):
        try:
            return _dt.date.fromisoformat(value)
        except ValueError:
            return None
    return None
