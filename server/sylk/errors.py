"""Errors every layer may raise; imports nothing of Sylk's."""

from __future__ import annotations


class IndexError_(RuntimeError):
    """A problem with the index folder, worded for the user."""


class FieldError(ValueError):
    """A malformed request; ``field`` names the offending parameter (as the user wrote it)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
