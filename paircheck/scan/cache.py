"""The scan's cache: one summary per (candidate file, target file, engine, method), so a second
scan of the same files reads no GGUF at all.

Keyed by both files' real path, size and modification time (nanoseconds), the engine, the
method, paircheck's version and the registry's files (their names, sizes and times): touching
or rewriting either file, upgrading paircheck or editing the registry makes the entry a miss.
Kept as one JSON file in the user's cache folder (``PAIRCHECK_CACHE_HOME``, else
``XDG_CACHE_HOME``/paircheck, else ``~/.cache/paircheck``); written atomically (a temporary file
in the same folder, then ``os.replace``) after merging what a concurrent run wrote meanwhile;
bounded to ``MAX_ENTRIES`` (least recently used dropped); a corrupt or foreign file is ignored
and rebuilt. JSON, never pickle: reading the cache can never run code.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from paircheck.atomic import write_bytes_atomic
from paircheck.cache_home import cache_home
from paircheck.version import __version__

# 2: a pair predicted to abort at run time is no longer "usable" (summaries of 1 said unknown).
CACHE_FORMAT = 2
MAX_ENTRIES = 20_000
MAX_FILE_BYTES = 64 << 20  # a cache file larger than this is not ours (or is broken): rebuilt


def cache_path(env: Mapping[str, str]) -> Path:
    return cache_home(env) / "scan.json"


def file_stamp(path: str) -> tuple[str, int, int] | None:
    """(real path, size, mtime_ns) of a file, or of a folder's files (their total size and
    latest time); None when it cannot be read."""
    try:
        real = os.path.realpath(path)
        if os.path.isdir(real):
            size = mtime = 0
            for entry in os.scandir(real):
                if entry.is_file():
                    st = entry.stat()
                    size += st.st_size
                    mtime = max(mtime, st.st_mtime_ns)
            return real, size, mtime
        st = os.stat(real)
        return real, st.st_size, st.st_mtime_ns
    except OSError:
        return None


def registry_stamp() -> str:
    """What the documented flag depends on: the registry's files, by name, size and time."""
    from paircheck._registry.where import default_registry_dir

    try:
        root = default_registry_dir()
        parts = sorted(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in root.glob("*.toml"))
    except OSError:
        return "unreadable"
    return "|".join(parts)


@dataclass
class ScanCache:
    """Loaded once per scan; ``get``/``put`` in memory; ``save`` once at the end."""

    path: Path
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    fresh: dict[str, dict[str, Any]] = field(default_factory=dict)
    hits: int = 0
    misses: int = 0

    @classmethod
    def load(cls, path: Path) -> ScanCache:
        return cls(path, _read(path))

    def key(self, candidate: str, target_stamp: tuple[str, int, int] | None, context: str) -> str | None:
        stamp = file_stamp(candidate)
        if stamp is None or target_stamp is None:
            return None
        return json.dumps([*stamp, *target_stamp, context])

    def get(self, key: str | None) -> dict[str, Any] | None:
        entry = self.entries.get(key) if key else None
        if entry is None or not isinstance(entry.get("value"), dict):
            self.misses += 1
            return None
        self.hits += 1
        entry["used"] = time.time()
        self.fresh[key] = entry  # type: ignore[index]  # key is not None when an entry was found
        return dict(entry["value"])

    def put(self, key: str | None, value: dict[str, Any]) -> None:
        if key:
            entry = {"used": time.time(), "value": value}
            self.entries[key] = entry
            self.fresh[key] = entry

    def save(self) -> None:
        """Merge with what is on disk now (a concurrent run), bound, and replace atomically.
        A cache that cannot be written is not an error: the next scan reads the files again."""
        if not self.fresh:
            return
        merged = _read(self.path)
        merged.update(self.fresh)
        if len(merged) > MAX_ENTRIES:
            keep = sorted(merged.items(), key=lambda kv: kv[1].get("used", 0), reverse=True)[:MAX_ENTRIES]
            merged = dict(keep)
        data = json.dumps({"format": CACHE_FORMAT, "entries": merged}, separators=(",", ":"))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(self.path, [data.encode("utf-8")], 0o600)
        except OSError:
            pass


def _read(path: Path) -> dict[str, dict[str, Any]]:
    """The entries of a cache file; empty when missing, too large, corrupt or of another format."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT or not isinstance(data.get("entries"), dict):
        return {}
    return {k: v for k, v in data["entries"].items() if isinstance(k, str) and isinstance(v, dict)}


def context_key(engine: str, method: str | None) -> str:
    return json.dumps([engine, method, __version__, registry_stamp()])


def to_value(summary: Any) -> dict[str, Any]:
    return asdict(summary)
