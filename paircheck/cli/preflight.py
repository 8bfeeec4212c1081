"""Pre-flight commands for launch scripts (run, lint-cmd, lint-py, lint-modelfile, lint).

``paircheck run -- llama-server ...`` parses the command as that launcher would, checks the
pair, lints the flags, and on success replaces itself with the command (os.execvp: same
process, so signals and the exit code are the server's). On failure it exits 1 without
starting anything, unless --force.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from paircheck._format import render
from paircheck.api._lint import lint_exit
from paircheck.cli.options import fail_on_options, render_options, resolve_fail_on
from paircheck.errors import InputError


def _emit(result: Any, as_json: bool, quiet: bool, fail_on: str, pair_check: bool = True) -> None:
    if not quiet or as_json:
        options = render_options(fail_on=fail_on, pair_check=pair_check)
        click.echo(render("json" if as_json else "text", result, options))


EXIT_HELP = ("Exit codes: 0 OK (every pair the command names was checked and passes), 1 NOT OK (an error "
             "or an incompatible pair), 2 bad input, 3 NOT CHECKED (unknown launcher, a pair that "
             "could not be read, no speculation configured), 4 ABORTS AT RUN TIME (a pair accepted at load "
             "that is predicted to abort), 5 WARNED (a warning --fail-on slow/warning asks to fail on).")


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
               epilog=EXIT_HELP + " run: the command is started only on 0 (or with --force); then the exit "
               "code is the command's.")
@click.option("--dry-run", is_flag=True, help="Check and lint only; do not start the command.")
@click.option("--force", is_flag=True, help="Start the command even when the check fails or did not happen.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON (on stdout, before the exec).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@click.option("--no-cache", "no_cache", is_flag=True,
              help="Read the model files even when unchanged since paircheck last read them, and keep "
              "nothing (the read cache: PAIRCHECK_CACHE_HOME, XDG_CACHE_HOME/paircheck or ~/.cache/paircheck).")
@fail_on_options
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
def run(dry_run: bool, force: bool, as_json: bool, quiet: bool, no_cache: bool, fail_on: str | None, strict: bool,
        command: tuple[str, ...]) -> None:
    """Check a launch command, then exec it: paircheck run -- llama-server -m T -md D ..."""
    from paircheck.api import plan_run

    level = resolve_fail_on(fail_on, strict)
    argv = list(command)
    plan = plan_run(argv, fail_on=level, dry_run=dry_run, use_cache=not no_cache)
    _emit(plan.result, as_json, quiet, level)
    if dry_run:
        sys.exit(plan.exit_code)
    if not plan.ok and not force:
        if not quiet and not as_json:
            absent = f"; {plan.program} is not on this machine either{plan.renamed}" if plan.missing else ""
            click.echo(f"paircheck: not starting the command (use --force to start it anyway){absent}", err=True)
        sys.exit(plan.exit_code)
    if plan.missing:
        # After the verdict, and saying nothing was started: "OK ... checked" alone would read
        # as a launch.
        checked = "the check above passes, but " if plan.ok else ""
        raise InputError(plan.program, f"command not found{plan.renamed}: {checked}nothing was started")
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvp(argv[0], argv)
    except FileNotFoundError:
        raise InputError(argv[0], "command not found") from None
    except PermissionError:
        raise InputError(argv[0], "permission denied") from None


@click.command("lint-cmd", epilog=EXIT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@click.option("--no-check", is_flag=True, help="Lint the flags only; do not read the model files.")
@fail_on_options
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
def lint_cmd(as_json: bool, quiet: bool, no_check: bool, fail_on: str | None, strict: bool,
             command: tuple[str, ...]) -> None:
    """Lint a launch command given as one string (or as separate words after --), or a Python file."""
    level = resolve_fail_on(fail_on, strict)
    from paircheck.api import lint_words

    result = lint_words(command, check_models=not no_check)
    _emit(result, as_json, quiet, level, pair_check=not no_check)
    sys.exit(lint_exit(result, not no_check, level))


@click.command("lint-py", epilog=EXIT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@click.option("--no-check", is_flag=True, help="Lint the calls only; do not read the models.")
@fail_on_options
@click.argument("pyfile")
def lint_py(as_json: bool, quiet: bool, no_check: bool, fail_on: str | None, strict: bool, pyfile: str) -> None:
    """Read a Python file with ast (never run it): vLLM LLM/EngineArgs keywords, speculative_config,
    LLM.generate, transformers generate(assistant_model=...), and vllm serve / llama-server strings."""
    level = resolve_fail_on(fail_on, strict)
    from paircheck.api import lint_python

    result = lint_python(pyfile, check_models=not no_check)
    _emit(result, as_json, quiet, level, pair_check=not no_check)
    sys.exit(lint_exit(result, not no_check, level))


@click.command("lint-modelfile", epilog=EXIT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@fail_on_options
@click.argument("modelfile")
def lint_modelfile_cmd(as_json: bool, quiet: bool, fail_on: str | None, strict: bool, modelfile: str) -> None:
    """Lint an Ollama Modelfile's DRAFT and draft parameters, and check the pair."""
    level = resolve_fail_on(fail_on, strict)
    from paircheck.api import lint_modelfile

    result = lint_modelfile(modelfile)
    _emit(result, as_json, quiet, level)
    sys.exit(lint_exit(result, fail_on=level))


LINT_FORMATS = ("text", "json", "sarif", "github")


@click.command("lint", epilog=EXIT_HELP + " A run is as bad as its worst command; no launch command found at all "
               "is NOT CHECKED (3) unless --allow-empty.")
@click.option("--format", "fmt", type=click.Choice(LINT_FORMATS), default="text", show_default=True,
              help="text for people, json, sarif (SARIF 2.1.0, for code scanning), github (Actions annotations).")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@click.option("--no-check", is_flag=True, help="Lint the flags only; do not read the model files.")
@click.option("--allow-empty", is_flag=True,
              help="Exit 0 when no file holds a launch command (the pre-commit hooks pass it).")
@click.option("--no-cache", "no_cache", is_flag=True, help="Read the model files even when unchanged since "
              "paircheck last read them, and keep nothing.")
@fail_on_options
@click.argument("paths", nargs=-1, required=True)
def lint_files_cmd(fmt: str, as_json: bool, quiet: bool, no_check: bool, allow_empty: bool, no_cache: bool,
                   fail_on: str | None, strict: bool, paths: tuple[str, ...]) -> None:
    """Find and lint the launch commands in compose files, systemd units, Kubernetes manifests, shell
    scripts, Dockerfiles, Modelfiles and Python files (PATH: files or folders)."""
    from paircheck.api import lint_files

    level = resolve_fail_on(fail_on, strict)
    result = lint_files(paths, check_models=not no_check, use_cache=not no_cache, allow_empty=allow_empty)
    if not quiet:
        click.echo(render("json" if as_json else fmt, result, render_options(fail_on=level, pair_check=not no_check)))
    sys.exit(lint_exit(result, not no_check, level))


COMMANDS: list[click.Command] = [run, lint_cmd, lint_py, lint_modelfile_cmd, lint_files_cmd]
