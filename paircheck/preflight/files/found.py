"""What a finder hands over: a launch command found in a file, with where each word was written."""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field

from paircheck.preflight import codes as C
from paircheck.preflight.codes import ERROR, INFO, WARNING, LintFinding, emit
from paircheck.preflight.files.words import Expansion, Pos, Token
from paircheck.preflight.launchers import LEGACY, launcher_of, program_name, strip_wrappers
from paircheck.preflight.lint import UnreachablePath
from paircheck.preflight.llama_command import SPECULATING

# Model files by their name, as opposed to Hub repo ids (Qwen/Qwen3-8B), which are not paths.
MODEL_SUFFIXES = (".gguf", ".bin", ".safetensors")
# Launchers paircheck does not lint yet but that a launch file may hold: found, and judged as
# lint-cmd judges them (not checked, PF030), so their outcome is never a silent pass.
OTHER_LAUNCHERS = ("koboldcpp", "koboldcpp.py", "sglang.launch_server")


@dataclass(frozen=True)
class Word:
    text: str
    pos: Pos


@dataclass(frozen=True)
class Mount:
    """A folder of the container and the folder of this machine it shows (None: a named volume,
    a Kubernetes volume, ...: not a folder paircheck can open)."""

    container: str
    host: str | None
    what: str  # how it is named in a message: "the named volume 'models'"


@dataclass
class Paths:
    """How a model path written in the command reaches this machine."""

    base: str  # the folder relative host paths are read from
    in_container: bool = False
    workdir: str | None = None  # the container's working directory, when the file says it
    mounts: list[Mount] = field(default_factory=list)

    def host_path(self, spec: str) -> str:
        """The path to read for ``spec``; a Hub repo id is returned as it is. Raises
        UnreachablePath when the file cannot be reached from here."""
        if "$" in spec:
            raise UnreachablePath(spec, "is only known at run time (a variable this file does not set)")
        pathlike = spec.startswith(("/", "./", "../", "~")) or spec.lower().endswith(MODEL_SUFFIXES)
        if not pathlike:
            return spec
        if not self.in_container:
            return os.path.join(self.base, os.path.expanduser(spec))
        path = spec if spec.startswith("/") else (posixpath.join(self.workdir, spec) if self.workdir else None)
        if path is None:
            raise UnreachablePath(spec, "is relative to the container's working directory, which this file "
                                  "does not set")
        path = posixpath.normpath(path)
        for mount in sorted(self.mounts, key=lambda m: len(m.container), reverse=True):
            root = mount.container.rstrip("/") or "/"
            if path == root or path.startswith(root.rstrip("/") + "/"):
                if mount.host is None:
                    raise UnreachablePath(spec, f"is on {mount.what}, not a folder of this machine")
                rest = path[len(root):].lstrip("/")
                return os.path.join(mount.host, rest) if rest else mount.host
        raise UnreachablePath(spec, "is inside the container: no volume of this file maps it to this machine")


@dataclass
class FoundCommand:
    file: str
    where: str  # what holds it: "service 'llama'", "ExecStart=" ("" in a script: its line says it)
    words: list[Word]
    pos: Pos  # where the command starts
    env: dict[str, str] = field(default_factory=dict)
    env_at: dict[str, Pos] = field(default_factory=dict)  # where each variable of ``env`` is set
    paths: Paths = field(default_factory=lambda: Paths("."))
    # What reading the file found about this command (unset variables, ...), with their place.
    notes: list[tuple[LintFinding, Pos]] = field(default_factory=list)

    @property
    def argv(self) -> list[str]:
        return [w.text for w in self.words]


def is_launch(argv: list[str]) -> bool:
    """Whether a command line starts a program paircheck judges for speculative decoding: a
    llama.cpp program that speculates (an old name only with a path, ``./main``: a bare
    ``main`` in a script is usually a shell function), vLLM's server, or another known launcher."""
    argv, _ = strip_wrappers(argv)
    if not argv:
        return False
    name = program_name(argv[0])
    if name in LEGACY:
        return "/" in argv[0] and LEGACY[name] in SPECULATING
    if name in SPECULATING:
        return True
    if launcher_of(argv) == "vllm":
        return name != "vllm" or argv[1:2] == ["serve"]
    if name in OTHER_LAUNCHERS:
        return True
    return name.startswith("python") and argv[1:2] == ["-m"] and argv[2:3] == ["sglang.launch_server"]


def expansion_notes(tokens: list[Token], pos_of: dict[int, Pos], style: str) -> list[tuple[LintFinding, Pos]]:
    """LF findings for the variables of ``tokens``: ``style`` "compose" (unset: empty, LF001;
    required: LF002) or "runtime" (shell, systemd: unknown here, LF003)."""
    out: list[tuple[LintFinding, Pos]] = []
    seen: set[str] = set()
    for token in tokens:
        for exp in token.expansions:
            finding = expansion_note(exp, style, token.only_unknown)
            if finding is not None and exp.written not in seen:
                seen.add(exp.written)
                out.append((finding, pos_of.get(token.start, Pos(1, 1))))
    return out


def expansion_note(exp: Expansion, style: str, left_out: bool = False) -> LintFinding | None:
    if exp.required is not None:
        return emit(C.LF002, ERROR, f"{exp.written}: {exp.name} is not set, so Compose stops: "
                    f"\"required variable {exp.name} is missing a value: {exp.required}\"",
                    f"set {exp.name} in .env or the environment", variable=exp.name)
    if style == "compose" and exp.unset:
        return emit(C.LF001, WARNING, f"{exp.written}: {exp.name} is set neither in the environment nor in .env: "
                    "Compose makes it an empty string", f"set {exp.name} in .env, or write ${{{exp.name}:-value}}",
                    variable=exp.name)
    if style == "runtime" and exp.value is None:
        said = ("left out (it may be any number of words)" if left_out else "checked as written")
        return emit(C.LF003, INFO, f"{exp.written} is only known at run time: {said}", variable=exp.name)
    return None
