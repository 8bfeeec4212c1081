"""Build llama.cpp's own ``llama-server``, ``llama-fit-params``, ``llama-quantize`` and
``llama-speculative-simple`` for the tests.

Why: ``paircheck bench`` is tested against a real llama-server and ``paircheck fit``
against llama.cpp's own memory projection, both from the pinned llama.cpp that the
differential tests use (vendored in the llama-cpp-python 0.3.36 sdist on PyPI, see
``corpus.py``).  The build takes several CPU-minutes, so it is done once and cached
beside the test corpus (``<cache_root>/llamacpp-build-0.3.36/bin``).

Prerequisites: cmake (>= 3.14) and a C++17 compiler.  Run ``python tests/llamacpp_build.py``
to build ahead of the tests; ``$PAIRCHECK_LLAMACPP_BIN`` may name a folder that already
holds these binaries built from the same version.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

import corpus as _corpus

BUILD_SUBDIR = f"llamacpp-build-{_corpus.SDIST_VERSION}"
# llama-quantize makes the probe's real drafts (requantized copies of one model);
# llama-speculative-simple is the pair check as the pinned binary runs it.
TOOLS = ("llama-server", "llama-fit-params", "llama-quantize", "llama-speculative-simple")
_ENV_BIN = "PAIRCHECK_LLAMACPP_BIN"
_BUILD_TIMEOUT_S = 3600


class BuildError(RuntimeError):
    """The llama.cpp tools could not be built."""


def _extract_source(sdist: Path, dest: Path, sha256: str = _corpus.SDIST_SHA256) -> Path:
    """Extract ``vendor/llama.cpp`` from the verified sdist into ``dest``; return its root."""
    actual = _corpus.sha256_file(sdist)
    if actual != sha256:
        raise BuildError(f"{sdist}: sha256 {actual} does not match the pinned {sha256}")
    root = dest / "llama.cpp"
    with tarfile.open(sdist, mode="r:*") as tar:
        for member in tar:
            parts = PurePosixPath(member.name).parts
            if len(parts) < 4 or tuple(parts[1:3]) != ("vendor", "llama.cpp"):
                continue
            if ".." in parts or not (member.isreg() or member.isdir()):
                continue  # no links or devices: the tree is built from names we check
            target = root.joinpath(*parts[3:])
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            src = tar.extractfile(member)
            if src is None:
                continue
            with src, target.open("wb") as out:
                shutil.copyfileobj(src, out)
            os.chmod(target, 0o755 if member.mode & 0o111 else 0o644)
    if not (root / "CMakeLists.txt").is_file():
        raise BuildError(f"{sdist} has no vendor/llama.cpp/CMakeLists.txt")
    return root


def _sdist_path(workdir: Path) -> Path:
    local = os.environ.get("PAIRCHECK_SDIST")
    if local:
        return Path(local).expanduser()
    return _corpus._download_sdist(workdir)


SOURCE_SUBDIR = f"llamacpp-src-{_corpus.SDIST_VERSION}"


def source_root() -> Path:
    """The pinned llama.cpp tree (``vendor/llama.cpp`` of the verified sdist), extracted once
    into ``<cache_root>/llamacpp-src-0.3.36/llama.cpp``: the converter differential test runs
    its ``convert_hf_to_gguf.py`` and ``gguf-py`` from there. The folder appears by one rename,
    so a present folder is a complete one."""
    parent = _corpus.cache_root() / SOURCE_SUBDIR
    root = parent / "llama.cpp"
    if root.is_dir():
        return root
    parent.mkdir(parents=True, exist_ok=True)
    with _corpus._locked(parent.parent / f".{parent.name}.lock"):
        if root.is_dir():  # another worker extracted it meanwhile
            return root
        with tempfile.TemporaryDirectory(prefix="paircheck-llamacpp-src-", dir=parent) as work:
            workdir = Path(work)
            os.replace(_extract_source(_sdist_path(workdir), workdir), root)
    return root


def _run(cmd: list[str], log: Path) -> None:
    with log.open("ab") as fh:
        fh.write(("\n$ " + " ".join(cmd) + "\n").encode())
        fh.flush()
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, timeout=_BUILD_TIMEOUT_S, check=False)
    if proc.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
        raise BuildError(f"{' '.join(cmd)} failed (exit {proc.returncode}); log {log}\n{tail}")


def _have_tools(bin_dir: Path) -> bool:
    return all(os.access(bin_dir / name, os.X_OK) for name in TOOLS)


def build_dir() -> Path:
    return _corpus.cache_root() / BUILD_SUBDIR


def ensure_tools() -> dict[str, Path]:
    """Return ``{tool name: path}``, building llama.cpp once if the cache lacks them."""
    override = os.environ.get(_ENV_BIN)
    if override and _have_tools(Path(override)):
        return {name: Path(override) / name for name in TOOLS}
    root = build_dir()
    bin_dir = root / "bin"
    if _have_tools(bin_dir):
        return {name: bin_dir / name for name in TOOLS}
    if shutil.which("cmake") is None:
        raise BuildError("cmake is needed to build llama.cpp's llama-server (apt-get install cmake g++)")
    root.mkdir(parents=True, exist_ok=True)
    with _corpus._locked(root.parent / f".{root.name}.lock"):
        if _have_tools(bin_dir):  # another worker built it meanwhile
            return {name: bin_dir / name for name in TOOLS}
        with tempfile.TemporaryDirectory(prefix="paircheck-llamacpp-", dir=root) as work:
            workdir = Path(work)
            src = _extract_source(_sdist_path(workdir), workdir)
            build = workdir / "build"
            log = root / "build.log"
            log.write_text("")
            # Static libraries so the two binaries can be moved into the cache alone;
            # no OpenSSL, no tests, no web UI: only what the tests run.
            _run([
                "cmake", "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=ON",
                "-DLLAMA_OPENSSL=OFF", "-DLLAMA_BUILD_UI=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF",
                "-DGGML_NATIVE=ON",
            ], log)
            jobs = str(max(1, os.cpu_count() or 1))
            _run(["cmake", "--build", str(build), "--config", "Release", "-j", jobs,
                  "--target", *TOOLS], log)
            staged = root / "bin.part"
            shutil.rmtree(staged, ignore_errors=True)
            staged.mkdir()
            for name in TOOLS:
                shutil.copy2(build / "bin" / name, staged / name)
            shutil.rmtree(bin_dir, ignore_errors=True)
            os.replace(staged, bin_dir)
    return {name: bin_dir / name for name in TOOLS}


# A second real llama.cpp, of another release, for the tests that compare a launch line with
# the --help of the binary that will run it (tests/preflight/test_build_help.py): the
# llama.cpp vendored in llama-cpp-python 0.3.16 (August 2025) still has --draft-max where the
# pinned one has --spec-draft-n-max. Only its llama-server is built (about 12 CPU-minutes).
OTHER_VERSION = "0.3.16"
OTHER_SHA256 = "34ed0f9bd9431af045bb63d9324ae620ad0536653740e9bb163a2e1fcb973be6"
OTHER_SUBDIR = f"llamacpp-build-{OTHER_VERSION}"
REQUIRE_OTHER = "PAIRCHECK_REQUIRE_OTHER_LLAMACPP"


def other_server_path() -> Path:
    return _corpus.cache_root() / OTHER_SUBDIR / "bin" / "llama-server"


def ensure_other_server() -> Path:
    """The llama-server of llama-cpp-python OTHER_VERSION's llama.cpp, built once into the cache."""
    target = other_server_path()
    if os.access(target, os.X_OK):
        return target
    if shutil.which("cmake") is None:
        raise BuildError("cmake is needed to build llama.cpp's llama-server (apt-get install cmake g++)")
    root = target.parent.parent
    root.mkdir(parents=True, exist_ok=True)
    with _corpus._locked(root.parent / f".{root.name}.lock"):
        if os.access(target, os.X_OK):
            return target
        with tempfile.TemporaryDirectory(prefix="paircheck-llamacpp-", dir=root) as work:
            workdir = Path(work)
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                   "--disable-pip-version-check", f"llama-cpp-python=={OTHER_VERSION}", "-d", str(workdir)]
            log = root / "build.log"
            log.write_text("")
            _run(cmd, log)
            src = _extract_source(workdir / f"llama_cpp_python-{OTHER_VERSION}.tar.gz", workdir, OTHER_SHA256)
            build = workdir / "build"
            # That release still defaults LLAMA_CURL to ON: off, as nothing here downloads.
            _run(["cmake", "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                  "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_CURL=OFF",
                  "-DLLAMA_OPENSSL=OFF", "-DGGML_NATIVE=ON"], log)
            jobs = str(max(1, os.cpu_count() or 1))
            _run(["cmake", "--build", str(build), "--config", "Release", "-j", jobs, "--target", "llama-server"], log)
            staged = root / "bin.part"
            shutil.rmtree(staged, ignore_errors=True)
            staged.mkdir()
            shutil.copy2(build / "bin" / "llama-server", staged / "llama-server")
            shutil.rmtree(target.parent, ignore_errors=True)
            os.replace(staged, target.parent)
    return target


if __name__ == "__main__":
    try:
        if "--other" in sys.argv[1:]:
            print(f"llama-server ({OTHER_VERSION}): {ensure_other_server()}")
            sys.exit(0)
        for tool, path in ensure_tools().items():
            print(f"{tool}: {path}")
    except (BuildError, _corpus.CorpusError, subprocess.TimeoutExpired) as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
