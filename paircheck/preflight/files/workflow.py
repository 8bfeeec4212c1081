"""Launch commands in GitHub Actions workflows (``.github/workflows/*.yml``): each step's
``run:`` is a shell script (bash, the runner's default), read as ``shell.scan`` reads one,
with the job's and the step's ``env:`` as its environment. Paths are relative to the
repository's root (the runner's working directory), taken as the folder above ``.github``.
"""

from __future__ import annotations

import os

from paircheck.preflight.files import yaml_nodes as Y
from paircheck.preflight.files.found import FoundCommand, Paths
from paircheck.preflight.files.shell import scan
from paircheck.preflight.files.words import LineIndex, Pos


def claims(documents: list[object]) -> bool:
    return len(documents) == 1 and Y.is_mapping(Y.get(documents[0], "jobs")) and Y.get(documents[0], "on") is not None


def _env(node: object) -> tuple[dict[str, str], dict[str, Pos]]:
    env: dict[str, str] = {}
    at: dict[str, Pos] = {}
    for key, value in Y.pairs(Y.get(node, "env")):
        text = Y.scalar(value)
        if text is not None and "${{" not in text:  # an expression is only known when the job runs
            env[key], at[key] = text, Y.pos(value)
    return env, at


def find(path: str, text: str, documents: list[object]) -> list[FoundCommand]:
    index = LineIndex(text)
    full = os.path.abspath(path)
    parts = full.split(os.sep)
    root = os.sep.join(parts[:parts.index(".github")]) if ".github" in parts else os.path.dirname(full)
    workflow_env, workflow_at = _env(documents[0])
    found: list[FoundCommand] = []
    for job_name, job in Y.pairs(Y.get(documents[0], "jobs")):
        job_env, job_at = _env(job)
        for number, step in enumerate(Y.items(Y.get(job, "steps")), 1):
            run = Y.get(step, "run")
            script = Y.scalar(run)
            if script is None:
                continue
            step_env, step_at = _env(step)
            env = {**workflow_env, **job_env, **step_env}
            env_at = {**workflow_at, **job_at, **step_at}
            name = Y.scalar(Y.get(step, "name")) or f"step {number}"
            folder = Y.scalar(Y.get(step, "working-directory"))
            paths = Paths(os.path.join(root, folder) if folder else root)
            for launch in scan(script, Y.places(text, index, run), env, env, "runtime", base=paths.base):
                found.append(FoundCommand(path, f"job '{job_name}' step '{name}'", launch.words, launch.words[0].pos,
                                          {**env, **launch.env}, {**env_at, **launch.env_at}, launch.paths or paths,
                                          launch.notes))
    return found
