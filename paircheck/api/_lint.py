"""The pre-flight commands as library functions: a launch command, a Python file, an Ollama
Modelfile, or every launch command found in files and folders, linted and (unless told not
to) with the pair it names checked, before anything starts. ``run``'s exec is the command
line's; what it decides before it is ``plan_run``."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paircheck.errors import InputError
from paircheck.outcome import DEFAULT_FAIL_ON

if TYPE_CHECKING:
    from paircheck.pipeline import ReadCache
    from paircheck.preflight.lint import LintResult
    from paircheck.preflight.lint_files import FilesLintResult


def _cache(use_cache: bool) -> ReadCache | None:
    from paircheck.pipeline import read_cache

    return read_cache(os.environ) if use_cache else None


def lint_command(argv: Sequence[str], *, check_models: bool = True, use_cache: bool = False,
                 installed_build: bool = False) -> LintResult:
    """``paircheck lint-cmd -- llama-server ...``: a launch command's speculative-decoding
    flags, and (``check_models``) the pair it names, before anything starts.
    ``installed_build``: a llama.cpp program's flags judged against the build installed here
    (unless PAIRCHECK_INSTALLED=off) rather than the newest rules read."""
    from paircheck.preflight.entry import lint_argv

    return lint_argv(list(argv), check=check_models, cache=_cache(use_cache),
                     installed_build=None if installed_build else False)


def lint_words(command: Sequence[str], *, check_models: bool = True) -> LintResult:
    """``paircheck lint-cmd``'s argument: one string split as a shell would (or the words
    given), or a Python file to read."""
    if len(command) == 1 and command[0].endswith(".py") and os.path.isfile(command[0]):
        return lint_python(command[0], check_models=check_models)
    try:
        argv = shlex.split(command[0]) if len(command) == 1 else list(command)
    except ValueError as exc:
        raise InputError("command", f"cannot split it like a shell: {exc}") from None
    return lint_command(argv, check_models=check_models, installed_build=True)


def lint_python(path: str, *, check_models: bool = True) -> LintResult:
    """``paircheck lint-py FILE``: read with ast, never run: vLLM's LLM/EngineArgs keywords,
    speculative_config, transformers' generate(assistant_model=...), and launch-line strings."""
    from paircheck.preflight.entry import lint_python_file

    return lint_python_file(path, check=check_models)


def lint_modelfile(path: str) -> LintResult:
    """``paircheck lint-modelfile FILE``: an Ollama Modelfile's DRAFT and draft parameters, and the pair."""
    from paircheck.preflight.entry import lint_modelfile_path

    return lint_modelfile_path(path)


def lint_files(paths: Sequence[str], *, check_models: bool = True, use_cache: bool = False,
               allow_empty: bool = False) -> FilesLintResult:
    """``paircheck lint PATH...``: every launch command in compose files, systemd units,
    Kubernetes manifests, shell scripts, Dockerfiles, Modelfiles and Python files, each at its place.
    ``allow_empty``: finding none is not "nothing checked"."""
    from paircheck.preflight.lint_files import lint_paths

    result = lint_paths(list(paths), check=check_models, cache=_cache(use_cache))
    result.allow_empty = allow_empty
    return result


def lint_exit(result: LintResult | FilesLintResult, pair_check: bool = True, fail_on: str = DEFAULT_FAIL_ON) -> int:
    """The pre-flight commands' exit code for ``result`` at ``fail_on``: 0 OK, 1 NOT OK, 3 NOT
    CHECKED, 4 ABORTS AT RUN TIME, 5 WARNED."""
    from paircheck.preflight.lint import EXIT_FOR

    return EXIT_FOR[result.status(pair_check, fail_on)]


@dataclass(frozen=True)
class RunPlan:
    """What ``paircheck run`` decided before starting anything: the lint of the command, its
    exit code at the ``--fail-on`` level asked, and whether the program is on this machine."""

    result: LintResult
    exit_code: int
    program: str
    missing: bool  # the program is not on PATH (it is checked all the same)
    renamed: str  # "(llama.cpp renamed it ...)" for a legacy program name, else ""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


def plan_run(argv: Sequence[str], *, fail_on: str = DEFAULT_FAIL_ON, dry_run: bool = False,
             use_cache: bool = False) -> RunPlan:
    """``paircheck run -- COMMAND``: lint the command and check its pair. The pair is checked
    even when the program is not here (the machine preparing a launch often has no
    llama-server); an unknown program that is not here either is an InputError."""
    from paircheck.preflight.launchers import LEGACY, launcher_of, program_name, strip_wrappers

    program, _ = strip_wrappers(list(argv))
    missing = not dry_run and bool(program) and shutil.which(program[0]) is None
    name = program_name(program[0]) if program else ""
    renamed = f" (llama.cpp renamed it {LEGACY[name]})" if name in LEGACY else ""
    if missing and not launcher_of(program):
        raise InputError(program[0], "command not found")  # no launcher paircheck reads: nothing to check
    result = lint_command(argv, use_cache=use_cache, installed_build=True)
    return RunPlan(result, lint_exit(result, fail_on=fail_on), program[0] if program else "", missing, renamed)
