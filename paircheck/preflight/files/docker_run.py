"""``docker run [OPTIONS] IMAGE [ARG...]`` (and ``podman run``) in a script: the container's
argv is the image's entrypoint (``--entrypoint``, or a llama.cpp image's, images.py) then the
arguments; ``-e``/``--env`` is its environment, ``-v``/``--volume`` and ``--mount type=bind``
map its paths back to this machine, ``-w`` is its working directory. llama.cpp's
docs/docker.md runs its images this way (``docker run -v /path/to/models:/models
ghcr.io/ggml-org/llama.cpp:server -m /models/...``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from paircheck.preflight.files import images
from paircheck.preflight.files.found import Mount, Paths, Word
from paircheck.preflight.files.words import Pos
from paircheck.preflight.launchers import program_name

# docker run's options that take no value (docker run --help); every other option takes one.
FLAGS = frozenset({
    "-d", "--detach", "-i", "--interactive", "-t", "--tty", "--rm", "--init", "--privileged", "--read-only",
    "-P", "--publish-all", "--no-healthcheck", "--oom-kill-disable", "--sig-proxy", "-q", "--quiet",
    "--disable-content-trust", "--use-api-socket",
})


@dataclass
class Container:
    words: list[Word]  # the container's argv
    env: dict[str, str] = field(default_factory=dict)
    env_at: dict[str, Pos] = field(default_factory=dict)
    paths: Paths = field(default_factory=lambda: Paths("/", True))


def container_of(words: list[Word], base: str) -> Container | None:
    """The container a ``docker run`` line starts (None: not a docker/podman run line).
    ``base``: the folder relative bind sources are read from."""
    if not words or program_name(words[0].text) not in ("docker", "podman"):
        return None
    i = 1
    if words[i:i + 2] and [w.text for w in words[i:i + 2]] == ["container", "run"]:
        i += 2
    elif words[i:i + 1] and words[i].text == "run":
        i += 1
    else:
        return None
    env: dict[str, str] = {}
    env_at: dict[str, Pos] = {}
    mounts: list[Mount] = []
    entrypoint: list[Word] | None = None
    workdir: str | None = None
    while i < len(words) and words[i].text.startswith("-"):
        word = words[i]
        name, eq, inline = word.text.partition("=")
        if name in FLAGS or (len(name) > 2 and not name.startswith("--") and all(f"-{c}" in FLAGS for c in name[1:])):
            i += 1
            continue
        value = inline if eq else (words[i + 1].text if i + 1 < len(words) else "")
        i += 1 if eq else 2
        if name in ("-e", "--env"):
            key, has, val = value.partition("=")
            if has:
                env[key], env_at[key] = val, word.pos
        elif name in ("-v", "--volume"):
            parts = value.split(":")
            if len(parts) >= 2:
                source = parts[0]
                bind = source.startswith(("/", ".", "~"))
                host = os.path.join(base, os.path.expanduser(source)) if bind else None
                mounts.append(Mount(parts[1], host, f"the bind mount '{source}'" if bind
                                    else f"the named volume '{source}'"))
        elif name == "--mount":
            fields = dict(f.partition("=")[::2] for f in value.split(","))
            target = fields.get("target") or fields.get("dst") or fields.get("destination")
            source = fields.get("source") or fields.get("src") or ""
            if target:
                is_bind = fields.get("type") == "bind" and bool(source)
                mounts.append(Mount(target, os.path.join(base, source) if is_bind else None,
                                    f"the {fields.get('type', 'volume')} '{source}'"))
        elif name == "--entrypoint":
            entrypoint = [Word(value, word.pos)] if value else []
        elif name in ("-w", "--workdir"):
            workdir = value
    if i >= len(words):
        return None
    image = words[i]
    args = words[i + 1:]
    known = images.known_image(image.text)
    if entrypoint is None and known is not None:
        entrypoint = [Word(w, image.pos) for w in known.entrypoint]
        for key, val in known.env.items():
            env.setdefault(key, val)
            env_at.setdefault(key, image.pos)
        workdir = workdir or known.workdir
    argv = images.through_tools_sh_words((entrypoint or []) + args)
    return Container(argv, env, env_at, Paths(base, True, workdir, mounts))
