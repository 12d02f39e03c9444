"""The name index behind fuzzy symbol search: each distinct lower-cased name once, with
its words and letter masks, and the matching tiers

    exact  >  prefix  >  camel-hump  >  substring  >  subsequence

answered by binary search on the sorted names (exact, prefix) and by a vectorised
letter-mask filter before the per-name checks (the other tiers).
"""

from __future__ import annotations

import bisect
import heapq
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import attrs
import numpy as np

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
# Below one in this many names holding the query's letters, the subsequence tier scans a
# blob of just those names rather than all of them.
SUBSEQUENCE_FEW = 3
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


def _hump_one_skip_regex(query: str) -> re.Pattern[str]:
    """Word lines where ``query`` is successive prefixes of words with one word skipped,
    before the first piece or between two (use ``match``): ``hump_match`` of 1 for a line
    the ``skips=False`` regex does not match, without running it."""
    word = "[^\\n\x01]*+"
    variants = []
    for s in range(len(query)):
        parts = [f"\x01{word}\x01{_char(query[0])}" if s == 0 else f"\x01{_char(query[0])}"]
        for k, ch in enumerate(query[1:], 1):
            c = _char(ch)
            parts.append(f"{word}\x01{word}\x01{c}" if k == s else f"(?:{c}|{word}\x01{c})")
        variants.append("".join(parts))
    return re.compile("|".join(f"(?:{v})" for v in variants))


def _subsequence_regex(query: str) -> re.Pattern[str]:
    """Lines of the name blob holding ``query`` as a subsequence. Possessive steps make
    each attempt linear; the literal first letter lets the engine skip ahead."""
    return re.compile(_char(query[0]) + "".join(f"[^\\n{_char(ch)}]*+{_char(ch)}" for ch in query[1:]))


def _add_earliest(subs: dict[int, int], need: int, add: Callable[[int, int, int], int], scored: list[Scored],
                  best_rank: np.ndarray) -> int:
    """Add the substring matches ``subs`` (name -> where the query starts in it) in the tier's
    order, stopping once no name left can make the cut; what is still needed.

    A later start ranks below an earlier one. Among names with the same start (``test_``
    holds ``est_`` at 1 in thousands of names), the best-ranked first: once ``need`` entries
    matching the query's case are in, a name whose best rank (``best_rank``) is worse than
    theirs cannot place an entry among them."""
    by_start: dict[int, list[int]] = {}
    for i, at in subs.items():
        by_start.setdefault(at, []).append(i)
    for at in sorted(by_start):
        if need <= 0:
            break
        want = need
        worst: list[int] = []  # the best ``want`` ranks of exact-case entries, negated (a max-heap)
        for i in sorted(by_start[at], key=best_rank.__getitem__):
            if len(worst) >= want and best_rank[i] > -worst[0]:
                break
            before = len(scored)
            need -= add(i, TIER_SUBSTRING, at)
            for key, _source, _ref in scored[before:]:
                if key[2] == 0:  # (tier, sub, case, rank, ...)
                    if len(worst) < want:
                        heapq.heappush(worst, -key[3])
                    elif -key[3] > worst[0]:
                        heapq.heapreplace(worst, -key[3])
    return need


def _grep_lines(pattern: re.Pattern[str], ids: list[int], lines: Sequence[str]) -> list[int]:
    """The ``ids`` (in order) whose line ``pattern`` finds, by one scan of their lines joined:
    a search per line costs more in calls than in matching. ``pattern`` never matches a
    newline."""
    if not ids:
        return []
    texts = [lines[i] for i in ids]
    ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1)
    at = [m.start() for m in pattern.finditer("\n".join(texts))]
    if not at:
        return []
    hit = np.unique(np.searchsorted(ends, np.array(at, dtype=np.int64), side="right"))
    return [ids[k] for k in hit.tolist()]


def is_subsequence(query: str, text: str) -> bool:
    it = iter(text)
    return all(ch in it for ch in query)


def holding(ranges: np.ndarray, line: int) -> np.ndarray:
    """Of ``ranges`` (rows starting ``start line, start column, end line``), the rows holding
    ``line``, innermost first: the latest start, then the shortest."""
    if not len(ranges):
        return np.zeros(0, np.int64)
    holds = np.flatnonzero((ranges[:, 0] <= line) & (line <= ranges[:, 2]))
    r = ranges[holds]
    return holds[np.lexsort((r[:, 2] - r[:, 0], -r[:, 0]))]


def path_rank(path: str) -> int:
    """The path's part of ``static_key`` (shallower is better), the same for all of a file's symbols."""
    return min(path.count("/"), 255) << 8


# the part of ``static_key`` that puts a private definition after every exported one
PRIVATE_RANK = 1 << 24


def static_key(kind_rank: int | np.ndarray, name_length: int | np.ndarray, path_part: int | np.ndarray,
               exported: bool | np.ndarray = True):
    """Query-independent rank of an entry (lower is better): exported before private
    (``Symbol.exported``), then kind (``KIND_ORDER``, 99 for another), path depth
    (``path_rank`` of its path), name length. Ints for one entry, numpy arrays for many.
    Within a tier (and the case of the match) a search orders by this rank, so an
    exported definition comes before a private one of the same name."""
    if isinstance(name_length, np.ndarray):
        private = np.where(exported, 0, PRIVATE_RANK)
        return private | (kind_rank << 16) | path_part | np.minimum(name_length, 255)
    return (0 if exported else PRIVATE_RANK) | (kind_rank << 16) | path_part | min(name_length, 255)


class Lines(Sequence[str]):
    """The lines of a newline-joined ``blob`` by index (``starts``: where each line starts,
    then ``len(blob) + 1``), without a string object per line."""

    __slots__ = ("_blob", "_starts", "_n")

    def __init__(self, blob: str, starts: np.ndarray) -> None:
        self._blob = blob
        self._starts = np.ascontiguousarray(starts, dtype=np.int64).tolist() if len(starts) < 2 else \
            memoryview(np.ascontiguousarray(starts, dtype=np.int64)).cast("B").cast("q")
        self._n = len(starts) - 1

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):  # type: ignore[override]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._blob[self._starts[i]:self._starts[i + 1] - 1]


def line_starts(lines: Sequence[str]) -> np.ndarray:
    """Where each of ``lines`` starts in ``"\n".join(lines)``, then the joined length + 1."""
    lengths = np.fromiter((len(s) + 1 for s in lines), dtype=np.int64, count=len(lines))
    return np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)


def word_line(name: str) -> str:
    """A name's lower-cased words as one line, each after a \x01 (``\x01http\x01retry``): the
    words of the original spelling carry the humps."""
    return "\x01" + "\x01".join(w.lower() for w in split_words(name) or [name])


def line_words(wline: str) -> list[str]:
    return wline.split("\x01")[1:]


@attrs.frozen(slots=True)
class NameArrays:
    """What a NameIndex searches besides the entries: the sorted distinct lower-cased names,
    their word lines, the names shortest first, and per name the letters present, the
    letters starting a word and the letter pairs inside a word (``_pair_bit``). Blobs are
    newline-joined; each ``*starts`` array ends with the blob's length + 1. A snapshot
    saves these as they are."""

    blob: str
    starts: np.ndarray
    wblob: str
    wstarts: np.ndarray
    lblob: str
    lstarts: np.ndarray
    by_len: np.ndarray  # name positions, shortest (then alphabetically) first
    masks: np.ndarray
    initials: np.ndarray
    bigrams: np.ndarray

    @classmethod
    def build(cls, names: Sequence[str], wlines: Sequence[str]) -> NameArrays:
        """From the sorted distinct lower-cased ``names`` and their ``word_line``."""
        starts, wstarts = line_starts(names), line_starts(wlines)
        initials, bigrams = _word_masks(wlines, wstarts[:-1])
        by_len = np.array(sorted(range(len(names)), key=lambda i: (len(names[i]), names[i])), dtype=np.int64)
        by_len_lines = [names[i] for i in by_len.tolist()]
        return cls("\n".join(names), starts, "\n".join(wlines), wstarts, "\n".join(by_len_lines),
                   line_starts(by_len_lines), by_len, _letter_masks(names, starts[:-1]), initials, bigrams)


# A match as ``NameIndex.score`` returns it: (sort key, the Entries it came from, that
# source's reference to the symbol). A tuple: thousands are made and sorted per query.
Scored = tuple[tuple, "Entries", object]


class Entries(Protocol):
    """The symbols behind each name of a NameIndex, by the name's position."""

    def emit(self, i: int, tier: int, sub: int, query: str, container_q: str, out: list[Scored],
             cap: int) -> int:
        """Append the entries of name ``i`` (those whose container holds ``container_q`` as
        a subsequence) to ``out``, keyed ``(tier, sub, case, rank, path, line, column)``;
        how many. Entries that cannot be among the best ``cap`` may be left out."""
        ...

    def best_rank(self, i: int) -> int:
        """The best static rank among the entries of name ``i`` (NO_RANK if none)."""
        ...

    def hit(self, ref: Any) -> tuple[str, Any]:
        """The (path, Symbol) of a reference ``emit`` made."""
        ...


class NameIndex:
    """The search structure over a set of distinct names (``NameArrays``), with the best
    rank of each name's entries for pruning long prefix runs. The entries themselves stay
    with their owner (``Entries``), so they change without a rebuild."""

    def __init__(self, arrays: NameArrays, entries: Entries, names: Sequence[str] | None = None,
                 wlines: Sequence[str] | None = None, best_rank: np.ndarray | None = None) -> None:
        self._arrays = arrays
        self._entries = entries
        self._names = names if names is not None else Lines(arrays.blob, arrays.starts)
        self._wlines = wlines if wlines is not None else Lines(arrays.wblob, arrays.wstarts)
        self._blob, self._starts = arrays.blob, arrays.starts
        self._masks, self._initials, self._bigrams = arrays.masks, arrays.initials, arrays.bigrams
        self._by_len_rank: np.ndarray | None = None
        self._firsts: np.ndarray | None = None
        self._best_rank = best_rank if best_rank is not None else np.fromiter(
            (entries.best_rank(i) for i in range(len(self._names))), dtype=np.int64, count=len(self._names))

    @property
    def arrays(self) -> NameArrays:
        return self._arrays

    def position(self, name: str) -> int | None:
        i = bisect.bisect_left(self._names, name)
        return i if i < len(self._names) and self._names[i] == name else None

    def __contains__(self, name: str) -> bool:
        return self.position(name) is not None

    def __len__(self) -> int:
        return len(self._names)

    def named(self, query: str, q: str, limit: int) -> list[Scored]:
        """The entries of the name ``q`` (lower-cased ``query``) and no other, the best
        ``limit`` of each case."""
        out: list[Scored] = []
        i = self.position(q)
        if i is not None:
            self._entries.emit(i, TIER_EXACT, 0, query, "", out, limit)
        return out

    def rerank(self, i: int) -> None:
        """The entries of name ``i`` changed: refresh its best rank (prefix-run pruning)."""
        self._best_rank[i] = self._entries.best_rank(i)

    def score(self, query: str, q: str, container_q: str, limit: int) -> list[Scored]:
        """The entries matching ``q`` (the lower-cased ``query``), enough of each tier to
        fill ``limit``."""
        names, best_rank, entries = self._names, self._best_rank, self._entries
        scored: list[Scored] = []
        if not len(names):
            return scored

        def add(idx: int, tier: int, sub: int) -> int:
            return entries.emit(idx, tier, sub, query, container_q, scored, limit)

        # exact and prefix: a contiguous run of the sorted names; when it is long,
        # only the names holding the best-ranked entries can make the cut.
        lo = bisect.bisect_left(names, q)
        hi = bisect.bisect_left(names, q + "\U0010ffff", lo)
        run = range(lo, hi)
        if hi - lo > 2 * limit:
            top = np.argpartition(best_rank[lo:hi], 2 * limit)[: 2 * limit] + lo
            run = sorted(set(top.tolist()) | ({lo} if names[lo] == q else set()))
        for i in run:
            add(i, TIER_EXACT if names[i] == q else TIER_PREFIX, 0)
        if len(scored) < limit:
            self._lower_tiers(q, lo, hi, limit - len(scored), add, scored)
        return scored

    def _lower_tiers(self, q: str, lo: int, hi: int, need: int, add: Callable[[int, int, int], int],
                     scored: list[Scored]) -> None:
        """Camel-hump, substring and subsequence matches, each tier only if the ones
        above left room for ``need`` more entries. Names in ``[lo, hi)`` (exact and
        prefix matches) are skipped; ``add`` appends to ``scored``."""
        names = self._names
        hq = _SEPARATORS.sub("", q) or q
        # Camel-hump candidates, vectorised over all names: the first letter starts a
        # word, and each following letter either starts a word or follows the previous
        # one inside a word (hashed letter pairs). Exact checks run on the few left.
        hmask = np.uint64(_mask(hq))
        ok = ((self._masks & hmask) == hmask) & ((self._initials & np.uint64(1 << (ord(hq[0]) & 63))) != 0)
        for a, b in zip(hq, hq[1:], strict=False):
            ok &= ((self._initials & np.uint64(1 << (ord(b) & 63))) != 0) | \
                  ((self._bigrams & np.uint64(_pair_bit(a, b))) != 0)
        ok[lo:hi] = False
        seen = self._hump_tier(hq, ok, need, add)
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
            subs: dict[int, int] = {}
            later = []
            for i in rest:
                at = names[i].find(q)
                if at >= 0:
                    subs[i] = at
                else:
                    later.append(i)
            need = _add_earliest(subs, need, add, scored, self._best_rank)
            if need <= 0:
                return
            subseq = _subsequence_regex(q)
            for i in later:
                if subseq.search(names[i]):
                    add(i, TIER_SUBSEQUENCE, len(names[i]) - len(q))
            return
        blob, starts = self._blob, self._starts
        found = []
        pos = blob.find(q)
        while pos != -1:
            found.append(pos)
            pos = blob.find(q, pos + 1)
        subs = {}
        if found:
            at = np.array(found, dtype=np.int64)
            lines = np.searchsorted(starts, at, side="right") - 1
            for i, a in zip(lines.tolist(), (at - starts[lines]).tolist(), strict=True):
                if not (lo <= i < hi) and i not in seen_names and i not in subs:
                    subs[i] = a
        need = _add_earliest(subs, need, add, scored, self._best_rank)
        if need <= 0:
            return
        seen_names.update(subs)
        for i in self._subsequence_shortest_first(q, need, seen_names, lo, hi, cand):
            add(i, TIER_SUBSEQUENCE, len(names[i]) - len(q))

    def _hump_tier(self, hq: str, ok: np.ndarray, need: int,
                   add: Callable[[int, int, int], int]) -> tuple[set[int], int] | None:
        """Add the camel-hump matches among the names ``ok`` marks, fewest skipped words
        first; None if they fill ``need``, else (the names added, the entries added)."""
        wlines = self._wlines
        added: set[int] = set()
        count = 0

        def take(ids: Iterable[int], skipped: int) -> None:
            nonlocal count
            for i in ids:
                added.add(i)
                count += add(i, TIER_HUMP, skipped)

        lines = np.flatnonzero(ok)
        if len(lines) <= HUMP_DIRECT:  # a few names: match them, not compile regexes
            others: list[tuple[int, int]] = []
            for i in lines.tolist():
                skipped = hump_match(hq, line_words(wlines[i]))
                if skipped == 0:
                    take((i,), 0)
                elif skipped is not None:
                    others.append((i, skipped))
            if count >= need:
                return None
            for i, skipped in others:
                take((i,), skipped)
            return None if count >= need else (added, count)
        # Nothing skipped: the words follow one another from the first, so only names whose
        # first word starts with the query's first letter. When these fill the need, the
        # rest rank below them and are never looked at.
        zero = _hump_regex(hq, skips=False)
        firsts = lines[self._first_letters()[lines] == ord(hq[0])].tolist()
        take([i for i in firsts if zero.match(wlines[i])], 0)
        if count >= need:
            return None
        # One word skipped, then more: the skip regex finds them, the one-skip regex or
        # hump_match tells how many words each skips.
        # (the letters in order, a cheap regex, before the costly one)
        hump, subseq = _hump_regex(hq), _subsequence_regex(hq)
        rest = [i for i in _grep_lines(subseq, [i for i in lines.tolist() if i not in added], wlines)
                if hump.search(wlines[i])]
        if len(rest) > HUMP_DIRECT:  # many: the one-skip regex (compiled per query: 3 ms for 9 letters)
            one = _hump_one_skip_regex(hq)
            take([i for i in rest if one.match(wlines[i])], 1)
            if count >= need:
                return None
        for i in rest:
            if i not in added and (skipped := hump_match(hq, line_words(wlines[i]))) is not None:
                take((i,), skipped)
        return None if count >= need else (added, count)

    def _first_letters(self) -> np.ndarray:
        """The first character of each name's first word (its word line's second), made on first use."""
        if self._firsts is None:
            wblob, wstarts = self._arrays.wblob, self._arrays.wstarts
            codes = np.frombuffer(wblob.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
            at = wstarts[:-1] + 1
            self._firsts = codes[np.minimum(at, len(codes) - 1)] if len(codes) else np.zeros(0, np.uint32)
        return self._firsts

    def _subsequence_shortest_first(self, q: str, need: int, seen: set[int], lo: int, hi: int,
                                    cand: np.ndarray) -> list[int]:
        """Names holding ``q`` as a subsequence, shortest first (the tier's order), stopping
        once ``need`` are found and no name of the same length remains. ``cand``: the
        names holding every letter of ``q``; when they are few, only their lines are
        scanned, else the names blob shortest first."""
        names = self._names
        if len(cand) * SUBSEQUENCE_FEW < len(names):
            order = cand[np.argsort(self._length_rank()[cand], kind="stable")]
            blob = "\n".join([names[i] for i in order.tolist()])
            starts = np.concatenate(([0], np.cumsum(np.diff(self._arrays.starts)[order])))
        else:
            order, blob, starts = self._arrays.by_len, self._arrays.lblob, self._arrays.lstarts
        found: list[int] = []
        cutoff = None
        for m in _subsequence_regex(q).finditer(blob):
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

    def _length_rank(self) -> np.ndarray:
        """Each name's position in the shortest-first order (``by_len``), made on first use."""
        if self._by_len_rank is None:
            by_len = self._arrays.by_len
            rank = np.empty_like(by_len)
            rank[by_len] = np.arange(len(by_len), dtype=by_len.dtype)
            self._by_len_rank = rank
        return self._by_len_rank
