"""Line wrapping shared by the text formats."""

from __future__ import annotations

import textwrap
from typing import Any


def wrap(text: str, width: int, **options: Any) -> list[str]:
    """textwrap.wrap that never breaks at hyphens: command lines such as
    ``llama-server --spec-type`` must stay copy-pasteable."""
    options.setdefault("break_on_hyphens", False)
    return textwrap.wrap(text, width, **options)
