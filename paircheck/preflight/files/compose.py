"""Launch commands of a Compose file: each service's ``entrypoint`` and ``command`` (list or
string form), or the image's own entrypoint when only ``command`` is given (images.py).

As Compose reads it (compose-spec spec.md, Interpolation): ``${VAR}``, ``${VAR:-default}``,
``${VAR-default}``, ``${VAR:?error}``, ``${VAR:+alt}``, ``$VAR`` and ``$$`` (a literal ``$``)
from the environment paircheck runs in, then the ``.env`` file next to the compose file (the
environment wins); an unset variable is an empty string (LF001). The service's
``environment`` (mapping or list; ``env_file`` files) is the program's, so ``LLAMA_ARG_MODEL``
counts. Model paths inside the container are mapped back through the service's bind volumes
(short ``./models:/models:ro`` and long ``type: bind`` syntax, relative to the compose file);
a named volume or an unmapped path is unreachable (PF022), never an error.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from paircheck.preflight.codes import LintFinding
from paircheck.preflight.files import images
from paircheck.preflight.files import yaml_nodes as Y
from paircheck.preflight.files.found import FoundCommand, Mount, Paths, Word, expansion_note, is_launch
from paircheck.preflight.files.shell import scan, shell_script
from paircheck.preflight.files.words import Expansion, LineIndex, Lookup, Pos, SpanPlaces, Tokenizer, interpolate

COMPOSE_NAMES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")


def claims(path: str, documents: list[object]) -> bool:
    name = os.path.basename(path).lower()
    if name in COMPOSE_NAMES or name.startswith(("docker-compose.", "compose.")):
        return True
    return len(documents) == 1 and Y.is_mapping(Y.get(documents[0], "services"))


def read_dotenv(path: str) -> dict[str, str]:
    """A .env file as Compose reads it: KEY=VALUE lines, # comments, optional quotes, ``export``."""
    values: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read(1 << 20).splitlines()
    except (OSError, UnicodeDecodeError):
        return values
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        values[key.strip()] = value
    return values


class _Service:
    """One service, read with the file's variables."""

    def __init__(self, path: str, source: str, index: LineIndex, lookup: Lookup) -> None:
        self.path, self.source, self.index, self.lookup = path, source, index, lookup
        self.notes: list[tuple[LintFinding, Pos]] = []

    def note(self, expansions: list[Expansion], pos: Pos) -> None:
        for exp in expansions:
            finding = expansion_note(exp, "compose")
            if finding is not None:
                self.notes.append((finding, pos))

    def value(self, node: object) -> str | None:
        text = Y.scalar(node)
        if text is None:
            return None
        value, expansions = interpolate(text, self.lookup, "$", unset_value="")
        self.note(expansions, Y.pos(node))
        return value

    def words(self, node: object, written: dict[int, SpanPlaces]) -> list[Word] | None:
        """The argv of ``command``/``entrypoint`` (None: not given); ``written`` gets where each
        word's own text is (a list item, a word of the string), for a ``sh -c`` script's words."""
        if node is None or (Y.scalar(node) is None and not Y.is_sequence(node)):
            return None
        out: list[Word] = []
        if Y.is_sequence(node):
            for item in Y.items(node):
                text = self.value(item)
                if text is not None:
                    out.append(Word(text, Y.pos(item)))
                    written[id(out[-1])] = Y.places(self.source, self.index, item)
            return out
        text = Y.scalar(node) or ""
        places = Y.places(self.source, self.index, node)
        tokens = Tokenizer(text, self.lookup, "$", comments=False, unset_value="").tokens()
        for token in tokens:
            inner = places.within(text[token.start:token.end], token.start)
            pos = inner.fallback
            for exp in token.expansions:
                finding = expansion_note(exp, "compose")
                if finding is not None:
                    self.notes.append((finding, pos))
            if token.kind == "word":
                out.append(Word(token.text, pos))
                written[id(out[-1])] = inner
        return out

    def environment(self, svc: object) -> tuple[dict[str, str], dict[str, Pos]]:
        env: dict[str, str] = {}
        at: dict[str, Pos] = {}
        files = Y.get(svc, "env_file")
        for item in (Y.items(files) if Y.is_sequence(files) else [files] if files is not None else []):
            name = self.value(Y.get(item, "path") if Y.is_mapping(item) else item)
            if name:
                for key, value in read_dotenv(os.path.join(os.path.dirname(self.path), name)).items():
                    env[key], at[key] = value, Y.pos(item)
        node = Y.get(svc, "environment")
        if Y.is_mapping(node):
            for key, value_node in Y.pairs(node):
                # `KEY:` with no value: passed through from the environment
                given = self.value(value_node)
                passed = given if given is not None else self.lookup(key)
                if passed is not None:
                    env[key], at[key] = passed, Y.pos(value_node)
        for item in Y.items(node):
            text = self.value(item)
            if text is None:
                continue
            key, eq, value = text.partition("=")
            found = value if eq else self.lookup(key)
            if found is not None:
                env[key], at[key] = found, Y.pos(item)
        return env, at

    def mounts(self, svc: object) -> list[Mount]:
        base = os.path.dirname(os.path.abspath(self.path))
        out: list[Mount] = []
        for item in Y.items(Y.get(svc, "volumes")):
            if Y.is_mapping(item):
                kind = self.value(Y.get(item, "type")) or "volume"
                source = self.value(Y.get(item, "source")) or ""
                target = self.value(Y.get(item, "target"))
                if target:
                    host = os.path.join(base, os.path.expanduser(source)) if kind == "bind" and source else None
                    out.append(Mount(target, host, f"the {kind} '{source}'" if source else f"a {kind}"))
                continue
            text = self.value(item)
            if not text:
                continue
            parts = text.split(":")
            if len(parts) == 1:
                out.append(Mount(parts[0], None, "an anonymous volume"))
                continue
            source, target = parts[0], parts[1]
            bind = source.startswith(("/", ".", "~"))
            host = os.path.join(base, os.path.expanduser(source)) if bind else None
            out.append(Mount(target, host, f"the bind mount '{source}'" if bind else f"the named volume '{source}'"))
        return out


def find(path: str, text: str, documents: list[object], environ: Mapping[str, str]) -> list[FoundCommand]:
    root = documents[0] if documents else None
    index = LineIndex(text)
    dotenv = read_dotenv(os.path.join(os.path.dirname(path), ".env"))

    def lookup(name: str) -> str | None:
        return environ[name] if name in environ else dotenv.get(name)

    found: list[FoundCommand] = []
    for name, svc in Y.pairs(Y.get(root, "services")):
        if not Y.is_mapping(svc):
            continue
        reader = _Service(path, text, index, lookup)
        image_node = Y.get(svc, "image")
        image = reader.value(image_node) or ""
        written: dict[int, SpanPlaces] = {}
        entry = reader.words(Y.get(svc, "entrypoint"), written)
        command = reader.words(Y.get(svc, "command"), written)
        env: dict[str, str] = {}
        env_at: dict[str, Pos] = {}
        known = images.known_image(image) if entry is None else None
        if known is not None:
            at = Y.pos(image_node)
            prefix = [Word(w, at) for w in known.entrypoint]
            env.update(known.env)
            env_at.update({k: at for k in known.env})
        else:
            prefix = entry or []
        argv = prefix + (command or [])
        argv = images.through_tools_sh_words(argv)
        service_env, service_at = reader.environment(svc)
        env.update(service_env)
        env_at.update(service_at)
        workdir = reader.value(Y.get(svc, "working_dir")) or (known.workdir if known is not None else None)
        paths = Paths(os.path.dirname(os.path.abspath(path)), True, workdir, reader.mounts(svc))
        where = f"service '{name}'"
        nested = shell_script(argv)
        if nested is not None:
            places = written.get(id(nested[1]))
            if places is None:  # not written in this file (an image's entrypoint)
                continue
            for launch in scan(nested[1].text, places, env, env, "runtime"):
                found.append(FoundCommand(path, where, launch.words, launch.words[0].pos, {**env, **launch.env},
                                          {**env_at, **launch.env_at}, paths, reader.notes + launch.notes))
            continue
        if not argv or not is_launch([w.text for w in argv]):
            continue
        found.append(FoundCommand(path, where, argv, argv[0].pos, env, env_at, paths, reader.notes))
    return found
