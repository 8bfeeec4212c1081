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

EXIT_OK, EXIT_INCOMPATIBLE, EXIT_ERROR = 0, 1, 2


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


def render_options(verbose: bool = False) -> RenderOptions:
    return RenderOptions(width=terminal_width(), verbose=verbose, color=wants_color())
