"""Launch commands in shell text: a launch script, and the ``sh -c '...'`` of a container's
command. Lines are read as a POSIX shell reads them (continuations, quotes, ``;``/``&&``/``|``,
redirections, here-documents skipped); ``VAR=value`` and ``export VAR=value`` lines set the
variables later lines expand, and exported ones (or ``VAR=x cmd``) are the program's
environment (``LLAMA_ARG_*``); ``docker run IMAGE ARGS`` is read as the container it starts
(docker_run.py). A variable the script does not set is only known at run time
(LF003): its words are checked as written, and an unquoted one, which may be any number of
words, is left out.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from paircheck.preflight.codes import LintFinding
from paircheck.preflight.files.docker_run import container_of
from paircheck.preflight.files.found import FoundCommand, Paths, Word, expansion_note, is_launch
from paircheck.preflight.files.words import NAME, LineIndex, Pos, SpanPlaces, Token, Tokenizer
from paircheck.preflight.launchers import program_name

SHELLS = ("sh", "bash", "dash", "ash", "zsh", "ksh")


@dataclass
class Launch:
    words: list[Word]
    env: dict[str, str] = field(default_factory=dict)
    env_at: dict[str, Pos] = field(default_factory=dict)
    notes: list[tuple[LintFinding, Pos]] = field(default_factory=list)
    paths: Paths | None = None  # a container's (docker run); None: this machine's, from the script's folder


def _assignment(text: str) -> tuple[str, str] | None:
    name, eq, value = text.partition("=")
    return (name, value) if eq and NAME.fullmatch(name) else None


def shell_script(words: list[Word]) -> tuple[int, Word] | None:
    """(index, the script word) for ``sh -c 'SCRIPT'`` (also ``bash -lc``, ``/bin/sh -ec``)."""
    if not words or program_name(words[0].text) not in SHELLS:
        return None
    for i, word in enumerate(words[1:], 1):
        if word.text.startswith("-") and "c" in word.text[1:] and not word.text.startswith("--"):
            return (i + 1, words[i + 1]) if i + 1 < len(words) else None
        if not word.text.startswith("-"):
            return None
    return None


@dataclass
class _Piece:
    token: Token
    pos: Pos
    inner: SpanPlaces | None  # where a quoted word's own text was written (a sh -c script)


def scan(text: str, places: SpanPlaces, variables: dict[str, str] | None = None,
         exported: dict[str, str] | None = None, style: str = "runtime",
         lookup_outside: Callable[[str], str | None] | None = None, base: str = "/") -> list[Launch]:
    """Every launch command of shell ``text``; ``places`` says where its pieces were written.
    ``variables``/``exported``: what is set before the text runs (a container's environment);
    ``lookup_outside``: variables of the file around it (Compose's interpolation); ``base``:
    the folder a ``docker run -v ./models:...`` is relative to."""
    variables = dict(variables or {})
    exported = dict(exported or {})
    exported_at: dict[str, Pos] = {}
    found: list[Launch] = []

    def lookup(name: str) -> str | None:
        if name in variables:
            return variables[name]
        return lookup_outside(name) if lookup_outside else None

    def set_variable(name: str, value: str, pos: Pos, export: bool) -> None:
        variables[name] = value
        if export or name in exported:
            exported[name], exported_at[name] = value, pos

    def run(command: list[_Piece]) -> None:
        pieces = [p for p in command if p.token.kind == "word"]
        words = [Word(p.token.text, p.pos) for p in pieces]
        if not words:
            return
        if all(_assignment(w.text) for w in words):
            for w in words:
                name, value = _assignment(w.text)  # type: ignore[misc]
                set_variable(name, value, w.pos, False)
            return
        if words[0].text in ("export", "declare", "typeset"):
            for w in words[1:]:
                pair = _assignment(w.text)
                if pair:
                    set_variable(pair[0], pair[1], w.pos, True)
                elif NAME.fullmatch(w.text) and w.text in variables:
                    set_variable(w.text, variables[w.text], w.pos, True)
            return
        nested = shell_script(words)
        if nested is not None:
            index, script = nested
            inner = pieces[index].inner
            if inner is None:  # a script without spaces: its own place
                inner = SpanPlaces(places.source, places.index, 0, 0)
                inner.fallback = script.pos
            found.extend(scan(script.text, inner, variables, exported, style, lookup_outside, base))
            return
        container = container_of(words, base)
        if container is not None:
            words = container.words
        if not is_launch([w.text for w in words]):
            return
        notes: list[tuple[LintFinding, Pos]] = []
        seen: set[str] = set()
        for piece in command:
            for exp in piece.token.expansions:
                note = expansion_note(exp, style, piece.token.only_unknown)
                if note is not None and exp.written not in seen:
                    seen.add(exp.written)
                    notes.append((note, piece.pos))
        if container is not None:
            found.append(Launch(words, container.env, container.env_at, notes, container.paths))
        else:
            found.append(Launch(words, dict(exported), dict(exported_at), notes))

    compose = style == "compose"
    tokenizer = Tokenizer(text, lookup, "$" if compose else None, unset_value="" if compose else None)
    current: list[_Piece] = []
    for token in tokenizer.iter_tokens():
        if token.kind == "op":
            run(current)
            current = []
            continue
        raw = text[token.start:token.end]
        if token.quoted and any(c.isspace() for c in token.text):
            inner = places.within(raw, token.start)
            current.append(_Piece(token, inner.fallback, inner))
        else:
            current.append(_Piece(token, places.at(token.start, raw), None))
    run(current)
    return found


def find(path: str, text: str) -> list[FoundCommand]:
    """The launch commands of a shell script; relative model paths are read from its folder."""
    index = LineIndex(text)
    paths = Paths(os.path.dirname(os.path.abspath(path)))
    launches = scan(text, SpanPlaces(text, index, 0, len(text), exact=True), base=paths.base)
    return [FoundCommand(path, "docker run" if launch.paths else "", launch.words, launch.words[0].pos, launch.env,
                         launch.env_at, launch.paths or paths, launch.notes) for launch in launches]
