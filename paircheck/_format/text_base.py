"""What every text renderer shares: colour only when asked for, prose wrapped at the
terminal's width, table cells that wrap instead of cutting, and commands that are never
wrapped, so they can be pasted. The renderers of each result kind (text_report,
text_pairs, text_bench, text_lint, text_fit, scan_render) sit on top of it.
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from collections.abc import Iterable, Sequence

from paircheck._format.interface import RenderOptions

# ANSI SGR codes; used only when RenderOptions.color is set.
_COLORS = {"green": "32", "red": "31", "yellow": "33", "bold": "1", "dim": "2"}
# Lines that start with one of these are command lines: printed whole, never wrapped.
COMMANDS = ("llama-server", "llama-cli", "paircheck", "vllm", "ollama", "python", "huggingface-cli", "hf ")


def paint(text: str, color: str, options: RenderOptions) -> str:
    return f"\x1b[{_COLORS[color]}m{text}\x1b[0m" if options.color else text


def wrap(text: str, width: int, indent: str = "", hanging: str = "  ") -> list[str]:
    """Wrap prose at ``width``; never at hyphens, so flags such as ``--spec-type`` stay whole.
    Text with wide characters is measured in terminal columns (``cells``)."""
    if cells(text) != len(text):
        later = indent + hanging
        wrapped = _wrap_cells(text, width - cells(indent), width - cells(later))
        return [(indent if i == 0 else later) + line for i, line in enumerate(wrapped)] or [indent.rstrip()]
    return textwrap.wrap(
        text,
        width,
        initial_indent=indent,
        subsequent_indent=indent + hanging,
        break_on_hyphens=False,
        break_long_words=False,
    ) or [indent.rstrip()]


def prose_or_command(text: str, width: int, indent: str = "") -> list[str]:
    """A command line stays on one line (to be pasted); anything else is wrapped. A program
    named by its path (a container's /app/llama-server) is a command too."""
    program = text.split(" ", 1)[0]
    if text.startswith(COMMANDS) or ("/" in program and program.rsplit("/", 1)[1].startswith(("llama-", "vllm"))):
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


def cells(text: str) -> int:
    """The columns ``text`` takes on a terminal: 2 for a wide or full-width character (CJK,
    DeepSeek's '｜' bars), 0 for a combining mark or a zero-width format character, else 1.
    Tables are sized in these, not in characters, or a row with wide text runs past the rest."""
    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.combining(ch) or unicodedata.category(ch) == "Cf"
               else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _wrap_cells(text: str, width: int, later: int | None = None) -> list[str]:
    """Greedy word wrap measured in terminal columns (``later``: the width of the lines after
    the first); a word wider than a line is split."""
    lines: list[str] = []
    line = ""

    def room_of() -> int:
        return width if not lines or later is None else later

    for word in text.split():
        while cells(word) > room_of():  # split a long word at the last character that fits
            room = room_of() - cells(line) - (1 if line else 0)
            take = 0
            while take < len(word) and cells(word[:take + 1]) <= room:
                take += 1
            if take == 0:
                lines.append(line)
                line = ""
                continue
            lines.append(f"{line} {word[:take]}" if line else word[:take])
            line, word = "", word[take:]
        if line and cells(line) + 1 + cells(word) > room_of():
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines


def cell(text: str, width: int, hyphens: bool = False) -> str:
    """A table cell wrapped onto several lines: long values are never cut. Model names
    may break after a hyphen; other values (flags, token texts) never do. Wide characters
    count two columns."""
    if cells(text) != len(text):
        return "\n".join(_wrap_cells(text, width)) or "-"
    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=hyphens, break_long_words=True)) or "-"


def _pad(text: str, width: int, right: bool = False) -> str:
    room = " " * max(0, width - cells(text))
    return room + text if right else text + room


def simple_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    """tabulate's "simple" layout without its two columns of header padding, so a table can be
    sized to the width exactly: columns as wide as their widest line, two spaces apart, header
    cells of several lines (``"a\\nb"``) bottom-aligned, dashes under them. ``right``: columns
    aligned right."""
    rows_lines = [[str(c).split("\n") for c in row] for row in rows]
    heads = [str(h).split("\n") for h in headers]
    widths = [max(cells(line) for col in (heads[i], *(r[i] for r in rows_lines)) for line in col)
              for i in range(len(heads))]

    def lines(row: list[list[str]], top: bool) -> list[str]:
        height = max(len(c) for c in row)
        padded = [([""] * (height - len(c)) + c) if top else (c + [""] * (height - len(c))) for c in row]
        return ["  ".join(_pad(part[k], widths[i], i in right) for i, part in enumerate(padded)).rstrip()
                for k in range(height)]

    out = lines(heads, top=True) + ["  ".join("-" * w for w in widths)]
    for row in rows_lines:
        out += lines(row, top=False)
    return "\n".join(out)


def row_ranges(rows: list[int]) -> str:
    """Row numbers as ranges: [1, 2, 3, 5] -> "1-3, 5"."""
    spans: list[list[int]] = []
    for n in rows:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
