"""The symbols of files as Python objects, grouped by lower-cased name, changed file by
file: the whole table during a first index, and afterwards the layer of files changed
since the frozen snapshot (``frozen_symbols``) over it.

Groups are maintained as files come and go. The search structure over the distinct
names (``NameIndex``) is rebuilt only when many names came or went: a change within
known names is seen at once (the structure holds the live entry lists), names new since
the last rebuild go into a small second structure (``_delta``), and names whose symbols
all left simply match nothing. So saving one file costs time in that file's names, not
the workspace's.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from ..ingest.symbols import Symbol
from .name_index import (
    DELTA_MAX,
    KIND_ORDER,
    NO_RANK,
    NameArrays,
    NameIndex,
    Scored,
    is_subsequence,
    path_rank,
    static_key,
    word_line,
)

# An entry of a group: (static key, path, symbol).
Entry = tuple[int, str, Symbol]


class _Groups:
    """``Entries`` over live group lists, one per name of a NameIndex."""

    __slots__ = ("groups",)

    def __init__(self, groups: list[list[Entry]]) -> None:
        self.groups = groups

    def emit(self, i: int, tier: int, sub: int, query: str, container_q: str, out: list[Scored],
             cap: int) -> int:
        n = 0
        for rank, path, sym in self.groups[i]:
            if container_q and not is_subsequence(container_q, sym.container.lower()):
                continue
            case = 0 if query in sym.name else 1
            out.append(((tier, sub, case, rank, path, sym.range[0], sym.range[1]), self, (path, sym)))
            n += 1
        return n

    def best_rank(self, i: int) -> int:
        return min((e[0] for e in self.groups[i]), default=NO_RANK)

    @staticmethod
    def hit(ref: tuple[str, Symbol]) -> tuple[str, Symbol]:
        return ref


class LiveSymbols:
    """Symbols by file and by lower-cased name (not thread-safe: ``SymbolTable`` locks)."""

    def __init__(self) -> None:
        self._by_path: dict[str, list[Symbol]] = {}
        # lower name -> entries; a group emptied by changes stays (empty) until the next
        # full rebuild, so the structure's lists stay live
        self._groups: dict[str, list[Entry]] = {}
        self._wlines: dict[str, str] = {}  # lower name -> word_line, kept across rebuilds
        self._count = 0
        self._base = _index([], {}, self._wlines)
        self._delta: NameIndex | None = None
        self._new: set[str] = set()  # names not in the base structure
        self._touched: set[str] = set()  # names whose entries changed since the last rebuild
        self._emptied = 0  # groups emptied since the last full rebuild
        self._full = True  # the next rebuild is a full one
        self.dirty = True

    def __len__(self) -> int:
        return self._count

    def paths(self) -> list[str]:
        return list(self._by_path)

    def symbols_of(self, path: str) -> list[Symbol] | None:
        return self._by_path.get(path)

    def drop(self, path: str) -> None:
        old = self._by_path.pop(path, None)
        if not old:
            return
        groups = self._groups
        for lower in {sym.name.lower() for sym in old}:
            group = groups.get(lower)
            if group is None:
                continue
            group[:] = [e for e in group if e[1] != path]
            self._touched.add(lower)
            if not group:
                self._emptied += 1
        self._count -= len(old)
        self.dirty = True

    def add(self, path: str, symbols: Sequence[Symbol]) -> None:
        if not symbols:
            return
        self._by_path[path] = list(symbols)
        groups, touched, full = self._groups, self._touched, self._full
        depth = path_rank(path)
        for sym in symbols:
            lower = sym.name.lower()
            group = groups.get(lower)
            if group is None:
                group = groups[lower] = []
                if not full:
                    self._new.add(lower)
            group.append((static_key(KIND_ORDER.get(sym.kind, 99), len(sym.name), depth, sym.exported), path, sym))
            if not full:  # a full rebuild comes next anyway
                touched.add(lower)
        self._count += len(symbols)
        self.dirty = True

    def rebuild(self) -> None:
        """Bring the search structures up to date."""
        live = len(self._base) + len(self._new)
        if self._full or len(self._new) > DELTA_MAX or self._emptied > max(DELTA_MAX, live // 5):
            self._rebuild_all()
        else:
            for name in self._touched:
                i = self._base.position(name)
                if i is not None:
                    self._base.rerank(i)
            self._delta = _index(sorted(self._new), self._groups, self._wlines) if self._new else None
        self._touched = set()
        self.dirty = False

    def _rebuild_all(self) -> None:
        groups = self._groups
        for name in [n for n, g in groups.items() if not g]:
            del groups[name]
        names = sorted(groups)
        if len(self._wlines) > 2 * len(names) + 10000:
            self._wlines = {n: self._wlines[n] for n in names if n in self._wlines}
        self._base = _index(names, groups, self._wlines)
        self._delta = None
        self._new = set()
        self._emptied = 0
        self._full = False

    def indexes(self) -> list[NameIndex]:
        """The search structures over the names (call ``rebuild`` first when ``dirty``)."""
        return [self._base] if self._delta is None else [self._base, self._delta]

    def named_in(self, name: str, paths: AbstractSet[str]) -> list[tuple[str, Symbol]]:
        """Every (path, symbol) named ``name`` (lower-cased) in one of ``paths``."""
        return [(path, sym) for _rank, path, sym in self._groups.get(name, ()) if path in paths]

    def top(self, limit: int) -> list[Scored]:
        """The ``limit`` best-ranked entries, keyed (rank, path, line, column)."""
        entries = (((rank, path, sym.range[0], sym.range[1]), _HITS, (path, sym))
                   for group in self._groups.values() for rank, path, sym in group)
        return heapq.nsmallest(limit, entries, key=lambda t: t[0])


_HITS = _Groups([])  # the source of ``top``'s entries: a hit is its (path, symbol)


def _index(names: list[str], groups: dict[str, list[Entry]], wlines: dict[str, str]) -> NameIndex:
    lines = []
    for n in names:
        line = wlines.get(n)
        if line is None:
            group = groups[n]
            line = wlines[n] = word_line(group[0][2].name if group else n)
        lines.append(line)
    return NameIndex(NameArrays.build(names, lines), _Groups([groups[n] for n in names]), names, lines)
