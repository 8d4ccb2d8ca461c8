"""One exception type that carries the exit code the CLI should return."""

from __future__ import annotations


class BatonError(Exception):
    """A problem the person must see as one clear line (or a few), with an exit code.

    Exit codes follow DESIGN.md: 1 a task failed, 2 bad input or not approved,
    3 waiting on the person, 130 interrupted.
    """

    def __init__(self, message: str, code: int = 2, lines: list[str] | None = None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.lines = lines or [message]
