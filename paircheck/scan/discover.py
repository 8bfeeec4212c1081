"""Where users keep models, and the candidate drafts found there.

Pure file-system walking: no GGUF is opened here (the scan describes each candidate one at a
time, so memory stays bounded by one file's metadata). Layouts, each from its tool's source:

* Hugging Face cache: llama.cpp's own lookup order, common/hf-cache.cpp (llama.cpp pinned in
  llama-cpp-python 0.3.36): ``HF_HUB_CACHE``, ``HUGGINGFACE_HUB_CACHE``, ``HF_HOME``/hub,
  ``XDG_CACHE_HOME``/huggingface/hub, ``~/.cache/huggingface/hub``; repositories are
  ``models--ORG--NAME/snapshots/REVISION/...`` (huggingface_hub's cache layout).
* llama.cpp's download cache: common/common.cpp ``fs_get_cache_directory()``: ``LLAMA_CACHE``,
  else ``XDG_CACHE_HOME``/llama.cpp, else ``~/.cache/llama.cpp`` (Linux).
* Split GGUFs: ``%s-%05d-of-%05d.gguf`` (src/llama.cpp ``llama_split_path``); llama.cpp loads a
  split model from its first shard, so only ``-00001-of-N`` is a candidate.
* LM Studio: ``~/.lmstudio/models`` (current) and ``~/.cache/lm-studio/models`` (older releases),
  ``PUBLISHER/REPO/FILE.gguf`` below them.
* Ollama, verified against github.com/ollama/ollama at commit
  fb30760996871fa9460115c753afd2c60d4ab0f7 (2026-08-21):
  - the store: envconfig/config.go ``Models()``: ``OLLAMA_MODELS`` (``Var()`` trims spaces and
    quotes around the value), else ``filepath.Join(os.UserHomeDir(), ".ollama", "models")``; the
    same on every OS (a Linux service's user has its own home, so its store is under that home);
  - manifests: manifest/paths.go ``PathForName`` = ``<store>/manifests/`` + types/model/name.go
    ``Name.Filepath()`` = ``HOST/NAMESPACE/MODEL/TAG``, defaults ``registry.ollama.ai``,
    ``library``, ``latest``;
  - blobs: manifest/paths.go ``BlobsPath`` accepts ``sha256:HEX`` or ``sha256-HEX`` and stores
    ``<store>/blobs/sha256-HEX`` (``":"`` replaced by ``"-"``, no extension); older releases wrote
    ``sha256:HEX`` files, which server/fixblobs.go ``fixBlobs`` renames only when the server next
    starts (server/routes.go), so a store not served since still holds them;
  - the GGUF layer: mediaType ``application/vnd.ollama.image.model`` (server/create.go; a draft
    layer is ``application/vnd.ollama.image.draft``, manifest/layer.go ``MediaTypeImageDraft``);
  - names: ``Name.DisplayShortest()``: ``HOST/NAMESPACE/`` unless the host is the default
    (compared case-insensitively), else ``NAMESPACE/`` unless it is ``library`` (likewise), then
    always ``MODEL:TAG``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from paircheck._source.split_name import is_first_or_whole

OLLAMA_MODEL_MEDIA = "application/vnd.ollama.image.model"
OLLAMA_DEFAULT_HOST = "registry.ollama.ai"
_MAX_MANIFEST = 1 << 20  # a manifest is a few hundred bytes; never read a huge file as one
_HF_TOKENIZER = ("tokenizer.json", "tokenizer.model", "vocab.json")


@dataclass(frozen=True)
class Candidate:
    """One model found: ``location`` as found (a path), ``name`` when the store names it
    (Ollama ``name:tag``, a Hugging Face repo id), ``where`` the store it was found in."""

    location: str
    name: str | None = None
    where: str = "given"


@dataclass(frozen=True)
class Unlisted:
    """A store entry that could not be turned into a candidate (a broken Ollama manifest)."""

    location: str
    error: str


def _env_path(env: Mapping[str, str], key: str) -> Path | None:
    value = env.get(key, "")
    return Path(value) if value else None


def hf_cache_dir(env: Mapping[str, str]) -> Path:
    """The Hugging Face hub cache, in llama.cpp's (and huggingface_hub's) lookup order."""
    for key, tail in (("HF_HUB_CACHE", ""), ("HUGGINGFACE_HUB_CACHE", ""), ("HF_HOME", "hub"),
                      ("XDG_CACHE_HOME", "huggingface/hub")):
        base = _env_path(env, key)
        if base is not None:
            return base / tail if tail else base
    return _home(env) / ".cache" / "huggingface" / "hub"


def llama_cache_dir(env: Mapping[str, str]) -> Path:
    base = _env_path(env, "LLAMA_CACHE")
    if base is not None:
        return base
    xdg = _env_path(env, "XDG_CACHE_HOME")
    return (xdg if xdg is not None else _home(env) / ".cache") / "llama.cpp"


OLLAMA_DEFAULT_NAMESPACE = "library"


def ollama_dir(env: Mapping[str, str]) -> Path:
    # Ollama's envconfig.Var: strings.Trim(strings.TrimSpace(value), "\"'").
    value = env.get("OLLAMA_MODELS", "").strip().strip("\"'")
    return Path(value) if value else _home(env) / ".ollama" / "models"


def ollama_display_name(host: str, namespace: str, model: str, tag: str) -> str:
    """Ollama's ``Name.DisplayShortest()``: what ``ollama list`` shows for a manifest path."""
    if host.casefold() != OLLAMA_DEFAULT_HOST:
        return f"{host}/{namespace}/{model}:{tag}"
    if namespace.casefold() != OLLAMA_DEFAULT_NAMESPACE:
        return f"{namespace}/{model}:{tag}"
    return f"{model}:{tag}"


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def default_dirs(env: Mapping[str, str]) -> list[tuple[str, Path]]:
    """(store name, folder) of every place users keep models, existing or not."""
    home = _home(env)
    return [
        ("huggingface", hf_cache_dir(env)),
        ("lmstudio", home / ".lmstudio" / "models"),
        ("lmstudio", home / ".cache" / "lm-studio" / "models"),
        ("llama.cpp", llama_cache_dir(env)),
        ("ollama", ollama_dir(env)),
    ]


def is_first_shard_or_whole(name: str) -> bool:
    # Any case: a shard 2..N of a ``.GGUF`` set is no candidate either.
    return is_first_or_whole(name.lower())


def _is_ollama_store(folder: Path) -> bool:
    return (folder / "manifests").is_dir() and (folder / "blobs").is_dir()


def _hf_repo_name(path: Path) -> str | None:
    """``org/name`` of a file inside a Hugging Face cache snapshot, else None."""
    for part in path.parts:
        if part.startswith("models--"):
            return part[len("models--"):].replace("--", "/")
    return None


def ollama_models(store: Path) -> Iterator[Candidate | Unlisted]:
    """Every model of an Ollama store, named ``name:tag`` (the host and ``library/`` namespace
    left out when they are Ollama's defaults, as ``ollama list`` shows them)."""
    manifests = store / "manifests"
    for root, dirs, files in os.walk(manifests):
        dirs.sort()
        for tag in sorted(files):
            path = Path(root) / tag
            rel = path.relative_to(manifests).parts
            if len(rel) != 4:
                continue  # HOST/NAMESPACE/NAME/TAG only
            host, namespace, model, _ = rel
            name = ollama_display_name(host, namespace, model, tag)
            try:
                if path.stat().st_size > _MAX_MANIFEST:
                    raise ValueError("manifest larger than 1 MiB")
                layers = json.loads(path.read_text(encoding="utf-8")).get("layers") or []
                digest = next(
                    str(layer["digest"]) for layer in layers
                    if isinstance(layer, dict) and layer.get("mediaType") == OLLAMA_MODEL_MEDIA
                )
            except StopIteration:
                yield Unlisted(str(path), f"Ollama manifest of {name} has no model layer")
                continue
            except (OSError, ValueError, AttributeError, KeyError, TypeError) as exc:
                yield Unlisted(str(path), f"Ollama manifest of {name} is not readable: {exc}")
                continue
            blob = store / "blobs" / digest.replace(":", "-")
            if not blob.is_file() and (store / "blobs" / digest.replace("-", ":", 1)).is_file():
                blob = store / "blobs" / digest.replace("-", ":", 1)  # not yet renamed by fixBlobs
            if not blob.is_file():
                yield Unlisted(str(blob), f"Ollama model {name}: blob {blob.name} is missing")
                continue
            yield Candidate(str(blob), name, "ollama")


def walk(folder: Path, where: str) -> Iterator[Candidate | Unlisted]:
    """GGUF files (first shards only) and Hugging Face model folders below ``folder``."""
    if folder.is_file():
        yield Candidate(str(folder), None, where)
        return
    if _is_ollama_store(folder):
        yield from ollama_models(folder)
        return
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        here = Path(root)
        # Blob stores hold the same bytes as the snapshots (HF) or are read by manifest (Ollama).
        dirs[:] = [d for d in dirs if d not in ("blobs", ".locks", ".git") and not d.startswith(".")]
        names = set(files)
        if "config.json" in names and names.intersection(_HF_TOKENIZER):
            yield Candidate(str(here), _hf_repo_name(here), where)
        for name in sorted(files):
            if not name.lower().endswith(".gguf") or name.lower().startswith("mmproj"):
                continue  # a multimodal projector is never a draft
            if is_first_shard_or_whole(name):
                path = here / name
                yield Candidate(str(path), _hf_repo_name(path), where)


BESIDE = "beside the target"


@dataclass(frozen=True)
class Place:
    """One place a scan looks: ``where`` ("given", BESIDE, or a store's name) and whether it exists."""

    where: str
    path: str
    exists: bool


def places(dirs: list[str], use_default_dirs: bool = True, env: Mapping[str, str] | None = None,
           beside: str | None = None) -> list[Place]:
    """Where ``discover`` looks, in its order: the folders given, the target's own folder
    (``beside``: where a user keeps the target, the other models usually are too), then the
    default stores; the last two unless told to scan only the given folders."""
    env = os.environ if env is None else env
    roots: list[tuple[str, Path]] = [("given", Path(d)) for d in dirs]
    if use_default_dirs:
        roots += ([(BESIDE, Path(beside))] if beside else []) + default_dirs(env)
    return [Place(where, str(root), root.exists()) for where, root in roots]


def _beside(folder: Path) -> Iterator[Candidate]:
    """The GGUF files in the target's folder itself, not below it: the folder may be a home
    or a downloads folder, whose whole tree is no place to walk unasked."""
    try:
        names = sorted(entry.name for entry in os.scandir(folder) if entry.is_file())
    except OSError:
        return
    for name in names:
        lower = name.lower()
        if lower.endswith(".gguf") and not lower.startswith("mmproj") and is_first_shard_or_whole(name):
            path = folder / name
            yield Candidate(str(path), _hf_repo_name(path), BESIDE)


def discover(
    dirs: list[str], use_default_dirs: bool = True, env: Mapping[str, str] | None = None,
    beside: str | None = None,
) -> Iterator[Candidate | Unlisted]:
    """Candidates in the ``places`` (given folders, the target's folder, the default stores),
    each real path once."""
    seen: set[str] = set()
    for place in places(dirs, use_default_dirs, env, beside):
        root = Path(place.path)
        if not place.exists:
            if place.where == "given":
                yield Unlisted(str(root), "no such file or folder")
            continue
        found = _beside(root) if place.where == BESIDE else walk(root, place.where)
        for item in found:
            if isinstance(item, Candidate):
                key = os.path.realpath(item.location)
                if key in seen:
                    continue
                seen.add(key)
            yield item
