"""Fuzzy symbol search ("Go to Symbol in Workspace").

Matching tiers, best first, the way editor users expect them:

    exact  >  prefix  >  camel-hump  >  substring  >  subsequence

``hrp`` finds ``HttpRetryPolicy`` and ``gUBI`` finds ``get_user_by_id`` (camel
hump: each piece of the query is a prefix of a word of the name, in order).
Matching is case-insensitive; a case-exact match ranks above a case-folded one
within its tier. Ties are broken by whether the definition is exported (exported
first: ``Symbol.exported``), then symbol kind (types before functions before
fields), then path depth, then name length and path.

The table keeps each distinct name once with precomputed words and bit masks
(``name_index``), so a query only walks the names that can match: in a snapshot's
arrays (``frozen_symbols``) for what was indexed, and in Python objects
(``live_symbols``) for the files changed since.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet

import attrs
import numpy as np

from ..ingest.symbols import Symbol
from .frozen_symbols import FrozenSymbols
from .live_symbols import LiveSymbols
from .name_index import TIER_EXACT, TIER_SUBSEQUENCE, NameIndex, Scored, holding


# A filtered search asks for this many times the symbols it wants, then more (up to
# FILTER_MAX) while the filter leaves too few.
FILTER_FETCH = 4
FILTER_MAX = 50_000


@attrs.frozen(slots=True)
class SymbolHit:
    path: str
    symbol: Symbol
    tier: int


@attrs.frozen
class SymbolFilter:
    """Which symbols a search keeps: of one of ``kinds`` (any when empty), exported or
    not (``exported``; None: either)."""

    kinds: frozenset[str] = frozenset()
    exported: bool | None = None

    @property
    def empty(self) -> bool:
        return not self.kinds and self.exported is None

    def __call__(self, symbol: Symbol) -> bool:
        return (not self.kinds or symbol.kind in self.kinds) and \
            (self.exported is None or symbol.exported == self.exported)


class SymbolTable:
    """All symbols of a workspace: a frozen base (``FrozenSymbols``, a snapshot's arrays;
    None before the first one) under a live layer (``LiveSymbols``) holding every file
    changed since. A file set or removed here is hidden in the base and served by the
    live layer from then on. ``rebase`` swaps in a new snapshot."""

    def __init__(self, base: FrozenSymbols | None = None) -> None:
        self._lock = threading.Lock()
        self._base = base
        self._live = LiveSymbols()
        self._top_cache: list[SymbolHit] | None = None
        self._file_set: frozenset[str] | None = None

    def __len__(self) -> int:
        return len(self._live) + (len(self._base) if self._base is not None else 0)

    @property
    def base(self) -> FrozenSymbols | None:
        return self._base

    @property
    def live_count(self) -> int:
        """How many symbols the live layer holds (files changed since the snapshot)."""
        return len(self._live)

    def set_file(self, path: str, symbols: Sequence[Symbol]) -> None:
        with self._lock:
            self._live.drop(path)
            self._live.add(path, symbols)
            self._hide(path)

    def remove_file(self, path: str) -> None:
        with self._lock:
            self._live.drop(path)
            self._hide(path)

    def _hide(self, path: str) -> None:
        if self._base is not None:
            self._base.hide(path)
        self._top_cache = self._file_set = None

    def replace_all(self, by_path: dict[str, list[Symbol]]) -> None:
        """Everything from ``by_path``, in the live layer (no snapshot)."""
        self.rebase(None, by_path)

    def rebase(self, base: FrozenSymbols | None, live: dict[str, list[Symbol]]) -> None:
        """A new snapshot, with ``live`` (files it does not hold as they are now) over it."""
        layer = LiveSymbols()
        for path, symbols in live.items():
            layer.add(path, symbols)
            if base is not None:
                base.hide(path)
        with self._lock:
            self._base, self._live, self._top_cache, self._file_set = base, layer, None, None

    def symbols_of_live(self, path: str) -> list[Symbol] | None:
        with self._lock:
            return self._live.symbols_of(path)

    @property
    def stale(self) -> bool:
        """True when the next search first rebuilds a search structure (costly only after
        many new names; see warm)."""
        return self._live.dirty

    def warm(self) -> None:
        """Bring the search structures up to date now, so the next search is fast (call
        after a batch of changes)."""
        with self._lock:
            if self._live.dirty:
                self._live.rebuild()

    def files(self) -> Iterable[str]:
        with self._lock:
            base = self._base.paths() if self._base is not None else []
            return base + self._live.paths()

    def file_set(self) -> frozenset[str]:
        """``files()`` as a set, kept until a file is set or removed."""
        files = self._file_set
        if files is None:
            files = self._file_set = frozenset(self.files())
        return files

    def search(self, query: str, limit: int = 100, only: SymbolFilter | None = None) -> list[SymbolHit]:
        """The best ``limit`` symbols matching ``query``, of those ``only`` keeps."""
        if only is None or only.empty:
            return self._search(query, limit)
        fetch = max(limit * FILTER_FETCH, 100)
        while True:  # the filter is applied to the ranked list: ask for more until enough pass
            hits = self._search(query, fetch)
            kept = [h for h in hits if only(h.symbol)]
            if len(kept) >= limit or len(hits) < fetch or fetch >= FILTER_MAX:
                return kept[:limit]
            fetch = min(fetch * FILTER_FETCH, FILTER_MAX)

    def _search(self, query: str, limit: int) -> list[SymbolHit]:
        query = query.strip()
        indexes = self._indexes()
        if limit <= 0:
            return []
        if not query:
            return self._top_all(limit)
        container_q = ""
        if "." in query.strip("."):
            container_q, _, query = query.rpartition(".")
            container_q = container_q.lower()
        q = query.lower()
        scored = [item for index in indexes for item in index.score(query, q, container_q, limit)]
        return [_hit(item, item[0][0]) for item in heapq.nsmallest(limit, scored, key=lambda t: t[0])]

    def named(self, name: str, limit: int = 100) -> list[SymbolHit]:
        """The symbols named ``name``, whatever the case (the same case first), best first:
        no fuzzy tier, so a name with few definitions costs a lookup."""
        q = name.lower()
        scored = [item for index in self._indexes() for item in index.named(name, q, limit)]
        return [_hit(item, TIER_EXACT) for item in heapq.nsmallest(limit, scored, key=lambda t: t[0])]

    def named_in(self, name: str, paths: AbstractSet[str]) -> list[SymbolHit]:
        """Every symbol named ``name`` (whatever the case) in one of ``paths``, however many
        the name has elsewhere."""
        with self._lock:
            base, live = self._base, self._live
        q = name.lower()
        found = live.named_in(q, paths) + (base.named_in(q, paths) if base is not None else [])
        return [SymbolHit(path, sym, TIER_EXACT) for path, sym in found]

    def enclosing(self, path: str, line: int, kinds: AbstractSet[str] | None = None) -> Symbol | None:
        """The innermost symbol of ``path`` (of one of ``kinds``) whose range holds ``line``
        (0-based), None when none does: where a cursor or an occurrence is."""
        with self._lock:
            base, live = self._base, self._live.symbols_of(path)
        if live is None:
            return base.enclosing(path, line, kinds) if base is not None else None
        ranges = np.array([s.range for s in live], dtype=np.int64).reshape(-1, 4)
        return next((live[i] for i in holding(ranges, line).tolist() if kinds is None or live[i].kind in kinds), None)

    def scope(self, path: str, line: int) -> str:
        """``enclosing``'s qualified name (``Class.method``), "" when none."""
        sym = self.enclosing(path, line)
        return sym.qualified_name if sym is not None else ""

    def _indexes(self) -> list[NameIndex]:
        """The search structures of both layers, the live one brought up to date."""
        with self._lock:
            if self._live.dirty:
                self._live.rebuild()
            return self._live.indexes() + ([self._base.index] if self._base is not None else [])

    def _top_all(self, limit: int) -> list[SymbolHit]:
        # Empty query: the best-ranked symbols overall (types, then functions, shallow paths).
        with self._lock:
            if self._top_cache is None or len(self._top_cache) < limit:
                n = max(limit, 200)
                items = self._live.top(n) + (self._base.top(n) if self._base is not None else [])
                best = heapq.nsmallest(n, items, key=lambda t: t[0])
                self._top_cache = [_hit(item, TIER_SUBSEQUENCE) for item in best]
            return self._top_cache[:limit]


def _hit(item: Scored, tier: int) -> SymbolHit:
    _key, source, ref = item
    path, sym = source.hit(ref)  # type: ignore[attr-defined]
    return SymbolHit(path, sym, tier)
