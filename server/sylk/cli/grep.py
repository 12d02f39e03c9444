"""``sylk grep``: every line a regular expression (or, with -F, a literal) matches in the
indexed files, from the trigram index, printed as rg prints it (``path:line:col:text``).
Its flags are rg's: case-sensitive unless -i or -S, -w for whole words, --glob."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

from .. import config, wire
from ..errors import FieldError
from ..search.query import Filters, line_request
from ..search.values import QueryError
from ..search.filters import line_filters
from ..search.inline import parse_inline
from .args import flag_filters, line_flags, workspace_root
from .terminal import open_index, refresh, settings_for
from .errors import CliError
from .render import matching_line, print_line_notes

def _case(args: argparse.Namespace) -> bool | str:
    """rg's rule: the last of -i, -s, -S wins; case-sensitive without any."""
    return {"ignore": False, "sensitive": True, "smart": "smart"}[args.case or "sensitive"]


def cmd_grep(args: argparse.Namespace) -> int:
    root = workspace_root(args.path)
    settings = settings_for(root)
    filters = flag_filters(args, line=True)
    if args.limit is not None and args.limit < 1:
        raise CliError(f"--limit must be at least 1, got {args.limit}", 2)
    try:
        req = line_request(settings.search, args.pattern, "exact" if args.fixed_strings else "regex",
                           filters=filters, case=_case(args), whole_word=args.word_regexp,
                           limit=None if args.count else args.limit, time_limit_s=None)
    except QueryError as exc:  # a value of search.exclude
        raise CliError(str(exc), 2) from exc
    ws = open_index(root, settings=settings)
    try:
        if not args.no_refresh:
            refresh(ws)
        try:
            result = ws.grep(req)
        except FieldError as exc:  # the pattern
            raise CliError(f"{args.pattern!r}: {str(exc).removeprefix('query: ')}", 2) from exc
    finally:
        ws.close()
    if args.json:
        print(json.dumps(wire.line_result_json(result), indent=2))
    elif args.count:
        for path, n in Counter(h.path for h in result.hits).items():
            print(f"{path}:{n}")
    else:
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        for h in result.hits:
            print(matching_line(h, color))
    if result.hits and result.total_hits > len(result.hits):
        print(f"sylk: the first {len(result.hits)} of {result.total_hits} matching lines (--limit)", file=sys.stderr)
    print_line_notes(result)
    return 0 if result.total_hits else 1


def search_lines(args: argparse.Namespace, root: Path, settings: config.Settings, filters: Filters) -> int:
    """``sylk search '/regex/'``: the lines it matches (smart case), as ``sylk grep`` prints them."""
    if filters != line_filters(filters):
        raise CliError(f"a /regex/ query filters by {line_flags()} only", 2)
    pattern = parse_inline(args.query)[0][1:-1]
    try:
        req = line_request(settings.search, pattern, "regex", filters=filters, case="smart", offset=args.offset,
                           limit=args.limit if args.limit is not None else settings.search.limit)
    except QueryError as exc:  # a value of search.exclude
        raise CliError(str(exc), 2) from exc
    ws = open_index(root, settings=settings)
    try:
        if not args.no_refresh:
            refresh(ws)
        try:
            result = ws.grep(req)
        except FieldError as exc:
            raise CliError(f"{pattern!r}: {str(exc).removeprefix('query: ')}", 2) from exc
    finally:
        ws.close()
    if args.format == "json":
        print(json.dumps(wire.line_result_json(result), indent=2, ensure_ascii=False))
    elif args.format == "paths":
        print("\n".join(dict.fromkeys(h.path for h in result.hits)))
    else:
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        for h in result.hits:
            print(matching_line(h, color))
        print_line_notes(result)
    return 0 if result.hits else 1
