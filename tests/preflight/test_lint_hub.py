"""lint-cmd and run read -hf / -hfd models from the Hub themselves (issue 34, item 7): the
pair in ``llama-server -hf org/T-GGUF:Q4_K_M -hfd org/D-GGUF:Q8_0`` is checked (metadata only,
by range requests, from the stand-in Hub of tests/hub_standin.py); offline it is NOT CHECKED
and says why, never "download it yourself" when paircheck can read it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from httpserver import TestServer
from hub_standin import build

LINE = ("llama-server -hf Qwen/Qwen2.5-7B-Instruct-GGUF:Q4_K_M -hfd Qwen/Qwen2.5-0.5B-Instruct-GGUF:Q8_0 "
        "--spec-type draft-simple")


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory, real_vocab: Callable[[str], Path]) -> Iterator[TestServer]:
    standin = build(tmp_path_factory.mktemp("hub"), real_vocab)
    with TestServer() as server:
        standin.serve(server)
        yield server


def _lint(server: TestServer, tmp: Path, line: str, **extra: str) -> tuple[int, dict[str, object]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING", "PAIRCHECK_DEBUG"))}
    env.update(HF_ENDPOINT=server.url, HF_HOME=str(tmp / "hf-home"), HF_HUB_CACHE=str(tmp / "hf-cache"),
               PAIRCHECK_CACHE_HOME=str(tmp / "pc-cache"), HF_TOKEN="", PAIRCHECK_HTTP_TIMEOUT="10", **extra)
    done = subprocess.run([sys.executable, "-m", "paircheck", "lint-cmd", "--json", line], capture_output=True,
                          text=True, env=env, timeout=300, check=False)
    assert done.stderr == "", done.stderr
    data: dict[str, object] = json.loads(done.stdout)
    return done.returncode, data


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_hub_models_in_a_launch_line_are_checked(hub: TestServer, tmp_path: Path) -> None:
    code, data = _lint(hub, tmp_path, LINE)
    assert code == 0 and data["status"] == "ok", data
    assert "PF020" not in {f["code"] for f in data["findings"]}  # type: ignore[attr-defined]
    reports = data["pairs"]
    assert isinstance(reports, list) and len(reports) == 1 and reports[0]["verdict"] == "accepted"
    assert hub.counters.requests > 0  # read from the Hub, by range requests


def test_offline_the_pair_is_not_checked_and_says_why(hub: TestServer, tmp_path: Path) -> None:
    hub.reset_counters()
    code, data = _lint(hub, tmp_path, LINE, HF_HUB_OFFLINE="1")
    assert code == 3 and data["status"] == "not-checked"
    pf020 = next(f for f in data["findings"] if f["code"] == "PF020")  # type: ignore[attr-defined]
    assert "HF_HUB_OFFLINE is set" in pf020["message"] and hub.counters.requests == 0
