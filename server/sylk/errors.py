"""Errors every layer may raise; imports nothing of Sylk's."""

from __future__ import annotations


class IndexError_(RuntimeError):
    """A problem with the index folder, worded for the user."""


class IndexClosed(IndexError_):
    """The index was closed while a request was on its way (cleared, rebuilt, shut down):
    ask again once it is open."""


class FieldError(ValueError):
    """A malformed request; ``field`` names the offending parameter (as the user wrote it)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def first_line(exc: BaseException, limit: int = 200) -> str:
    """The first line of an exception's message (its type's name when it has none)."""
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:limit]


def describe(exc: BaseException, limit: int = 300) -> str:
    """``Type: first line`` of an exception, for one line to a user or a log."""
    text = str(exc).strip()
    if not text:
        return type(exc).__name__
    line = text.splitlines()[0]
    return f"{type(exc).__name__}: {line if len(line) <= limit else line[:limit] + '...'}"
