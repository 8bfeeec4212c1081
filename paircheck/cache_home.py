"""Where paircheck keeps what it may reuse (the scan's summaries, the read cache of GGUF files).

``PAIRCHECK_CACHE_HOME``, else ``XDG_CACHE_HOME``/paircheck, else ``~/.cache/paircheck``. The
environment is passed in: only a command reads ``os.environ``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def cache_home(env: Mapping[str, str]) -> Path:
    base = env.get("PAIRCHECK_CACHE_HOME")
    if base:
        return Path(base)
    xdg = env.get("XDG_CACHE_HOME")
    root = Path(xdg) if xdg else Path(env.get("HOME") or os.path.expanduser("~")) / ".cache"
    return root / "paircheck"
