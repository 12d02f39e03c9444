"""Command-line values checked before a command runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..model import OPTIONS
from ..search.filters import BY_FIELD, LINE_FILTERS, Filters
from ..search.values import QueryError, read_filters, read_options
from ..search.inline import parse_exclusions
from .errors import CliError


def workspace_root(path: str | None) -> Path:
    """The workspace folder argument (default: the current directory), resolved."""
    root = Path(path or ".").expanduser()
    if not root.exists():
        raise CliError(f"{root}: no such directory", 2)
    if not root.is_dir():
        raise CliError(f"{root}: not a directory", 2)
    return root.resolve()


def flag_filters(args: argparse.Namespace, *, line: bool = False, files: bool = False) -> Filters:
    """What the command line limits a command to: the flags cli.filter_flags made from the
    filter table, and --exclude (``line``: a line search's filters only; ``files``: a file's,
    Find References'); CliError (exit 2) names the flag of a bad value."""
    try:
        exclude = parse_exclusions("--exclude", args.exclude or (), line=line, files=files)
        return read_filters({n: getattr(args, n) for n in args.filter_names}, lambda s: s.flags[0],
                            [BY_FIELD[n] for n in args.filter_names], exclude=exclude)
    except QueryError as exc:
        raise CliError(str(exc), 2) from exc


def option_values(args: argparse.Namespace) -> dict[str, Any]:
    """The options of a ranked search the command line gave (cli.option_flags), checked."""
    try:
        return read_options({s.name: getattr(args, s.name, None) for s in OPTIONS}, lambda s: s.flag)
    except QueryError as exc:
        raise CliError(str(exc), 2) from exc


def line_flags() -> str:
    """The flags of the filters a line search applies: ``--lang, --type, ...``."""
    return ", ".join(BY_FIELD[n].flags[0] for n in LINE_FILTERS)
