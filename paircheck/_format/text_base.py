"""What every text renderer shares: colour only when asked for, prose wrapped at the
terminal's width, table cells that wrap instead of cutting, and commands that are never
wrapped, so they can be pasted. The renderers of each result kind (text_report,
text_pairs, text_bench, text_lint, text_fit, scan_render) sit on top of it.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Sequence

from paircheck._format.interface import RenderOptions

# ANSI SGR codes; used only when RenderOptions.color is set.
_COLORS = {"green": "32", "red": "31", "yellow": "33", "bold": "1", "dim": "2"}
# Lines that start with one of these are command lines: printed whole, never wrapped.
COMMANDS = ("llama-server", "llama-cli", "paircheck", "vllm", "ollama", "python", "huggingface-cli", "hf ")


def paint(text: str, color: str, options: RenderOptions) -> str:
    return f"\x1b[{_COLORS[color]}m{text}\x1b[0m" if options.color else text


def wrap(text: str, width: int, indent: str = "", hanging: str = "  ") -> list[str]:
    """Wrap prose at ``width``; never at hyphens, so flags such as ``--spec-type`` stay whole."""
    return textwrap.wrap(
        text,
        width,
        initial_indent=indent,
        subsequent_indent=indent + hanging,
        break_on_hyphens=False,
        break_long_words=False,
    ) or [indent.rstrip()]


def prose_or_command(text: str, width: int, indent: str = "") -> list[str]:
    """A command line stays on one line (to be pasted); anything else is wrapped."""
    if text.startswith(COMMANDS):
        return [indent + text]
    return wrap(text, width, indent)



def middle_cut(text: str, width: int, head: int | None = None) -> str:
    """A name cut in the middle with an ellipsis when longer than ``width``: its start and its
    end (a quantization, the extension) stay, and it stays on one line of a table. ``head``:
    how many characters of the start to keep (default: half). Full names are in JSON and in
    the paths of commands."""
    if len(text) <= width or width < 5:
        return text
    keep = width - 1
    head = keep // 2 if head is None else max(1, min(head, keep - 1))
    return text[:head] + "…" + text[len(text) - (keep - head):]


_WORD_ENDS = "-_. /:"
# A parameter count ("0.5B", "135M", "8x7B"): what tells two drafts of one family apart.
_SIZE = re.compile(r"(?<![A-Za-z0-9.])(?:\d+x)?\d+(?:\.\d+)?[BbMm](?![A-Za-z])")


def distinct_cut(text: str, others: Iterable[str], width: int) -> str | None:
    """``text`` cut in the middle (as ``middle_cut``) so that it still names only itself among
    ``others``: no other name starts with the kept start and ends with the kept end, so
    'Qwen2.5-0.5B-Instruct' is never shown as 'Qwen2…nstruct', which 1.5B also reads as. Both
    parts keep 4 characters or more. Of the cuts that do, the one that keeps a parameter count
    whole, then whose parts end and start at a word's edge, then the one nearest the middle.
    None when no cut at this width tells it apart (the caller wraps it)."""
    if len(text) <= width or width < 5:
        return text
    rivals = [o for o in others if o != text]
    keep = width - 1
    least = min(4, keep // 3)
    sizes = [m.span() for m in _SIZE.finditer(text)]
    best: tuple[tuple[int, int, int], int] | None = None
    for head in range(least, keep - least + 1):
        tail = len(text) - (keep - head)  # where the kept end starts
        start, end = text[:head], text[tail:]
        if any(o.startswith(start) and o.endswith(end) for o in rivals):
            continue
        kept = sum(b <= head or a >= tail for a, b in sizes)
        edges = (text[head] in _WORD_ENDS or start[-1] in _WORD_ENDS) + (
            text[tail - 1] in _WORD_ENDS or end[0] in _WORD_ENDS)
        score = (kept, edges, -abs(head - keep // 2))
        if best is None or score > best[0]:
            best = (score, head)
    return None if best is None else middle_cut(text, width, best[1])


def cell(text: str, width: int, hyphens: bool = False) -> str:
    """A table cell wrapped onto several lines: long values are never cut. Model names
    may break after a hyphen; other values (flags, token texts) never do."""
    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=hyphens, break_long_words=True)) or "-"


def simple_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    """tabulate's "simple" layout without its two columns of header padding, so a table can be
    sized to the width exactly: columns as wide as their widest line, two spaces apart, header
    cells of several lines (``"a\\nb"``) bottom-aligned, dashes under them. ``right``: columns
    aligned right."""
    cells = [[str(c).split("\n") for c in row] for row in rows]
    heads = [str(h).split("\n") for h in headers]
    widths = [max(len(line) for col in (heads[i], *(r[i] for r in cells)) for line in col) for i in range(len(heads))]

    def lines(row: list[list[str]], top: bool) -> list[str]:
        height = max(len(c) for c in row)
        padded = [([""] * (height - len(c)) + c) if top else (c + [""] * (height - len(c))) for c in row]
        return ["  ".join(cell[k].rjust(widths[i]) if i in right else cell[k].ljust(widths[i])
                          for i, cell in enumerate(padded)).rstrip() for k in range(height)]

    out = lines(heads, top=True) + ["  ".join("-" * w for w in widths)]
    for row in cells:
        out += lines(row, top=False)
    return "\n".join(out)
