"""Build the pinned llama.cpp once for the tests: its tools and its loader, in one build.

Why: ``paircheck bench`` is tested against a real llama-server and ``paircheck fit``
against llama.cpp's own memory projection, and the differential tests compare paircheck's
rules with llama.cpp's own loader (``libllama``, driven through llama-cpp-python's ctypes
bindings, ``tests/oracle.py``). All come from the pinned llama.cpp, vendored in the
llama-cpp-python 0.3.36 sdist on PyPI (``corpus.py``), and all are built by one cmake run
with shared libraries: ``llama-server``, ``llama-fit-params``, ``llama-quantize``,
``llama-speculative-simple`` and the ``libllama``/``libggml*`` they link, side by side in
``<cache_root>/llamacpp-build-0.3.36-shared/bin`` (an ``$ORIGIN`` rpath, so the folder can
move), with the sdist's own Python bindings (``llama_cpp/``) beside them. Compiling
llama-cpp-python as a wheel built the same library a second time (about 5 minutes here).

Prerequisites: cmake (>= 3.14) and a C++17 compiler.  Run ``python tests/llamacpp_build.py``
to build ahead of the tests; ``$PAIRCHECK_LLAMACPP_BIN`` may name a folder that already
holds these binaries built from the same version.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

import corpus as _corpus

BUILD_SUBDIR = f"llamacpp-build-{_corpus.SDIST_VERSION}-shared"
# llama-quantize makes the probe's real drafts (requantized copies of one model);
# llama-speculative-simple is the pair check as the pinned binary runs it.
TOOLS = ("llama-server", "llama-fit-params", "llama-quantize", "llama-speculative-simple")
# The loader the oracle loads (libllama links the libggml* beside it).
LIBRARY = "libllama.so"
_ENV_BIN = "PAIRCHECK_LLAMACPP_BIN"
# Set by tests/conftest.py for a run that deselects the slow tier.
FAST_TIER = "PAIRCHECK_FAST_TIER"
_BUILD_TIMEOUT_S = 3600


class BuildError(RuntimeError):
    """The llama.cpp tools could not be built."""


def _extract_source(sdist: Path, dest: Path, sha256: str = _corpus.SDIST_SHA256) -> Path:
    """Extract ``vendor/llama.cpp`` from the verified sdist into ``dest``; return its root.
    The sdist's Python bindings (``llama_cpp/``) go to ``dest/python/llama_cpp``."""
    actual = _corpus.sha256_file(sdist)
    if actual != sha256:
        raise BuildError(f"{sdist}: sha256 {actual} does not match the pinned {sha256}")
    root = dest / "llama.cpp"
    with tarfile.open(sdist, mode="r:*") as tar:
        for member in tar:
            parts = PurePosixPath(member.name).parts
            if ".." in parts or not (member.isreg() or member.isdir()):
                continue  # no links or devices: the tree is built from names we check
            if len(parts) >= 4 and tuple(parts[1:3]) == ("vendor", "llama.cpp"):
                target = root.joinpath(*parts[3:])
            elif len(parts) >= 3 and parts[1] == "llama_cpp" and not parts[-1].endswith((".so", ".dylib", ".dll")):
                target = dest.joinpath("python", *parts[1:])
            else:
                continue
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


def _complete(root: Path) -> bool:
    return _have_tools(root / "bin") and (root / "bin" / LIBRARY).is_file() and \
        (root / "python" / "llama_cpp" / "__init__.py").is_file()


def ensure_tools() -> dict[str, Path]:
    """Return ``{tool name: path}``, building llama.cpp (tools, loader, bindings) once if the
    cache lacks them."""
    if os.environ.get(FAST_TIER) == "1":
        # the fast tier starts no engine (tests/conftest.py): a test that gets here is mis-tiered
        raise BuildError("a test of the fast tier (-m 'not slow') asked for llama.cpp's tools: mark it slow")
    override = os.environ.get(_ENV_BIN)
    if override and _have_tools(Path(override)):
        return {name: Path(override) / name for name in TOOLS}
    root = build_dir()
    bin_dir = root / "bin"
    if _complete(root):
        return {name: bin_dir / name for name in TOOLS}
    if shutil.which("cmake") is None:
        raise BuildError("cmake is needed to build llama.cpp's llama-server (apt-get install cmake g++)")
    root.mkdir(parents=True, exist_ok=True)
    with _corpus._locked(root.parent / f".{root.name}.lock"):
        if _complete(root):  # another worker built it meanwhile
            return {name: bin_dir / name for name in TOOLS}
        with tempfile.TemporaryDirectory(prefix="paircheck-llamacpp-", dir=root) as work:
            workdir = Path(work)
            src = _extract_source(_sdist_path(workdir), workdir)
            build = workdir / "build"
            log = root / "build.log"
            log.write_text("")
            # Shared libraries, so that the oracle loads the very libllama the tools link; an
            # $ORIGIN rpath, so that tools and libraries can be moved into the cache together.
            # No OpenSSL, no tests, no web UI: only what the tests run.
            _run([
                "cmake", "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                "-DBUILD_SHARED_LIBS=ON", "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON", "-DCMAKE_INSTALL_RPATH=$ORIGIN",
                "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=ON",
                "-DLLAMA_OPENSSL=OFF", "-DLLAMA_BUILD_UI=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF",
                "-DGGML_NATIVE=ON",
            ], log)
            jobs = str(max(1, os.cpu_count() or 1))
            _run(["cmake", "--build", str(build), "--config", "Release", "-j", jobs,
                  "--target", "llama", *TOOLS], log)
            staged = root / "bin.part"
            shutil.rmtree(staged, ignore_errors=True)
            staged.mkdir()
            for item in sorted((build / "bin").iterdir()):
                if item.name in TOOLS or ".so" in item.name:
                    shutil.copy2(item, staged / item.name, follow_symlinks=False)
            python = root / "python"
            shutil.rmtree(python, ignore_errors=True)
            os.replace(workdir / "python", python)
            shutil.rmtree(bin_dir, ignore_errors=True)
            os.replace(staged, bin_dir)
    return {name: bin_dir / name for name in TOOLS}


def oracle_env() -> dict[str, str] | None:
    """What a child process needs to ``import llama_cpp`` as the pinned build's bindings over
    its own libllama (None when the build is not in the cache): the bindings first on
    PYTHONPATH, and LLAMA_CPP_LIB_PATH, where they look for the library."""
    root = build_dir()
    if not _complete(root):
        return None
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join([str(root / "python"), *([path] if path else [])]),
            "LLAMA_CPP_LIB_PATH": str(root / "bin")}


# A second real llama.cpp, of another release, for the tests that compare a launch line with
# the --help of the binary that will run it (tests/preflight/test_build_help.py): the
# llama.cpp vendored in llama-cpp-python 0.3.16 (August 2025) still has --draft-max where the
# pinned one has --spec-draft-n-max. Building it took 12 to 31 minutes here, for a few
# --help answers, so it is built once by a developer (``python tests/llamacpp_build.py
# --record-other``) and what the real binary answered is kept in fixtures/llamacpp-other/
# with the release, the sdist's sha256 and the command; the tests run a small program that
# answers exactly those argument lists with the recorded bytes and exit codes, and fails
# loudly on any other (record it too).
OTHER_VERSION = "0.3.16"
OTHER_SHA256 = "34ed0f9bd9431af045bb63d9324ae620ad0536653740e9bb163a2e1fcb973be6"
OTHER_SUBDIR = f"llamacpp-build-{OTHER_VERSION}"
RECORDING = Path(__file__).resolve().parents[1] / "fixtures" / "llamacpp-other" / f"llama-server-{OTHER_VERSION}.json"
# What the tests and paircheck ask the build: its version, its usage, and its own error for
# each flag it lacks (``build_help.build_says``: the flag, its value, then --help).
RECORDED_ARGVS: tuple[tuple[str, ...], ...] = (
    ("--version",),
    ("--help",),
    ("--spec-type", "draft-simple", "--help"),
    ("--spec-draft-n-max", "8", "--help"),
    ("--spec-draft-n-min", "0", "--help"),
    ("--spec-draft-p-min", "0.75", "--help"),
    ("--draft-max", "8", "--help"),
)
NOT_RECORDED_EXIT = 97


def other_build_path() -> Path:
    return _corpus.cache_root() / OTHER_SUBDIR / "bin" / "llama-server"


def ensure_other_server() -> Path:
    """The llama-server of llama-cpp-python OTHER_VERSION's llama.cpp, built once into the cache."""
    target = other_build_path()
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


def record_other() -> Path:
    """Build the other release once and write what it answers to RECORDED_ARGVS."""
    binary = ensure_other_server()
    runs = []
    for argv in RECORDED_ARGVS:
        proc = subprocess.run([str(binary), *argv], capture_output=True, timeout=60, stdin=subprocess.DEVNULL,
                              check=False)
        runs.append({"argv": list(argv), "exit": proc.returncode,
                     "stdout": proc.stdout.decode("utf-8", "surrogateescape"),
                     "stderr": proc.stderr.decode("utf-8", "surrogateescape")})
    doc = {"program": "llama-server",
           "release": f"llama.cpp vendored in llama-cpp-python {OTHER_VERSION} (sdist sha256 {OTHER_SHA256})",
           "built_with": "cmake -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF "
                         "-DLLAMA_OPENSSL=OFF -DGGML_NATIVE=ON, --target llama-server",
           "recorded_by": "python tests/llamacpp_build.py --record-other", "runs": runs}
    RECORDING.parent.mkdir(parents=True, exist_ok=True)
    RECORDING.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return RECORDING


_REPLAY = """#!{python}
# The answers of the real llama-server of {release}, recorded by {recorded_by} ({recording}).
import json, sys
doc = json.load(open({recording!r}, encoding="utf-8"))
for run in doc["runs"]:
    if run["argv"] == sys.argv[1:]:
        sys.stdout.buffer.write(run["stdout"].encode("utf-8", "surrogateescape"))
        sys.stderr.buffer.write(run["stderr"].encode("utf-8", "surrogateescape"))
        sys.exit(run["exit"])
sys.stderr.write("not recorded: llama-server %s (add it to RECORDED_ARGVS in tests/llamacpp_build.py "
                 "and run python tests/llamacpp_build.py --record-other)\\n" % " ".join(sys.argv[1:]))
sys.exit({not_recorded})
"""


def other_server_path() -> Path:
    """A program that answers as the other release's real llama-server answered (RECORDING),
    written once into the cache under the name ``llama-server``."""
    doc = json.loads(RECORDING.read_text(encoding="utf-8"))
    folder = _corpus.cache_root() / f"llamacpp-recorded-{OTHER_VERSION}"
    folder.mkdir(parents=True, exist_ok=True)
    script = _REPLAY.format(python=sys.executable, release=doc["release"], recorded_by=doc["recorded_by"],
                            recording=str(RECORDING), not_recorded=NOT_RECORDED_EXIT)
    path = folder / "llama-server"
    if not path.is_file() or path.read_text() != script:
        part = folder / "llama-server.part"
        part.write_text(script)
        part.chmod(0o755)
        os.replace(part, path)
    return path


if __name__ == "__main__":
    try:
        if "--record-other" in sys.argv[1:]:
            print(f"llama-server ({OTHER_VERSION}) answers recorded in {record_other()}")
            sys.exit(0)
        for tool, path in ensure_tools().items():
            print(f"{tool}: {path}")
    except (BuildError, _corpus.CorpusError, subprocess.TimeoutExpired) as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
