"""Every identifier in a file with where it is: what Find References and the call
hierarchy answer from (``search.references``, ``engine.reference_index``).

An occurrence is a maximal run of word characters that does not start with a digit,
the same runs ``rg -w`` takes for a whole word: ``get`` is found in ``x.get(`` and
``"get"`` but never in ``get_user`` or ``2get``. Each carries its 0-based line, its
UTF-16 column and flags from the file's tree-sitter tree (``queries/refs``, matched in
the same walk as the tags query: ``symbols.extract_marked``): inside a comment, inside a
string, the name a call calls.

A file's occurrences travel and are stored as one blob (``extract``; ``decode`` reads
it): the distinct words, then per word its occurrences' lines, columns and flags, in
arrays. Runs in parser workers, so it imports little.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import struct
from collections.abc import Sequence

import attrs
import numpy as np

COMMENT = 1
STRING = 2
CALL = 4
TEXT = COMMENT | STRING  # not code

IDENTIFIER = re.compile(r"[^\W\d]\w*")  # what a name looked up must be (fully)
_UNICODE = re.compile(r"(?<!\w)" + IDENTIFIER.pattern)
_HEADER = struct.Struct("<BIIIBBB")  # format, words, occurrences, vocabulary bytes, widths
_FORMAT = 2


@attrs.frozen(slots=True)
class Occurrence:
    line: int
    column: int  # UTF-16, 0-based
    end: int  # UTF-16 column after the name
    flags: int = 0


class FileOccurrences:
    """A file's occurrences as arrays grouped by word (``decode``): per distinct word its
    hash (``word_hash``, ascending) and count; per occurrence its line, UTF-16 column and
    flags. The words' text is split from the blob only when asked for (``words``)."""

    __slots__ = ("hashes", "counts", "lines", "columns", "flags", "_vocab", "_words")

    def __init__(self, vocab: bytes, hashes: np.ndarray, counts: np.ndarray, lines: np.ndarray,
                 columns: np.ndarray, flags: np.ndarray) -> None:
        self._vocab = vocab
        self._words: tuple[str, ...] | None = None
        self.hashes, self.counts, self.lines, self.columns, self.flags = hashes, counts, lines, columns, flags

    @property
    def words(self) -> tuple[str, ...]:
        if self._words is None:
            self._words = tuple(self._vocab.decode("utf-8", "replace").split("\n")) if self._vocab else ()
        return self._words

    def of(self, word: str) -> list[Occurrence]:
        """The occurrences of ``word`` (a whole identifier), in order."""
        h = word_hash(word)
        i = int(np.searchsorted(self.hashes, np.uint64(h)))
        if i >= len(self.hashes) or int(self.hashes[i]) != h:
            return []
        start = int(self.counts[:i].sum())
        end = start + int(self.counts[i])
        return occurrences(word, self.lines[start:end], self.columns[start:end], self.flags[start:end])

    def where(self, flag: int) -> list[tuple[str, Occurrence]]:
        """(word, occurrence) of every occurrence with ``flag`` set."""
        at = np.flatnonzero(self.flags & flag)
        if not at.size:
            return []
        words = self.words
        word_of = np.repeat(np.arange(len(words)), self.counts.astype(np.int64))[at]
        return [(words[w], Occurrence(ln, c, c + utf16_length(words[w]), f))
                for w, ln, c, f in zip(word_of.tolist(), self.lines[at].tolist(), self.columns[at].tolist(),
                                       self.flags[at].tolist(), strict=True)]


def occurrences(word: str, lines: Sequence[int], columns: Sequence[int], flags: Sequence[int]) -> list[Occurrence]:
    """Records from parallel arrays of one word's occurrences."""
    width = utf16_length(word)
    return [Occurrence(ln, c, c + width, f)
            for ln, c, f in zip(lines.tolist(), columns.tolist(), flags.tolist(), strict=True)]


def utf16_length(word: str) -> int:
    return len(word) if word.isascii() else len(word.encode("utf-16-le")) // 2


def extract(data: bytes, marks: Marks | None = None) -> bytes:
    """The occurrences of a file's bytes (UTF-8) as a blob (``decode`` reads it), flagged
    by the ``marks`` of its tree."""
    return extract_many([(data, marks)])[0]


def extract_many(files: Sequence[tuple[bytes, Marks | None]]) -> list[bytes]:
    """``extract`` of each file, computed for all of them at once: the files' bytes joined
    by newlines go through each numpy step once, and only the packing is per file (a
    worker's batch of small files cost about as much in numpy's per-call overhead as in
    work, done one by one)."""
    if not files:
        return []
    data = b"\n".join([d for d, _ in files])  # (a newline: no word and no line crosses it)
    sizes = np.array([len(d) for d, _ in files], np.int64)
    file_starts = np.concatenate(([0], np.cumsum(sizes + 1)[:-1]))
    raw = np.frombuffer(data, dtype=np.uint8)
    high = _high_bytes([d for d, _ in files], file_starts)
    starts, ends = _runs(data, raw, high)
    if not starts.size:
        return [EMPTY] * len(files)
    newlines = np.flatnonzero(raw == 10)
    line_index = np.searchsorted(newlines, starts)
    line_starts = np.concatenate(([0], newlines + 1))[line_index]
    file_of = np.searchsorted(file_starts, starts, side="right") - 1
    lines = line_index - np.searchsorted(newlines, file_starts)[file_of]  # (lines before the file's own)
    columns = starts - line_starts
    if high.size:
        _utf16_columns(columns, raw, high, starts, line_starts, line_index, newlines)
    flags = Marks.joined([m for _, m in files], file_starts).flags(starts)
    # Words told apart by a hash of their bytes (numpy), not as a Python object each: one
    # sort groups each file's occurrences by word (in file order within one), and the
    # distinct words' bytes are gathered from their first occurrences.
    h = _hash(data, starts, ends)
    order = np.argsort(h, kind="stable")
    if len(files) > 1:  # then by file, stably (a radix sort of small numbers)
        order = order[np.argsort(file_of[order].astype(np.uint16 if len(files) < 0x10000 else np.int64),
                                 kind="stable")]
    grouped, grouped_file = h[order], file_of[order]
    group = np.flatnonzero(np.concatenate(([True], (grouped[1:] != grouped[:-1])
                                           | (grouped_file[1:] != grouped_file[:-1]))))
    counts = np.diff(np.append(group, grouped.size))
    first = order[group]
    vocab, vocab_ends = _joined(data, raw, starts[first], ends[first])
    lines, columns, flags = lines[order], columns[order], flags[order]
    # each file's groups and occurrences: where its file number starts in either
    span = np.arange(len(files) + 1)
    group_at = np.searchsorted(grouped_file[group], span).tolist()
    occ_at = np.searchsorted(grouped_file, span).tolist()
    vocab_at = np.concatenate(([0], vocab_ends + 1))[group_at].tolist()
    hashes = grouped[group]
    out = []
    for i in range(len(files)):
        g0, g1, o0, o1 = group_at[i], group_at[i + 1], occ_at[i], occ_at[i + 1]
        if g0 == g1:
            out.append(EMPTY)
            continue
        out.append(_pack(vocab[vocab_at[i]:vocab_at[i + 1] - 1], hashes[g0:g1], counts[g0:g1], lines[o0:o1],
                         columns[o0:o1], flags[o0:o1]))
    return out


def _joined(data: bytes, raw: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[bytes, np.ndarray]:
    """The byte ranges ``starts[i]:ends[i]`` of ``data`` (``raw``) each followed by a
    newline, gathered at once, and where each newline is."""
    sizes = ends - starts + 1
    at_end = np.cumsum(sizes)
    total = int(at_end[-1])
    at = np.repeat(starts - (at_end - sizes), sizes) + np.arange(total)
    out = raw[np.minimum(at, raw.size - 1)]
    out[at_end - 1] = 10
    return out.tobytes(), at_end - 1


_WORD_BYTES = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
# each byte to 1 if it may be part of a word, else 0 (a run holding bytes >= 0x80 is split
# again by Unicode's rules)
_WORD_TABLE = bytes(1 if b in _WORD_BYTES or b >= 0x80 else 0 for b in range(256))
_DIGIT = np.zeros(256, bool)
_DIGIT[list(b"0123456789")] = True


def _high_bytes(each: Sequence[bytes], offsets: np.ndarray) -> np.ndarray:
    """Where the bytes >= 0x80 of files joined into one text are (the i-th at
    ``offsets[i]``), ascending: looked for only in the files that have any, so that a batch
    of ASCII files with one that is not costs no pass over all of its bytes."""
    found = [np.flatnonzero(np.frombuffer(d, np.uint8) >= 0x80) + at
             for d, at in zip(each, offsets.tolist(), strict=True) if not d.isascii()]
    return np.concatenate(found) if found else np.zeros(0, np.int64)


def _utf16_columns(columns: np.ndarray, raw: np.ndarray, high: np.ndarray, starts: np.ndarray,
                   line_starts: np.ndarray, line_index: np.ndarray, newlines: np.ndarray) -> None:
    """Byte ``columns`` made UTF-16 ones, in place, where a line holds bytes >= 0x80
    (``high``): a continuation byte is no unit of its own, a 4-byte character's lead is two."""
    on_line = np.zeros(newlines.size + 1, bool)
    on_line[np.searchsorted(newlines, high)] = True
    at = np.flatnonzero(on_line[line_index])
    if not at.size:
        return
    lead = raw[high]
    for where, sign in ((high[(lead & 0xC0) == 0x80], -1), (high[lead >= 0xF0], 1)):
        if where.size:
            columns[at] += sign * (np.searchsorted(where, starts[at]) - np.searchsorted(where, line_starts[at]))


def _runs(data: bytes, raw: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end offsets of the identifiers of ``data``, whose bytes >= 0x80 are at ``high``."""
    word = np.frombuffer(b"\0" + data.translate(_WORD_TABLE) + b"\0", np.uint8)
    edges = np.flatnonzero(word[1:] != word[:-1])
    starts, ends = edges[0::2], edges[1::2]
    if high.size:  # (every byte >= 0x80 lies in a run: the runs holding one are split by Unicode's rules)
        held = np.searchsorted(starts, high, side="right") - 1
        mixed = held[np.concatenate(([True], held[1:] != held[:-1]))]
        starts, ends = _split_unicode(data, starts, ends, mixed)
    keep = ~_DIGIT[raw[starts]] if starts.size else np.zeros(0, bool)
    return starts[keep], ends[keep]


def _split_unicode(data: bytes, starts: np.ndarray, ends: np.ndarray,
                   mixed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The runs at ``mixed`` (holding non-ASCII bytes) replaced by the words Unicode finds in them."""
    new_starts: list[int] = []
    new_ends: list[int] = []
    for a, b in zip(starts[mixed].tolist(), ends[mixed].tolist(), strict=True):
        text = data[a:b].decode("utf-8", "surrogateescape")  # (an invalid byte is no word character)
        for m in _UNICODE.finditer(text):
            at = a + len(text[:m.start()].encode("utf-8", "surrogateescape"))
            new_starts.append(at)
            new_ends.append(at + len(m.group().encode("utf-8", "surrogateescape")))
    keep = np.ones(starts.size, bool)
    keep[mixed] = False
    starts = np.concatenate((starts[keep], np.array(new_starts, np.int64)))
    ends = np.concatenate((ends[keep], np.array(new_ends, np.int64)))
    order = np.argsort(starts, kind="stable")
    return starts[order], ends[order]


# Each run's bytes read 8 at a time as little-endian integers (zero past its end: no
# identifier holds a NUL byte), combined as h = h * P + chunk modulo 2**64: a run of up to
# 8 bytes is its own bytes (no collision among them), one of up to _LONG bytes a polynomial
# hash, a longer one (rare: a hex digest, a generated name) its BLAKE2b. Words are told
# apart by it everywhere (two identifiers with one hash would share their occurrences:
# about one chance in 10**9 for a workspace of 200,000 distinct names). One gather per 8
# bytes of identifier, not one per byte.
_P = np.uint64(0x100000001B3)
_PAD = bytes(8)
_MASKS = np.array([(1 << 8 * k) - 1 for k in range(8)] + [(1 << 64) - 1], np.uint64)  # by bytes kept
_LONG = 64


def _hash(data: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The hash of each run ``data[starts[i]:ends[i]]`` (``word_hash``)."""
    if not starts.size:
        return np.zeros(0, np.uint64)
    # every offset's next 8 bytes as one uint64 (a view with a stride of one byte)
    windows = np.ndarray((len(data),), "<u8", data + _PAD, 0, (1,))
    sizes = ends - starts
    h = windows[starts] & _MASKS[np.minimum(sizes, 8)]
    longer = np.flatnonzero(sizes > 8)
    step = 8
    while longer.size and step < _LONG:  # (numpy arrays wrap around silently: no overflow warning)
        chunk = windows[starts[longer] + step] & _MASKS[np.minimum(sizes[longer] - step, 8)]
        h[longer] = h[longer] * _P + chunk
        step += 8
        longer = longer[sizes[longer] > step]
    if longer.size:
        h[longer] = [int.from_bytes(hashlib.blake2b(data[a:b], digest_size=8).digest(), "little")
                     for a, b in zip(starts[longer].tolist(), ends[longer].tolist(), strict=True)]
    return h


@attrs.define
class Marks:
    """Byte spans of a file's comments and strings and where its call sites' names start,
    from its tree (``symbols.extract_marked`` appends to the lists as it walks the
    captures). Spans are kept flat (start, end, start, end, ...): one array made of them."""
    comments: list[int] | np.ndarray = attrs.field(factory=list)
    strings: list[int] | np.ndarray = attrs.field(factory=list)
    calls: list[int] | np.ndarray = attrs.field(factory=list)

    @classmethod
    def joined(cls, each: Sequence[Marks | None], offsets: np.ndarray) -> Marks:
        """The marks of files joined into one text, the i-th (None: no tree) at ``offsets[i]``."""
        if len(each) == 1:
            return each[0] if each[0] is not None else cls()
        out = cls()
        for field in ("comments", "strings", "calls"):
            lists = [getattr(m, field) if m is not None else [] for m in each]
            sizes = [len(values) for values in lists]
            if any(sizes):
                flat = np.fromiter(itertools.chain.from_iterable(lists), np.int64, sum(sizes))
                setattr(out, field, flat + np.repeat(offsets, sizes))  # (flags takes arrays too)
        return out

    def flags(self, starts: np.ndarray) -> np.ndarray:
        """The flags of identifiers starting at ``starts`` (ascending)."""
        flags = np.zeros(len(starts), np.uint8)
        for spans, bit in ((self.comments, COMMENT), (self.strings, STRING)):
            if len(spans):
                flags[_inside(starts, np.asarray(spans, np.int64).reshape(-1, 2))] |= bit
        if len(self.calls) and starts.size:
            calls = np.asarray(self.calls, np.int64)
            at = np.minimum(np.searchsorted(starts, calls), starts.size - 1)
            flags[at[starts[at] == calls]] |= CALL
        return flags


def _inside(starts: np.ndarray, spans: np.ndarray) -> np.ndarray:
    """Whether each of ``starts`` (ascending) lies inside one of ``spans`` ((start, end)
    rows): the offsets each span holds found by two binary searches, marked as ranges."""
    first = np.searchsorted(starts, spans[:, 0])
    last = np.searchsorted(starts, spans[:, 1])
    depth = np.cumsum(np.bincount(first, minlength=starts.size + 1) - np.bincount(last, minlength=starts.size + 1))
    return depth[:-1] > 0


def _pack(vocab: bytes, hashes: np.ndarray, counts: np.ndarray, lines: np.ndarray, columns: np.ndarray,
          flags: np.ndarray) -> bytes:
    """``vocab``: the distinct words' UTF-8 joined by newlines, in the order of ``hashes``.
    Each array in the narrowest unsigned type that holds it, not compressed: zlib halved
    the stdlib's blobs (22.8 to 11.2 MB) but was a fifth of the extraction's time, and the
    narrow types alone bring them to about 18 MB."""
    counts, lines, columns = _narrow(counts), _narrow(lines), _narrow(columns)
    head = _HEADER.pack(_FORMAT, len(hashes), len(lines), len(vocab), counts.itemsize, lines.itemsize,
                        columns.itemsize)
    # (the hashes are made again from the words: ``decode``)
    return b"".join((head, vocab, counts.tobytes(), lines.tobytes(), columns.tobytes(),
                     flags.astype(np.uint8).tobytes()))


_WIDTHS = {1: np.dtype(np.uint8), 2: np.dtype("<u2"), 4: np.dtype("<u4")}


def _narrow(values: np.ndarray) -> np.ndarray:
    top = int(values.max()) if values.size else 0
    return values.astype(_WIDTHS[1 if top < 0x100 else 2 if top < 0x10000 else 4])


class OccurrenceDataError(ValueError):
    """A blob that is not ``extract``'s (damaged, or another format)."""


def decode(blob: bytes) -> FileOccurrences:
    try:
        fmt, n_words, n_occ, vocab_len, *widths = _HEADER.unpack_from(blob)
    except struct.error as exc:
        raise OccurrenceDataError(f"damaged occurrence data: {exc}") from None
    if fmt != _FORMAT:
        raise OccurrenceDataError(f"occurrence data of format {fmt}, not {_FORMAT}")
    types = [_WIDTHS.get(w) for w in widths]
    if None in types:
        raise OccurrenceDataError(f"damaged occurrence data: widths {widths}")
    sizes = (_HEADER.size, vocab_len, types[0].itemsize * n_words, types[1].itemsize * n_occ,
             types[2].itemsize * n_occ, n_occ)
    if len(blob) != sum(sizes):
        raise OccurrenceDataError(f"damaged occurrence data: {len(blob)} bytes, expected {sum(sizes)}")
    at = np.cumsum(sizes).tolist()
    vocab = blob[at[0]:at[1]] if n_words else b""
    raw = np.frombuffer(vocab, np.uint8)
    ends = np.append(np.flatnonzero(raw == 10), raw.size) if n_words else np.zeros(0, np.int64)
    hashes = _hash(vocab, np.concatenate(([0], ends[:-1] + 1)) if n_words else ends, ends)
    if hashes.size != n_words or (n_words > 1 and not bool(np.all(hashes[1:] > hashes[:-1]))):
        raise OccurrenceDataError("damaged occurrence data: its words do not match their order")
    return FileOccurrences(vocab, hashes,
                           np.frombuffer(blob, types[0], n_words, at[1]),
                           np.frombuffer(blob, types[1], n_occ, at[2]),
                           np.frombuffer(blob, types[2], n_occ, at[3]),
                           np.frombuffer(blob, np.uint8, n_occ, at[4]))


def word_hash(word: str) -> int:
    """The hash ``extract`` gives the identifier ``word`` (of its UTF-8 bytes)."""
    data = word.encode("utf-8", "surrogatepass")
    return int(_hash(data, np.zeros(1, np.int64), np.full(1, len(data), np.int64))[0])


EMPTY = _pack(b"", *(np.zeros(0, np.uint32),) * 4, np.zeros(0, np.uint8))
