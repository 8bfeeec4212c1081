"""The launch-file fixtures (fixtures/launch/) copied into a test's folder, with llama.cpp's real
vocab GGUFs as the models they name, and where a piece of a fixture was written."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAUNCH = REPO / "fixtures" / "launch"


def launch_folder(tmp_path: Path, real_vocab: Callable[[str], Path], draft: str = "qwen2") -> Path:
    """fixtures/launch/ in ``tmp_path/launch``; target.gguf and draft.gguf (real vocab files) in
    each folder a fixture reads them from (next to the files, and in models/ of the compose ones)."""
    folder = tmp_path / "launch"
    shutil.copytree(LAUNCH, folder)
    for models in (folder, folder / "compose-bad" / "models", folder / "compose-good" / "models"):
        models.mkdir(exist_ok=True)
        shutil.copyfile(real_vocab("qwen2"), models / "target.gguf")
        shutil.copyfile(real_vocab(draft), models / "draft.gguf")
    unit = folder / "llama-server.service"
    unit.write_text(unit.read_text().replace("@MODELS@", str(folder)))
    return folder


def place(path: Path, needle: str, nth: int = 0) -> tuple[int, int]:
    """(line, column), 1-based, where the ``nth`` ``needle`` starts in the file."""
    text = path.read_text()
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1
