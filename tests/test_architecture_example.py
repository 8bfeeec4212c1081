"""The library example in docs/architecture.md runs as written and prints what the docs show
(issue 49): ``import paircheck`` gives one function per command, each returning the result
its command renders."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import paircheck

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"


def _blocks() -> tuple[str, str]:
    text = DOC.read_text()
    found = re.search(r"```python\n(import paircheck\n.*?)```\n+Prints:\n+```text\n(.*?)```", text, flags=re.S)
    assert found, "docs/architecture.md: no library example followed by its output"
    return found.group(1), found.group(2)


def test_the_library_example_prints_what_the_docs_show() -> None:
    code, shown = _blocks()
    assert len(code.strip().splitlines()) <= 12
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == shown


def test_the_package_gives_the_face_and_nothing_else_unknown() -> None:
    from paircheck import api

    assert set(paircheck.FACE) == set(api.__all__)
    assert all(getattr(paircheck, name) is getattr(api, name) for name in api.__all__)
    assert set(paircheck.FACE) <= set(dir(paircheck))
    try:
        paircheck.no_such_command  # noqa: B018 - the attribute access is the test
    except AttributeError as exc:
        assert "no_such_command" in str(exc)
    else:
        raise AssertionError("an unknown name was given")
