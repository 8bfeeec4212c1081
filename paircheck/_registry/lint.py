"""The registry lint: the part of a source audit that a rule can do.

An audit of the registry against its sources (issue 25) found the same mistakes again and
again: an engine the source never names, a failure borrowed from a nearby model, a level
above what the source shows, a quantized or QAT checkpoint recorded as the plain model, a
quote cut or rewritten without saying so, a page's generic introduction quoted for a pair it
never names. A later audit (issue 35) found caveats adding facts no source of the entry
states (a model's size, a PR number, a vocab padding). This module checks what of that can be
checked from the data alone, so the
mistakes cannot come back unnoticed. ``registry/README.md`` ("The lint") states the rules for
whoever adds an entry.

Pure: a Registry (or one entry) in, LintFindings out; nothing is read from the network or
disk. ``python -m paircheck._registry.lint [PATH]`` prints the findings for the shipped (or
a given) registry and exits 1 when there are any.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from paircheck._registry.entry import Caveat, RegistryEntry
from paircheck._registry.identity import ModelRef, normalise_name
from paircheck._registry.load import Registry, load_registry
from paircheck._registry.schema import FAILS_EVIDENCE, RegistryError
from paircheck._source.quant_name import is_quant_tag
from paircheck.findings import Rule

# --------------------------------------------------------------------------- rules


@dataclass(frozen=True)
class LintRule(Rule):
    """A registry lint rule: a Rule (code, name, title, explanation, fix) that
    `paircheck explain` prints; ``slug`` is its name."""

    @property
    def slug(self) -> str:
        return self.name


_DOC = "registry/README.md (the registry lint rules)"

R_ENGINE = LintRule(
    "RL101", "engine-unbacked", "Every engine is backed by a quote",
    "An engine (in engines, fails_on or engine_evidence) that no quote names and no quote's page belongs to "
    "(the engine's own docs or repository; research: a paper or the method authors' repository). Names count "
    "in any usual spelling, and an engine's command names it (llama-server, assistant_model=).",
    "Add an [[pair.engine_quote]] that names it, or drop the engine.", source=_DOC)
R_CUT = LintRule(
    "RL102", "cut-unmarked", "A condensed quote says so in checked.note",
    "A quote with '...', '…' or joined table cells (' | ') while checked.note says nothing of a cut or a "
    "table row: a reader would take condensed words for the source's own.",
    "Say it in checked.note.", source=_DOC)
R_PAIR = LintRule(
    "RL103", "quote-names-no-pair", "The quote names the pair",
    "The entry's quote does not name both sides (by name or repo, in any order or spelling; a Hub card names "
    "its own model; a built-in draft is named by its method). Also a measured number quoted from another page "
    "that does not name the pair.",
    "Quote the words that name the pair.", source=_DOC)
R_NEGATIVE = LintRule(
    "RL104", "negative-not-exact", "A failure names the exact pair or is a sibling report",
    "A failure (fails_on, or a fails entry) at run-failed, code-refuses or stated whose quotes do not name "
    "this exact pair, or name a variant of a side; or a sibling failure without a quote.",
    "Quote the exact pair's failure, or file it as sibling.", source=_DOC)
R_IDENTITY = LintRule(
    "RL105", "identity-drift", "The sides carry the variant markers their sources name",
    "A side whose repo is a quantized or QAT build its name does not say, or a quote or the notes naming a side "
    "with a variant marker (QAT, AWQ, GPTQ, FP8, NVFP4, MXFP4, INT4/INT8, 4bit...) its name lacks.",
    "Name the variant the source names.", source=_DOC)
R_MEASURED = LintRule(
    "RL106", "measured-without-data", "Measured evidence has its numbers as data",
    "A measured engine without [[pair.measured]] numbers on it, or numbers on an engine whose level is not "
    "measured: estimate and probe read the numbers, so a level without them promises what is not there.",
    "Add the numbers, or lower the level.", source=_DOC)
R_NUMBER = LintRule(
    "RL107", "number-not-in-quote", "Each measured number is written in its quote",
    "A measured value (or value_max) that is not written in its quote, so nobody can check it against the source.",
    "Copy the number as written, in the right unit.", source=_DOC)
R_LEVEL = LintRule(
    "RL108", "level-below-quote", "The level is not below what the quote shows",
    "A quote that reports a figure (1.5x, 65 t/s, +50% speedup, an acceptance rate) filed at ran, recommended "
    "or computed, or whose author says they ran it filed at recommended or computed.",
    "Raise the level (with the numbers), or quote what the level rests on.", source=_DOC)

R_CAVEAT = LintRule(
    "RL109", "caveat-unsupported", "Each caveat rests on a quote, a quoted page or a stated inference",
    "A caveat users read as the source's word must rest on it. A plain caveat string's numbers, sizes, versions, "
    "quantizations and PR or issue numbers (every word with a digit) must be written in one of the entry's quotes, "
    "the sides' names or the entry's URLs; a [[pair.caveat]] with basis = 'source' must find them in its own quote "
    "(words of a page in checked.read) or the entry's; one with basis = 'inference' is shown as paircheck's "
    "inference and must give a reason that states each such number it rests on.",
    "Quote the words the caveat rests on (basis = 'source', url, quote), drop the fact, or mark the caveat "
    "basis = 'inference' with a reason.", source=_DOC)

LINT_RULES: tuple[LintRule, ...] = (
    R_ENGINE, R_CUT, R_PAIR, R_NEGATIVE, R_IDENTITY, R_MEASURED, R_NUMBER, R_LEVEL, R_CAVEAT
)


@dataclass(frozen=True)
class LintFinding:
    entry_id: str
    rule: LintRule
    message: str

    def __str__(self) -> str:
        return f"{self.entry_id}: {self.rule.code} {self.rule.slug}: {self.message}"


# --------------------------------------------------------------------------- engines

# How a quote names an engine (case-insensitive). An engine's own command or API names it too:
# `llama-server` is llama.cpp, `assistant_model=` is transformers. "research" (a paper's own
# setup) is never named in words; only its home pages back it.
_ENGINE_WORDS: dict[str, str] = {
    "llama.cpp": r"llama\.cpp|llama[-_]cpp|llamacpp|\bllama-(?:server|cli|speculative(?:-simple)?|bench)\b",
    "lmstudio": r"\blm ?studio\b|\blms\b",
    "ollama": r"\bollama\b",
    "koboldcpp": r"\bkoboldcpp\b",
    "localai": r"\blocalai\b",
    "text-generation-webui": r"text-generation-webui|\boobabooga\b",
    "vllm": r"\bvllm\b",
    "sglang": r"\bsglang\b",
    "transformers": r"\btransformers\b|\bassistant_model\b",
    "tensorrt-llm": r"tensorrt[-_ ]llm|\btrt-?llm\b",
    "tensorrt-edge-llm": r"tensorrt edge-llm|\bedge-?llm\b|tensorrt-edgellm",
    "tgi": r"text-generation-inference|\btgi\b",
    "mlc-llm": r"\bmlc[-_ ]llm\b",
    "mlx-lm": r"\bmlx[-_ ]lm\b",
    "exllama": r"\bexllama(?:v2|v3)?\b",
    "tabbyapi": r"\btabby ?api\b",
}

# An engine's own documentation and repositories (host and path prefix). A quote from one of
# these backs that engine even when its words do not name it: vLLM's docs need not say "vLLM".
ENGINE_HOMES: dict[str, tuple[str, ...]] = {
    "llama.cpp": ("github.com/ggml-org/llama.cpp", "github.com/ggerganov/llama.cpp"),
    "lmstudio": ("lmstudio.ai", "github.com/lmstudio-ai/"),
    "ollama": ("ollama.com", "github.com/ollama/ollama"),
    "koboldcpp": ("github.com/lostruins/koboldcpp",),
    "localai": ("localai.io", "github.com/mudler/localai"),
    "text-generation-webui": ("github.com/oobabooga/text-generation-webui", "github.com/oobabooga/textgen"),
    "vllm": ("docs.vllm.ai", "recipes.vllm.ai", "blog.vllm.ai", "github.com/vllm-project/"),
    "sglang": ("docs.sglang.ai", "github.com/sgl-project/"),
    "transformers": ("huggingface.co/docs/transformers", "github.com/huggingface/transformers"),
    "tensorrt-llm": ("github.com/nvidia/tensorrt-llm", "nvidia.github.io/tensorrt-llm"),
    "tensorrt-edge-llm": ("nvidia.github.io/tensorrt-edge-llm", "github.com/nvidia/tensorrt-edge-llm"),
    "tgi": ("huggingface.co/docs/text-generation-inference", "github.com/huggingface/text-generation-inference"),
    "mlc-llm": ("llm.mlc.ai", "github.com/mlc-ai/mlc-llm"),
    "mlx-lm": ("github.com/ml-explore/mlx-lm", "github.com/ml-explore/mlx-examples"),
    "exllama": (
        "github.com/turboderp-org/exllamav2",
        "github.com/turboderp/exllamav2",
        "github.com/turboderp-org/exllamav3",
    ),
    "tabbyapi": ("github.com/theroyallab/tabbyapi",),
    # A paper, or the reference code of the method's authors.
    "research": (
        "arxiv.org",
        "huggingface.co/papers",
        "paperswithcode.com",
        "github.com/safeailab/eagle",
        "github.com/fasterdecoding/medusa",
    ),
}

_METHOD_WORDS = {
    "mtp": r"\bmtp\b|multi-token|\bnextn\b",
    "ngram": r"n-?gram|lookup",
    "suffix": r"\bsuffix\b",
}


def names_engine(text: str, engine: str) -> bool:
    pattern = _ENGINE_WORDS.get(engine)
    return bool(pattern and re.search(pattern, text, re.IGNORECASE))


def is_engine_home(url: str, engine: str) -> bool:
    bare = re.sub(r"^https?://(?:www\.)?", "", url.strip()).casefold()
    return any(bare.startswith(prefix) for prefix in ENGINE_HOMES.get(engine, ()))


# --------------------------------------------------------------------------- naming a pair

# Words a quote may leave out and still name a side: "Gemma 3 27B" names gemma-3-27b-it.
_OPTIONAL_NAME_TOKENS = frozenset({"it", "instruct"})


def text_tokens(text: str) -> frozenset[str]:
    """The name tokens in free text, normalised as registry names are (paircheck.identity)."""
    cleaned = re.sub(r"\.(?:gguf|safetensors|bin)\b", " ", text, flags=re.IGNORECASE)
    # "phind-codellama-34b-v2.Q4_K_M": a quant type after a dot, as in TheBloke's file names.
    cleaned = re.sub(r"\.(?=(?:i?q\d\w*|b?f16|f32)\b)", " ", cleaned, flags=re.IGNORECASE)
    cleaned = re.sub(r"[^0-9A-Za-z._\-]+", " ", cleaned)
    return normalise_name(cleaned)


def _is_card_of(url: str | None, ref: ModelRef) -> bool:
    """True when ``url`` is the Hub page of the side's own repo ("this model" names it)."""
    if not url or not ref.repo:
        return False
    bare = re.sub(r"^https?://(?:www\.)?(?:huggingface\.co|hf\.co)/", "", url.strip(), flags=re.IGNORECASE)
    if bare == url.strip():
        return False
    return bare.rstrip("/").casefold().split("/discussions")[0] == ref.repo.casefold()


def names_side(text: str, ref: ModelRef, url: str | None = None) -> bool:
    """Whether ``text`` names the model ``ref`` (its name or repo, in any spelling or order)."""
    if _is_card_of(url, ref):
        return True
    have = text_tokens(text)
    for form in (ref.name, ref.repo):
        if form:
            need = normalise_name(form) - _OPTIONAL_NAME_TOKENS
            if need and need <= have:
                return True
    return False


def names_pair(entry: RegistryEntry, text: str, url: str | None = None) -> bool:
    """Whether ``text`` names the entry's target and draft (a built-in draft: its method)."""
    if not names_side(text, entry.target, url):
        return False
    if entry.draft.builtin:
        pattern = _METHOD_WORDS.get(entry.method)
        return bool(pattern and re.search(pattern, text, re.IGNORECASE))
    return names_side(text, entry.draft, url)


# --------------------------------------------------------------------------- variant markers

# A marker that names another checkpoint of the same model: quantization-aware training,
# a quantized release (AWQ, GPTQ, FP8, NVFP4, MLX 4bit). Wherever a source names a side with
# one, the side's name carries it.
_WEIGHT_MARKER = re.compile(
    r"^(?:qat|awq|gptq|fp8|fp4|nvfp4|mxfp4|int4|int8|w4a16|w8a8|w4a8|w8a16|bnb|\d+bits?)$", re.IGNORECASE
)
# A quantization type of one file in a GGUF or EXL2 repo: a setting, not a checkpoint, unless
# the repo itself is that one file (ggml-org/Qwen2.5-Coder-7B-Q8_0-GGUF).
_EXL2_BITS = re.compile(r"^\d+(?:\.\d+)?bpw$", re.IGNORECASE)
# Words that may trail a variant's name without making it another model.
_VARIANT_TRAILERS = frozenset({"dynamic"})


def _raw_tokens(name: str) -> list[str]:
    name = re.sub(r"\.(?:gguf|safetensors|bin)$", "", name.strip(), flags=re.IGNORECASE)
    return [t for t in re.split(r"[-\s/:]+", name) if t]


def weight_markers(name: str) -> frozenset[str]:
    return frozenset(t.casefold() for t in _raw_tokens(name) if _WEIGHT_MARKER.match(t))


def quant_markers(name: str) -> frozenset[str]:
    return frozenset(t.casefold() for t in _raw_tokens(name)
                     if _WEIGHT_MARKER.match(t) or is_quant_tag(t) or _EXL2_BITS.match(t))


def _mentions(text: str) -> Iterator[str]:
    """Model-like names in free text: hyphenated words with a digit, repo ids, file names."""
    for chunk in re.split(r"[\s\"'`,;()\[\]{}<>|=]+", text):
        for part in chunk.strip(".:*").split("/"):  # a repo id: its name part
            if "-" in part and re.search(r"\d", part):
                yield part


def drift(text: str, ref: ModelRef) -> list[str]:
    """The names in ``text`` that are ``ref``'s model with a variant marker its name lacks."""
    if ref.builtin:
        return []
    key = normalise_name(ref.name)
    have = weight_markers(ref.name)
    found = []
    for mention in _mentions(text):
        extra = weight_markers(mention) - have
        if not extra:
            continue
        mkey = normalise_name(mention)
        if key <= mkey and mkey - key <= _VARIANT_TRAILERS:
            found.append(mention)
    return found


# --------------------------------------------------------------------------- numbers

_NUMBER = re.compile(r"(?<![\w.])([+\-\u2212]?)(\d+(?:,\d{3})*(?:\.\d+)?)")


def _numbers(text: str) -> list[tuple[str, float]]:
    return [(sign.replace("\u2212", "-"), float(digits.replace(",", ""))) for sign, digits in _NUMBER.findall(text)]


def written_forms(quantity: str, value: float) -> tuple[float, ...]:
    """How a source may write ``value``: a speedup as a ratio or a percent gain, a rate as a
    fraction or a percent, everything else as itself."""
    if quantity == "speedup":
        return (value, (value - 1) * 100)
    if quantity == "acceptance_rate":
        return (value, value * 100)
    return (value,)


def number_in_quote(quantity: str, value: float, quote: str) -> bool:
    """Whether ``value`` appears in ``quote`` in one of its written forms (exactly, as written)."""
    for sign, number in _numbers(quote):
        signed = -number if sign == "-" else number
        for form in written_forms(quantity, value):
            if abs(signed - form) < 1e-6 or (not sign and abs(number - abs(form)) < 1e-6):
                return True
    return False


# A quote that reports a speed figure: a ratio, a rate or a percent speedup.
# "8x H100" is hardware, not a ratio.
_FIGURE = re.compile(
    r"\d(?:\.\d+)?\s*[xX\u00d7](?![a-zA-Z0-9])(?!\s*(?:[A-Z]{1,3}\d|RTX|GPU|NVIDIA))"
    r"|(?i:\d\s*(?:tok(?:en)?s?\s*/\s*s(?:ec)?|t/s|tokens? per second|tokens?/second))"
    r"|(?i:\d\s*%\s*(?:speed-?up|faster)|acceptance (?:rate|length))"
)
# A quote in which its author says the pair ran.
_RAN = re.compile(
    r"\b(?:I|[Ww]e)\s+(?:did|ran|have\s+run|tested|tried|benchmarked|measured)\b|\bI'?ve\s+(?:tested|run|tried)\b"
)
_CUT = re.compile(r"\.\.\.|…| \| ")
_CUT_NOTE = re.compile(r"\bcut\b|trimmed|shortened|elided|omitted|joined|table row", re.IGNORECASE)
_BELOW_MEASURED = ("ran", "recommended", "computed")


# --------------------------------------------------------------------------- caveat facts

# A word with a digit in it is a checkable fact: a size (106B, A3B), a count (152064), a
# version (0.18.0), a quantization (Q4_K_M), a PR or issue number, a figure (1.14x, 40%).
_FACT = re.compile(r"[0-9A-Za-z_.]*\d[0-9A-Za-z_.]*")


def fact_words(text: str) -> frozenset[str]:
    """The words with a digit in ``text``, as compared: case-folded, thousands separators
    dropped ("152,064" is 152064), a trailing ratio sign dropped ("1.14x" is 1.14)."""
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = re.sub(r"\.(?:gguf|safetensors|bin)\b", " ", text, flags=re.IGNORECASE)  # "...-Q8_0.gguf" names Q8_0
    out = set()
    for word in _FACT.findall(text):
        word = word.strip("._").casefold()
        word = re.sub(r"(?<=\d)x$", "", word)
        word = re.sub(r"^v(?=\d+\.\d)", "", word)  # "v0.18.0" is version 0.18.0 (V0, V1 stay engine names)
        if re.search(r"\d", word):
            out.add(word)
    return frozenset(out)


def _entry_support(entry: RegistryEntry, quotes: list[_Quote]) -> frozenset[str]:
    """What any caveat of the entry may rest on: its quotes, its sides' names and its URLs
    (a PR number that is the cited PR's own)."""
    texts = [q.text for q in quotes]
    texts += [entry.target.name, entry.target.repo or "", entry.draft.name, entry.draft.repo or ""]
    texts += [entry.source.url, entry.quote_url or "", *entry.see_also]
    if entry.checked:
        texts += [*entry.checked.read, *entry.checked.unreadable]
    return fact_words(" ".join(texts))


def unsupported_facts(caveat: Caveat, support: frozenset[str]) -> list[str]:
    """The caveat's words with a digit that its basis does not state, in text order."""
    own = {"source": caveat.quote, "inference": caveat.reason}.get(caveat.basis) or ""
    have = support | fact_words(own)
    return sorted(fact_words(caveat.text) - have, key=caveat.text.casefold().find)


# --------------------------------------------------------------------------- the lint


@dataclass(frozen=True)
class _Quote:
    what: str  # "quote", "engine_quote (vllm)", "measured[0]"
    text: str
    url: str
    engine: str | None  # the engine it is attributed to, if any


def _quotes(entry: RegistryEntry) -> list[_Quote]:
    out = [_Quote("quote", entry.quote, entry.quote_source(), None)]
    out += [_Quote(f"engine_quote ({q.engine})", q.quote, q.url, q.engine) for q in entry.engine_quotes]
    out += [
        _Quote(f"measured[{i}]", m.quote, m.url or entry.quote_source(), m.engine) for i, m in enumerate(entry.measured)
    ]
    return out


def lint_entry(entry: RegistryEntry) -> list[LintFinding]:
    """Every finding for one entry, in rule order."""
    out: list[LintFinding] = []

    def add(rule: LintRule, message: str) -> None:
        out.append(LintFinding(entry.id, rule, message))

    quotes = _quotes(entry)
    failing = set(entry.fails_on) | (set(entry.engines) if entry.status == "fails" else set())

    # RL101: every engine is backed by a quote that names it or comes from its own pages.
    for engine in dict.fromkeys((*entry.engines, *entry.fails_on, *(e for e, _ in entry.engine_evidence))):
        own = [q for q in quotes if q.engine in (None, engine)]
        if not any(names_engine(q.text, engine) or is_engine_home(q.url, engine) for q in own):
            add(
                R_ENGINE,
                f"{engine} is named by no quote and no quote comes from its own docs or repository: "
                "add an [[pair.engine_quote]] that names it, or drop the engine",
            )

    # RL102: cuts and joined table cells are said in checked.note.
    note = entry.checked.note if entry.checked else None
    cut = [q.what for q in quotes if _CUT.search(q.text)]
    cut += [f"caveat {i}" for i, c in enumerate(entry.caveats) if c.quote and _CUT.search(c.quote)]
    if cut and not (note and _CUT_NOTE.search(note)):
        add(R_CUT, f"{', '.join(cut)} is cut ('...') or joins table cells (' | '); say so in checked.note")

    # RL103: the quote names the pair; numbers from another page than the quote's name it too
    # (a baseline speed: its target). An engine quote only has to name its engine (RL101).
    if not names_pair(entry, entry.quote, entry.quote_source()):
        add(R_PAIR, "the quote does not name both sides of the pair (a generic sentence is not the pair's quote)")
    for i, m in enumerate(entry.measured):
        url = m.url or entry.quote_source()
        if url == entry.quote_source():
            continue
        if m.quantity == "baseline_tokens_per_second":
            if not names_side(m.quote, entry.target, url):
                add(R_PAIR, f"measured[{i}] comes from another page than the quote and does not name the target")
        elif not names_pair(entry, m.quote, url):
            add(R_PAIR, f"measured[{i}] comes from another page than the quote and does not name the pair")

    # RL104: a failure names the exact pair, or is recorded at the "sibling" level.
    for engine in sorted(failing):
        level = entry.evidence_for(engine)
        candidates = [q for q in quotes if q.engine == engine and q.what.startswith("engine_quote")]
        if entry.status == "fails":
            candidates.append(quotes[0])
        if level == "sibling":
            if not candidates:
                add(R_NEGATIVE, f"the sibling failure on {engine} has no quote saying what was reported")
            continue
        exact = [
            q
            for q in candidates
            if names_pair(entry, q.text, q.url) and not drift(q.text, entry.target) and not drift(q.text, entry.draft)
        ]
        if not exact:
            add(
                R_NEGATIVE,
                f"no quote shows {engine} failing for this exact pair (level {level}): quote one that does, "
                "or record it as 'sibling' (reported for a sibling pair)",
            )

    # RL105: repo markers are in the name; names in the sources with a variant marker too.
    for side, ref in (("target", entry.target), ("draft", entry.draft)):
        if ref.repo:
            missing = quant_markers(ref.repo.rsplit("/", 1)[-1]) - quant_markers(ref.name)
            if missing:
                add(R_IDENTITY, f"{side} repo {ref.repo} is a {'/'.join(sorted(missing))} build; its name must say so")
        texts = [q.text for q in quotes if not (q.engine in failing and entry.evidence_for(q.engine) == "sibling")]
        texts.append(entry.notes)
        for mention in dict.fromkeys(m for t in texts for m in drift(t, ref)):
            add(R_IDENTITY, f"the entry names {mention!r} but the {side} is {ref.name!r}: name the variant")

    # RL106: measured evidence comes with its numbers; numbers go with measured evidence.
    for engine in entry.engines:
        if entry.evidence_for(engine) == "measured" and not any(m.engine == engine for m in entry.measured):
            add(R_MEASURED, f"{engine} is 'measured' but has no [[pair.measured]] numbers")
    # A source that measured the pair without naming the engine: the entry names none, and its
    # numbers have none (engine None); its evidence is then the pair's as a whole.
    if not entry.engines and entry.evidence == "measured" and not entry.measured:
        add(R_MEASURED, "measured evidence needs its [[pair.measured]] numbers")
    for i, m in enumerate(entry.measured):
        if m.engine is None:
            if entry.engines:
                add(R_MEASURED, f"measured[{i}] names no engine, but the entry names {', '.join(entry.engines)}")
            elif entry.evidence != "measured":
                add(R_MEASURED, f"measured[{i}] names no engine and the entry's level is {entry.evidence}")
        elif entry.evidence_for(m.engine) != "measured":
            add(R_MEASURED, f"measured[{i}] is on {m.engine}, whose level is {entry.evidence_for(m.engine)}")

    # RL107: each number is written in its quote.
    for i, m in enumerate(entry.measured):
        for what, value in (("value", m.value), ("value_max", m.value_max)):
            if value is not None and not number_in_quote(m.quantity, value, m.quote):
                add(R_NUMBER, f"measured[{i}] {what} {value:g} ({m.quantity}) is not written in its quote")

    # RL108: a quote that reports figures or a run is not filed below it.
    for q in quotes:
        if q.what.startswith("measured"):
            continue
        engines: list[str | None] = [q.engine] if q.engine else [*entry.engines] or [None]
        levels = {(entry.evidence_for(e) if e else None) or entry.evidence for e in engines}
        levels -= set(FAILS_EVIDENCE)
        if _FIGURE.search(q.text) and levels & set(_BELOW_MEASURED):
            add(R_LEVEL, f"{q.what} reports a figure but its level is {'/'.join(sorted(levels))}: measured?")
        elif _RAN.search(q.text) and levels & {"recommended", "computed"}:
            add(R_LEVEL, f"{q.what} says its author ran the pair but its level is {'/'.join(sorted(levels))}: ran?")

    # RL109: every caveat's checkable facts are in what it rests on; an inference says from what.
    support = _entry_support(entry, quotes)
    for i, caveat in enumerate(entry.caveats):
        if caveat.basis == "inference" and not (caveat.reason and caveat.reason.strip()):
            add(R_CAVEAT, f"caveat {i} is marked inference but gives no reason (what paircheck concludes it from)")
            continue
        unsupported = unsupported_facts(caveat, support)
        if unsupported:
            where = {"quote": "in any quote of the entry", "source": "in its quote or the entry's",
                     "inference": "in its reason or the entry's quotes"}[caveat.basis]
            add(R_CAVEAT, f"caveat {i} ({caveat.text[:40]!r}...) states {', '.join(unsupported)}, not written {where}")
    return out


def lint_registry(registry: Iterable[RegistryEntry]) -> list[LintFinding]:
    """Every finding for every entry, entries in the registry's order."""
    return [finding for entry in registry for finding in lint_entry(entry)]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        registry: Registry = load_registry(Path(args[0]) if args else None)
    except RegistryError as exc:
        print(f"paircheck._registry.lint: error: {exc}", file=sys.stderr)
        return 2
    findings = lint_registry(registry)
    for finding in findings:
        print(finding)
    print(f"{len(registry)} entries, {len(findings)} finding(s)", file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
