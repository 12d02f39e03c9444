"""The one error a command raises: a line for the user and an exit status."""

from __future__ import annotations


class CliError(Exception):
    """One clear line for the user; exit status 1 (2 for bad arguments)."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status
