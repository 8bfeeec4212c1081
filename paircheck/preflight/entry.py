"""The library entry points of pre-flight: lint a launch line, a Python file or a Modelfile.

Each returns a LintResult (findings, the pair reports, a corrected command); the CLI
renders it with a format and turns its status into the exit code.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from paircheck.errors import InputError
from paircheck.installed import enabled
from paircheck.model import ModelDescription
from paircheck.preflight.launchers import lint_argv as lint_launch
from paircheck.preflight.lint import Describe, LintResult
from paircheck.preflight.ollama import lint_modelfile

if TYPE_CHECKING:
    from paircheck.pipeline import ReadCache


def describer(overrides: list[str], cache: ReadCache | None = None) -> Describe:
    from paircheck.pipeline import describe
    from paircheck.vocab import parse_override

    parsed = dict(parse_override(item) for item in overrides)

    def describe_one(spec: str) -> ModelDescription:
        return describe(spec, parsed or None, cache=cache)

    return describe_one


def lint_argv(argv: list[str], env: dict[str, str] | None = None, check: bool = True,
              cache: ReadCache | None = None, installed_build: bool | None = None) -> LintResult:
    """Pick the launcher from argv[0] (after env/wrappers and legacy names) and lint its command line.

    With a ``cache`` (``api.read_cache(os.environ)``), model files read before and unchanged
    since are not read again: a launch script checks the same files at every launch.
    ``installed_build`` (default: unless PAIRCHECK_INSTALLED=off): a llama.cpp program found on
    this machine is asked for its --help, and the flags are checked against that build too."""
    if not argv:
        raise InputError("command", "empty command")
    if installed_build is None:
        installed_build = enabled(os.environ)
    build_for = None
    if installed_build:
        from paircheck.preflight.build_help import read_build

        build_for = read_build
    return lint_launch(argv, env, (lambda overrides: describer(overrides, cache)) if check else None, build_for)



def lint_python_file(path: str, check: bool = True) -> LintResult:
    from paircheck.preflight.python_lint import lint_python

    text = read_text(path)
    return lint_python(text, path, describer([]) if check else None,
                       lambda argv: lint_argv(argv, check=check))


def read_text(name: str) -> str:
    try:
        return Path(name).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(name, "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(name, f"cannot read: {exc}") from None



def lint_modelfile_path(path: str) -> LintResult:
    """Lint an Ollama Modelfile (its DRAFT and draft parameters) and check the pair."""
    result = lint_modelfile(read_text(path), str(Path(path).parent), describer([]))
    result.launcher = f"Modelfile {path}"
    return result
