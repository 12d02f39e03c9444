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

import re
import struct
import zlib
from collections.abc import Sequence

import attrs
import numpy as np
from tree_sitter import Node

COMMENT = 1
STRING = 2
CALL = 4
TEXT = COMMENT | STRING  # not code

IDENTIFIER = re.compile(r"[^\W\d]\w*")  # what a name looked up must be (fully)
_UNICODE = re.compile(r"(?<!\w)" + IDENTIFIER.pattern)
_HEADER = struct.Struct("<BIIIBB")
_FORMAT = 1


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
    raw = np.frombuffer(data, dtype=np.uint8)
    starts, ends = _runs(data, raw)
    if not starts.size:
        return EMPTY
    newlines = np.flatnonzero(raw == 10)
    lines = np.searchsorted(newlines, starts)
    line_starts = np.concatenate(([0], newlines + 1))[lines]
    if data.isascii():
        columns = starts - line_starts
    else:  # UTF-16 units before each byte: a unit per byte that starts a character, two for 4-byte ones
        units = ((raw & 0xC0) != 0x80).astype(np.int64) + (raw >= 0xF0)
        before = np.concatenate(([0], np.cumsum(units)))
        columns = before[starts] - before[line_starts]
    flags = marks.flags(starts) if marks is not None else np.zeros(len(starts), np.uint8)
    # Words told apart by a hash of their bytes (numpy), not as a Python object each: one
    # sort groups the occurrences by word (in file order within one), and the distinct
    # words' bytes are gathered from their first occurrences.
    h = _hash(raw, starts, ends)
    order = np.argsort(h, kind="stable")
    grouped = h[order]
    group = np.flatnonzero(np.concatenate(([True], grouped[1:] != grouped[:-1])))
    counts = np.diff(np.append(group, grouped.size))
    first = order[group]
    return _pack(_joined(raw, starts[first], ends[first]), grouped[group], counts, lines[order], columns[order],
                 flags[order])


def _joined(raw: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> bytes:
    """The byte ranges ``starts[i]:ends[i]`` of ``raw`` joined by newlines (gathered at once)."""
    sizes = ends - starts + 1  # (each with the newline after it)
    total = int(sizes.sum())
    at = np.repeat(starts - np.concatenate(([0], np.cumsum(sizes)[:-1])), sizes) + np.arange(total)
    out = raw[np.minimum(at, raw.size - 1)]
    out[np.cumsum(sizes) - 1] = 10
    return out[:-1].tobytes()


_WORD_BYTE = np.zeros(256, bool)
_WORD_BYTE[list(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")] = True
_WORD_BYTE[0x80:] = True  # (a run holding these is split again by Unicode's rules)
_DIGIT = np.zeros(256, bool)
_DIGIT[list(b"0123456789")] = True


def _runs(data: bytes, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end offsets of the identifiers of ``data``."""
    edges = np.flatnonzero(np.diff(np.concatenate(([False], _WORD_BYTE[raw], [False])).view(np.int8)))
    starts, ends = edges[0::2], edges[1::2]
    if not data.isascii():
        high = np.concatenate(([0], np.cumsum(raw >= 0x80)))
        mixed = np.flatnonzero(high[ends] > high[starts])
        if mixed.size:
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


# A polynomial hash of each run's bytes modulo 2**64 (sum of byte * P**k, k its offset in
# the run), over all runs at once. Words are told apart by it everywhere (two identifiers
# with one hash would share their occurrences: about one chance in 10**9 for a workspace
# of 200,000 distinct names).
_P = 0x100000001B3
_powers = np.ones(1, np.uint64)  # P**k for k below the longest run seen (replaced whole: threads share it)


def _hash(raw: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    global _powers
    if not starts.size:
        return np.zeros(0, np.uint64)
    sizes = ends - starts
    powers = _powers
    if powers.size < int(sizes.max()):
        steps = np.full(max(int(sizes.max()), 2 * powers.size), _P, dtype=np.uint64)
        steps[0] = 1
        with np.errstate(over="ignore"):
            powers = _powers = np.cumprod(steps, dtype=np.uint64)
    before = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    offsets = np.arange(int(sizes.sum())) - np.repeat(before, sizes)  # each byte's place in its run
    with np.errstate(over="ignore"):
        return np.add.reduceat(raw[np.repeat(starts, sizes) + offsets].astype(np.uint64) * powers[offsets], before)


@attrs.define
class Marks:
    """Byte spans of a file's comments and strings and where its call sites' names start,
    from its tree (``symbols.extract_marked``)."""
    comments: list[tuple[int, int]] = attrs.field(factory=list)
    strings: list[tuple[int, int]] = attrs.field(factory=list)
    calls: list[int] = attrs.field(factory=list)

    def add(self, capture: str, nodes: list[Node]) -> None:
        node = nodes[0]
        if capture == "call":
            self.calls.append(node.start_byte)
        elif capture == "comment":
            self.comments.append((node.start_byte, node.end_byte))
        elif capture == "string":
            self.strings.append((node.start_byte, node.end_byte))

    def flags(self, starts: np.ndarray) -> np.ndarray:
        """The flags of identifiers starting at ``starts``."""
        flags = np.zeros(len(starts), np.uint8)
        for spans, bit in ((self.comments, COMMENT), (self.strings, STRING)):
            if spans:
                flags[_inside(starts, spans)] |= bit
        if self.calls:
            flags[np.isin(starts, np.array(self.calls, np.int64))] |= CALL
        return flags


def _inside(starts: np.ndarray, spans: list[tuple[int, int]]) -> np.ndarray:
    """Whether each offset lies inside one of ``spans``."""
    a = np.array(spans, np.int64)
    a = a[np.argsort(a[:, 0], kind="stable")]
    reach = np.maximum.accumulate(a[:, 1])  # (a span inside another reaches no further)
    i = np.searchsorted(a[:, 0], starts, side="right") - 1
    return (i >= 0) & (starts < reach[np.maximum(i, 0)])


def _pack(vocab: bytes, hashes: np.ndarray, counts: np.ndarray, lines: np.ndarray, columns: np.ndarray,
          flags: np.ndarray) -> bytes:
    """``vocab``: the distinct words' UTF-8 joined by newlines, in the order of ``hashes``."""
    wide_lines = bool(lines.size) and int(lines.max()) > 0xFFFF
    wide_columns = bool(columns.size) and int(columns.max()) > 0xFFFF
    head = _HEADER.pack(_FORMAT, len(hashes), len(lines), len(vocab), wide_lines, wide_columns)
    body = b"".join((vocab, counts.astype(np.uint32).tobytes(),
                     lines.astype(np.uint32 if wide_lines else np.uint16).tobytes(),
                     columns.astype(np.uint32 if wide_columns else np.uint16).tobytes(),
                     flags.astype(np.uint8).tobytes()))
    return head + zlib.compress(body, 1)  # (the hashes are made again from the words: ``decode``)


class OccurrenceDataError(ValueError):
    """A blob that is not ``extract``'s (damaged, or another format)."""


def decode(blob: bytes) -> FileOccurrences:
    try:
        fmt, n_words, n_occ, vocab_len, wide_lines, wide_columns = _HEADER.unpack_from(blob)
        if fmt != _FORMAT:
            raise OccurrenceDataError(f"occurrence data of format {fmt}, not {_FORMAT}")
        body = zlib.decompress(blob[_HEADER.size:])
    except (struct.error, zlib.error) as exc:
        raise OccurrenceDataError(f"damaged occurrence data: {exc}") from None
    line_type = np.uint32 if wide_lines else np.uint16
    column_type = np.uint32 if wide_columns else np.uint16
    sizes = (vocab_len, 4 * n_words, np.dtype(line_type).itemsize * n_occ,
             np.dtype(column_type).itemsize * n_occ, n_occ)
    if len(body) != sum(sizes):
        raise OccurrenceDataError(f"damaged occurrence data: {len(body)} bytes, expected {sum(sizes)}")
    at = np.cumsum((0,) + sizes)
    vocab = body[:vocab_len] if n_words else b""
    raw = np.frombuffer(vocab, np.uint8)
    ends = np.append(np.flatnonzero(raw == 10), raw.size) if n_words else np.zeros(0, np.int64)
    hashes = _hash(raw, np.concatenate(([0], ends[:-1] + 1)) if n_words else ends, ends)
    if hashes.size != n_words or (n_words > 1 and not bool(np.all(hashes[1:] > hashes[:-1]))):
        raise OccurrenceDataError("damaged occurrence data: its words do not match their order")
    return FileOccurrences(vocab, hashes,
                           np.frombuffer(body, np.uint32, n_words, int(at[1])),
                           np.frombuffer(body, line_type, n_occ, int(at[2])),
                           np.frombuffer(body, column_type, n_occ, int(at[3])),
                           np.frombuffer(body, np.uint8, n_occ, int(at[4])))


def word_hash(word: str) -> int:
    """The hash ``extract`` gives the identifier ``word`` (of its UTF-8 bytes)."""
    data = word.encode("utf-8", "surrogatepass")
    raw = np.frombuffer(data, dtype=np.uint8)
    return int(_hash(raw, np.zeros(1, np.int64), np.full(1, len(data), np.int64))[0])


EMPTY = _pack(b"", *(np.zeros(0, np.uint32),) * 5)
