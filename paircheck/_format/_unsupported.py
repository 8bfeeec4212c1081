"""What a format says about a kind of result it does not render."""

from __future__ import annotations

from paircheck.errors import InputError


def unsupported(fmt: str, what: str) -> InputError:
    return InputError("--format", f"{fmt} is available for `paircheck pairs` only, not for {what}")
