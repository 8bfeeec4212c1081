"""The command line: ``paircheck TARGET DRAFT`` and its subcommands.

Exit codes (paircheck.outcome): 0 compatible (warnings allowed), 1 not compatible, 2
paircheck could not read an input or was used wrongly (one line on stderr, never a
traceback; with ``--json`` also an error object on stdout), 3 not checked, 4 accepted at
load but predicted to abort at run time, 5 a warning ``--fail-on`` asks to fail on.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from typing import Any

import click
from click.shell_completion import CompletionItem

from paircheck.cli.options import EXIT_ERROR
from paircheck.errors import InputError
from paircheck.version import __version__

# Subcommands in their own modules, imported only when used: a pair check must not pay
# for the registry, the llama.cpp option table or the pre-flight parsers at start-up.
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("paircheck.cli.check", "check"),
    "explain": ("paircheck.cli.explain", "explain"),
    "pairs": ("paircheck.cli.pairs", "pairs"),
    "run": ("paircheck.cli.preflight", "run"),
    "lint-cmd": ("paircheck.cli.preflight", "lint_cmd"),
    "lint-modelfile": ("paircheck.cli.preflight", "lint_modelfile_cmd"),
    "lint-py": ("paircheck.cli.preflight", "lint_py"),
    "lint": ("paircheck.cli.preflight", "lint_files_cmd"),
    "bench": ("paircheck.cli.bench", "bench"),
    "estimate": ("paircheck.cli.bench", "estimate"),
    "probe": ("paircheck.cli.probe", "probe"),
    "fit": ("paircheck.cli.fit", "fit_cmd"),
    "scan": ("paircheck.cli.scan", "scan_cmd"),
    "gpus": ("paircheck.cli.gpus", "gpus_cmd"),
}


# One line per command for `paircheck --help`: click would cut the docstrings with "...".
SUMMARIES = {
    "check": "Is DRAFT usable with TARGET? (the default: paircheck T D)",
    "explain": "What a rule code checks, why, how to fix it, its source",
    "pairs": "Documented target/draft pairs, or the drafts for one target",
    "run": "Check a launch command, then start it",
    "lint-cmd": "Lint a launch command (llama-server, llama-cli, vllm serve)",
    "lint-py": "Lint a Python file's vLLM/transformers calls (never runs it)",
    "lint-modelfile": "Lint an Ollama Modelfile's DRAFT lines",
    "lint": "Find and lint launch commands in compose, units, manifests",
    "bench": "Measure a pair on a real llama-server (bench run, compare)",
    "estimate": "Model the speedup of a pair (labelled as a model)",
    "probe": "Measure how many draft tokens the target accepts, per draft length",
    "fit": "Memory of target + draft at a context, against a VRAM budget",
    "scan": "Rank every model on this machine as a draft for TARGET",
    "gpus": "The GPU table --gpu names: bandwidth, memory, sources",
}


class UsageProblem(click.ClickException):
    """An InputError on its way out through click: printed as one line, exit code 2."""

    exit_code = EXIT_ERROR

    def __init__(self, error: InputError) -> None:
        super().__init__(str(error))
        self.error = error

    def show(self, file: Any = None) -> None:
        click.echo(f"paircheck: error: {self.format_message()}", err=True)


ERROR_SCHEMA_VERSION = 1


def wants_json(argv: list[str]) -> bool:
    """``--json`` or ``--format json`` among paircheck's own arguments (not after ``--``,
    where a launch command's words begin)."""
    words = argv[: argv.index("--")] if "--" in argv else argv
    for i, word in enumerate(words):
        if word == "--json" or word == "--format=json" or (word == "--format" and words[i + 1: i + 2] == ["json"]):
            return True
    return False


def error_object(code: str, message: str, where: str | None = None) -> dict[str, Any]:
    """What ``--json`` prints on stdout when paircheck exits 2 (README: JSON output)."""
    return {
        "schema_version": ERROR_SCHEMA_VERSION,
        "kind": "error",
        "paircheck_version": __version__,
        # input: a file, folder, URL or value could not be used; usage: the command line is
        # wrong; interrupted, out-of-memory, internal: paircheck itself stopped.
        "code": code,
        "input": where or None,
        "message": message,
        "exit_code": EXIT_ERROR,
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

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, SUMMARIES.get(name, "")) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        # Shell completion walks the words typed so far: `paircheck T <TAB>` is `check T`.
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            return self.default_command, self.get_command(ctx, self.default_command), args
        return super().resolve_command(ctx, args)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        # The first word is a command or, for the default check, a model file or folder.
        found = super().shell_complete(ctx, incomplete)
        if not incomplete.startswith("-"):
            found.append(CompletionItem(incomplete, type="file"))
        return found

    def invoke(self, ctx: click.Context) -> Any:
        # An InputError is the user's input, not a bug: one line and exit 2, also when the
        # group is driven by click's test runner rather than main().
        try:
            return super().invoke(ctx)
        except InputError as exc:
            raise UsageProblem(exc) from None

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = next((a for a in args if not a.startswith("-")), None)
        wants_group_help = args and args[0] in ("--help", "-h", "--version")
        known = first in self.commands or first in LAZY_COMMANDS
        if (first is not None and not known and not wants_group_help) or (
            first is None and args and not wants_group_help
        ):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


@click.group(
    cls=DefaultGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="Exit codes: 0 compatible / OK, 1 not compatible / lint errors, 2 an input could not be read "
    "or the command was misused, 3 nothing or not everything was checked, 4 accepted at load but "
    "predicted to abort at run time, 5 a warning --fail-on asks to fail on. Each command's --help has "
    "its own examples.",
)
@click.version_option(__version__, prog_name="paircheck")
def cli() -> None:
    """Is DRAFT usable with TARGET for speculative decoding? Answered from metadata.

    \b
      paircheck TARGET DRAFT               check a pair (llama.cpp draft-simple)
      paircheck --engine all TARGET DRAFT  every engine's verdict (vllm, ...)
      paircheck --method draft-eagle3 T D  another speculative method
      paircheck --json TARGET DRAFT        machine-readable report (schema 3)
      paircheck -q TARGET DRAFT            no output: the exit code is the answer
      paircheck --strict TARGET DRAFT      launch-script hook: any warning fails
      paircheck explain CODE               what a rule checks and how to fix it

    TARGET and DRAFT: GGUF files, Hugging Face folders, Hub repo ids or http(s) URLs.
    All check options: paircheck check --help.
    """


def _fail(message: str, as_json: bool = False, code: str = "input", where: str | None = None,
          detail: str | None = None) -> None:
    click.echo(f"paircheck: error: {message}", err=True)
    if as_json:
        # A script piping --json into a parser gets an object, not an empty stream.
        click.echo(json.dumps(error_object(code, detail if detail is not None else message, where), indent=2))
    sys.exit(EXIT_ERROR)


def main(argv: list[str] | None = None) -> Any:
    """Entry point: turns every failure into one stderr line and exit code 2 (with ``--json``,
    also an error object on stdout)."""
    args = list(sys.argv[1:] if argv is None else argv)
    as_json = wants_json(args)
    try:
        return cli.main(args=argv, prog_name="paircheck", standalone_mode=False)
    except InputError as exc:
        _fail(str(exc), as_json, "input", exc.where, exc.message)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else "", err=True)
        sys.exit(EXIT_ERROR)
    except UsageProblem as exc:
        _fail(exc.format_message().replace("\n", " "), as_json, "input", exc.error.where, exc.error.message)
    except click.ClickException as exc:
        param = getattr(exc, "param", None)
        where = param.opts[0] if param is not None and getattr(param, "opts", None) else None
        _fail(exc.format_message().replace("\n", " "), as_json, "usage", where)
    except click.exceptions.Abort:
        _fail("aborted", as_json, "interrupted")
    except KeyboardInterrupt:
        _fail("interrupted", as_json, "interrupted")
    except MemoryError:
        _fail("out of memory while reading the input", as_json, "out-of-memory")
    except BrokenPipeError:
        sys.exit(EXIT_ERROR)
    except Exception as exc:
        if os.environ.get("PAIRCHECK_DEBUG"):
            raise
        _fail(f"internal error: {type(exc).__name__}: {exc} (set PAIRCHECK_DEBUG=1 for a traceback)", as_json,
              "internal")
    return None
