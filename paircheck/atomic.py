"""Files paircheck writes are written whole or not at all: a temporary file beside the
target, then a rename. An interrupted run (Ctrl-C, a full disk) leaves the old file as it
was, and no half-written one."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def _mode_for(path: Path) -> int:
    """A replaced file keeps its permissions; a new one gets what open() would give it."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        umask = os.umask(0)  # read the umask: there is no other way than setting it back
        os.umask(umask)
        return 0o666 & ~umask


def write_text_atomic(path: Path | str, text: str) -> None:
    path = Path(path)
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp creates the file 0600: a page or a result meant for others must stay readable.
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
