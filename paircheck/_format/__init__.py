"""Output formats: one module per format, each implementing ``interface.Format``."""

from __future__ import annotations

from paircheck._format.csv_format import CSVFormat
from paircheck._format.html import HTMLFormat
from paircheck._format.interface import Format, RenderOptions
from paircheck._format.json_format import JSONFormat
from paircheck._format.markdown import MarkdownFormat
from paircheck._format.text import TextFormat


def formats() -> dict[str, Format]:
    """Every format by the name the CLI takes (``table`` is the text format's old name)."""
    found: list[Format] = [TextFormat(), JSONFormat(), MarkdownFormat(), CSVFormat(), HTMLFormat()]
    return {f.name: f for f in found}


__all__ = ["Format", "RenderOptions", "formats"]
