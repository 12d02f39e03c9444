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
from collections.abc import Callable, Iterable, Sequence

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
# Up to this many substring/subsequence candidates are checked one by one, not by scanning.
DIRECT_MAX = 3000
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


def symbol_json(hit: SymbolHit) -> dict:
    """A symbol hit as JSON (``sylk symbols --format json``, the MCP ``search_symbol`` tool):
    1-based line and column of the name, the definition's last line."""
    s = hit.symbol
    return {"name": s.name, "kind": s.kind, "container": s.container, "path": hit.path,
            "line": s.selection[0] + 1, "column": s.selection[1] + 1, "endLine": s.range[2] + 1,
            "signature": s.signature}


@attrs.frozen(slots=True)
class _Name:
    lower: str
    words: tuple[str, ...]  # lower-cased words
    mask: int  # letters present
    initials: int  # letters that start a word
    bigrams: int  # hashed pairs of letters adjacent inside a word (_pair_bit)


def _pair_bit(a: str, b: str) -> int:
    return 1 << ((ord(a) * 31 + ord(b)) & 63)


def _name_info(lower_words: Sequence[str], lower: str) -> _Name:
    pairs = 0
    for w in lower_words:
        for a, b in zip(w, w[1:]):
            pairs |= _pair_bit(a, b)
    return _Name(lower, tuple(lower_words), _mask(lower), _mask("".join(w[0] for w in lower_words)), pairs)


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


def _char(ch: str) -> str:
    return f"\\U{ord(ch):08x}"


def _hump_regex(query: str, skips: bool = True) -> re.Pattern[str]:
    """Word lines (``\x01http\x01retry``) where ``query`` is successive prefixes of words.
    With ``skips=False`` (use ``match``) the words follow one another from the first."""
    parts = [f"\x01{_char(query[0])}"]
    for ch in query[1:]:
        c = _char(ch)
        if skips:
            # continue the current word, or jump to a later word starting with ch
            parts.append(f"(?:{c}|[^\\n\x01]*+(?:\x01[^\\n\x01]*+)*?\x01{c})")
        else:
            # continue the current word, or start the next one with ch
            parts.append(f"(?:{c}|[^\\n\x01]*+\x01{c})")
    return re.compile("".join(parts))


def _subsequence_regex(query: str) -> re.Pattern[str]:
    """Lines of the name blob holding ``query`` as a subsequence. Possessive steps make
    each attempt linear; the literal first letter lets the engine skip ahead."""
    return re.compile(_char(query[0]) + "".join(f"[^\\n{_char(ch)}]*+{_char(ch)}" for ch in query[1:]))


def _line_starts(lines: Sequence[str]) -> np.ndarray:
    lengths = np.fromiter((len(l) + 1 for l in lines), dtype=np.int64, count=len(lines))
    return np.concatenate(([0], np.cumsum(lengths)[:-1])) if len(lines) else np.zeros(0, dtype=np.int64)


def _is_subsequence(query: str, text: str) -> bool:
    it = iter(text)
    return all(ch in it for ch in query)


def static_key(path: str, sym: Symbol) -> int:
    """Query-independent rank of an entry (lower is better): kind, path depth, name length."""
    return (KIND_ORDER.get(sym.kind, 99) << 16) | (min(path.count("/"), 255) << 8) | min(len(sym.name), 255)


class SymbolTable:
    """All symbols of a workspace, grouped by lower-cased name.

    Groups are maintained as files come and go; the sorted name list and the
    bit-mask arrays are rebuilt lazily on the next query after a change, which
    costs time in the number of distinct names, not of symbols.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_path: dict[str, list[Symbol]] = {}
        # lower name -> entries (static key, path, symbol)
        self._groups: dict[str, list[tuple[int, str, Symbol]]] = {}
        self._name_cache: dict[str, _Name] = {}
        self._count = 0
        self._dirty = True
        # search structure (rebuilt when dirty)
        self._names: list[str] = []  # distinct lower-case names, sorted
        self._infos: list[_Name] = []
        self._entries: list[list[tuple[int, str, Symbol]]] = []
        self._best_rank = np.zeros(0, dtype=np.int64)
        self._masks = np.zeros(0, dtype=np.uint64)
        self._initials = np.zeros(0, dtype=np.uint64)
        self._bigrams = np.zeros(0, dtype=np.uint64)
        self._blob = ""  # the sorted names, one per line
        self._starts = np.zeros(0, dtype=np.int64)
        self._wlines: list[str] = []  # each name as \x01-separated words
        self._by_len = np.zeros(0, dtype=np.int64)  # name indexes, shortest first
        self._lblob = ""  # names in that order
        self._lstarts = np.zeros(0, dtype=np.int64)
        self._top_cache: list[SymbolHit] | None = None

    def __len__(self) -> int:
        return self._count

    def _drop(self, path: str) -> None:
        old = self._by_path.pop(path, None)
        if not old:
            return
        groups = self._groups
        for sym in old:
            lower = sym.name.lower()
            group = groups.get(lower)
            if group is None:
                continue
            group[:] = [e for e in group if e[1] != path]
            if not group:
                del groups[lower]
        self._count -= len(old)
        self._dirty = True

    def _add(self, path: str, symbols: Sequence[Symbol]) -> None:
        if not symbols:
            return
        self._by_path[path] = list(symbols)
        groups = self._groups
        for sym in symbols:
            groups.setdefault(sym.name.lower(), []).append((static_key(path, sym), path, sym))
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
            for path, symbols in by_path.items():
                self._add(path, symbols)
            self._dirty = True

    @property
    def stale(self) -> bool:
        """True when the next search first rebuilds the search structure (costly)."""
        return self._dirty

    def warm(self) -> None:
        """Rebuild now if needed, so the next search is fast (call after a batch of changes)."""
        with self._lock:
            if self._dirty:
                self._rebuild()

    def files(self) -> Iterable[str]:
        with self._lock:
            return list(self._by_path)

    def _rebuild(self) -> None:
        groups = self._groups
        names = sorted(groups)
        cache = self._name_cache
        infos = []
        for n in names:
            info = cache.get(n)
            if info is None:
                # words of the original spelling carry the humps
                original = groups[n][0][2].name
                info = cache[n] = _name_info([w.lower() for w in split_words(original)] or [n], n)
            infos.append(info)
        if len(cache) > 2 * len(names) + 10000:
            self._name_cache = {i.lower: i for i in infos}
        entries = [groups[n] for n in names]
        self._names = names
        self._infos = infos
        self._entries = entries
        self._best_rank = np.fromiter((min(e[0] for e in g) for g in entries), dtype=np.int64, count=len(entries))
        self._masks = np.fromiter((i.mask for i in infos), dtype=np.uint64, count=len(infos))
        self._initials = np.fromiter((i.initials for i in infos), dtype=np.uint64, count=len(infos))
        self._bigrams = np.fromiter((i.bigrams for i in infos), dtype=np.uint64, count=len(infos))
        self._blob = "\n".join(names)
        self._starts = _line_starts(names)
        word_lines = ["\x01" + "\x01".join(i.words) for i in infos]
        self._wlines = word_lines
        self._by_len = np.array(sorted(range(len(names)), key=lambda i: (len(names[i]), names[i])), dtype=np.int64)
        by_len_lines = [names[i] for i in self._by_len.tolist()]
        self._lblob = "\n".join(by_len_lines)
        self._lstarts = _line_starts(by_len_lines)
        self._top_cache = None
        self._dirty = False

    def _lower_tiers(self, q: str, lo: int, hi: int, need: int, add: Callable[[int, int, int], int]) -> None:
        """Camel-hump, substring and subsequence matches, each tier only if the ones
        above left room for ``need`` more entries. Names in ``[lo, hi)`` (exact and
        prefix matches) are skipped."""
        names = self._names
        hq = _SEPARATORS.sub("", q) or q
        # Camel-hump candidates, vectorised over all names: the first letter starts a
        # word, and each following letter either starts a word or follows the previous
        # one inside a word (hashed letter pairs). Exact checks run on the few left.
        ok = (self._initials & np.uint64(1 << (ord(hq[0]) & 63))) != 0
        for a, b in zip(hq, hq[1:]):
            ok &= ((self._initials & np.uint64(1 << (ord(b) & 63))) != 0) | \
                  ((self._bigrams & np.uint64(_pair_bit(a, b))) != 0)
        ok[lo:hi] = False
        seen = self._hump_tier(hq, np.flatnonzero(ok).tolist(), need, add)
        if seen is None:
            return
        need -= seen[1]
        seen_names = seen[0]
        # substring, then subsequence: few candidates after a letter-mask filter are
        # checked one by one, else the name blobs are scanned
        qmask = np.uint64(_mask(q))
        cand = np.flatnonzero((self._masks & qmask) == qmask)
        if len(cand) <= DIRECT_MAX:
            rest = [i for i in cand.tolist() if not lo <= i < hi and i not in seen_names]
            later = []
            for i in rest:
                at = names[i].find(q)
                if at >= 0:
                    need -= add(i, TIER_SUBSTRING, at)
                else:
                    later.append(i)
            if need <= 0:
                return
            subseq = _subsequence_regex(q)
            for i in later:
                if subseq.search(names[i]):
                    add(i, TIER_SUBSEQUENCE, len(names[i]) - len(q))
            return
        blob, starts = self._blob, self._starts
        subs: dict[int, int] = {}
        pos = blob.find(q)
        while pos != -1:
            i = int(np.searchsorted(starts, pos, side="right")) - 1
            if not (lo <= i < hi) and i not in seen_names and i not in subs:
                subs[i] = pos - int(starts[i])
            pos = blob.find(q, pos + 1)
        for i, at in subs.items():
            need -= add(i, TIER_SUBSTRING, at)
        if need <= 0:
            return
        seen_names.update(subs)
        for i in self._subsequence_shortest_first(q, need, seen_names, lo, hi):
            add(i, TIER_SUBSEQUENCE, len(names[i]) - len(q))

    def _hump_tier(self, hq: str, lines: list[int], need: int,
                   add: Callable[[int, int, int], int]) -> tuple[set[int], int] | None:
        """Add the camel-hump matches among ``lines``; None if they fill ``need``,
        else (the names added, the entries added)."""
        wlines, infos = self._wlines, self._infos
        zero = _hump_regex(hq, skips=False)
        hump = _hump_regex(hq)
        added: set[int] = set()
        count = 0
        others = []
        for i in lines:
            line = wlines[i]
            if zero.match(line):  # successive words from the first: nothing skipped
                added.add(i)
                count += add(i, TIER_HUMP, 0)
            elif hump.search(line):
                others.append(i)
        if count >= need:
            return None  # the rest rank below these and cannot make the cut
        for i in others:
            skipped = hump_match(hq, infos[i].words)
            if skipped is not None:
                added.add(i)
                count += add(i, TIER_HUMP, skipped)
        if count >= need:
            return None
        return added, count

    def _subsequence_shortest_first(self, q: str, need: int, seen: set[int], lo: int, hi: int) -> list[int]:
        """Names holding ``q`` as a subsequence, shortest first (the tier's order), stopping
        once ``need`` are found and no name of the same length remains."""
        order, starts = self._by_len, self._lstarts
        found: list[int] = []
        cutoff = None
        names = self._names
        for m in _subsequence_regex(q).finditer(self._lblob):
            line = int(np.searchsorted(starts, m.start(), side="right")) - 1
            i = int(order[line])
            if cutoff is not None and len(names[i]) > cutoff:
                break
            if (lo <= i < hi) or i in seen or (found and found[-1] == i):
                continue
            found.append(i)
            if cutoff is None and len(found) >= need:
                cutoff = len(names[i])
        return found

    def search(self, query: str, limit: int = 100) -> list[SymbolHit]:
        query = query.strip()
        with self._lock:
            if self._dirty:
                self._rebuild()
            names, entries, best_rank = self._names, self._entries, self._best_rank
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

        def add(idx: int, tier: int, sub: int) -> int:
            n = 0
            for rank, path, sym in entries[idx]:
                if container_q and not _is_subsequence(container_q, sym.container.lower()):
                    continue
                case = 0 if query in sym.name else 1
                scored.append(((tier, sub, case, rank, path, sym.range[0]), path, sym, tier))
                n += 1
            return n

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
            self._lower_tiers(q, lo, hi, limit - len(scored), add)
        top_scored = heapq.nsmallest(limit, scored, key=lambda t: t[0])
        return [SymbolHit(path, sym, tier) for _key, path, sym, tier in top_scored]

    def _top_all(self, limit: int) -> list[SymbolHit]:
        # Empty query: the best-ranked symbols overall (types, then functions, shallow paths).
        with self._lock:
            if self._top_cache is None or len(self._top_cache) < limit:
                flat = [(rank, path, sym.range[0], sym) for group in self._entries for rank, path, sym in group]
                self._top_cache = [SymbolHit(p, s, TIER_SUBSEQUENCE)
                                   for _r, p, _l, s in heapq.nsmallest(max(limit, 200), flat, key=lambda t: t[:3])]
            return self._top_cache[:limit]
