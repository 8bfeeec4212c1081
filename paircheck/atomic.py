"""Files paircheck writes are written whole or not at all: a temporary file beside the
target, then a rename. An interrupted run (Ctrl-C, a full disk) leaves the old file as it
was, and no half-written one."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
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
    write_bytes_atomic(path, [text.encode("utf-8")], _mode_for(path))


def write_bytes_atomic(path: Path, parts: Iterable[bytes], mode: int) -> None:
    """``parts`` written one after the other into a new file beside ``path``, renamed over it."""
    # A unique name opened with O_EXCL, as tempfile.mkstemp does; not tempfile itself, whose
    # import (random, hashlib) costs more than writing a cache entry.
    while True:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
            break
        except FileExistsError:
            continue
    try:
        # Created 0600 (no other user sees it half-written), then given the mode asked for.
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                out.write(part)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
