"""Option types and output settings shared by the commands.

Engine and method names are validated here, in any spelling paircheck accepts
(constants.canonical_engine / canonical_method), and complete in the shell.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click
from click.shell_completion import CompletionItem

from paircheck._format.interface import RenderOptions
from paircheck.constants import RULE_ENGINES, canonical_engine, canonical_method, method_spellings
from paircheck.outcome import DEFAULT_FAIL_ON, FAIL_ON_LEVELS, WARNING

EXIT_OK, EXIT_INCOMPATIBLE, EXIT_ERROR = 0, 1, 2

FAIL_ON_HELP = (
    "What makes the exit code non-zero, for launch scripts: refused (only a refusal, exit 1), "
    "crash (the default: also a pair accepted at load that is predicted to abort at run time, "
    "exit 4), slow (also a draft that makes decoding slower, PW001, exit 5), warning (any "
    "warning that can hurt, exit 5, and an unknown verdict, exit 3)."
)


class EngineType(click.ParamType):
    """An engine name (any accepted spelling), ``NAME@VERSION``, or ``all``."""

    name = "engine"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if text.lower() == "all":
            return "all"
        name, at, version = text.partition("@")
        canonical = canonical_engine(name)
        if canonical is None or canonical not in RULE_ENGINES:
            self.fail(f"{text!r} is not an engine paircheck has rules for: {', '.join(RULE_ENGINES)}, all", param, ctx)
        return f"{canonical}{at}{version}"

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        return [CompletionItem(e) for e in (*RULE_ENGINES, "all") if e.startswith(incomplete)]


class MethodType(click.ParamType):
    """A speculative method in any spelling paircheck prints (draft-simple, draft_model, eagle3...)."""

    name = "method"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if canonical_method(text) is None:
            self.fail(f"{text!r} is not a speculative method paircheck knows: {', '.join(method_spellings())}",
                      param, ctx)
        return text  # the engine maps it to its own name (api.resolve_method)

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        return [CompletionItem(m) for m in method_spellings() if m.startswith(incomplete)]


ENGINE = EngineType()
METHOD = MethodType()
MODEL_PATH = click.Path(dir_okay=True, file_okay=True, path_type=str)  # files and folders complete


def terminal_width() -> int:
    """``COLUMNS`` when set, else the terminal's width, else 100 (not a terminal)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if sys.stdout.isatty():
        import shutil  # here: it imports the compression modules, which a pipe never needs

        return shutil.get_terminal_size((100, 24)).columns
    return 100


def wants_color() -> bool:
    """Colour on a terminal, never into a pipe or with NO_COLOR set (https://no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def render_options(verbose: bool = False, fail_on: str = DEFAULT_FAIL_ON, pair_check: bool = True) -> RenderOptions:
    return RenderOptions(width=terminal_width(), verbose=verbose, color=wants_color(), fail_on=fail_on,
                         pair_check=pair_check)


def _fail_on(ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    return value.lower() if value else value


def fail_on_options(func: Any) -> Any:
    """``--fail-on LEVEL`` and ``--strict`` (= ``--fail-on warning``); the command gets
    ``fail_on`` (a level, never None) through ``resolve_fail_on``."""
    func = click.option("--strict", is_flag=True,
                        help="Hook mode: any warning or unknown fails (same as --fail-on warning).")(func)
    return click.option("--fail-on", "fail_on", type=click.Choice(FAIL_ON_LEVELS, case_sensitive=False),
                        default=None, callback=_fail_on, help=FAIL_ON_HELP + f" Default: {DEFAULT_FAIL_ON}.")(func)


def resolve_fail_on(fail_on: str | None, strict: bool) -> str:
    if strict and fail_on not in (None, WARNING):
        raise click.UsageError(f"--strict is --fail-on warning: give one, not --strict with --fail-on {fail_on}")
    return WARNING if strict else (fail_on or DEFAULT_FAIL_ON)


# --------------------------------------------------------------------------- the device

GPU_HELP = ("A GPU or Apple chip from `paircheck gpus` (\"3090\", \"RTX 4090\", \"M4 Max\"); default: the one "
            "nvidia-smi, rocm-smi or system_profiler reports here, if any.")
BANDWIDTH_HELP = "Memory bandwidth in GB/s, for a device not in the table (or to override its row)."


def gpu_options(f: Any) -> Any:
    """``--gpu`` and ``--bandwidth`` (``--vram`` is each command's own: fit's is a budget)."""
    f = click.option("--bandwidth", "bandwidth", type=float, default=None, help=BANDWIDTH_HELP)(f)
    return click.option("--gpu", "gpu", default=None, help=GPU_HELP)(f)
