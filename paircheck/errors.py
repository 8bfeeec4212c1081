"""The one error type that reaches the user as exit code 2."""

from __future__ import annotations


class InputError(Exception):
    """paircheck could not read an input, or was used wrongly.

    The CLI prints ``paircheck: error: <where>: <message>`` on one line and exits 2.
    """

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where
        self.message = message
