"""Pre-flight commands for launch scripts (run, lint-cmd, lint-modelfile).

``paircheck run -- llama-server ...`` parses the command as that launcher would, checks the
pair, lints the flags, and on success replaces itself with the command (os.execvp: same
process, so signals and the exit code are the server's). On failure it exits 1 without
starting anything, unless --force.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

import click
from tabulate import tabulate

from paircheck._format.wrap import wrap
from paircheck.errors import InputError
from paircheck.findings import Report
from paircheck.model import ModelDescription
from paircheck.preflight.codes import ERROR, SEVERITY_WORD
from paircheck.preflight.launchers import LEGACY, program_name, strip_wrappers
from paircheck.preflight.launchers import lint_argv as lint_launch
from paircheck.preflight.lint import FAIL, OK, UNCHECKED, Describe, LintResult
from paircheck.preflight.ollama import lint_modelfile

# Exit codes of the lint commands (README "Pre-flight for launch scripts"): 0 and 1 as for a
# check, 2 bad input, 3 nothing (or not everything) was checked: never 0 for a check that
# did not happen.
EXIT_OK, EXIT_FAIL, EXIT_ERROR, EXIT_UNCHECKED = 0, 1, 2, 3
EXIT_FOR = {OK: EXIT_OK, FAIL: EXIT_FAIL, UNCHECKED: EXIT_UNCHECKED}
WIDTH = 100


def _describer(overrides: list[str]) -> Describe:
    from paircheck.api import describe
    from paircheck.vocab import parse_override

    parsed = dict(parse_override(item) for item in overrides)

    def describe_one(spec: str) -> ModelDescription:
        return describe(spec, parsed or None)

    return describe_one


def lint_argv(argv: list[str], env: dict[str, str] | None = None, check: bool = True) -> LintResult:
    """Pick the launcher from argv[0] (after env/wrappers and legacy names) and lint its command line."""
    if not argv:
        raise InputError("command", "empty command")
    return lint_launch(argv, env, _describer if check else None)


def result_to_dict(result: LintResult, pair_check: bool = True) -> dict[str, object]:
    from dataclasses import asdict

    from paircheck._format.json_format import report_to_dict

    status = result.status(pair_check)
    return {
        "launcher": result.launcher,
        "status": status,  # "ok", "not-ok", "not-checked"
        "ok": status == OK,
        "exit_code": EXIT_FOR[status],
        "findings": [asdict(f) for f in result.findings],
        "pairs": [report_to_dict(r) for r in result.reports],
        "corrected_command": shlex.join(result.corrected) if result.corrected else None,
    }


def shell_lines(argv: list[str], width: int = WIDTH) -> list[str]:
    """A command as shell lines of at most ``width`` columns, joined by backslash-newline, so
    the wrapped text still pastes as one command."""
    words: list[str] = []
    for word in argv:  # an option and its value stay on one line
        quoted = shlex.quote(word)
        if words and words[-1].startswith("-") and " " not in words[-1] and not word.startswith("-"):
            words[-1] += " " + quoted
        else:
            words.append(quoted)
    lines: list[str] = []
    current = "  "
    for word in words:
        if current.strip() and len(current) + 1 + len(word) + 2 > width:
            lines.append(current + " \\")
            current = "      " + word
        else:
            current = f"{current} {word}" if current.strip() else current + word
    return lines + [current]


def pasteable(step: str, report: Report) -> str:
    """A "Next:" command with the real paths in place of TARGET and DRAFT, shell-quoted."""
    target = report.target.resolved_path or report.target.location
    draft = report.draft.resolved_path or report.draft.location
    step = re.sub(r"\bTARGET\b", lambda _: shlex.quote(target), step)
    return re.sub(r"\bDRAFT\b", lambda _: shlex.quote(draft), step)


def headline(result: LintResult, pair_check: bool = True) -> str:
    status = result.status(pair_check)
    errors = sum(f.status == ERROR for f in result.findings)
    bad_pairs = [r for r in result.reports if not r.compatible]
    if status == FAIL:
        parts = ([f"{errors} error{'s' if errors != 1 else ''}"] if errors else []) + (
            [f"{len(bad_pairs)} incompatible pair{'s' if len(bad_pairs) != 1 else ''}"] if bad_pairs else [])
        return f"NOT OK: {result.launcher}: " + ", ".join(parts)
    if status == UNCHECKED:
        first = result.unchecked[0]
        return f"NOT CHECKED: {result.launcher}: {first.message}"
    checked = f"{len(result.reports)} pair{'s' if len(result.reports) != 1 else ''} checked" if result.reports else (
        "flags checked, pair not read (--no-check)" if not pair_check else "flags checked")
    return f"OK: {result.launcher}: {checked}"


def render(result: LintResult, pair_check: bool = True) -> str:
    lines = wrap(headline(result, pair_check), WIDTH, subsequent_indent="  ")
    if result.reports:
        rows = []
        for r in result.reports:
            first = r.first_failure
            reason = f"{first.code} {first.message}" if first else "; ".join(c.message for c in r.checks[-1:])
            rows.append((r.method, "yes" if r.compatible else "NO", "\n".join(wrap(reason, 60)) or "-"))
        lines += ["", tabulate(rows, headers=("pair check", "ok", "reason"), tablefmt="simple", disable_numparse=True)]
    if result.findings:
        lines += ["", "Findings:"]
        for f in result.findings:
            word = SEVERITY_WORD.get(f.status, f.status)
            lines += wrap(f"{word} {f.code} {f.name}: {f.message}", WIDTH, initial_indent="  ",
                          subsequent_indent="    ")
            if f.fix:
                lines += wrap(f"fix: {f.fix}", WIDTH, initial_indent="    ", subsequent_indent="      ")
    if result.corrected:
        lines += ["", "Corrected command (flags only; the pair check above still applies):"]
        lines += shell_lines(result.corrected)
    for r in result.reports:
        first = r.first_failure
        if first is not None and first.fix:
            lines += wrap(f"{r.method} fix: {first.fix}", WIDTH, initial_indent="  ", subsequent_indent="    ")
        for w in r.warnings:
            lines += wrap(f"warning {w.code} {w.name}: {w.message}", WIDTH, initial_indent="  ",
                          subsequent_indent="    ")
        if not r.compatible and r.next_steps:
            lines += wrap(f"Next: {pasteable(r.next_steps[-1], r)}", WIDTH, initial_indent="  ",
                          subsequent_indent="        ")
    return "\n".join(lines)


def _emit(result: LintResult, as_json: bool, quiet: bool, pair_check: bool = True) -> None:
    if as_json:
        click.echo(json.dumps(result_to_dict(result, pair_check), indent=2, ensure_ascii=False))
    elif not quiet:
        click.echo(render(result, pair_check), err=False)


EXIT_HELP = ("Exit codes: 0 OK (every pair the command names was checked and passes), 1 NOT OK (an error "
             "or an incompatible pair), 2 bad input, 3 NOT CHECKED (unknown launcher, a pair that "
             "could not be read, no speculation configured).")


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
               epilog=EXIT_HELP + " run: the command is started only on 0 (or with --force); then the exit "
               "code is the command's.")
@click.option("--dry-run", is_flag=True, help="Check and lint only; do not start the command.")
@click.option("--force", is_flag=True, help="Start the command even when the check fails or did not happen.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON (on stdout, before the exec).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
def run(dry_run: bool, force: bool, as_json: bool, quiet: bool, command: tuple[str, ...]) -> None:
    """Check a launch command, then exec it: paircheck run -- llama-server -m T -md D ..."""
    argv = list(command)
    program, _ = strip_wrappers(argv)
    if not dry_run and program and shutil.which(program[0]) is None:
        # Say it before any verdict: "OK ... checked" then "command not found" reads as a pass.
        name = program_name(program[0])
        renamed = f" (llama.cpp renamed it {LEGACY[name]})" if name in LEGACY else ""
        raise InputError(program[0], f"command not found{renamed}")
    result = lint_argv(argv)
    status = result.status()
    _emit(result, as_json, quiet)
    if dry_run:
        sys.exit(EXIT_FOR[status])
    if status != OK and not force:
        if not quiet and not as_json:
            click.echo("paircheck: not starting the command (use --force to start it anyway)", err=True)
        sys.exit(EXIT_FOR[status])
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
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
def lint_cmd(as_json: bool, quiet: bool, no_check: bool, command: tuple[str, ...]) -> None:
    """Lint a launch command given as one string (or as separate words after --), or a Python file."""
    if len(command) == 1 and command[0].endswith(".py") and os.path.isfile(command[0]):
        result = lint_python_file(command[0], check=not no_check)
    else:
        try:
            argv = shlex.split(command[0]) if len(command) == 1 else list(command)
        except ValueError as exc:
            raise InputError("command", f"cannot split it like a shell: {exc}") from None
        result = lint_argv(argv, check=not no_check)
    _emit(result, as_json, quiet, pair_check=not no_check)
    sys.exit(EXIT_FOR[result.status(not no_check)])


def lint_python_file(path: str, check: bool = True) -> LintResult:
    from paircheck.preflight.python_lint import lint_python

    text = _read_text(path)
    return lint_python(text, path, _describer([]) if check else None,
                       lambda argv: lint_argv(argv, check=check))


@click.command("lint-py", epilog=EXIT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@click.option("--no-check", is_flag=True, help="Lint the calls only; do not read the models.")
@click.argument("pyfile")
def lint_py(as_json: bool, quiet: bool, no_check: bool, pyfile: str) -> None:
    """Read a Python file with ast (never run it): vLLM LLM/EngineArgs keywords, speculative_config,
    LLM.generate, transformers generate(assistant_model=...), and vllm serve / llama-server strings."""
    result = lint_python_file(pyfile, check=not no_check)
    _emit(result, as_json, quiet, pair_check=not no_check)
    sys.exit(EXIT_FOR[result.status(not no_check)])


def _read_text(name: str) -> str:
    try:
        return Path(name).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(name, "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(name, f"cannot read: {exc}") from None


@click.command("lint-modelfile", epilog=EXIT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@click.argument("modelfile")
def lint_modelfile_cmd(as_json: bool, quiet: bool, modelfile: str) -> None:
    """Lint an Ollama Modelfile's DRAFT and draft parameters, and check the pair."""
    text = _read_text(modelfile)
    result = lint_modelfile(text, str(Path(modelfile).parent), _describer([]))
    result.launcher = f"Modelfile {modelfile}"
    _emit(result, as_json, quiet)
    sys.exit(EXIT_FOR[result.status()])


COMMANDS: list[click.Command] = [run, lint_cmd, lint_py, lint_modelfile_cmd]
