"""The command line: ``paircheck TARGET DRAFT`` and its subcommands.

Exit codes: 0 compatible (warnings allowed), 1 not compatible, 2 paircheck could not
read an input or was used wrongly (one line on stderr, never a traceback).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from paircheck import __version__
from paircheck._engine import all_rules, find_rule
from paircheck._format import render_human, render_json
from paircheck.api import DEFAULT_ENGINE, check_pair
from paircheck.errors import InputError
from paircheck.vocab import Override

EXIT_OK, EXIT_INCOMPATIBLE, EXIT_ERROR = 0, 1, 2


# Subcommands in their own modules, imported only when used: a pair check must not pay
# for the registry, the llama.cpp option table or the pre-flight parsers at start-up.
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "pairs": ("paircheck.cli_pairs", "pairs"),
    "run": ("paircheck.cli_preflight", "run"),
    "lint-cmd": ("paircheck.cli_preflight", "lint_cmd"),
    "lint-modelfile": ("paircheck.cli_preflight", "lint_modelfile_cmd"),
    "fit": ("paircheck.cli_fit", "fit_cmd"),
}


class DefaultGroup(click.Group):
    """``paircheck T D`` means ``paircheck check T D``; some subcommands load lazily."""

    default_command = "check"

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(LAZY_COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS:
            module, attr = LAZY_COMMANDS[cmd_name]
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, cmd_name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = next((a for a in args if not a.startswith("-")), None)
        wants_group_help = args and args[0] in ("--help", "-h", "--version")
        known = first in self.commands or first in LAZY_COMMANDS
        if first is not None and not known and not wants_group_help:
            args = [self.default_command, *args]
        elif first is None and args and not wants_group_help:
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="paircheck")
def cli() -> None:
    """Is DRAFT usable with TARGET for speculative decoding? Answered from metadata.

    \b
      paircheck TARGET DRAFT            check a pair (llama.cpp draft-simple)
      paircheck --json TARGET DRAFT     machine-readable report
      paircheck explain CODE            what a rule checks and how to fix it
    """


def parse_override(text: str) -> tuple[str, Override]:
    """``KEY=TYPE:VALUE`` as llama.cpp's --override-kv takes it (int, float, bool, str)."""
    key, sep, typed = text.partition("=")
    kind, sep2, raw = typed.partition(":")
    if not sep or not sep2 or not key:
        raise InputError("--override-kv", f"expected KEY=TYPE:VALUE, got {text!r}")
    try:
        if kind == "int":
            return key, ("int", int(raw))
        if kind == "float":
            return key, ("float", float(raw))
        if kind == "bool":
            if raw not in ("true", "false"):
                raise ValueError
            return key, ("bool", raw == "true")
        if kind == "str":
            return key, ("str", raw)
    except ValueError:
        raise InputError("--override-kv", f"invalid {kind} value in {text!r}") from None
    raise InputError("--override-kv", f"unknown type {kind!r} in {text!r} (int, float, bool, str)")


@cli.command()
@click.argument("target")
@click.argument("draft")
@click.option(
    "--engine",
    default=DEFAULT_ENGINE,
    show_default=True,
    help="Whose rule applies: llama.cpp, lmstudio, vllm, transformers, sglang, koboldcpp, ollama, "
    "tensorrt-llm, or all (one row per engine).",
)
@click.option("--method", default=None, help="Speculative method (default: the engine's, draft-simple).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (schema_version 1).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@click.option("-v", "--verbose", is_flag=True, help="Show passing checks one by one.")
@click.option(
    "--override-kv",
    "override_kv",
    multiple=True,
    metavar="KEY=TYPE:VALUE",
    help="As llama.cpp's --override-kv: applied to both models.",
)
@click.option(
    "--no-registry",
    "no_registry",
    is_flag=True,
    help="Do not look the pair up in the registry of documented pairs.",
)
@click.option("-c", "--ctx", "ctx", type=int, default=None, help="Also size memory at this context (see `paircheck fit`).")
@click.option("--vram", default=None, help="Also check memory against this device budget, e.g. 24GiB.")
def check(
    target: str,
    draft: str,
    engine: str,
    method: str | None,
    as_json: bool,
    quiet: bool,
    verbose: bool,
    override_kv: tuple[str, ...],
    no_registry: bool,
    ctx: int | None,
    vram: str | None,
) -> None:
    """Check DRAFT against TARGET (GGUF files)."""
    overrides = dict(parse_override(item) for item in override_kv)
    # -q prints nothing, so it skips what is only printed: fingerprints and the
    # registry look-up (neither changes the verdict or the exit code).
    shown = as_json or not quiet
    extras = dict(registry=shown and not no_registry, fingerprint=shown)
    # A progress line only for a person watching: never with --json or -q, nor into a pipe.
    progress = not (quiet or as_json) and sys.stderr.isatty()
    if engine == "all":
        _check_all(target, draft, method, overrides, as_json, quiet, extras, progress)
        return
    report = check_pair(target, draft, engine=engine, method=method, overrides=overrides, progress=progress, **extras)
    if (ctx is not None or vram is not None) and shown:
        from paircheck.cli_fit import pair_memory

        report.memory = pair_memory(report.target, report.draft, ctx, vram)
    if as_json:
        click.echo(render_json(report))
    elif not quiet:
        click.echo(render_human(report, verbose=verbose))
    sys.exit(EXIT_OK if report.compatible else EXIT_INCOMPATIBLE)


def _check_all(
    target: str,
    draft: str,
    method: str | None,
    overrides: dict[str, Override],
    as_json: bool,
    quiet: bool,
    extras: dict[str, bool],
    progress: bool = False,
) -> None:
    """``--engine all``: exit 0 when at least one engine accepts the pair."""
    from paircheck._format.matrix import render_matrix, render_matrix_json
    from paircheck.api import check_all_engines, describe

    reports = check_all_engines(
        describe(target, overrides, progress), describe(draft, overrides, progress), method, **extras
    )
    if not reports:
        raise InputError("--method", f"no engine has method {method!r}")
    if as_json:
        click.echo(render_matrix_json(reports))
    elif not quiet:
        click.echo(render_matrix(reports))
    sys.exit(EXIT_OK if any(r.compatible for r in reports) else EXIT_INCOMPATIBLE)


@cli.command()
@click.argument("code", required=False)
def explain(code: str | None) -> None:
    """Explain a rule (by code or name), or list them all."""
    if code is None:
        rows = [(r.code, r.name, r.kind, r.title) for r in all_rules()]
        from tabulate import tabulate  # only here: a plain check does not pay for it

        click.echo(tabulate(rows, headers=("code", "name", "kind", "title"), tablefmt="simple"))
        return
    rule = find_rule(code)
    if rule is None:
        raise InputError(code, "no such rule; `paircheck explain` lists them")
    click.echo(f"{rule.code} {rule.name}: {rule.title}\n")
    for paragraph in (rule.explanation, f"Fix: {rule.fix}"):
        click.echo(click.wrap_text(paragraph, 100) + "\n")




def _fail(message: str) -> None:
    click.echo(f"paircheck: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def main(argv: list[str] | None = None) -> Any:
    """Entry point: turns every failure into one stderr line and exit code 2."""
    try:
        return cli.main(args=argv, prog_name="paircheck", standalone_mode=False)
    except InputError as exc:
        _fail(str(exc))
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else "", err=True)
        sys.exit(EXIT_ERROR)
    except click.ClickException as exc:
        _fail(exc.format_message().replace("\n", " "))
    except click.exceptions.Abort:
        _fail("aborted")
    except KeyboardInterrupt:
        _fail("interrupted")
    except MemoryError:
        _fail("out of memory while reading the input")
    except BrokenPipeError:
        sys.exit(EXIT_ERROR)
    except Exception as exc:  # noqa: BLE001 - the promise is: never a traceback
        if os.environ.get("PAIRCHECK_DEBUG"):
            raise
        _fail(f"internal error: {type(exc).__name__}: {exc} (set PAIRCHECK_DEBUG=1 for a traceback)")
    return None
