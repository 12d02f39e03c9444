"""Trigrams of a file's text, for exact and regex search (``search.grep``).

A file's trigrams are the distinct runs of three bytes of its folded UTF-8 text
(``text.folding.fold``), leaving out those that hold a line break: a match never
crosses a line, so neither does a literal looked up. Each trigram is written as six
hex digits (``"646566"`` for ``def``), a word Tantivy's simple tokenizer keeps whole:
the file's document in the text index holds them all (``store.lexical``), and a
search asks for the trigrams of its pattern's literals to find the files that may
match. Runs in parser workers, so it imports little.
"""

from __future__ import annotations

import hashlib
from collections.abc import Set as AbstractSet
from json.encoder import encode_basestring as _quote

import attrs
import numpy as np

from ..text.folding import fold

_NEWLINE = 10


def folded_bytes(text: str) -> bytes:
    """The folded UTF-8 of ``text`` (an editor's buffer may hold a lone surrogate: kept)."""
    return fold(text).encode("utf-8", "surrogatepass")


# A parser worker tells the distinct trigrams of a file apart with a table of every
# trigram's last position (64 MiB, kept for the worker's life: ``use_table``), not a
# sort: 0.3 s against 0.75 s on the stdlib. Other processes sort (a server keeps no table).
_table: np.ndarray | None = None


def use_table() -> None:
    """From now on, this process finds distinct trigrams through the table (workers only)."""
    global _table
    if _table is None:
        _table = np.empty(1 << 24, np.int32)  # (never read before written: no zeroing)


def file_grams(text: str, data: bytes | None = None) -> str:
    """The distinct trigrams of ``text`` as words (see the module docstring), in no
    particular order; ``data``:
    the text's UTF-8 when the caller has it."""
    if data is not None and data.isascii():
        data = data.lower()
    else:
        data = folded_bytes(text)
    if len(data) < 3:
        return ""
    raw = np.frombuffer(data, np.uint8).astype(np.uint32)
    codes = (raw[:-2] << 16) | (raw[1:-1] << 8) | raw[2:]
    codes = codes[(raw[:-2] != _NEWLINE) & (raw[1:-1] != _NEWLINE) & (raw[2:] != _NEWLINE)]
    if not codes.size:
        return ""
    table = _table
    if table is None:
        distinct = np.unique(codes)
    else:  # each code's last position wins; the codes at their last position are the distinct ones
        at = np.arange(codes.size, dtype=np.int32)
        table[codes] = at
        distinct = codes[table[codes] == at]
    # three bytes each, big-endian, then hex with a space every three bytes (one C call)
    packed = distinct.astype(">u4").view(np.uint8).reshape(-1, 4)[:, 1:].tobytes()
    return packed.hex(" ", 3)


def literal_grams(literal: str) -> list[str]:
    """The trigrams (as words) a file must hold for ``literal``, folded, to occur in it:
    none for a literal shorter than three bytes folded."""
    data = folded_bytes(literal)
    return sorted({data[i:i + 3].hex() for i in range(len(data) - 2)})


def path_key(rel: str) -> int:
    """The ``file_key`` of the file ``rel``: a signed 64-bit hash of its path (how a search
    tells the files it found apart without loading their documents)."""
    return int.from_bytes(hashlib.blake2b(rel.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                          "little", signed=True)


def file_doc(rel: str, text: str, data: bytes | None = None) -> str:
    """The file's document for the trigram index (JSON): its path, key and trigrams
    (``data``: the text's UTF-8 when the caller has it)."""
    return f'{{"path":{_quote(rel)},"file_key":{path_key(rel)},"grams":"{file_grams(text, data)}"}}'



@attrs.frozen
class GramQuery:
    """Which trigrams a file must hold to be a candidate: ``op`` ``all`` (every gram of
    ``grams`` and every query of ``subs``) or ``any`` (at least one of them)."""

    op: str
    grams: tuple[str, ...] = ()
    subs: tuple[GramQuery, ...] = ()

    def satisfied_by(self, grams: AbstractSet[str]) -> bool:
        """Whether a file holding ``grams`` (``file_grams(text).split()``) satisfies it."""
        if self.op == "all":
            return all(g in grams for g in self.grams) and all(q.satisfied_by(grams) for q in self.subs)
        return any(g in grams for g in self.grams) or any(q.satisfied_by(grams) for q in self.subs)
