"""``sylk grep``: every line a regular expression (or, with -F, a literal) matches in the
indexed files, from the trigram index, printed as rg prints it (``path:line:col:text``).
Its flags are rg's: case-sensitive unless -i or -S, -w for whole words, --glob."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter

from .. import wire
from ..errors import FieldError
from ..search.grep import GrepResult, LineHit
from ..search.query import Filters, GrepRequest, QueryError, check_values
from ..text.positions import utf16_to_index
from .args import workspace_root
from .commands import open_index, refresh
from .errors import CliError

# rg's colours: path, line number, match
_PATH, _LINE, _MATCH, _RESET = "\x1b[35m", "\x1b[32m", "\x1b[1;31m", "\x1b[0m"


def _case(args: argparse.Namespace) -> bool | str:
    """rg's rule: the last of -i, -s, -S wins; case-sensitive without any."""
    return {"ignore": False, "sensitive": True, "smart": "smart"}[args.case or "sensitive"]


def cmd_grep(args: argparse.Namespace) -> int:
    root = workspace_root(args.path)
    try:
        languages = check_values("--lang", "languages", args.lang or ())
    except QueryError as exc:
        raise CliError(str(exc), 2) from exc
    if args.limit is not None and args.limit < 1:
        raise CliError(f"--limit must be at least 1, got {args.limit}", 2)
    req = GrepRequest(args.pattern, "exact" if args.fixed_strings else "regex", _case(args), args.word_regexp,
                      Filters(languages=languages, paths=tuple(args.glob or ())),
                      limit=None if args.count else args.limit, time_limit_s=None)
    ws = open_index(root)
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
            print(_line(h, color))
    if result.hits and result.total_hits > len(result.hits):
        print(f"sylk: the first {len(result.hits)} of {result.total_hits} matching lines (--limit)", file=sys.stderr)
    _notes(result)
    return 0 if result.total_hits else 1


def _line(h: LineHit, color: bool) -> str:
    """``path:line:col:text``, columns 1-based in UTF-16 units as in the language server
    (rg counts bytes), the first match's column; matches in colour on a terminal."""
    col = h.matches[0][0] + 1 if h.matches else 1
    if not color:
        return f"{h.path}:{h.line + 1}:{col}:{h.text}"
    return f"{_PATH}{h.path}{_RESET}:{_LINE}{h.line + 1}{_RESET}:{col}:{_painted(h)}"


def _painted(h: LineHit) -> str:
    text, out, at = h.text, [], 0
    for a16, b16 in h.matches:
        a, b = utf16_to_index(text, a16), utf16_to_index(text, b16)
        out += [text[at:a], _MATCH, text[a:b], _RESET]
        at = b
    return "".join(out) + text[at:]


def _notes(result: GrepResult) -> None:
    if result.message and (result.scanned or result.partial):
        print(f"sylk: {result.message}", file=sys.stderr)
