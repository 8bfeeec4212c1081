"""Launch commands of a Dockerfile: the last stage's ``ENTRYPOINT`` and ``CMD`` (exec form, a
JSON array, or shell form, run by ``/bin/sh -c``), as Docker joins them: ENTRYPOINT's words,
then CMD's; a stage built ``FROM`` a llama.cpp image inherits its entrypoint (images.py).
``ENV`` lines are the program's environment. Paths are inside the image: unreachable (PF022).
"""

from __future__ import annotations

import json
import os

from paircheck.preflight.codes import LintFinding
from paircheck.preflight.files import images
from paircheck.preflight.files.found import FoundCommand, Paths, Word, is_launch
from paircheck.preflight.files.shell import scan
from paircheck.preflight.files.systemd import _logical_lines
from paircheck.preflight.files.words import LineIndex, Pos, SpanPlaces, Tokenizer


def find(path: str, text: str) -> list[FoundCommand]:
    index = LineIndex(text)
    entry: list[Word] | None = None
    cmd: list[Word] | None = None
    shell_form: tuple[str, SpanPlaces] | None = None  # the last ENTRYPOINT/CMD in shell form
    env: dict[str, str] = {}
    env_at: dict[str, Pos] = {}
    workdir: str | None = None
    inherited: images.Image | None = None
    from_pos = Pos(1, 1)
    for start, end in _logical_lines(text):
        line = text[start:end].strip()
        if not line or line.startswith("#"):
            continue
        instruction, _, rest = line.partition(" ")
        instruction = instruction.upper()
        rest_start = start + len(text[start:end]) - len(text[start:end].lstrip()) + len(instruction)
        body = text[rest_start:end]
        if instruction == "FROM":
            image = [w for w in rest.split() if not w.startswith("--")]
            inherited = images.known_image(image[0]) if image else None
            entry = cmd = shell_form = None
            env, env_at, workdir, from_pos = {}, {}, None, index.pos(start)
            if inherited is not None:
                env.update(inherited.env)
                workdir = inherited.workdir
        elif instruction == "ENV":
            tokens = Tokenizer(body, env.get, None, comments=False).tokens()
            given = [t for t in tokens if t.kind == "word"]
            if given and "=" not in given[0].text and len(given) >= 2:  # the old form: ENV KEY value words
                env[given[0].text] = " ".join(t.text for t in given[1:])
                env_at[given[0].text] = index.pos(rest_start + given[0].start)
            for token in given:
                name, eq, value = token.text.partition("=")
                if eq:
                    env[name], env_at[name] = value, index.pos(rest_start + token.start)
        elif instruction == "WORKDIR":
            workdir = rest.strip()
        elif instruction in ("ENTRYPOINT", "CMD"):
            exec_words = _exec_form(text, index, rest_start, end)
            if exec_words is None:  # shell form: /bin/sh -c "..."; CMD is then ignored after an ENTRYPOINT
                places = SpanPlaces(text, index, rest_start, end, exact=True)
                shell_form = (text[rest_start:end], places)
                exec_words = []
            if instruction == "ENTRYPOINT":
                entry, cmd = exec_words, None  # a new ENTRYPOINT resets the CMD inherited
            else:
                cmd = exec_words
    found: list[FoundCommand] = []
    paths = Paths(os.path.dirname(os.path.abspath(path)), True, workdir, [])
    if shell_form is not None and not (entry or cmd):
        for launch in scan(shell_form[0], shell_form[1], env, env, "runtime"):
            found.append(FoundCommand(path, "CMD/ENTRYPOINT", launch.words, launch.words[0].pos,
                                      {**env, **launch.env}, {**env_at, **launch.env_at}, paths, launch.notes))
        return found
    if entry is None and inherited is not None:
        entry = [Word(w, from_pos) for w in inherited.entrypoint]
    argv = images.through_tools_sh_words((entry or []) + (cmd or []))
    notes: list[tuple[LintFinding, Pos]] = []
    if argv and is_launch([w.text for w in argv]):
        found.append(FoundCommand(path, "ENTRYPOINT + CMD", argv, argv[0].pos, env, env_at, paths, notes))
    return found


def _exec_form(text: str, index: LineIndex, start: int, end: int) -> list[Word] | None:
    """A JSON array's words with their places (None: not a JSON array, so the shell form)."""
    body = text[start:end]
    joined = body.replace("\\\n", " ")
    try:
        value = json.loads(joined)
    except ValueError:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    places = SpanPlaces(text, index, start, end)
    return [Word(v, places.find(json.dumps(v))) for v in value]
