"""Shell-like words with the place each one was written: the one tokenizer that compose's string
``command:``, ``sh -c '...'``, shell scripts, systemd's ExecStart= and Dockerfiles' shell form share.

A word's text is what the program would receive: quotes removed, ``\\`` escapes applied,
variables expanded by the file kind's ``Lookup`` (a value of None: not known here, kept as
written and reported), and an unquoted expansion split on whitespace, as a shell does. Each
word keeps the offset it started at, which the caller maps to a line and column.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

# name -> value, or None when this file does not know it.
Lookup = Callable[[str], "str | None"]
OPERATORS = ("&&", "||", ";;", ";", "&", "|", "(", ")")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# ${NAME}, ${NAME:-x}, ${NAME-x}, ${NAME:=x}, ${NAME:?x}, ${NAME?x}, ${NAME:+x}, ${NAME+x}
BRACED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=?+])([^}]*))?\}")


class ShellSyntaxError(ValueError):
    """Text that cannot be split like a shell (an unclosed quote): bad input, exit 2."""


@dataclass(frozen=True)
class Pos:
    line: int  # 1-based
    column: int  # 1-based


class LineIndex:
    """Offsets of a text to (line, column), both 1-based."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def pos(self, offset: int) -> Pos:
        line = bisect_right(self.starts, offset)
        return Pos(line, offset - self.starts[line - 1] + 1)


class SpanPlaces:
    """Where pieces of a value were written in the source. ``exact``: the value is the source's
    text from ``start`` (a script, a unit's line, a plain YAML scalar), so a piece's offset in
    the value is its place. Otherwise (a folded or quoted YAML scalar, a ``sh -c`` string) each
    piece is looked for in order, near where the last one was found; not found (an escape), the
    span's start."""

    WINDOW = 1024  # how far past the last piece the next is looked for: linear time, whatever the file

    def __init__(self, source: str, index: LineIndex, start: int, end: int, exact: bool = False) -> None:
        self.source = source
        self.index = index
        self.start = start
        self.cursor = start
        self.end = end
        self.exact = exact
        self.fallback = index.pos(start)

    def at(self, offset: int, piece: str) -> Pos:
        """The place of ``piece``, which starts at ``offset`` of the value."""
        found = self.offset_of(offset, piece)
        return self.fallback if found is None else self.index.pos(found)

    def find(self, piece: str) -> Pos:
        found = self.offset_of(None, piece)
        return self.fallback if found is None else self.index.pos(found)

    def offset_of(self, offset: int | None, piece: str) -> int | None:
        if self.exact and offset is not None:
            self.cursor = self.start + offset + len(piece)
            return self.start + offset
        limit = min(self.end, self.cursor + len(piece) + self.WINDOW)
        found = self.source.find(piece, self.cursor, limit) if piece else -1
        if found < 0:
            return None
        self.cursor = found + len(piece)
        return found

    def within(self, piece: str, offset: int | None = None) -> SpanPlaces:
        """The places of a piece's own text (a ``sh -c`` script), found as ``at`` finds it."""
        found = self.offset_of(offset, piece)
        if found is None:  # written otherwise (folded over lines): its words are looked for in the rest
            return SpanPlaces(self.source, self.index, self.cursor, self.end)
        return SpanPlaces(self.source, self.index, found, found + len(piece))


@dataclass(frozen=True)
class Expansion:
    """One ``$...`` that was read: its value (None: unknown here), what was written, and how to
    treat an unset variable (``required``: ${VAR:?msg}; ``defaulted``: a default was given)."""

    name: str
    written: str
    value: str | None
    required: str | None = None
    unset: bool = False  # the variable is not set where this file runs (its value: the unset default)


@dataclass
class Token:
    # "word", "op" ("\n" ends a command too) or "gone" (written but no argument: an empty or
    # unknown unquoted expansion)
    kind: str
    text: str
    start: int
    end: int
    quoted: bool = False
    # The expansions inside the word, and whether the word was nothing but one unknown one
    # (an unquoted $ARGS: zero or more words at run time, so it is dropped).
    expansions: list[Expansion] = field(default_factory=list)
    only_unknown: bool = False


def expand_braced(match: re.Match[str], lookup: Lookup, empty_is_unset: bool = True) -> Expansion:
    """``${NAME[op word]}`` as POSIX sh (and Compose) reads it."""
    name, op, arg = match.group(1), match.group(2), match.group(3) or ""
    value = lookup(name)
    unset = value is None or (op is not None and op.startswith(":") and value == "" and empty_is_unset)
    written = match.group(0)
    if op in (":-", "-", ":=", "="):
        return Expansion(name, written, arg if unset else value)
    if op in (":?", "?"):
        return Expansion(name, written, None if unset else value, required=(arg or f"{name} is required")
                         if unset else None, unset=unset)
    if op in (":+", "+"):
        return Expansion(name, written, "" if unset else arg)
    return Expansion(name, written, value, unset=value is None)


class Tokenizer:
    """Split ``text`` as a POSIX shell would (quotes, escapes, comments, operators, redirections
    dropped), expanding ``$`` with ``lookup``. ``dollar_dollar``: what ``$$`` means (Compose and
    systemd: a literal ``$``; a shell: its process id, unknown here)."""

    def __init__(self, text: str, lookup: Lookup, dollar_dollar: str | None = None, comments: bool = True,
                 unset_value: str | None = None) -> None:
        self.text = text
        self.lookup = lookup
        self.dollar_dollar = dollar_dollar
        self.comments = comments
        # What an unset variable becomes (Compose: ""); None keeps it as written, unknown.
        self.unset_value = unset_value

    def _dollar(self, i: int) -> tuple[Expansion | None, int]:
        exp, end = self._read_dollar(i)
        if exp is not None and exp.value is None and exp.unset and self.unset_value is not None:
            exp = Expansion(exp.name, exp.written, self.unset_value, exp.required, True)
        return exp, end

    def _read_dollar(self, i: int) -> tuple[Expansion | None, int]:
        """The expansion at text[i] == '$' and the offset after it (None: a literal '$')."""
        text = self.text
        nxt = text[i + 1: i + 2]
        if nxt == "$":
            if self.dollar_dollar is not None:
                return Expansion("$", "$$", self.dollar_dollar), i + 2
            return Expansion("$", "$$", None), i + 2
        if nxt == "{":
            match = BRACED.match(text, i)
            if match:
                return expand_braced(match, self.lookup), match.end()
            end = text.find("}", i)
            end = len(text) if end < 0 else end + 1
            return Expansion(text[i + 2:end - 1], text[i:end], None), end
        if nxt == "(":
            depth, j = 0, i + 1
            while j < len(text):
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                j += 1
                if depth == 0:
                    break
            return Expansion("$(...)", text[i:j], None), j  # command substitution: run time only
        match = NAME.match(text, i + 1)
        if match:
            value = self.lookup(match.group(0))
            return Expansion(match.group(0), "$" + match.group(0), value, unset=value is None), match.end()
        if nxt and nxt in "@*#?!-0123456789":
            return Expansion(nxt, "$" + nxt, None), i + 2
        return None, i + 1

    def tokens(self) -> list[Token]:
        return list(self.iter_tokens())

    def iter_tokens(self) -> Iterator[Token]:
        """The tokens in order, each yielded as soon as it is complete: a script's assignments
        can then change ``lookup`` for the lines after them."""
        text = self.text
        out: list[Token] = []
        i, n = 0, len(self.text)
        heredoc: str | None = None  # the delimiter of a here-document whose body follows this line
        chars: list[tuple[str, bool]] = []  # (char, splittable): splittable = from an unquoted expansion
        start = -1
        quoted = False
        expansions: list[Expansion] = []
        unknown_alone = 0  # unquoted unknown expansions making up the whole word

        def finish(end: int) -> None:
            nonlocal chars, start, quoted, expansions, unknown_alone
            if start < 0:
                return
            written = "".join(c for c, _ in chars)
            only = unknown_alone == 1 and len(expansions) == 1 and written == expansions[0].written
            pieces = [""]
            for c, split in chars:
                if split and c.isspace():
                    if pieces[-1]:
                        pieces.append("")
                else:
                    pieces[-1] += c
            words = [p for p in pieces if p] or ([""] if quoted else [])
            if only or not words:
                # An unquoted expansion unknown here (zero or more words at run time) or one
                # that came out empty (no word, as a shell drops it): no argument, but what
                # was read is kept for the report.
                out.append(Token("gone", written, start, end, quoted, list(expansions), only))
            else:
                for w in words:
                    out.append(Token("word", w, start, end, quoted, list(expansions), False))
            chars, start, quoted, expansions, unknown_alone = [], -1, False, [], 0

        def begin(at: int) -> None:
            nonlocal start
            if start < 0:
                start = at

        def add_expansion(exp: Expansion, in_quotes: bool) -> None:
            nonlocal unknown_alone
            expansions.append(exp)
            if exp.value is None:
                if not in_quotes and exp.name not in ("$",):
                    unknown_alone += 1
                chars.extend((c, False) for c in exp.written)
            else:
                chars.extend((c, not in_quotes) for c in exp.value)

        def take_dollar(at: int, in_quotes: bool) -> int:
            """The ``$...`` at ``at`` into the word; the offset after it."""
            exp, after = self._dollar(at)
            if exp is None:
                chars.append(("$", False))
            else:
                add_expansion(exp, in_quotes)
            return after

        while i < n:
            if out:
                yield from out
                out.clear()
            c = text[i]
            if c == "\\" and i + 1 < n and text[i + 1] == "\n":
                i += 2  # a line continuation
                continue
            if c in " \t\r":
                finish(i)
                i += 1
                continue
            if c == "\n":
                finish(i)
                out.append(Token("op", "\n", i, i + 1))
                i += 1
                if heredoc is not None:  # the body is text for another program, not commands
                    while i < n:
                        end = text.find("\n", i)
                        end = n if end < 0 else end
                        line = text[i:end].strip()
                        i = end + 1
                        if line == heredoc:
                            break
                    heredoc = None
                continue
            if c == "#" and start < 0 and self.comments:
                while i < n and text[i] != "\n":
                    i += 1
                continue
            op = next((o for o in OPERATORS if text.startswith(o, i)), None)
            if op is not None:
                finish(i)
                out.append(Token("op", op, i, i + len(op)))
                i += len(op)
                continue
            if c in "<>":
                # A redirection: its operator and target are not the program's arguments.
                if start >= 0 and all(ch.isdigit() for ch, _ in chars):
                    chars, start = [], -1
                else:
                        finish(i)
                here = text.startswith("<<", i) and not text.startswith("<<<", i)
                i += 1
                while i < n and text[i] in "<>&|-":
                    i += 1
                while i < n and text[i] in " \t":
                    i += 1
                j = i
                while j < n and text[j] not in " \t\n;&|()":
                    j += 1
                if here:
                    heredoc = text[i:j].strip("'\"\\")
                i = j
                continue
            begin(i)
            if c == "\\":
                if i + 1 < n:
                    chars.append((text[i + 1], False))
                i += 2
            elif c == "'":
                quoted = True
                end = text.find("'", i + 1)
                if end < 0:
                    raise ShellSyntaxError("no closing quotation")
                chars.extend((ch, False) for ch in text[i + 1:end])
                i = end + 1
            elif c == '"':
                quoted = True
                i += 1
                while True:
                    if i >= n:
                        raise ShellSyntaxError("no closing quotation")
                    ch = text[i]
                    if ch == '"':
                        i += 1
                        break
                    if ch == "\\" and i + 1 < n and text[i + 1] in '"\\$`\n':
                        if text[i + 1] != "\n":
                            chars.append((text[i + 1], False))
                        i += 2
                    elif ch == "$":
                        i = take_dollar(i, True)
                    else:
                        chars.append((ch, False))
                        i += 1
            elif c == "$":
                i = take_dollar(i, False)
            elif c == "`":
                end = text.find("`", i + 1)
                end = n if end < 0 else end + 1
                add_expansion(Expansion("`...`", text[i:end], None), False)
                i = end
            else:
                chars.append((c, False))
                i += 1
        finish(n)
        yield from out


def commands(tokens: list[Token]) -> list[list[Token]]:
    """The simple commands of a token list: words between operators and newlines."""
    found: list[list[Token]] = [[]]
    for token in tokens:
        if token.kind == "op":
            if found[-1]:
                found.append([])
        else:
            found[-1].append(token)
    return [c for c in found if c]


def interpolate(text: str, lookup: Lookup, dollar_dollar: str = "$",
                unset_value: str | None = None) -> tuple[str, list[Expansion]]:
    """``$VAR`` and ``${VAR...}`` in one value that is not split into words (a compose list
    item, an environment value): unknown ones become ``unset_value``, or stay as written."""
    tokenizer = Tokenizer(text, lookup, dollar_dollar, unset_value=unset_value)
    out, found, i = [], [], 0
    while i < len(text):
        if text[i] == "$":
            exp, j = tokenizer._dollar(i)
            if exp is None:
                out.append("$")
            else:
                found.append(exp)
                out.append(exp.written if exp.value is None else exp.value)
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out), found
