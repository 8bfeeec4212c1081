"""Memory sizes as people write them: ``24GiB``, ``24G`` (GiB), ``24GB`` (10^9), ``8192MiB``;
a bare number is GiB, as every GPU's memory is sold (``--vram 8`` is an 8 GiB card, never 8
bytes); bytes are written ``8589934592B``."""

from __future__ import annotations

import re

from paircheck.errors import InputError

_UNITS = {
    "": 1 << 30, "b": 1,
    "k": 1 << 10, "kib": 1 << 10, "kb": 10**3,
    "m": 1 << 20, "mib": 1 << 20, "mb": 10**6,
    "g": 1 << 30, "gib": 1 << 30, "gb": 10**9,
    "t": 1 << 40, "tib": 1 << 40, "tb": 10**12,
}  # fmt: skip
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str) -> int:
    """Bytes of a size string (a bare number: GiB); an InputError for anything else."""
    match = _SIZE.match(text)
    unit = match.group(2).lower() if match else ""
    if not match or unit not in _UNITS:
        raise InputError("--vram", f"not a memory size: {text!r} (examples: 24GiB, 24G, 8192MiB, 24GB)")
    return int(float(match.group(1)) * _UNITS[unit])


def format_size(n: int) -> str:
    """MiB with thousands separators: the unit llama.cpp's breakdown uses."""
    return f"{n / (1 << 20):,.0f} MiB"
