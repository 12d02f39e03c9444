"""Errors every layer may raise; imports nothing of Sylk's."""

from __future__ import annotations


class IndexError_(RuntimeError):
    """A problem with the index folder, worded for the user."""
