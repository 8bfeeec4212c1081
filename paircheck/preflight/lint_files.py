"""``paircheck lint PATH...``: find the launch commands in the files where they live and judge
each one exactly as ``lint-cmd`` judges it, with the file, line and column of the command and
of each finding.

The finders (``preflight/files/``) turn a file into FoundCommands; here each one is linted by
``launchers.lint_argv`` with its own environment and a model reader that maps its paths to this
machine (``Paths.host_path``: a path inside a container is read through the compose file's
volumes, or is unreachable, PF022). Modelfiles and Python files are linted by ``lint-modelfile``
and ``lint-py``, whose findings carry their line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from paircheck.errors import InputError
from paircheck.outcome import DEFAULT_FAIL_ON
from paircheck.preflight import codes as C
from paircheck.preflight.codes import LintFinding
from paircheck.preflight.files.found import FoundCommand
from paircheck.preflight.files.words import Pos
from paircheck.preflight.lint import ABORTS, FAIL, OK, UNCHECKED, WARNED, Describe, LintResult
from paircheck.preflight.llama_command import options_for

if TYPE_CHECKING:
    from paircheck.pipeline import ReadCache

# The worst outcome first: a run over many commands is as bad as its worst one.
SEVERITY = (FAIL, ABORTS, UNCHECKED, WARNED, OK)
MAX_BYTES = 4 << 20  # a launch file is small; a bigger one is not read (exit 2), never slurped
SKIPPED_DIRS = (".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache")


@dataclass
class CommandLint:
    """One launch command found in a file and what lint-cmd says of it; ``places[i]`` is where
    ``result.findings[i]`` points, ``pair_place`` where the pair check's own findings point."""

    command: FoundCommand
    kind: str
    result: LintResult
    places: list[Pos]
    pair_place: Pos


@dataclass
class FilesLintResult:
    files: list[tuple[str, str]] = field(default_factory=list)  # (path, kind) of every launch file read
    commands: list[CommandLint] = field(default_factory=list)
    # No launch command at all is OK (a commit that touches no launch file), not NOT CHECKED.
    allow_empty: bool = False

    def status(self, pair_check: bool = True, fail_on: str = DEFAULT_FAIL_ON) -> str:
        """The worst command's outcome; no command at all is NOT CHECKED unless ``allow_empty``."""
        if not self.commands:
            return OK if self.allow_empty else UNCHECKED
        statuses = {c.result.status(pair_check, fail_on) for c in self.commands}
        return next(s for s in SEVERITY if s in statuses)


def kind_of(path: str, head: str | None = None) -> str | None:
    """The kind of launch file ``path`` is by its name (and, given, its first line), or None.
    YAML is "yaml" here: compose or Kubernetes is told from its content."""
    name = os.path.basename(path)
    lower = name.lower()
    if lower == "modelfile" or lower.endswith(".modelfile"):
        return "modelfile"
    if lower in ("dockerfile", "containerfile") or lower.endswith((".dockerfile", ".containerfile")) \
            or lower.startswith(("dockerfile.", "containerfile.")):
        return "dockerfile"
    if lower.endswith(".service"):
        return "systemd"
    if lower.endswith((".yml", ".yaml")):
        return "yaml"
    if lower.endswith((".sh", ".bash")):
        return "shell"
    if lower.endswith(".py"):
        return "python"
    if head is not None and head.startswith("#!") and any(s in head for s in ("sh", "bash")):
        return "shell"
    return None


def launch_files(paths: list[str]) -> list[tuple[str, str | None]]:
    """(path, kind by name) of each path given and each launch file under a folder given."""
    out: list[tuple[str, str | None]] = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                # hidden folders are not walked, but for .github (its workflows run launch commands too)
                dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and (not d.startswith(".") or d == ".github"))
                for name in sorted(names):
                    full = os.path.join(root, name)
                    kind = kind_of(full)
                    if kind is not None and kind != "python":  # a folder's Python files are not launch files
                        out.append((full, kind))
        elif os.path.exists(path):
            out.append((path, kind_of(path)))
        else:
            raise InputError(path, "no such file or folder")
    return out


def read_launch_file(path: str) -> str:
    try:
        if os.path.getsize(path) > MAX_BYTES:
            raise InputError(path, f"larger than {MAX_BYTES >> 20} MB: not a launch file")
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    if b"\0" in data:
        raise InputError(path, "has a NUL byte: a launch file is text (was a binary file given?)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text") from None


def find_commands(path: str, kind: str | None, text: str, environ: Mapping[str, str]) -> tuple[str | None,
                                                                                                list[FoundCommand]]:
    """(the file's kind, its launch commands): the finder of that kind of file. A command that
    cannot be split like a shell (an unclosed quote) is bad input, as for lint-cmd."""
    from paircheck.preflight.files.words import ShellSyntaxError

    try:
        return _find(path, kind, text, environ)
    except ShellSyntaxError as exc:
        raise InputError(path, f"cannot split a command like a shell: {exc}") from None


def _find(path: str, kind: str | None, text: str, environ: Mapping[str, str]) -> tuple[str | None,
                                                                                       list[FoundCommand]]:
    if kind is None:
        kind = kind_of(path, text.split("\n", 1)[0])
    if kind == "yaml":
        from paircheck.preflight.files import compose, kubernetes, workflow
        from paircheck.preflight.files.yaml_nodes import load_documents

        documents = load_documents(text, path)
        if compose.claims(path, documents):
            return "compose", compose.find(path, text, documents, environ)
        if kubernetes.claims(documents):
            return "kubernetes", kubernetes.find(path, text, documents)
        if workflow.claims(documents):
            return "workflow", workflow.find(path, text, documents)
        return None, []
    if kind == "systemd":
        from paircheck.preflight.files import systemd

        return kind, systemd.find(path, text)
    if kind == "shell":
        from paircheck.preflight.files import shell

        return kind, shell.find(path, text)
    if kind == "dockerfile":
        from paircheck.preflight.files import dockerfile

        return kind, dockerfile.find(path, text)
    return kind, []


def lint_paths(paths: list[str], check: bool = True, cache: ReadCache | None = None,
               environ: Mapping[str, str] | None = None) -> FilesLintResult:
    """Lint every launch command in ``paths`` (files or folders). ``environ``: what Compose
    interpolates from besides .env (default: this process's environment)."""
    from paircheck.preflight.entry import describer, lint_modelfile_path, lint_python_file

    environ = os.environ if environ is None else environ
    out = FilesLintResult()
    for path, by_name in launch_files(paths):
        text = read_launch_file(path)
        if by_name in ("modelfile", "python"):
            result = lint_modelfile_path(path) if by_name == "modelfile" else lint_python_file(path, check)
            if by_name == "python" and all(f.code == C.PY001.code for f in result.findings):
                continue  # a Python file that launches nothing is not a launch file
            out.files.append((path, by_name))
            out.commands.append(_lined(path, by_name, result))
            continue
        kind, found = find_commands(path, by_name, text, environ)
        if kind is None:
            continue
        out.files.append((path, kind))
        for command in found:
            out.commands.append(lint_found(command, kind, describer, cache, check))
    return out


def lint_found(command: FoundCommand, kind: str, describer: Callable[..., Describe], cache: ReadCache | None,
               check: bool) -> CommandLint:
    """One found command, judged as lint-cmd judges it, with its file's environment and paths."""
    from paircheck.preflight.launchers import lint_argv

    def make_describe(overrides: list[str]) -> Describe:
        read = describer(overrides, cache)
        return lambda spec: read(command.paths.host_path(spec))

    result = lint_argv(command.argv, command.env, make_describe if check else None)
    notes = [finding for finding, _ in command.notes]
    result.findings[:0] = notes
    places = [pos for _, pos in command.notes] + [locate(f, command) for f in result.findings[len(notes):]]
    return CommandLint(command, kind, result, places, _draft_place(command))


def _lined(path: str, kind: str, result: LintResult) -> CommandLint:
    """A Modelfile's or Python file's result: its findings carry their own line."""
    first = min((f.details["line"] for f in result.findings if isinstance(f.details.get("line"), int)), default=1)
    places = [Pos(f.details["line"], 1) if isinstance(f.details.get("line"), int) else Pos(first, 1)
              for f in result.findings]
    command = FoundCommand(path, "Modelfile" if kind == "modelfile" else "Python file", [], Pos(first, 1))
    return CommandLint(command, kind, result, places, Pos(first, 1))


def _spellings(*keys: str) -> frozenset[str]:
    return frozenset(name for name, (opt, _) in options_for("SERVER").items() if opt.key in keys)


def _draft_place(command: FoundCommand) -> Pos:
    """Where the pair check's findings point: the draft's option, else the command."""
    drafts = _spellings("--spec-draft-model", "--spec-draft-hf") | {"--speculative-config", "--speculative_config"}
    for word in command.words:
        if word.text in drafts or word.text.split("=", 1)[0] in drafts:
            return word.pos
    for name in ("LLAMA_ARG_SPEC_DRAFT_MODEL", "LLAMA_ARG_MODEL_DRAFT"):
        if name in command.env_at:
            return command.env_at[name]
    return command.pos


def locate(finding: LintFinding, command: FoundCommand) -> Pos:
    """The place of the word (or environment variable) a finding is about, else the command's."""
    details = finding.details
    for key in ("argument", "variable", "path", "program", "keyword"):
        wanted = details.get(key)
        if not isinstance(wanted, str) or not wanted:
            continue
        if wanted in command.env_at:
            return command.env_at[wanted]
        matches = [w for w in command.words if _same(w.text, wanted, key)]
        if matches:
            # A repeated option is reported at its second spelling: the one that wins.
            return (matches[-1] if finding.code == C.PF005.code else matches[0]).pos
        # A model named by the environment (LLAMA_ARG_MODEL): where that variable is set.
        named_by = [name for name, value in command.env.items() if value == wanted and name in command.env_at]
        if key == "path" and named_by:
            return command.env_at[named_by[0]]
    if finding.code in (C.PF010.code, C.PF012.code, C.PF013.code) or finding.code.startswith("VS"):
        return _draft_place(command)
    if finding.code == C.PF006.code:
        return command.pos
    return command.pos


def _same(word: str, wanted: str, key: str) -> bool:
    if key == "program":
        return os.path.basename(word) == wanted or os.path.basename(word).removesuffix(".exe") == wanted
    if word == wanted:
        return True
    if word.startswith("--") and word.replace("_", "-") == wanted:
        return True
    return key == "argument" and word.split("=", 1)[0].replace("_", "-") == wanted
