"""Colour never moves a line break (issue 26, point 6): the report wraps at the same places
with colour on as off, so an exactly-100-character verdict is not wrapped early on a
100-column terminal because of the escape codes around its first word."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from paircheck._format import RenderOptions, formats
from paircheck.findings import EveryEngine
from paircheck.pipeline import check_all_engines, check_pair, describe

EXAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "examples"
SPM, PHI3, BAICHUAN = (EXAMPLES / f"ggml-vocab-{n}.gguf" for n in ("llama-spm", "phi-3", "baichuan"))
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.parametrize("draft", [BAICHUAN, PHI3], ids=["refused", "aborts"])
def test_colour_does_not_change_where_lines_break(draft: Path) -> None:
    report = check_pair(str(SPM), str(draft))
    text = formats()["text"]
    verdict = text.render(report, RenderOptions(width=1000)).splitlines()[0]
    # Every width from narrow to one past the verdict, and the verdict's own length exactly.
    for width in [*range(40, len(verdict) + 2), len(verdict)]:
        plain = text.render(report, RenderOptions(width=width, color=False))
        painted = text.render(report, RenderOptions(width=width, color=True))
        assert ANSI.search(painted), width
        assert ANSI.sub("", painted) == plain, width
    exact = text.render(report, RenderOptions(width=len(verdict), color=True))
    assert ANSI.sub("", exact).splitlines()[0] == verdict  # fits exactly: one line


def test_the_matrix_too() -> None:
    reports = EveryEngine(check_all_engines(describe(str(SPM)), describe(str(PHI3))))
    text = formats()["text"]
    for width in (60, 80, 100, 132):
        assert ANSI.sub("", text.render(reports, RenderOptions(width=width, color=True))) == \
            text.render(reports, RenderOptions(width=width, color=False))
