"""Fuzzy symbol search ("Go to Symbol in Workspace").

Matching tiers, best first, the way editor users expect them:

    exact  >  prefix  >  camel-hump  >  substring  >  subsequence

``hrp`` finds ``HttpRetryPolicy`` and ``gUBI`` finds ``get_user_by_id`` (camel
hump: each piece of the query is a prefix of a word of the name, in order).
Matching is case-insensitive; a case-exact match ranks above a case-folded one
within its tier. Ties are broken by symbol kind (types before functions before
fields), then path depth, then name length and path.

The table keeps each distinct name once with precomputed words and bit masks
(``name_index``), so a query only walks the names that can match.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Iterable, Sequence

import attrs

from ..ingest.symbols import Symbol
from .name_index import DELTA_MAX, TIER_SUBSEQUENCE, NameIndex, NameInfo, path_rank, static_key


@attrs.frozen(slots=True)
class SymbolHit:
    path: str
    symbol: Symbol
    tier: int


_EMPTY_INDEX_NAMES: list[str] = []


class SymbolTable:
    """All symbols of a workspace, grouped by lower-cased name.

    Groups are maintained as files come and go. The search structure over the
    distinct names (``NameIndex``) is rebuilt only when many names came or went: a
    change within known names is seen at once (the structure holds the live entry
    lists), names new since the last rebuild go into a small second structure
    (``_delta``), and names whose symbols all left simply match nothing. So saving
    one file costs time in that file's names, not the workspace's.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_path: dict[str, list[Symbol]] = {}
        # lower name -> entries (static key, path, symbol); a group emptied by changes
        # stays (empty) until the next full rebuild, so the structure's lists stay live
        self._groups: dict[str, list[tuple[int, str, Symbol]]] = {}
        self._name_cache: dict[str, NameInfo] = {}
        self._count = 0
        self._base = NameIndex(_EMPTY_INDEX_NAMES, self._groups, self._name_cache)
        self._delta: NameIndex | None = None
        self._new: set[str] = set()  # names not in the base structure
        self._touched: set[str] = set()  # names whose entries changed since the last warm()
        self._emptied = 0  # groups emptied since the last full rebuild
        self._full = True  # the next warm() rebuilds everything
        self._dirty = True
        self._top_cache: list[SymbolHit] | None = None

    def __len__(self) -> int:
        return self._count

    def _drop(self, path: str) -> None:
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
        self._dirty = True

    def _add(self, path: str, symbols: Sequence[Symbol]) -> None:
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
            group.append((static_key(path, sym, depth), path, sym))
            if not full:  # a full rebuild comes next anyway
                touched.add(lower)
        self._count += len(symbols)
        self._dirty = True

    def set_file(self, path: str, symbols: Sequence[Symbol]) -> None:
        with self._lock:
            self._drop(path)
            self._add(path, symbols)

    def remove_file(self, path: str) -> None:
        with self._lock:
            self._drop(path)

    def replace_all(self, by_path: dict[str, list[Symbol]]) -> None:
        with self._lock:
            self._by_path, self._groups, self._count = {}, {}, 0
            self._full = True
            for path, symbols in by_path.items():
                self._add(path, symbols)
            self._dirty = True

    @property
    def stale(self) -> bool:
        """True when the next search first rebuilds a search structure (costly only after
        many new names; see warm)."""
        return self._dirty

    def warm(self) -> None:
        """Bring the search structures up to date now, so the next search is fast (call
        after a batch of changes)."""
        with self._lock:
            if self._dirty:
                self._rebuild()

    def files(self) -> Iterable[str]:
        with self._lock:
            return list(self._by_path)

    def _rebuild(self) -> None:
        live = len(self._base) + len(self._new)
        if self._full or len(self._new) > DELTA_MAX or self._emptied > max(DELTA_MAX, live // 5):
            self._rebuild_all()
        else:
            for name in self._touched:
                self._base.rerank(name)
            self._delta = NameIndex(sorted(self._new), self._groups, self._name_cache) if self._new else None
        self._touched = set()
        self._top_cache = None
        self._dirty = False

    def _rebuild_all(self) -> None:
        groups = self._groups
        for name in [n for n, g in groups.items() if not g]:
            del groups[name]
        names = sorted(groups)
        cache = self._name_cache
        if len(cache) > 2 * len(names) + 10000:
            cache = self._name_cache = {n: cache[n] for n in names if n in cache}
        self._base = NameIndex(names, groups, cache)
        self._delta = None
        self._new = set()
        self._emptied = 0
        self._full = False

    def search(self, query: str, limit: int = 100) -> list[SymbolHit]:
        query = query.strip()
        with self._lock:
            if self._dirty:
                self._rebuild()
            base, delta = self._base, self._delta
        if limit <= 0:
            return []
        if not query:
            return self._top_all(limit)
        container_q = ""
        if "." in query.strip("."):
            container_q, _, query = query.rpartition(".")
            container_q = container_q.lower()
        q = query.lower()
        scored = base.score(query, q, container_q, limit)
        if delta is not None:
            scored += delta.score(query, q, container_q, limit)
        top_scored = heapq.nsmallest(limit, scored, key=lambda t: t[0])
        return [SymbolHit(path, sym, tier) for _key, path, sym, tier in top_scored]

    def _top_all(self, limit: int) -> list[SymbolHit]:
        # Empty query: the best-ranked symbols overall (types, then functions, shallow paths).
        with self._lock:
            if self._top_cache is None or len(self._top_cache) < limit:
                flat = [(rank, path, sym.range[0], sym) for group in self._groups.values() for rank, path, sym in group]
                self._top_cache = [SymbolHit(p, s, TIER_SUBSEQUENCE)
                                   for _r, p, _l, s in heapq.nsmallest(max(limit, 200), flat, key=lambda t: t[:3])]
            return self._top_cache[:limit]
