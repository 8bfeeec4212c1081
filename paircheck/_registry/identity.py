"""Model identities: what a name, repo id, path or file says a model is, and matching them.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover - Python 3.10
    pass

from paircheck._registry.schema import _REPO_RE
from paircheck._source.split_name import strip_suffix

# --------------------------------------------------------------------------- identity


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
    s = strip_suffix(s)
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


def ref_key(ref: ModelRef) -> frozenset[str]:
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
    return strip_suffix(_FILE_EXT_RE.sub("", s))


_PLAIN_SIZE = re.compile(r"(\d+(?:\.\d+)?)([bm])")


def size_billions(label: str | None) -> float | None:
    """The one reading of a size label: ``"14B"`` -> 14.0, ``"135M"`` -> 0.135; None for labels
    that are not one size (8x7B, A3B, E2B) or none at all."""
    m = _PLAIN_SIZE.fullmatch(label.strip().casefold()) if label else None
    if not m:
        return None
    value = float(m.group(1))
    return value if m.group(2) == "b" else value / 1000


def size_from_name(text: str) -> float | None:
    """Billions of parameters from the first size token of a name (``Qwen2.5-0.5B``, ``135M``)."""
    for tok in re.split(r"[-_\s:/]+", text.casefold()):
        value = size_billions(tok)
        if value is not None:
            return value
    return None


def _size_label(text: str) -> str | None:
    for tok in re.split(r"[-_\s:/]+", text.casefold()):
        if _SIZE_RE.match(tok):
            return tok.upper()
    return None


