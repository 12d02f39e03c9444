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


def file_grams(text: str) -> str:
    """The distinct trigrams of ``text`` as words (see the module docstring), ascending."""
    data = folded_bytes(text)
    if len(data) < 3:
        return ""
    raw = np.frombuffer(data, np.uint8).astype(np.uint32)
    codes = (raw[:-2] << 16) | (raw[1:-1] << 8) | raw[2:]
    codes = codes[(raw[:-2] != _NEWLINE) & (raw[1:-1] != _NEWLINE) & (raw[2:] != _NEWLINE)]
    if not codes.size:
        return ""
    distinct = np.unique(codes)
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


def file_doc(rel: str, text: str) -> str:
    """The file's document for the text index (JSON): its path, key and trigrams."""
    return (f'{{"doc_type":"file","path":{_quote(rel)},"file_key":{path_key(rel)},'
            f'"grams":"{file_grams(text)}"}}')


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
