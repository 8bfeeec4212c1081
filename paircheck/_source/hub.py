"""Source: a Hugging Face Hub repo (model folder or GGUF inside it), metadata only.

Accepted forms: ``org/name`` (the HF folder; or its best GGUF when the repo holds only
GGUFs), ``org/name:Q4_K_M`` (quant selector as llama.cpp's ``-hf``), ``org/name/file.gguf``
and ``hf://org/name/file.gguf``; ``@revision`` may follow the repo id.

The local huggingface_hub cache is looked at first, so a repo already downloaded needs
no network. ``HF_HUB_OFFLINE``, ``HF_TOKEN``, ``HF_ENDPOINT`` and ``HF_HUB_CACHE`` /
``HF_HOME`` are read when called (not at import, as huggingface_hub's constants are), so
they apply however paircheck is started. Only the small tokenizer/config files of a repo
are downloaded; a GGUF is read with range requests (``remote.py``), never downloaded.

The Hub's HTTP API is called with ``http_client.HttpClient``, not huggingface_hub's client:
that one retries connection errors five times with backoff and logs each retry on
stderr (about 30 s and 11 lines on a machine without network), and its timeouts are
process-wide constants read at import. Ours fails at once on name resolution and
connection errors, retries only what retrying can fix, bounds every wait by
``PAIRCHECK_HTTP_TIMEOUT`` and prints nothing but the final error line. Downloaded files
are stored in the huggingface_hub cache layout (``snapshots/<commit>/<file>`` and
``refs/<revision>``), written atomically, so the next run needs no network.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

from paircheck._source.gguf_file import describe_gguf_file, local_gguf_tensors
from paircheck._source.hf_folder import HF_FILES, describe_hf_folder
from paircheck._source.hf_tensors import folder_tensors, tensor_infos
from paircheck._source.http_client import HttpClient, _Response, http_timeout, status_error
from paircheck._source.hub_settings import HubSettings
from paircheck._source.interface import ReadOptions
from paircheck._source.quant_name import selector_tags
from paircheck._source.remote import describe_remote_gguf, remote_gguf_tensors
from paircheck._source.safetensors_header import INDEX_NAME, check_hub_files, folder_files, hub_headers
from paircheck._source.split_name import is_first_or_whole
from paircheck.errors import InputError
from paircheck.model import Download, LocalCopy, ModelDescription, TensorInfo, TensorSectionError

_REPO = r"[A-Za-z0-9][\w.-]*/[\w.-]+"
_SPEC = re.compile(
    rf"^(?:hf://)?(?P<repo>{_REPO})(?:@(?P<rev>[\w./-]+?))?(?::(?P<tag>[\w.-]+)|/(?P<file>.+\.gguf))?$", re.I
)
# llama.cpp's gguf_filename_is_model: sidecars that are not the model itself.
_NOT_MODEL = ("mmproj", "imatrix", "mtp-", "eagle3-", "dflash-", "dspark-")
# The Hub's model info for a repo with many files is a few MB; config and tokenizer files
# are at most tens of MB (a 262k-token tokenizer.json is about 33 MB).
MAX_API_BYTES = 64 << 20
MAX_FILE_BYTES = 256 << 20
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


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


def _snapshot(settings: HubSettings, ref: HubRef) -> Path | None:
    """The cached snapshot folder of ``ref`` as huggingface_hub lays it out, if any."""
    repo_dir = settings.cache_dir / ("models--" + ref.repo_id.replace("/", "--"))
    ref_file = repo_dir / "refs" / ref.revision
    commit = ref_file.read_text().strip() if ref_file.is_file() else ref.revision
    snap = repo_dir / "snapshots" / commit
    return snap if snap.is_dir() else None


def _cached_files(snap: Path) -> list[str]:
    files = (p for p in snap.rglob("*") if p.is_file() or p.is_symlink())
    return sorted(str(p.relative_to(snap)).replace(os.sep, "/") for p in files)


def _is_model_gguf(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".gguf") and not any(part in name for part in _NOT_MODEL)


def choose_gguf(files: list[str], tag: str | None) -> str | None:
    """llama.cpp's find_best_model: the tag (default Q4_K_M, then Q8_0) followed by . or -."""
    for wanted in [tag] if tag else ["Q4_K_M", "Q8_0"]:
        pattern = re.compile(re.escape(wanted) + r"[.-]", re.I)
        for path in files:
            if _is_model_gguf(path) and pattern.search(path) and is_first_or_whole(path):
                return path
    if not tag:
        return next((p for p in files if _is_model_gguf(p) and is_first_or_whole(p)), None)
    return None


def _client(settings: HubSettings, location: str, on_request: Callable[[], None] | None = None) -> HttpClient:
    headers = {"Authorization": f"Bearer {settings.token}"} if settings.token else {}
    return HttpClient(location, headers, http_timeout(), on_request=on_request)


def _hub_status_error(location: str, resp: _Response, settings: HubSettings) -> InputError:
    """The Hub's answer as one line; ``X-Error-Code`` tells the Hub's cases apart."""
    code = resp.headers.get("X-Error-Code", "")
    if code == "RepoNotFound" or (resp.status == 404 and not code):
        return InputError(location, "no such repository on the Hub (or it is private: log in or set HF_TOKEN)")
    if code == "RevisionNotFound":
        return InputError(location, "no such revision in this repository")
    if code == "EntryNotFound":
        return InputError(location, "file not found in this repository")
    if resp.status in (401, 403):
        return status_error(location, resp.status, "", hub=True)
    answer = f"HTTP {resp.status} {resp.body.reason}".rstrip()
    return InputError(location, f"the Hub at {settings.endpoint} answered {answer}")


def _read_limited(client: HttpClient, resp: _Response, limit: int, what: str) -> bytes:
    length = resp.headers.get("Content-Length")
    if length and length.isdigit() and int(length) > limit:
        resp.body.close()
        raise InputError(client.location, f"{what} is {int(length):,} bytes, more than the {limit:,} paircheck reads")
    parts: list[bytes] = []
    have = 0
    try:
        while True:
            sock = resp.conn.sock
            if sock is not None:
                sock.settimeout(client.wait_budget())
            piece = resp.body.read1(1 << 20)
            if not piece:
                if resp.body.length:
                    raise InputError(client.location, f"the connection closed in the middle of {what} (truncated)")
                break
            have += len(piece)
            if have > limit:
                resp.body.close()
                raise InputError(client.location, f"{what} is more than the {limit:,} bytes paircheck reads")
            parts.append(piece)
        resp.body.read()  # marks the answer complete so the connection is reused
    except TimeoutError:
        client.wait_budget()
        wait = f"{client.timeout:g}"
        raise InputError(client.location, f"the Hub stalled for {wait} s while sending {what} (timeout)") from None
    except OSError as exc:
        raise InputError(client.location, f"connection error while reading {what}: {exc.strerror or exc}") from None
    return b"".join(parts)


# A repo's file names, commit and file sizes (None when the listing gives none).
HubListing = tuple[list[str], str | None, dict[str, int | None]]


def _repo_info(client: HttpClient, ref: HubRef, settings: HubSettings, location: str) -> HubListing:
    """The repo's file names, commit and file sizes, from the Hub's model info API
    (``blobs=true``, as huggingface_hub's ``model_info(files_metadata=True)``, adds sizes)."""
    url = f"{settings.endpoint}/api/models/{ref.repo_id}/revision/{quote(ref.revision, safe='')}?blobs=true"
    resp = client.get(url, {"Accept": "application/json"})
    if resp.status != 200:
        client._drain(resp.body)
        raise _hub_status_error(location, resp, settings)
    raw = _read_limited(client, resp, MAX_API_BYTES, "the Hub's file list")
    try:
        info: Any = json.loads(raw)
    except ValueError:
        raise InputError(
            location,
            f"the Hub at {settings.endpoint} answered with something that is not JSON "
            "(a proxy or captive portal page? check HF_ENDPOINT)",
        ) from None
    siblings = info.get("siblings") if isinstance(info, dict) else None
    if not isinstance(siblings, list):
        raise InputError(location, f"the Hub at {settings.endpoint} answered without a file list (check HF_ENDPOINT)")
    files: list[str] = []
    sizes: dict[str, int | None] = {}
    for s in siblings:
        if isinstance(s, dict) and isinstance(s.get("rfilename"), str):
            files.append(s["rfilename"])
            size = s.get("size")
            sizes[s["rfilename"]] = size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None
    sha = info.get("sha")
    return files, sha if isinstance(sha, str) and _COMMIT.match(sha) else None, sizes


def _list_files(
    ref: HubRef, settings: HubSettings, location: str, on_request: Callable[[], None] | None = None
) -> HubListing:
    client = _client(settings, location, on_request)
    try:
        return _repo_info(client, ref, settings, location)
    finally:
        client.close()


def describe_hub(
    spec: str, ref: HubRef, options: ReadOptions, listing: HubListing | None = None
) -> ModelDescription:
    """Describe a Hub repo or a GGUF in it. ``listing``: the repo's files as the caller already
    has them (a scan's Hub search), so they are not asked for again."""
    settings = HubSettings.from_env()
    snap = _snapshot(settings, ref)
    cached = _cached_files(snap) if snap is not None else []
    wants_gguf = ref.filename is not None or ref.tag is not None

    # Cache first: a repo (or the chosen GGUF) already downloaded needs no network.
    if snap is not None:
        if wants_gguf or not any(f in cached for f in ("tokenizer.json", "tokenizer.model")):
            if ref.filename:
                chosen = ref.filename if ref.filename in cached else None
            else:
                chosen = choose_gguf(cached, ref.tag)
            if chosen is not None:
                return _local_gguf(snap / chosen, spec, ref, options, cached)
        elif any(f in cached for f in ("tokenizer.json", "tokenizer.model")):
            return describe_hf_folder(snap, spec, "hub", options.overrides, repo_id=ref.repo_id)
    if settings.offline:
        raise InputError(spec, "not in the local Hugging Face cache, and HF_HUB_OFFLINE is set")

    files, commit, sizes = listing if listing is not None else _list_files(ref, settings, spec, options.on_request)
    ggufs = [f for f in files if _is_model_gguf(f)]
    has_tokenizer = any(f in files for f in ("tokenizer.json", "tokenizer.model"))
    if wants_gguf or (ggufs and not has_tokenizer):
        chosen = ref.filename if ref.filename else choose_gguf(files, ref.tag)
        if chosen is None or chosen not in files:
            names = ", ".join(ggufs[:6]) or "none"
            what = f"file {ref.filename}" if ref.filename else f"GGUF for {ref.tag or 'Q4_K_M/Q8_0'}"
            raise InputError(spec, f"no {what} in {ref.repo_id} (GGUF files: {names})")
        return _remote_gguf(chosen, spec, ref, settings, options, files)
    if not has_tokenizer:
        raise InputError(spec, f"{ref.repo_id} has neither GGUF files nor tokenizer.json/tokenizer.model")
    return _download_folder(files, commit, spec, ref, settings, options, sizes)


def _local_gguf(path: Path, spec: str, ref: HubRef, options: ReadOptions, files: list[str]) -> ModelDescription:
    """A GGUF already in the Hub cache: read exactly as the same file given by path."""
    desc = describe_gguf_file(str(path), options, source_kind="hub")
    desc.location = spec
    # Named as the user named it; a cut copy in the cache is replaced by downloading it anew.
    name = ref.filename or path.name
    again = f"huggingface-cli download {ref.repo_id} {name} --force-download"
    desc.origin = replace(desc.origin, command_name=spec, download=Download((again,), resumes=False),
                          hub_file=(ref.repo_id, name), hf_ref=hf_ref(ref, name, files))
    return desc


def hf_ref(ref: HubRef, chosen: str, files: list[str]) -> str | None:
    """The chosen GGUF as llama-server's -hf / -hfd name it: ``org/name`` or ``org/name:TAG``,
    whichever picks exactly that file among ``files`` by llama.cpp's own choice
    (:func:`choose_gguf`); None when none does, or for a revision other than main (-hf
    always reads main)."""
    if ref.revision != "main":
        return None
    tags = [ref.tag] if ref.tag else [None, *selector_tags(chosen)]
    for tag in tags:
        if choose_gguf(files, tag) == chosen:
            return f"{ref.repo_id}:{tag}" if tag else ref.repo_id
    return None


def _remote_gguf(
    filename: str,
    spec: str,
    ref: HubRef,
    settings: HubSettings,
    options: ReadOptions,
    files: list[str],
) -> ModelDescription:
    from huggingface_hub import hf_hub_url

    url = hf_hub_url(ref.repo_id, filename, revision=ref.revision, endpoint=settings.endpoint)
    headers = {"Authorization": f"Bearer {settings.token}"} if settings.token else {}
    desc = describe_remote_gguf(url, spec, options, "hub", headers, hub=True)
    desc.notes.append(f"read {filename} from {ref.repo_id} (metadata only)")
    named = hf_ref(ref, filename, files)
    # Without a -hf name (another revision), llama-server opens the file once downloaded.
    copy = None if named else LocalCopy(
        "llama-server's -hfd reads only a repo's main revision; download the draft first",
        (f"hf download {ref.repo_id} {shlex.quote(filename)} --revision {shlex.quote(ref.revision)} --local-dir .",),
        filename)
    desc.origin = replace(desc.origin, hub_file=(ref.repo_id, filename), hf_ref=named, model_url=url,
                          local_copy=copy)
    return desc


def _download_folder(
    files: list[str],
    commit: str | None,
    spec: str,
    ref: HubRef,
    settings: HubSettings,
    options: ReadOptions,
    sizes: dict[str, int | None] | None = None,
) -> ModelDescription:
    from huggingface_hub import hf_hub_url

    wanted = [name for name in HF_FILES if name in files]
    weights = None
    client = _client(settings, spec, options.on_request)
    fetched: dict[str, bytes] = {}
    try:
        for name in wanted:
            url = hf_hub_url(ref.repo_id, name, revision=ref.revision, endpoint=settings.endpoint)
            resp = client.get(url)
            if resp.status != 200:
                client._drain(resp.body)
                raise _hub_status_error(spec, resp, settings)
            commit = commit or _commit_header(resp)
            fetched[name] = _read_limited(client, resp, MAX_FILE_BYTES, name)
        weights = _check_weights(client, files, sizes or {}, spec, ref, settings)
    finally:
        client.close()
    folder = _store(settings, ref, commit, fetched)
    desc = describe_hf_folder(folder, spec, "hub", options.overrides, repo_id=ref.repo_id)
    if weights is not None and desc.metadata.tensor_error is None:
        desc.metadata.tensor_error = weights
    return desc


def _url_maker(ref: HubRef, settings: HubSettings) -> Callable[[str], str]:
    from huggingface_hub import hf_hub_url

    def url_of(name: str) -> str:
        return hf_hub_url(ref.repo_id, name, revision=ref.revision, endpoint=settings.endpoint)

    return url_of


def _index(client: HttpClient, files: list[str], url_of: Callable[[str], str], spec: str,
           settings: HubSettings) -> bytes | None:
    """The repo's ``model.safetensors.index.json``, when it has one."""
    if INDEX_NAME not in files:
        return None
    resp = client.get(url_of(INDEX_NAME))
    if resp.status != 200:
        client._drain(resp.body)
        raise _hub_status_error(spec, resp, settings)
    return _read_limited(client, resp, MAX_FILE_BYTES, INDEX_NAME)


def _check_weights(
    client: HttpClient, files: list[str], sizes: dict[str, int | None], spec: str, ref: HubRef, settings: HubSettings
) -> TensorSectionError | None:
    """The repo's safetensors headers against the sizes the Hub lists (range reads only)."""
    if not any(f.endswith(".safetensors") for f in files):
        return None
    url_of = _url_maker(ref, settings)
    index = _index(client, files, url_of, spec, settings)
    return check_hub_files(client, url_of, sizes, index, ref.repo_id, spec)


def hub_folder_tensors(desc: ModelDescription, settings: HubSettings) -> list[TensorInfo]:
    """Every tensor of a Hub repo read as a Hugging Face folder: from the safetensors
    files in the local cache when they were downloaded, else from their headers on the Hub
    (range requests of the 8-byte length and the header; never the weights)."""
    if desc.resolved_path and folder_files(Path(desc.resolved_path)):
        return folder_tensors(Path(desc.resolved_path), desc.location)
    spec = desc.location
    ref = parse_hub_spec(spec)
    if ref is None:  # pragma: no cover - the description came from this source
        raise InputError(spec, "not a Hugging Face repo id")
    if settings.offline:
        raise InputError(spec, "the weights are not in the local Hugging Face cache, and HF_HUB_OFFLINE is set")
    files, _, sizes = _list_files(ref, settings, spec)
    url_of = _url_maker(ref, settings)
    client = _client(settings, spec)
    try:
        checks = hub_headers(client, url_of, sizes, _index(client, files, url_of, spec, settings), spec)
    finally:
        client.close()
    if not checks:
        raise InputError(spec, f"{ref.repo_id} has no *.safetensors files: cannot size the weights")
    return [info for check in checks for info in tensor_infos(check.entries, check.file)]


def _commit_header(resp: _Response) -> str | None:
    value = resp.headers.get("X-Repo-Commit", "")
    return value if _COMMIT.match(value) else None


def _store(settings: HubSettings, ref: HubRef, commit: str | None, fetched: dict[str, bytes]) -> Path:
    """Write the files where huggingface_hub would find them (``snapshots/<commit>/``,
    ``refs/<revision>``), each atomically; a private temp folder when the cache is not
    writable or the commit is unknown."""
    if commit is not None:
        repo_dir = settings.cache_dir / ("models--" + ref.repo_id.replace("/", "--"))
        snap = repo_dir / "snapshots" / commit
        try:
            snap.mkdir(parents=True, exist_ok=True)
            for name, data in fetched.items():
                _atomic_write(snap / name, data)
            if ref.revision != commit:
                (repo_dir / "refs").mkdir(exist_ok=True)
                _atomic_write(repo_dir / "refs" / ref.revision, commit.encode())
            return snap
        except OSError:
            pass  # a read-only cache: use a temp folder below
    folder = Path(tempfile.mkdtemp(prefix="paircheck-hub-"))
    for name, data in fetched.items():
        (folder / name).write_bytes(data)
    return folder


def _atomic_write(path: Path, data: bytes) -> None:
    """Write beside ``path`` then rename: an interrupted run leaves the old file whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


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

    def tensors(self, desc: ModelDescription) -> list[TensorInfo]:
        """What the reference led to: a GGUF in the cache or on the Hub, or a folder."""
        settings = HubSettings.from_env()
        if desc.origin.form == "hf-folder":
            return hub_folder_tensors(desc, settings)
        if desc.origin.remote:
            return remote_gguf_tensors(desc, settings.headers_for(desc.resolved_path or ""))
        return local_gguf_tensors(desc)
