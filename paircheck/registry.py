"""The curated registry of documented target/draft pairs (``registry/*.toml``).

The data lives in TOML so that adding a pair is a data change reviewed against its
source, not a code change. This module loads and validates that data, filters and
sorts it for ``paircheck pairs``, and matches model identities against it so the
checker can say "this exact pair is documented as working (or failing) at <url>".
The schema is described in ``registry/README.md``.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from paircheck.errors import InputError

SCHEMA_VERSION = 1

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
ENGINES: tuple[str, ...] = (
    "llama.cpp",
    "lmstudio",
    "ollama",
    "koboldcpp",
    "localai",
    "text-generation-webui",
    "vllm",
    "sglang",
    "transformers",
    "tensorrt-llm",
    "tensorrt-edge-llm",
    "tgi",
    "mlc-llm",
    "mlx-lm",
    "exllama",
    "tabbyapi",
    "research",  # a paper's setup or the authors' reference code, not a serving engine
)
SOURCE_KINDS: tuple[str, ...] = ("official-docs", "model-card", "paper", "issue", "blog", "code")
STATUSES: tuple[str, ...] = ("works", "fails")

_ID_RE = re.compile(r"^[a-z0-9](?:[a-z0-9.]|-(?!-{2}))*[a-z0-9]$")
_FAMILY_RE = re.compile(r"^[a-z0-9][a-z0-9.-]*[a-z0-9]$")
_REPO_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_URL_RE = re.compile(r"^https://[^\s/]+\.[^\s/]+(?:/\S*)?$")
# paircheck.fingerprint's "v1:<hex>" (a bare hex string is read as v1), 16-64 digits.
_FINGERPRINT_RE = re.compile(r"^(?:v[0-9]+:)?[0-9a-f]{16,64}$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

_TOP_KEYS = frozenset({"schema_version", "pair"})
_ENTRY_REQUIRED = ("id", "family", "target", "draft", "method", "engines", "source", "status", "notes")
_ENTRY_OPTIONAL = ("why", "fails_on", "see_also", "target_fingerprint", "draft_fingerprint")
_MODEL_KEYS = frozenset({"name", "repo", "builtin"})
_SOURCE_KEYS = frozenset({"url", "kind", "checked"})


class RegistryError(InputError):
    """The registry data cannot be loaded; ``where`` names the file (or folder)."""


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class ModelRef:
    """One side of a pair as the source names it."""

    name: str
    repo: str | None = None
    # True when there is no separate draft file: MTP layers inside the target, or a
    # model-free method such as n-gram lookup.
    builtin: bool = False

    def label(self) -> str:
        return self.repo or self.name


@dataclass(frozen=True)
class Source:
    url: str
    kind: str
    checked: _dt.date


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
    why: str | None = None
    fails_on: tuple[str, ...] = ()
    see_also: tuple[str, ...] = ()
    target_fingerprint: str | None = None
    draft_fingerprint: str | None = None

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
        return (_ref_key(self.target), _ref_key(self.draft), self.method)

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
            self.why or "",
            self.notes,
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
            "why": self.why,
            "fails_on": list(self.fails_on),
            "source": {
                "url": self.source.url,
                "kind": self.source.kind,
                "checked": self.source.checked.isoformat(),
            },
            "see_also": list(self.see_also),
            "notes": self.notes,
            "target_fingerprint": self.target_fingerprint,
            "draft_fingerprint": self.draft_fingerprint,
        }


# --------------------------------------------------------------------------- identity


@dataclass(frozen=True)
class ModelIdentity:
    """What is known about a model the user points at, for registry look-ups.

    ``basename``/``size_label``/``finetune`` mirror GGUF ``general.*`` keys so a
    GGUF reader can fill them; any subset may be None.
    """

    repo: str | None = None
    name: str | None = None
    basename: str | None = None
    size_label: str | None = None
    finetune: str | None = None

    def display(self) -> str:
        if self.repo:
            return self.repo
        if self.name:
            return self.name
        parts = [p for p in (self.basename, self.size_label, self.finetune) if p]
        return " ".join(parts) or "(unknown model)"

    def name_keys(self) -> set[frozenset[str]]:
        """Normalised name keys this identity can match (empty keys dropped)."""
        keys: set[frozenset[str]] = set()
        for text in (self.repo, self.name):
            if text:
                keys.add(normalise_name(text))
        if self.basename:
            # GGUF splits "Qwen2.5-14B-Instruct" into basename/size/finetune; the key is
            # a token set, so the order the parts are joined in does not matter.
            joined = " ".join(p for p in (self.basename, self.size_label, self.finetune) if p)
            keys.add(normalise_name(joined))
        keys.discard(frozenset())
        return keys


# Tokens that describe a file's packaging or quantization, not which model it is:
# quant types (Q4_K_M, IQ3_XXS, Q4_0, q4f16_1), precisions, bit widths, formats,
# uploader markers (unsloth "UD"), "hf" suffixes and QAT (same weights family/vocab).
_PACKAGING_RE = re.compile(
    r"^(?:i?q\d+(?:_[a-z0-9]+)*|q\d+f\d+(?:_\d+)?|b?f\d+|fp\d+|int\d+|w\d+a\d+|nvfp4|mxfp4"
    r"|\d+bits?|\d+(?:\.\d+)?bpw|gguf|ggml|mlx|mlc|exl2|exl3|awq|gptq|hf|qat|ud|imatrix)$"
)
_SHARD_RE = re.compile(r"-\d{5}-of-\d{5}$")
_FILE_EXT_RE = re.compile(r"\.(?:gguf|safetensors|bin|pt|pth|ggml|llamafile)$", re.IGNORECASE)
_VERSION_RE = re.compile(r"^\d+(?:\.\d+)?$")


@functools.lru_cache(maxsize=4096)
def normalise_name(text: str) -> frozenset[str]:
    """Reduce a model name, repo id or file name to a comparable token set.

    Case-insensitive; drops the org prefix, file extension, shard suffix, quant and
    format markers; joins "Qwen 2.5"/"Qwen-2.5" into "qwen2.5"; drops a leading "meta"
    before "llama". A set (not a sequence) so "Qwen2.5-Coder-0.5B-Instruct" and
    "qwen2.5-0.5b-coder-instruct" compare equal: token sets of real models rarely
    collide, while word order varies a lot between uploaders.
    """
    s = text.strip().casefold()
    s = s.rsplit("/", 1)[-1]  # org prefix (and any path)
    s = _FILE_EXT_RE.sub("", s)
    s = _SHARD_RE.sub("", s)
    s = re.sub(r"[()\[\],]", " ", s)
    tokens: list[str] = []
    for raw in re.split(r"[-\s:]+", s):
        if not raw or _PACKAGING_RE.match(raw):
            continue
        # "qwen3_8b_eagle3": underscores separate words unless the whole token was a
        # quant name (handled above), so split them only now.
        for tok in raw.split("_"):
            if tok and not _PACKAGING_RE.match(tok):
                tokens.append(tok.strip("."))
    merged: list[str] = []
    for tok in tokens:
        if merged and _VERSION_RE.match(tok) and merged[-1].isalpha():
            merged[-1] += tok  # "qwen" "2.5" -> "qwen2.5"
        else:
            merged.append(tok)
    if len(merged) > 1 and merged[0] == "meta" and merged[1].startswith("llama"):
        merged = merged[1:]  # "Meta-Llama-3.1-8B" was renamed "Llama-3.1-8B" on the Hub
    return frozenset(t for t in merged if t)


def _ref_key(ref: ModelRef) -> frozenset[str]:
    if ref.builtin:
        return frozenset({"<builtin>"})
    return normalise_name(ref.repo or ref.name)


_HF_HOSTS = ("huggingface.co", "hf.co", "www.huggingface.co")
_SIZE_RE = re.compile(r"^(?:\d+(?:\.\d+)?[bm]|e\d+b|\d+x\d+(?:\.\d+)?b|a\d+(?:\.\d+)?b)$")


def identity_from_string(text: str) -> ModelIdentity:
    """Best-effort identity from what a user types.

    Handles repo ids (``Qwen/Qwen2.5-14B-Instruct``), llama.cpp ``-hf`` style
    ``org/name:Q4_K_M``, Hub URLs (also ``hf.co/org/name:tag`` as Ollama writes them),
    Ollama tags (``gemma4:e2b-it-qat``) and file names
    (``qwen2.5-14b-instruct-q4_k_m.gguf``).
    """
    s = text.strip()
    repo: str | None = None
    name: str | None = None

    url_like = s
    if re.match(r"^(?:www\.)?(?:huggingface\.co|hf\.co)/", s):
        url_like = "https://" + s
    parsed = urlparse(url_like)
    if parsed.scheme in ("http", "https") and parsed.netloc:
        parts = [unquote(p) for p in parsed.path.split("/") if p]
        if parsed.netloc.casefold() in _HF_HOSTS and len(parts) >= 2:
            repo = f"{parts[0]}/{_strip_tag(parts[1])}"
            if parts[-1].casefold().endswith(".gguf"):
                name = _file_stem(parts[-1])
        elif parts:
            name = _file_stem(_strip_tag(parts[-1]))
        else:
            name = parsed.netloc
    elif "\\" in s or s.count("/") > 1 or _FILE_EXT_RE.search(s):
        # A path (existing or not): the file or folder name is the identity.
        name = _file_stem(re.split(r"[\\/]", s.rstrip("\\/"))[-1])
    elif s.count("/") == 1 and _REPO_RE.match(_strip_tag(s)):
        repo = _strip_tag(s)
    else:
        head, sep, tag = s.partition(":")
        if sep and tag and not _PACKAGING_RE.match(tag.casefold()):
            # Ollama "gemma4:e2b-it-qat": the tag is part of the model's identity.
            name = f"{head}-{tag}"
        else:
            name = head
    base = name or (repo.split("/", 1)[1] if repo else "")
    return ModelIdentity(repo=repo, name=name, size_label=_size_label(base))


def identity_from_path(path: Path) -> ModelIdentity:
    """Identity of a local file or folder from its name alone.

    A Hugging Face cache folder ``models--Org--Name`` gives back the repo id. The
    lead's readers can build a richer ModelIdentity from the file's metadata.
    """
    resolved = path.expanduser()
    base = resolved.name or resolved.resolve().name
    m = re.match(r"^models--([^-].*?)--(.+)$", base)
    if resolved.is_dir() and m:
        return ModelIdentity(repo=f"{m.group(1)}/{m.group(2)}", name=m.group(2), size_label=_size_label(m.group(2)))
    stem = _file_stem(base) if resolved.is_file() else base
    return ModelIdentity(name=stem, size_label=_size_label(stem))


def _strip_tag(s: str) -> str:
    return s.split(":", 1)[0]


def _file_stem(s: str) -> str:
    return _SHARD_RE.sub("", _FILE_EXT_RE.sub("", s))


def _size_label(text: str) -> str | None:
    for tok in re.split(r"[-_\s:/]+", text.casefold()):
        if _SIZE_RE.match(tok):
            return tok.upper()
    return None


# --------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class Match:
    """An entry found for an identity, with how it matched (repo beats name)."""

    entry: RegistryEntry
    by: str  # "repo" or "name"


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
    ) -> Registry:
        """Entries matching every given criterion, in stable sorted order.

        ``family`` matches exactly or as a prefix ("gemma" -> gemma2, gemma3, gemma4);
        ``engine`` matches an engine the pair works on *or* is documented failing on,
        because both answer "what is known about this engine"; ``search`` is a
        case-insensitive substring over names, repos, notes and URLs (all words must
        occur).
        """
        out: Iterable[RegistryEntry] = self.entries
        if family:
            fam = family.casefold()
            out = [e for e in out if e.family == fam or e.family.startswith(fam)]
        if method:
            out = [e for e in out if e.method == method.casefold()]
        if engine:
            eng = engine.casefold()
            out = [e for e in out if eng in e.engines or eng in e.fails_on]
        if status:
            out = [e for e in out if e.status == status.casefold()]
        if search:
            words = search.casefold().split()
            out = [e for e in out if all(w in e.search_text() for w in words)]
        return Registry(tuple(sorted(out, key=RegistryEntry.sort_key)), self.origin)

    def drafts_for(self, target: ModelIdentity) -> list[RegistryEntry]:
        """Documented drafts for a target, repo matches first, then name matches."""
        return [m.entry for m in self.match_target(target)]

    def match_target(self, target: ModelIdentity) -> list[Match]:
        return _rank(self.entries, lambda e: _match_ref(e.target, target))

    def find_pairs(self, target: ModelIdentity, draft: ModelIdentity) -> list[RegistryEntry]:
        """All entries documenting this exact target/draft pair (any method), best first."""

        def how(e: RegistryEntry) -> str | None:
            t = _match_ref(e.target, target)
            d = _match_ref(e.draft, draft)
            if t is None or d is None:
                return None
            return "repo" if t == d == "repo" else "name"

        return [m.entry for m in _rank(self.entries, how)]

    def find_pair(self, target: ModelIdentity, draft: ModelIdentity) -> RegistryEntry | None:
        found = self.find_pairs(target, draft)
        return found[0] if found else None


def _match_ref(ref: ModelRef, ident: ModelIdentity) -> str | None:
    if ref.builtin:
        return None
    if ref.repo and ident.repo and ref.repo.casefold() == ident.repo.casefold():
        return "repo"
    keys = ident.name_keys()
    if keys and (_ref_key(ref) in keys or normalise_name(ref.name) in keys):
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


def _rank(entries: Iterable[RegistryEntry], how: Any) -> list[Match]:
    matches = [Match(e, by) for e in entries if (by := how(e)) is not None]
    matches.sort(key=lambda m: (m.by != "repo", m.entry.status != "works", m.entry.sort_key()))
    return matches


# --------------------------------------------------------------------------- loading


def default_registry_dir() -> Path:
    """Where the shipped registry lives.

    A source checkout has ``registry/`` beside the package; an installed wheel is
    expected to carry the same files as package data (``paircheck/_registry_data`` or
    ``paircheck/registry``), which packaging wires up. Kept in one function so that is
    the only place to change.
    """
    checkout = Path(__file__).resolve().parent.parent / "registry"
    if checkout.is_dir():
        return checkout
    from importlib import resources  # only for an installed wheel: ~10 ms to import

    for sub in ("_registry_data", "registry"):
        try:
            candidate = resources.files("paircheck").joinpath(sub)
        except (ModuleNotFoundError, TypeError):  # pragma: no cover - odd loaders
            break
        if candidate.is_dir():
            return Path(str(candidate))
    return checkout  # load_registry reports it missing with this path


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


def validate(raw: Mapping[str, Any], origin: str = "registry") -> list[str]:
    """Every problem in one parsed registry document (empty list = valid)."""
    problems, items = _check_document(raw, origin)
    return problems + _check_unique(items)


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
        p += _check_enum_list("engines", item["engines"], ENGINES, allow_empty=False)
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
    for key in ("target_fingerprint", "draft_fingerprint"):
        if key in item and not (isinstance(item[key], str) and _FINGERPRINT_RE.match(item[key])):
            p.append(f"{key} must be a paircheck fingerprint: 'v1:' and 16-64 lowercase hex digits")
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
        return ["source must be a table with url, kind, checked"]
    p = [f"source: unknown field {k!r}" for k in sorted(set(value) - _SOURCE_KEYS)]
    for key in sorted(_SOURCE_KEYS - set(value)):
        p.append(f"source: missing required field {key!r}")
    if "url" in value:
        p += [f"source: {msg}" for msg in _check_url(value["url"])]
    if "kind" in value:
        p += [f"source: {msg}" for msg in _check_enum("kind", value["kind"], SOURCE_KINDS)]
    if "checked" in value and _as_date(value["checked"]) is None:
        p.append(f"source: checked must be an ISO date (YYYY-MM-DD), got {value['checked']!r}")
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


def _build_entry(item: Mapping[str, Any]) -> RegistryEntry:
    """Build an entry from an item that already passed _check_entry."""
    src = item["source"]
    checked = _as_date(src["checked"])
    assert checked is not None  # validated before
    return RegistryEntry(
        id=item["id"],
        family=item["family"],
        target=_build_ref(item["target"]),
        draft=_build_ref(item["draft"]),
        method=item["method"],
        engines=tuple(item["engines"]),
        source=Source(url=src["url"], kind=src["kind"], checked=checked),
        status=item["status"],
        notes=item["notes"].strip(),
        why=item.get("why"),
        fails_on=tuple(item.get("fails_on", ())),
        see_also=tuple(item.get("see_also", ())),
        target_fingerprint=item.get("target_fingerprint"),
        draft_fingerprint=item.get("draft_fingerprint"),
    )


def _build_ref(value: Mapping[str, Any]) -> ModelRef:
    return ModelRef(name=value["name"].strip(), repo=value.get("repo"), builtin=bool(value.get("builtin", False)))
