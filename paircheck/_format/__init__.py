"""Output formats: one module per format, each implementing ``interface.Format``.

A format's module is imported when it is asked for: the check prints text or JSON and
needs neither the registry tables nor the other formats.
"""

from __future__ import annotations

import importlib

from paircheck._format.interface import Format, RenderOptions

# name -> (module, class); ``table`` is the text format's old name.
FORMATS: dict[str, tuple[str, str]] = {
    "text": ("paircheck._format.text", "TextFormat"),
    "json": ("paircheck._format.json_format", "JSONFormat"),
    "markdown": ("paircheck._format.markdown", "MarkdownFormat"),
    "csv": ("paircheck._format.csv_format", "CSVFormat"),
    "html": ("paircheck._format.html", "HTMLFormat"),
    "sarif": ("paircheck._format.sarif", "SarifFormat"),
    "github": ("paircheck._format.github", "GithubFormat"),
}


def format_named(name: str) -> Format:
    """The format the CLI calls ``name`` (KeyError for an unknown one)."""
    module, cls = FORMATS[name]
    found: Format = getattr(importlib.import_module(module), cls)()
    return found


def formats() -> dict[str, Format]:
    """Every format by the name the CLI takes."""
    return {name: format_named(name) for name in FORMATS}


__all__ = ["Format", "RenderOptions", "format_named", "formats"]
