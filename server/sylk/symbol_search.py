"""Fuzzy symbol search ("Go to Symbol in Workspace").

Matching tiers, best first, the way editor users expect them:

    exact  >  prefix  >  camel-hump  >  substring  >  subsequence

``hrp`` finds ``HttpRetryPolicy`` and ``gUBI`` finds ``get_user_by_id`` (camel
hump: each piece of the query is a prefix of a word of the name, in order).
Matching is case-insensitive; a case-exact match ranks above a case-folded one
within its tier. Ties are broken by symbol kind (types before functions before
fields), then path depth, then name length and path.

The table keeps each distinct name once with precomputed words and bit masks, so
a query only walks the names that can match: exact and prefix by binary search on
the sorted names, the other tiers behind a vectorised letter-mask filter.
"""

from __future__ import annotations

import bisect
import heapq
import re
import threading
from collections.abc import Iterable, Sequence

import attrs
import numpy as np

from .symbols import Symbol

KIND_ORDER = {
    k: i
    for i, k in enumerate((
        "class", "interface", "struct", "trait", "enum", "union", "type", "module",
        "namespace", "function", "method", "constructor", "macro", "constant",
        "property", "field", "enum_member", "variable", "heading",
    ))
}
TIER_EXACT, TIER_PREFIX, TIER_HUMP, TIER_SUBSTRING, TIER_SUBSEQUENCE = range(5)

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W_]+")


_SEPARATORS = re.compile(r"[\W_]+")


def split_words(name: str) -> list[str]:
    """``getHTTPResponse2_code`` -> ``["get", "HTTP", "Response", "2", "code"]``."""
    return _WORD.findall(name)


def _mask(text: str) -> int:
    m = 0
    for ch in text:
        m |= 1 << (ord(ch) & 63)
    return m


@attrs.frozen(slots=True)
class SymbolHit:
    path: str
    symbol: Symbol
    tier: int


@attrs.frozen(slots=True)
class _Name:
    lower: str
    words: tuple[str, ...]  # lower-cased words
    mask: int  # letters present
    initials: int  # letters that start a word


def _name_info(lower_words: Sequence[str], lower: str) -> _Name:
    return _Name(lower, tuple(lower_words), _mask(lower), _mask("".join(w[0] for w in lower_words)))


def hump_match(query: str, words: Sequence[str]) -> int | None:
    """Match ``query`` as successive prefixes of ``words`` (in order, words may be
    skipped). Returns the fewest skipped words (lower is better) or None."""
    n, m = len(query), len(words)
    memo: dict[tuple[int, int], int | None] = {}

    def go(qi: int, wi: int) -> int | None:
        if qi == n:
            return 0
        key = (qi, wi)
        if key in memo:
            return memo[key]
        best: int | None = None
        ch = query[qi]
        for j in range(wi, m):
            w = words[j]
            if not w or w[0] != ch:
                continue
            k = 1
            while k < len(w) and qi + k < n and w[k] == query[qi + k]:
                k += 1
            for take in range(k, 0, -1):
                rest = go(qi + take, j + 1)
                if rest is not None:
                    total = rest + j - wi
                    if best is None or total < best:
                        best = total
            if best == 0:
                break
        memo[key] = best
        return best

    return go(0, 0)


def _is_subsequence(query: str, text: str) -> bool:
    it = iter(text)
    return all(ch in it for ch in query)


class SymbolTable:
    """All symbols of a workspace, by file, with a search structure rebuilt lazily."""

    def __init__(self) -> None:
        self._by_path: dict[str, list[Symbol]] = {}
        self._lock = threading.Lock()
        self._dirty = True
        self._name_cache: dict[str, _Name] = {}
        # search structure (rebuilt when dirty)
        self._names: list[str] = []  # distinct lower-case names, sorted
        self._infos: list[_Name] = []
        self._entries: list[list[tuple[str, Symbol, int]]] = []  # per distinct name, by rank
        self._best_rank = np.zeros(0, dtype=np.int64)
        self._top_cache: list[SymbolHit] | None = None
        self._masks = np.zeros(0, dtype=np.uint64)
        self._initials = np.zeros(0, dtype=np.uint64)
        self._count = 0

    def __len__(self) -> int:
        return self._count if not self._dirty else sum(len(v) for v in self._by_path.values())

    def set_file(self, path: str, symbols: Sequence[Symbol]) -> None:
        with self._lock:
            if symbols:
                self._by_path[path] = list(symbols)
            else:
                self._by_path.pop(path, None)
            self._dirty = True

    def remove_file(self, path: str) -> None:
        with self._lock:
            if self._by_path.pop(path, None) is not None:
                self._dirty = True

    def replace_all(self, by_path: dict[str, list[Symbol]]) -> None:
        with self._lock:
            self._by_path = dict(by_path)
            self._dirty = True

    def files(self) -> Iterable[str]:
        return list(self._by_path)

    def _rebuild(self) -> None:
        groups: dict[str, list[tuple[str, Symbol]]] = {}
        count = 0
        for path, syms in self._by_path.items():
            for s in syms:
                groups.setdefault(s.name.lower(), []).append((path, s))
                count += 1
        names = sorted(groups)
        cache = self._name_cache
        infos = []
        for n in names:
            info = cache.get(n)
            if info is None:
                # words of the original spelling carry the humps
                original = groups[n][0][1].name
                info = cache[n] = _name_info([w.lower() for w in split_words(original)] or [n], n)
            infos.append(info)
        if len(cache) > 4 * len(names) + 10000:
            self._name_cache = {i.lower: i for i in infos}
        # one static rank per entry: kind, path depth, name length, path, line
        order = sorted(
            ((KIND_ORDER.get(s.kind, 99), p.count("/"), len(s.name), p, s.range[0], gi, k)
             for gi, n in enumerate(names) for k, (p, s) in enumerate(groups[n])),
        )
        ranked: list[list[tuple[str, Symbol, int]]] = [[] for _ in names]
        best = np.empty(len(names), dtype=np.int64)
        for rank, (*_k, gi, k) in enumerate(order):
            p, s = groups[names[gi]][k]
            if not ranked[gi]:
                best[gi] = rank
            ranked[gi].append((p, s, rank))
        self._names = names
        self._infos = infos
        self._entries = ranked
        self._best_rank = best
        self._top_cache = None
        self._masks = np.fromiter((i.mask for i in infos), dtype=np.uint64, count=len(infos))
        self._initials = np.fromiter((i.initials for i in infos), dtype=np.uint64, count=len(infos))
        self._count = count
        self._dirty = False

    def search(self, query: str, limit: int = 100) -> list[SymbolHit]:
        query = query.strip()
        with self._lock:
            if self._dirty:
                self._rebuild()
            names, infos, entries = self._names, self._infos, self._entries
            masks, initials, best_rank = self._masks, self._initials, self._best_rank
        if limit <= 0:
            return []
        if not query:
            return self._top_all(limit)
        container_q = ""
        if "." in query.strip("."):
            container_q, _, query = query.rpartition(".")
            container_q = container_q.lower()
        q = query.lower()
        scored: list[tuple[tuple, str, Symbol, int]] = []

        def add(idx: int, tier: int, sub: int) -> None:
            for path, sym, rank in entries[idx]:
                if container_q and not _is_subsequence(container_q, sym.container.lower()):
                    continue
                case = 0 if query in sym.name else 1
                scored.append(((tier, sub, case, rank), path, sym, tier))

        # exact and prefix: a contiguous run of the sorted names; when it is long,
        # only the names holding the best-ranked entries can make the cut.
        lo = bisect.bisect_left(names, q)
        hi = bisect.bisect_left(names, q + "\U0010ffff")
        run = range(lo, hi)
        if hi - lo > 2 * limit:
            top = np.argpartition(best_rank[lo:hi], 2 * limit)[: 2 * limit] + lo
            run = sorted(set(top.tolist()) | ({lo} if names[lo] == q else set()))
        for i in run:
            add(i, TIER_EXACT if names[i] == q else TIER_PREFIX, 0)
        if len(scored) < limit:
            qmask = np.uint64(_mask(q))
            cand = np.flatnonzero((masks & qmask) == qmask)
            cand = cand[(cand < lo) | (cand >= hi)]
            rx = re.compile(".*?".join(map(re.escape, q)), re.DOTALL)
            subseq = [i for i in cand.tolist() if rx.search(names[i])]
            hq = _SEPARATORS.sub("", q) or q
            first = 1 << (ord(hq[0]) & 63)
            rest = []
            for i in subseq:
                skipped = hump_match(hq, infos[i].words) if infos[i].initials & first else None
                if skipped is not None:
                    add(i, TIER_HUMP, skipped)
                else:
                    rest.append(i)
            if len(scored) < limit:
                later = []
                for i in rest:
                    pos = names[i].find(q)
                    if pos >= 0:
                        add(i, TIER_SUBSTRING, pos)
                    else:
                        later.append(i)
                if len(scored) < limit:
                    for i in later:
                        add(i, TIER_SUBSEQUENCE, len(names[i]) - len(q))
        top_scored = heapq.nsmallest(limit, scored, key=lambda t: t[0])
        return [SymbolHit(path, sym, tier) for _key, path, sym, tier in top_scored]

    def _top_all(self, limit: int) -> list[SymbolHit]:
        # Empty query: the best-ranked symbols overall (types, then functions, shallow paths).
        with self._lock:
            if self._top_cache is None or len(self._top_cache) < limit:
                flat = [(rank, path, sym) for group in self._entries for path, sym, rank in group]
                self._top_cache = [SymbolHit(p, s, TIER_SUBSEQUENCE)
                                   for _r, p, s in heapq.nsmallest(max(limit, 200), flat, key=lambda t: t[0])]
            return self._top_cache[:limit]
