"""Files paircheck writes (bench results, the README table) are replaced whole: an
interrupted write leaves the old file as it was and no temporary file behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paircheck.atomic import write_text_atomic


def test_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "result.json"
    target.write_text("old")
    write_text_atomic(target, "new " * 100_000)
    assert target.read_text() == "new " * 100_000
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_an_interrupted_write_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "README.md"
    target.write_text("the old, whole README")

    def interrupted(src: str, dst: str) -> None:  # Ctrl-C between writing and renaming
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_text_atomic(target, "half of a new one")
    assert target.read_text() == "the old, whole README"
    assert [p.name for p in tmp_path.iterdir()] == ["README.md"]  # no temporary file left


def test_a_new_file_gets_the_umask_mode_and_a_replaced_one_keeps_its_own(tmp_path: Path) -> None:
    # mkstemp's temporary file is 0600; a page written with --output must be readable like any new file.
    old = os.umask(0o022)
    try:
        fresh = tmp_path / "pairs.html"
        write_text_atomic(fresh, "<p>page</p>")
        assert fresh.stat().st_mode & 0o777 == 0o644
        kept = tmp_path / "result.json"
        kept.write_text("old")
        kept.chmod(0o640)
        write_text_atomic(kept, "new")
        assert kept.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(old)
