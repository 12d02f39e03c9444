"""The call hierarchy from the index: who calls a name, and what a function calls.

A call site is an occurrence the file's tree says is called (``occurrences.CALL``: the
name of a call expression in that language's syntax). Both directions are name matches:
- incoming: the call sites of a name, grouped by the function or method around each
  (``Caller``; a call outside any function belongs to its file);
- outgoing: the call sites inside a function's range, grouped by the name called
  (``Callee``), for the front end to resolve to definitions (search.definitions).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from ..ingest.occurrences import CALL, FileOccurrences, Occurrence
from ..ingest.symbols import Symbol
from .references import Reference, ReferenceTable
from .symbol_search import SymbolTable

# What a call can be made from and to: the kinds that hold code that runs.
CALLABLE = frozenset({"function", "method", "constructor", "macro"})


@attrs.frozen
class Caller:
    """Calls of a name from one function (``symbol``; None: its file's top level)."""
    path: str
    symbol: Symbol | None
    calls: list[Reference]


@attrs.frozen
class Callee:
    """The calls of one name inside a function."""
    name: str
    calls: list[Occurrence]


def incoming(table: ReferenceTable, symbols: SymbolTable, name: str) -> list[Caller]:
    """The call sites of ``name`` grouped by the function around each, in path and line order."""
    groups: dict[tuple[str, tuple[int, int] | None], Caller] = {}
    for r in table.occurrences(name):
        if not r.flags & CALL:
            continue
        around = symbols.enclosing(r.path, r.line, CALLABLE)
        key = (r.path, around.selection[:2] if around is not None else None)
        group = groups.get(key)
        if group is None:
            group = groups[key] = Caller(r.path, around, [])
        group.calls.append(r)
    return list(groups.values())


def outgoing(occ: FileOccurrences, span: Sequence[int]) -> list[Callee]:
    """The calls made within ``span`` (start line, start column, end line, end column; UTF-16)
    of a file whose occurrences are ``occ``, grouped by name in order of the first call."""
    first_line, first_col, last_line, last_col = span
    found: dict[str, list[Occurrence]] = {}
    for word, o in occ.where(CALL):
        if (o.line, o.column) < (first_line, first_col) or (o.line, o.end) > (last_line, last_col):
            continue
        found.setdefault(word, []).append(o)
    ordered = sorted(found.items(), key=lambda kv: (kv[1][0].line, kv[1][0].column))
    return [Callee(word, sorted(calls, key=lambda o: (o.line, o.column))) for word, calls in ordered]
