"""Launch commands of a systemd unit: ``ExecStart=`` of ``[Service]`` (systemd.service(5)), with
``\\`` line continuations, the ``-@:+!`` prefixes, ``Environment=`` and ``EnvironmentFile=``
(systemd.exec(5); the program's environment, so ``LLAMA_ARG_*`` counts) and
``WorkingDirectory=`` (where relative model paths are read from; without it, ``/``).

``${VAR}`` is one word and ``$VAR`` is split on whitespace, from the unit's own Environment=; a
variable the unit does not set is only known at run time (LF003). Specifiers (``%h``, ``%i``)
are kept as written.
"""

from __future__ import annotations

import os

from paircheck.preflight.codes import LintFinding
from paircheck.preflight.files.compose import read_dotenv
from paircheck.preflight.files.found import FoundCommand, Paths, Word, expansion_note, is_launch
from paircheck.preflight.files.words import LineIndex, Pos, SpanPlaces, Tokenizer, commands


def _logical_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of each logical line: a line ending in a backslash goes on."""
    out: list[tuple[int, int]] = []
    i, n = 0, len(text)
    while i < n:
        start = i
        while True:
            end = text.find("\n", i)
            end = n if end < 0 else end
            if text[i:end].rstrip("\r").endswith("\\") and end < n:
                i = end + 1
                continue
            break
        out.append((start, end))
        i = end + 1
    return out


def find(path: str, text: str) -> list[FoundCommand]:
    index = LineIndex(text)
    section = ""
    env: dict[str, str] = {}
    env_at: dict[str, Pos] = {}
    execs: list[tuple[int, int]] = []
    workdir = "/"
    for start, end in _logical_lines(text):
        line = text[start:end].strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        if section != "Service" or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip()
        value_start = text.index("=", start) + 1
        if key == "ExecStart":
            execs = [] if not value.strip() else execs + [(value_start, end)]  # empty: resets the list
        elif key == "Environment":
            tokens = Tokenizer(text[value_start:end], lambda _: None, "$", comments=False).tokens()
            for token in tokens:
                name, eq, val = token.text.partition("=")
                if eq and token.kind == "word":
                    env[name], env_at[name] = val, index.pos(value_start + token.start)
        elif key == "EnvironmentFile":
            name = value.strip().removeprefix("-")
            where = os.path.join(os.path.dirname(path), name) if not os.path.isabs(name) else name
            for var, val in read_dotenv(where).items():
                env[var], env_at[var] = val, index.pos(start)
        elif key == "WorkingDirectory":
            folder = value.strip().removeprefix("-")
            workdir = os.path.expanduser(folder) if folder.startswith("~") else folder or "/"
    found: list[FoundCommand] = []
    for value_start, end in execs:
        span = text[value_start:end]
        lead = len(span) - len(span.lstrip())
        prefix_end = lead
        while prefix_end < len(span) and span[prefix_end] in "-@:+!|":
            prefix_end += 1
        at_sign = "@" in span[lead:prefix_end]
        body_start = value_start + prefix_end
        body = text[body_start:end]
        places = SpanPlaces(text, index, body_start, end, exact=True)
        tokens = Tokenizer(body, env.get, "$", comments=False).tokens()
        for group in commands(tokens):
            words = []
            notes: list[tuple[LintFinding, Pos]] = []
            for token in group:
                pos = places.at(token.start, body[token.start:token.end])
                for exp in token.expansions:
                    note = expansion_note(exp, "runtime", token.only_unknown)
                    if note is not None:
                        notes.append((note, pos))
                if token.kind == "word":
                    words.append(Word(token.text, pos))
            if at_sign and len(words) > 1:
                del words[1]  # ExecStart=@/path argv0 args: the second word is only argv[0]
            if words and is_launch([w.text for w in words]):
                found.append(FoundCommand(path, "ExecStart=", words, words[0].pos, dict(env), dict(env_at),
                                          Paths(workdir), notes))
    return found
