"""The real pre-commit (from PyPI) runs this checkout's .pre-commit-hooks.yaml in a temporary git
repository: a commit that stages a bad compose file is refused with its file and line, a good
one goes through.

The hook source is a snapshot of this working tree (every file git would track, committed in a
repository of its own), so the test runs the code as it is now, the way a user's config names a
repository and a rev. pre-commit installs the hook's environment with pip, from PyPI; its cache
is in the test's folder (PRE_COMMIT_HOME).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from launch_files import LAUNCH, REPO, place

pytestmark = pytest.mark.slow  # runs the real pre-commit

GIT_IDENTITY = ["-c", "user.name=paircheck test", "-c", "user.email=test@example.invalid", "-c",
                "commit.gpgsign=false", "-c", "init.defaultBranch=main"]


def git(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *GIT_IDENTITY, *args], cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=900)


def snapshot(target: Path) -> str:
    """This working tree as a git repository of its own; its commit id."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    git("init", "-q", cwd=target)
    git("add", "-A", cwd=target)
    assert git("commit", "-q", "--no-verify", "-m", "snapshot", cwd=target).returncode == 0
    return git("rev-parse", "HEAD", cwd=target).stdout.strip()


def test_pre_commit_refuses_a_bad_compose_file_and_lets_a_good_one_through(tmp_path: Path) -> None:
    source = tmp_path / "paircheck-src"
    source.mkdir()
    rev = snapshot(source)
    repo = tmp_path / "project"
    repo.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
           "PRE_COMMIT_COLOR": "never"}
    env.pop("DRAFT_MAX", None)
    git("init", "-q", cwd=repo)
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {source}\n    rev: {rev}\n    hooks:\n      - id: paircheck-lint\n")
    installed = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, capture_output=True,
                               text=True, env=env, timeout=300)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    bad = repo / "docker-compose.yml"
    shutil.copyfile(LAUNCH / "compose-bad" / "docker-compose.yml", bad)
    (repo / "README.md").write_text("a project\n")
    git("add", "-A", cwd=repo)
    refused = git("commit", "-m", "serve with a draft", cwd=repo, env=env)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0, said
    line, column = place(bad, '"--draft-n-max"')
    assert "docker-compose.yml:5: service 'llamacpp-server':" in said, said
    assert f"{line}:{column}: error PF001 invalid_argument" in said, said
    assert git("rev-list", "--all", cwd=repo).stdout == ""  # nothing was committed

    shutil.copyfile(LAUNCH / "compose-good" / "docker-compose.yml", bad)
    git("add", "-A", cwd=repo)
    passed = git("commit", "-m", "serve with a draft", cwd=repo, env=env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "paircheck lint (launch commands)" in passed.stdout + passed.stderr  # the hook ran, and passed
    assert len(git("rev-list", "--all", cwd=repo).stdout.split()) == 1
