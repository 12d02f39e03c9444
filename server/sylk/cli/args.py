"""Command-line values checked before a command runs."""

from __future__ import annotations

from pathlib import Path

from .errors import CliError


def workspace_root(path: str | None) -> Path:
    """The workspace folder argument (default: the current directory), resolved."""
    root = Path(path or ".").expanduser()
    if not root.exists():
        raise CliError(f"{root}: no such directory", 2)
    if not root.is_dir():
        raise CliError(f"{root}: not a directory", 2)
    return root.resolve()
