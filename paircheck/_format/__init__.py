"""Output formats: one module per format, each defining ``FORMAT``, an ``interface.Format``
(its name and one renderer per kind of result it can show).

A format's module is imported when it is asked for, and each renderer imports its own
module when called: the check prints text or JSON and loads neither the registry tables nor
the other formats.
"""

from __future__ import annotations

import importlib

from paircheck._format.interface import KINDS, Format, RenderOptions

# name -> module; ``table`` is the text format's old name (cli.options maps it).
FORMATS: dict[str, str] = {
    "text": "paircheck._format.text",
    "json": "paircheck._format.json_format",
    "markdown": "paircheck._format.markdown",
    "csv": "paircheck._format.csv_format",
    "html": "paircheck._format.html",
    "sarif": "paircheck._format.sarif",
    "github": "paircheck._format.github",
}


def format_named(name: str) -> Format:
    """The format the CLI calls ``name`` (KeyError for an unknown one)."""
    found: Format = importlib.import_module(FORMATS[name]).FORMAT
    return found


def render(name: str, result: object, options: RenderOptions) -> str:
    """``result`` (a Report, ScanResult, ...) in the format called ``name``; an InputError
    when that format cannot show that kind of result."""
    return format_named(name).render(result, options)


def formats() -> dict[str, Format]:
    """Every format by the name the CLI takes."""
    return {name: format_named(name) for name in FORMATS}


__all__ = ["KINDS", "Format", "RenderOptions", "format_named", "formats", "render"]
