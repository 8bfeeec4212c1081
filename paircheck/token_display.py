"""Token texts shown safely: quoted, with control characters and odd bytes visible."""

from __future__ import annotations

MAX_SHOWN = 40


def show(text: bytes | None, limit: int = MAX_SHOWN) -> str:
    """``b'\\n'`` -> ``'\\n'``; ``b' a'`` -> ``' a'``; invalid UTF-8 -> ``'\\xff'``.

    repr() of the decoded text makes spaces (inside quotes), newlines, tabs and other
    non-printable characters visible; invalid UTF-8 bytes stay as \\x escapes.
    """
    if text is None:
        return "(none)"
    decoded = text.decode("utf-8", errors="backslashreplace")
    if len(decoded) > limit:
        return repr(decoded[:limit]) + f"...({len(text)} bytes)"
    return repr(decoded)
