"""The name index behind fuzzy symbol search: each distinct lower-cased name once, with
its words and letter masks, and the matching tiers

    exact  >  prefix  >  camel-hump  >  substring  >  subsequence

answered by binary search on the sorted names (exact, prefix) and by a vectorised
letter-mask filter before the per-name checks (the other tiers).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Sequence

import attrs
import numpy as np

from ..ingest.symbols import Symbol
from ..text.words import split_words

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
# Up to this many camel-hump candidates are matched one by one in Python: compiling the
# two regexes that screen more of them costs 1-2 ms for a long query.
HUMP_DIRECT = 150
# names new since the last full rebuild of the search structure kept in a small one of
# their own; above this many (or this many emptied names) everything is rebuilt
DELTA_MAX = 5000
NO_RANK = 1 << 40  # the best rank of a name without entries (its symbols left)
TIER_EXACT, TIER_PREFIX, TIER_HUMP, TIER_SUBSTRING, TIER_SUBSEQUENCE = range(5)

_SEPARATORS = re.compile(r"[\W_]+")


# The bit of a letter (a code point) and of two adjacent letters in a 64-bit mask:
# ints for a query, numpy uint64 arrays for every name at once (_letter_masks, _word_masks).
def _letter_bit(code: int | np.ndarray) -> int | np.ndarray:
    return 1 << (code & 63) if isinstance(code, int) else np.left_shift(np.uint64(1), code & np.uint64(63))


def _pair_hash(a: int | np.ndarray, b: int | np.ndarray) -> int | np.ndarray:
    return _letter_bit(a * 31 + b)


def _mask(text: str) -> int:
    m = 0
    for ch in text:
        m |= int(_letter_bit(ord(ch)))
    return m


@attrs.frozen(slots=True)
class NameInfo:
    lower: str
    words: tuple[str, ...]  # lower-cased words


def _pair_bit(a: str, b: str) -> int:
    return int(_pair_hash(ord(a), ord(b)))


def _codes(lines: Sequence[str]) -> np.ndarray:
    """The code points of ``lines`` joined with newlines, and a 0 after the last."""
    text = "\n".join(lines).encode("utf-32-le", "surrogatepass")
    return np.append(np.frombuffer(text, dtype=np.uint32).astype(np.uint64), np.uint64(0))


def _per_line(bits: np.ndarray, starts: np.ndarray) -> np.ndarray:
    return np.bitwise_or.reduceat(bits, starts) if len(starts) else np.zeros(0, dtype=np.uint64)


def _letter_masks(lines: Sequence[str], starts: np.ndarray) -> np.ndarray:
    """``_mask`` of each line, for all of them at once (the newlines count for nothing)."""
    c = _codes(lines)
    bits = _letter_bit(c)
    bits[c == 10] = 0
    bits[-1] = 0
    return _per_line(bits, starts)


def _word_masks(wlines: Sequence[str], starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per word line (``\x01http\x01retry``): the letters that start a word, and the
    ``_pair_bit`` of each two letters adjacent inside a word, for all lines at once."""
    c = _codes(wlines)
    letter = (c != 1) & (c != 10)
    letter[-1] = False
    first = np.zeros(len(c), dtype=bool)
    first[1:] = (c[:-1] == 1) & letter[1:]
    initials = np.where(first, _letter_bit(c), np.uint64(0))
    pairs = np.zeros(len(c), dtype=np.uint64)
    pairs[:-1] = np.where(letter[:-1] & letter[1:], _pair_hash(c[:-1], c[1:]), np.uint64(0))
    return _per_line(initials, starts), _per_line(pairs, starts)


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


def path_rank(path: str) -> int:
    """The path's part of ``static_key`` (shallower is better), the same for all of a file's symbols."""
    return min(path.count("/"), 255) << 8


def static_key(path: str, sym: Symbol, path_part: int | None = None) -> int:
    """Query-independent rank of an entry (lower is better): kind, path depth, name length.
    ``path_part``: ``path_rank(path)``, when the caller has it."""
    return (KIND_ORDER.get(sym.kind, 99) << 16) | (path_rank(path) if path_part is None else path_part) | \
        min(len(sym.name), 255)


class NameIndex:
    """The search structure over a set of distinct names: the sorted names, their
    letter masks and word lines, and the live entry lists of their groups (shared with
    the table, so entries of a known name change without a rebuild)."""

    def __init__(self, names: list[str], groups: dict[str, list[tuple[int, str, Symbol]]],
                 cache: dict[str, NameInfo]) -> None:
        infos = []
        for n in names:
            info = cache.get(n)
            if info is None:
                # words of the original spelling carry the humps
                original = groups[n][0][2].name if groups[n] else n
                info = cache[n] = NameInfo(n, tuple(w.lower() for w in split_words(original)) or (n,))
            infos.append(info)
        entries = [groups[n] for n in names]
        self._names = names
        self._position = {n: i for i, n in enumerate(names)}
        self._infos = infos
        self._entries = entries
        self._best_rank = np.fromiter((min((e[0] for e in g), default=NO_RANK) for g in entries),
                                      dtype=np.int64, count=len(entries))
        self._blob = "\n".join(names)
        self._starts = _line_starts(names)
        self._wlines = ["\x01" + "\x01".join(i.words) for i in infos]
        # letters present, letters starting a word, letter pairs inside a word (_pair_bit)
        self._masks = _letter_masks(names, self._starts)
        self._initials, self._bigrams = _word_masks(self._wlines, _line_starts(self._wlines))
        self._by_len = np.array(sorted(range(len(names)), key=lambda i: (len(names[i]), names[i])), dtype=np.int64)
        by_len_lines = [names[i] for i in self._by_len.tolist()]
        self._lblob = "\n".join(by_len_lines)
        self._lstarts = _line_starts(by_len_lines)

    def __contains__(self, name: str) -> bool:
        return name in self._position

    def __len__(self) -> int:
        return len(self._names)

    def rerank(self, name: str) -> None:
        """The entries of ``name`` changed: refresh its best rank (prefix-run pruning)."""
        i = self._position.get(name)
        if i is not None:
            self._best_rank[i] = min((e[0] for e in self._entries[i]), default=NO_RANK)

    def score(self, query: str, q: str, container_q: str, limit: int) -> list[tuple[tuple, str, Symbol, int]]:
        """(sort key, path, symbol, tier) of the entries matching ``q`` (the lower-cased
        ``query``), enough of each tier to fill ``limit``."""
        names, entries, best_rank = self._names, self._entries, self._best_rank
        scored: list[tuple[tuple, str, Symbol, int]] = []
        if not names:
            return scored

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
        return scored

    def all_entries(self) -> Iterable[tuple[int, str, Symbol]]:
        return (e for group in self._entries for e in group)

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
        added: set[int] = set()
        count = 0
        others: list[tuple[int, int | None]] = []  # (name, skipped words if known)
        if len(lines) <= HUMP_DIRECT:  # a few names: match them, not compile two regexes
            for i in lines:
                skipped = hump_match(hq, infos[i].words)
                if skipped == 0:
                    added.add(i)
                    count += add(i, TIER_HUMP, 0)
                elif skipped is not None:
                    others.append((i, skipped))
        else:
            zero = _hump_regex(hq, skips=False)
            hump = _hump_regex(hq)
            for i in lines:
                line = wlines[i]
                if zero.match(line):  # successive words from the first: nothing skipped
                    added.add(i)
                    count += add(i, TIER_HUMP, 0)
                elif hump.search(line):
                    others.append((i, None))
        if count >= need:
            return None  # the rest rank below these and cannot make the cut
        for i, known in others:
            skipped = known if known is not None else hump_match(hq, infos[i].words)
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
