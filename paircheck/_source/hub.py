"""Source: a Hugging Face Hub repo (model folder or GGUF inside it), metadata only.

Accepted forms: ``org/name`` (the HF folder; or its best GGUF when the repo holds only
GGUFs), ``org/name:Q4_K_M`` (quant selector as llama.cpp's ``-hf``), ``org/name/file.gguf``
and ``hf://org/name/file.gguf``; ``@revision`` may follow the repo id.

The local huggingface_hub cache is looked at first, so a repo already downloaded needs
no network. ``HF_HUB_OFFLINE``, ``HF_TOKEN``, ``HF_ENDPOINT`` and ``HF_HUB_CACHE`` /
``HF_HOME`` are read when called (not at import, as huggingface_hub's constants are), so
they apply however paircheck is started. Only the small tokenizer/config files of a repo
are downloaded; a GGUF is read with range requests (``remote.py``), never downloaded.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from paircheck._source.hf_folder import HF_FILES, describe_hf_folder
from paircheck._source.interface import ReadOptions
from paircheck._source.remote import describe_remote_gguf, http_timeout
from paircheck.errors import InputError
from paircheck.model import ModelDescription

DEFAULT_ENDPOINT = "https://huggingface.co"
_REPO = r"[A-Za-z0-9][\w.-]*/[\w.-]+"
_SPEC = re.compile(rf"^(?:hf://)?(?P<repo>{_REPO})(?:@(?P<rev>[\w./-]+?))?(?::(?P<tag>[\w.-]+)|/(?P<file>.+\.gguf))?$", re.I)
_SPLIT = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$")
# llama.cpp's gguf_filename_is_model: sidecars that are not the model itself.
_NOT_MODEL = ("mmproj", "imatrix", "mtp-", "eagle3-", "dflash-", "dspark-")


@dataclass(frozen=True)
class HubRef:
    repo_id: str
    revision: str = "main"
    tag: str | None = None
    filename: str | None = None


def parse_hub_spec(spec: str) -> HubRef | None:
    """A Hub reference, or None when ``spec`` does not look like one."""
    if spec.startswith(("/", ".", "~")) or "\\" in spec:
        return None
    match = _SPEC.match(spec)
    if not match:
        return None
    return HubRef(match["repo"], match["rev"] or "main", match["tag"], match["file"])


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class HubSettings:
    endpoint: str
    token: str | None
    offline: bool
    cache_dir: Path

    @classmethod
    def from_env(cls) -> HubSettings:
        home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
        cache = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE") or os.path.join(home, "hub")
        token = os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")
        if not token:
            token_file = Path(home) / "token"
            token = token_file.read_text().strip() if token_file.is_file() else None
        return cls(
            endpoint=(os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/"),
            token=token or None,
            offline=_env_true("HF_HUB_OFFLINE") or _env_true("TRANSFORMERS_OFFLINE"),
            cache_dir=Path(cache),
        )


def _snapshot(settings: HubSettings, ref: HubRef) -> Path | None:
    """The cached snapshot folder of ``ref`` as huggingface_hub lays it out, if any."""
    repo_dir = settings.cache_dir / ("models--" + ref.repo_id.replace("/", "--"))
    ref_file = repo_dir / "refs" / ref.revision
    commit = ref_file.read_text().strip() if ref_file.is_file() else ref.revision
    snap = repo_dir / "snapshots" / commit
    return snap if snap.is_dir() else None


def _cached_files(snap: Path) -> list[str]:
    return sorted(str(p.relative_to(snap)).replace(os.sep, "/") for p in snap.rglob("*") if p.is_file() or p.is_symlink())


def _is_model_gguf(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".gguf") and not any(part in name for part in _NOT_MODEL)


def _first_shard_ok(path: str) -> bool:
    split = _SPLIT.search(path)
    return split is None or split.group(1) == "00001"


def choose_gguf(files: list[str], tag: str | None) -> str | None:
    """llama.cpp's find_best_model: the tag (default Q4_K_M, then Q8_0) followed by . or -."""
    for wanted in [tag] if tag else ["Q4_K_M", "Q8_0"]:
        pattern = re.compile(re.escape(wanted) + r"[.-]", re.I)
        for path in files:
            if _is_model_gguf(path) and pattern.search(path) and _first_shard_ok(path):
                return path
    if not tag:
        return next((p for p in files if _is_model_gguf(p) and _first_shard_ok(p)), None)
    return None


def _hub_error(location: str, exc: Exception, settings: HubSettings) -> InputError:
    from huggingface_hub import errors

    if isinstance(exc, errors.GatedRepoError) or getattr(getattr(exc, "response", None), "status_code", None) in (401, 403):
        return InputError(
            location,
            "access denied: the repository is gated or private; accept its terms on the Hub, "
            "then log in (`hf auth login`) or set HF_TOKEN",
        )
    if isinstance(exc, errors.RepositoryNotFoundError):
        return InputError(location, "no such repository on the Hub (or it is private: log in or set HF_TOKEN)")
    if isinstance(exc, errors.RevisionNotFoundError):
        return InputError(location, "no such revision in this repository")
    if isinstance(exc, errors.EntryNotFoundError):
        return InputError(location, "file not found in this repository")
    if isinstance(exc, errors.LocalEntryNotFoundError) or isinstance(exc, errors.OfflineModeIsEnabled):
        return InputError(location, "not in the local Hugging Face cache and offline (HF_HUB_OFFLINE is set or the Hub is unreachable)")
    if isinstance(exc, errors.HfHubHTTPError):
        return InputError(location, f"the Hub at {settings.endpoint} answered: {str(exc).splitlines()[0]}")
    return InputError(location, f"cannot reach the Hub at {settings.endpoint}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": "))


def _list_files(ref: HubRef, settings: HubSettings, location: str) -> list[str]:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=settings.endpoint, token=settings.token)
    try:
        return list(api.list_repo_files(ref.repo_id, revision=ref.revision))
    except Exception as exc:
        raise _hub_error(location, exc, settings) from None


def describe_hub(spec: str, ref: HubRef, options: ReadOptions) -> ModelDescription:
    settings = HubSettings.from_env()
    snap = _snapshot(settings, ref)
    cached = _cached_files(snap) if snap is not None else []
    wants_gguf = ref.filename is not None or ref.tag is not None

    # Cache first: a repo (or the chosen GGUF) already downloaded needs no network.
    if snap is not None:
        if wants_gguf or not any(f in cached for f in ("tokenizer.json", "tokenizer.model")):
            chosen = ref.filename if ref.filename in cached else choose_gguf(cached, ref.tag) if not ref.filename else None
            if chosen is not None:
                return _local_gguf(snap / chosen, spec, ref, options)
        elif any(f in cached for f in ("tokenizer.json", "tokenizer.model")):
            return describe_hf_folder(snap, spec, "hub", options.overrides, repo_id=ref.repo_id)
    if settings.offline:
        raise InputError(spec, "not in the local Hugging Face cache, and HF_HUB_OFFLINE is set")

    files = _list_files(ref, settings, spec)
    ggufs = [f for f in files if _is_model_gguf(f)]
    has_tokenizer = any(f in files for f in ("tokenizer.json", "tokenizer.model"))
    if wants_gguf or (ggufs and not has_tokenizer):
        chosen = ref.filename if ref.filename else choose_gguf(files, ref.tag)
        if chosen is None or chosen not in files:
            listing = ", ".join(ggufs[:6]) or "none"
            what = f"file {ref.filename}" if ref.filename else f"GGUF for {ref.tag or 'Q4_K_M/Q8_0'}"
            raise InputError(spec, f"no {what} in {ref.repo_id} (GGUF files: {listing})")
        return _remote_gguf(chosen, spec, ref, settings, options)
    if not has_tokenizer:
        raise InputError(spec, f"{ref.repo_id} has neither GGUF files nor tokenizer.json/tokenizer.model")
    return _download_folder(files, spec, ref, settings, options)


def _local_gguf(path: Path, spec: str, ref: HubRef, options: ReadOptions) -> ModelDescription:
    """A GGUF already in the Hub cache: read exactly as the same file given by path."""
    from paircheck._source.gguf_file import describe_gguf_file

    desc = describe_gguf_file(str(path), options, source_kind="hub")
    desc.location = spec
    desc.hub_file = (ref.repo_id, ref.filename or path.name)  # for the re-download fix of a cut file
    return desc


def _remote_gguf(
    filename: str,
    spec: str,
    ref: HubRef,
    settings: HubSettings,
    options: ReadOptions,
) -> ModelDescription:
    from huggingface_hub import hf_hub_url

    url = hf_hub_url(ref.repo_id, filename, revision=ref.revision, endpoint=settings.endpoint)
    headers = {"Authorization": f"Bearer {settings.token}"} if settings.token else {}
    desc = describe_remote_gguf(url, spec, options, "hub", headers, hub=True)
    desc.notes.append(f"read {filename} from {ref.repo_id} (metadata only)")
    desc.hub_file = (ref.repo_id, filename)
    return desc


def _download_folder(
    files: list[str], spec: str, ref: HubRef, settings: HubSettings, options: ReadOptions
) -> ModelDescription:
    from huggingface_hub import hf_hub_download

    folder: Path | None = None
    for name in HF_FILES:
        if name not in files:
            continue
        try:
            local = hf_hub_download(
                ref.repo_id,
                name,
                revision=ref.revision,
                endpoint=settings.endpoint,
                token=settings.token,
                cache_dir=settings.cache_dir,
                etag_timeout=http_timeout(),
            )
        except Exception as exc:
            raise _hub_error(spec, exc, settings) from None
        folder = Path(local).parent
    assert folder is not None
    return describe_hf_folder(folder, spec, "hub", options.overrides, repo_id=ref.repo_id)


class HubSource:
    """A Hugging Face Hub reference: ``org/name``, ``org/name:Q4_K_M``, ``org/name/file.gguf``."""

    name = "hub"

    def claims(self, spec: str) -> bool:
        ref = parse_hub_spec(spec)
        return ref is not None and (ref.filename is not None or not spec.lower().endswith(".gguf"))

    def describe(self, spec: str, options: ReadOptions) -> ModelDescription:
        ref = parse_hub_spec(spec)
        if ref is None:
            raise InputError(spec, "not a Hugging Face repo id")
        return describe_hub(spec, ref, options)
