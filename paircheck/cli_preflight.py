"""Pre-flight commands for launch scripts (run, lint-cmd, lint-modelfile).

``paircheck run -- llama-server ...`` parses the command as that launcher would, checks the
pair, lints the flags, and on success replaces itself with the command (os.execvp: same
process, so signals and the exit code are the server's). On failure it exits 1 without
starting anything, unless --force.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import click
from tabulate import tabulate

from paircheck._format.wrap import wrap
from paircheck.errors import InputError
from paircheck.model import ModelDescription
from paircheck.preflight.lint import ERROR, LintResult, lint_llama
from paircheck.preflight.llama_server import parse as parse_llama
from paircheck.preflight.ollama import lint_modelfile
from paircheck.preflight.vllm import lint_vllm

EXIT_OK, EXIT_FAIL, EXIT_ERROR = 0, 1, 2
WIDTH = 100


def _describer(overrides: list[str]):  # type: ignore[no-untyped-def]
    from paircheck.api import describe
    from paircheck.vocab import parse_override

    parsed = dict(parse_override(item) for item in overrides)

    def describe_one(spec: str) -> ModelDescription:
        return describe(spec, parsed or None)

    return describe_one


def lint_argv(argv: list[str], env: dict[str, str] | None = None, check: bool = True) -> LintResult:
    """Pick the launcher from argv[0] (after env/wrappers) and lint its command line."""
    if not argv:
        raise InputError("command", "empty command")
    program = os.path.basename(argv[0])
    if program == "vllm" or program.startswith("vllm"):
        return lint_vllm(argv, _describer([]) if check else None)
    if "llama" in program or "server" in program:
        cmd = parse_llama(argv, env)
        return lint_llama(cmd, _describer(cmd.overrides) if check else None)
    result = LintResult(program)
    from paircheck.preflight.lint import INFO, LintFinding

    result.findings.append(LintFinding("PF030", "unknown_launcher", INFO,
                                       f"{program!r} is not a launcher paircheck knows: nothing was checked"))
    return result


def result_to_dict(result: LintResult) -> dict[str, object]:
    from paircheck._format.json_format import report_to_dict

    return {
        "launcher": result.launcher,
        "ok": result.ok,
        "findings": [f.__dict__ for f in result.findings],
        "pairs": [report_to_dict(r) for r in result.reports],
    }


def render(result: LintResult) -> str:
    errors = sum(f.severity == ERROR for f in result.findings)
    bad_pairs = [r for r in result.reports if not r.compatible]
    if result.ok:
        head = f"OK: {result.launcher} command checked"
    else:
        parts = ([f"{errors} error{'s' if errors != 1 else ''}"] if errors else []) + (
            [f"{len(bad_pairs)} incompatible pair{'s' if len(bad_pairs) != 1 else ''}"] if bad_pairs else [])
        head = f"NOT OK: {result.launcher} command: " + ", ".join(parts)
    lines = [head]
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
            lines += wrap(f"{f.severity} {f.code} {f.name}: {f.message}", WIDTH, initial_indent="  ",
                                   subsequent_indent="    ")
            if f.fix:
                lines += wrap(f"fix: {f.fix}", WIDTH, initial_indent="    ", subsequent_indent="      ")
    for r in result.reports:
        first = r.first_failure
        if first is not None and first.fix:
            lines += wrap(f"{r.method} fix: {first.fix}", WIDTH, initial_indent="  ", subsequent_indent="    ")
        for w in r.warnings:
            lines += wrap(f"warning {w.code} {w.name}: {w.message}", WIDTH, initial_indent="  ",
                                   subsequent_indent="    ")
        if not r.compatible:
            lines += wrap(f"Next: {r.next_steps[-1]}", WIDTH) if r.next_steps else []
    return "\n".join(lines)


def _emit(result: LintResult, as_json: bool, quiet: bool) -> None:
    if as_json:
        click.echo(json.dumps(result_to_dict(result), indent=2, ensure_ascii=False))
    elif not quiet:
        click.echo(render(result), err=False)


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--dry-run", is_flag=True, help="Check and lint only; do not start the command.")
@click.option("--force", is_flag=True, help="Start the command even when the check fails.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON (on stdout, before the exec).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
def run(dry_run: bool, force: bool, as_json: bool, quiet: bool, command: tuple[str, ...]) -> None:
    """Check a launch command, then exec it: paircheck run -- llama-server -m T -md D ..."""
    argv = list(command)
    result = lint_argv(argv)
    _emit(result, as_json, quiet)
    if dry_run:
        sys.exit(EXIT_OK if result.ok else EXIT_FAIL)
    if not result.ok and not force:
        if not quiet and not as_json:
            click.echo("paircheck: not starting the command (use --force to start it anyway)", err=True)
        sys.exit(EXIT_FAIL)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvp(argv[0], argv)
    except FileNotFoundError:
        raise InputError(argv[0], "command not found") from None
    except PermissionError:
        raise InputError(argv[0], "permission denied") from None


@click.command("lint-cmd")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@click.option("--no-check", is_flag=True, help="Lint the flags only; do not read the model files.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
def lint_cmd(as_json: bool, quiet: bool, no_check: bool, command: tuple[str, ...]) -> None:
    """Lint a launch command given as one string (or as separate words after --)."""
    try:
        argv = shlex.split(command[0]) if len(command) == 1 else list(command)
    except ValueError as exc:
        raise InputError("command", f"cannot split it like a shell: {exc}") from None
    result = lint_argv(argv, check=not no_check)
    _emit(result, as_json, quiet)
    sys.exit(EXIT_OK if result.ok else EXIT_FAIL)


@click.command("lint-modelfile")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@click.argument("modelfile")
def lint_modelfile_cmd(as_json: bool, quiet: bool, modelfile: str) -> None:
    """Lint an Ollama Modelfile's DRAFT and draft parameters, and check the pair."""
    path = Path(modelfile)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(modelfile, "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(modelfile, f"cannot read: {exc}") from None
    result = lint_modelfile(text, str(path.parent), _describer([]))
    _emit(result, as_json, quiet)
    sys.exit(EXIT_OK if result.ok else EXIT_FAIL)


COMMANDS: list[click.Command] = [run, lint_cmd, lint_modelfile_cmd]
