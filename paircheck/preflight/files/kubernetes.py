"""Launch commands of Kubernetes manifests and Helm-rendered YAML (``helm template``): every
container (``containers``, ``initContainers``, at any depth: Pods, Deployments, StatefulSets,
Jobs, CronJobs, custom resources that embed a pod spec), multi-document files included.

As the kubelet builds argv (the Container API: command, args): ``command`` replaces the image's
ENTRYPOINT and ``args`` its CMD; without ``command`` a llama.cpp image's entrypoint is used
(images.py). ``$(VAR)`` in both expands from the container's ``env`` (``$$(VAR)`` is the
literal), ``env`` is the program's environment (``LLAMA_ARG_*``). Volumes belong to the node,
not this machine: model paths are unreachable (PF022), never an error.
"""

from __future__ import annotations

import os
import re

from paircheck.preflight.codes import LintFinding
from paircheck.preflight.files import images
from paircheck.preflight.files import yaml_nodes as Y
from paircheck.preflight.files.found import FoundCommand, Mount, Paths, Word, is_launch
from paircheck.preflight.files.shell import scan, shell_script
from paircheck.preflight.files.words import LineIndex, Pos

REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def claims(documents: list[object]) -> bool:
    return any(Y.scalar(Y.get(doc, "kind")) and Y.scalar(Y.get(doc, "apiVersion")) for doc in documents)


def _containers(node: object, seen: set[int], depth: int = 0) -> list[object]:
    """Every container mapping under ``node``; each node visited once (aliases are shared)."""
    if id(node) in seen or depth > 64:
        return []
    seen.add(id(node))
    out: list[object] = []
    if Y.is_mapping(node):
        for key, value in Y.pairs(node):
            if key in ("containers", "initContainers") and Y.is_sequence(value):
                out += [c for c in Y.items(value) if Y.is_mapping(c)]
            else:
                out += _containers(value, seen, depth + 1)
    elif Y.is_sequence(node):
        for item in Y.items(node):
            out += _containers(item, seen, depth + 1)
    return out


def _expand(text: str, env: dict[str, str]) -> str:
    """$(VAR) from the container's env; an unknown reference stays as written (as the kubelet does)."""
    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))

    return REFERENCE.sub(one, text)


def find(path: str, text: str, documents: list[object]) -> list[FoundCommand]:
    index = LineIndex(text)
    found: list[FoundCommand] = []
    seen: set[int] = set()
    for doc in documents:
        kind = Y.scalar(Y.get(doc, "kind")) or "manifest"
        name = Y.scalar(Y.get(Y.get(doc, "metadata"), "name")) or "?"
        for container in _containers(doc, seen):
            env: dict[str, str] = {}
            env_at: dict[str, Pos] = {}
            for item in Y.items(Y.get(container, "env")):
                key, value = Y.scalar(Y.get(item, "name")), Y.scalar(Y.get(item, "value"))
                if key and value is not None:
                    env[key], env_at[key] = _expand(value, env), Y.pos(item)
            nodes: dict[int, object] = {}

            def words(key: str) -> list[Word] | None:
                node = Y.get(container, key)  # noqa: B023
                if not Y.is_sequence(node):
                    return None
                out = []
                for item in Y.items(node):
                    value = Y.scalar(item)
                    if value is not None:
                        word = Word(_expand(value, env), Y.pos(item))  # noqa: B023
                        nodes[id(word)] = item  # noqa: B023
                        out.append(word)
                return out

            command, args = words("command"), words("args")
            image_node = Y.get(container, "image")
            image = Y.scalar(image_node) or ""
            entry = images.known_image(image) if command is None else None
            if entry is not None:
                command = [Word(w, Y.pos(image_node)) for w in entry.entrypoint]
                for k, v in entry.env.items():
                    env.setdefault(k, v)
            argv = images.through_tools_sh_words((command or []) + (args or []))
            mounts = [Mount(Y.scalar(Y.get(m, "mountPath")) or "", None,
                            f"the volume '{Y.scalar(Y.get(m, 'name')) or '?'}' (the node's, not this machine's)")
                      for m in Y.items(Y.get(container, "volumeMounts"))]
            workdir = Y.scalar(Y.get(container, "workingDir")) or (entry.workdir if entry is not None else None)
            paths = Paths(os.path.dirname(os.path.abspath(path)), True, workdir, mounts)
            where = f"{kind} '{name}' container '{Y.scalar(Y.get(container, 'name')) or '?'}'"
            nested = shell_script(argv)
            if nested is not None:
                script = nested[1]
                node = nodes.get(id(script))
                if node is None:
                    continue
                for launch in scan(script.text, Y.places(text, index, node), env, env, "runtime"):
                    found.append(FoundCommand(path, where, launch.words, launch.words[0].pos,
                                              {**env, **launch.env}, {**env_at, **launch.env_at}, paths,
                                              launch.notes))
                continue
            notes: list[tuple[LintFinding, Pos]] = []
            if argv and is_launch([w.text for w in argv]):
                found.append(FoundCommand(path, where, argv, argv[0].pos, env, env_at, paths, notes))
    return found
