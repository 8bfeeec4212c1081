"""Output formats: each renders a Report to text. One module per format."""

from __future__ import annotations

from paircheck._format.human import render_human
from paircheck._format.json_format import render_json, report_to_dict

__all__ = ["render_human", "render_json", "report_to_dict"]
