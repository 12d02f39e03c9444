"""The worker side of indexing: load, hash and parse one file.

Runs in parser worker processes, so it imports only what parsing needs (no
Tantivy, no settings machinery): a spawned worker starts faster.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import attrs

from ..languages import language_for_path
from ..text.words import code_words, code_words_utf8, split_words
from . import scan
from . import symbols as symbols_mod
from .chunks import CONTAINER_KINDS, chunk_file, file_type, window_chunk
from .lexical_docs import chunk_json_rest
from .symbols import Symbol, encode_symbols

_WORD = re.compile(r"\w")


class ChunkRow(NamedTuple):
    """One chunk of a parsed file, as it crosses from a worker to the stores."""
    start_line: int
    end_line: int
    type: str  # chunks.file_type, or a virtual document's own type
    kind: str
    symbol: str
    container: str
    text_hash: str
    embed_text: str
    lexical_doc: str  # lexical_docs.chunk_json_rest(...): the text index document without its id


@attrs.frozen
class Parsed:
    """What a worker returns for one file."""
    rel: str
    size: int
    mtime_ns: int
    hash: str = ""
    language: str | None = None
    lines: int = 0
    # Symbols travel encoded (symbols.encode_symbols): unpickling tens of thousands of
    # objects costs the main process more than decoding them where they are needed.
    names: tuple[str, ...] = ()
    symbol_data: str = "[]"  # symbols.encode_symbols(symbols)
    # The chunks' ChunkRow fields as plain tuples: a NamedTuple pickles through a
    # Python-level constructor, about 6x slower than a tuple (the stdlib's 80k chunks:
    # 0.24 s against 0.04 s to unpickle, on the main process's serial path). Read
    # them as records through ``chunks``.
    chunk_data: tuple[tuple, ...] = ()
    replaced: bool = False
    skip: str | None = None  # reason, if skipped
    unchanged: bool = False  # content hash equals the manifest's

    @property
    def chunks(self) -> tuple[ChunkRow, ...]:
        return tuple(map(ChunkRow._make, self.chunk_data))


def parse_file(root: str, entry: scan.FileEntry, known_hash: str | None, max_size: int,
               languages: frozenset[str]) -> Parsed:
    """Load, hash and parse one file. Runs in worker processes; never raises."""
    try:
        src = scan.load_source(Path(root, entry.rel), max_size)
    except scan.SkipFile as skip:
        return Parsed(entry.rel, entry.size, entry.mtime_ns, skip=skip.reason)
    except Exception as exc:  # defensive: a worker must not die on one file
        return Parsed(entry.rel, entry.size, entry.mtime_ns, skip=f"error: {exc}")
    if known_hash is not None and src.content_hash == known_hash:
        return Parsed(entry.rel, entry.size, entry.mtime_ns, src.content_hash, unchanged=True)
    lang = language_for_path(entry.rel)
    syms: tuple[Symbol, ...] = ()
    if lang is not None and (not languages or lang in languages):
        try:
            syms = tuple(symbols_mod.extract(src.data, lang))
        except Exception:  # a grammar failure costs the symbols, not the text
            syms = ()
    words = code_words_utf8(src.data)
    return Parsed(entry.rel, entry.size, entry.mtime_ns, src.content_hash, lang,
                  src.data.count(b"\n") + 1, tuple(s.name for s in syms), encode_symbols(syms),
                  tuple(map(tuple, chunk_rows(entry.rel, lang, src.text, words, syms))), src.replaced)


def chunk_rows(rel: str, language: str | None, text: str, words: str, symbols: Sequence[Symbol],
               type: str | None = None) -> tuple[ChunkRow, ...]:
    """The chunks of a file as rows for the stores, every non-blank line covered:
    lines no chunk holds become windows of their own. ``type`` replaces the type told
    from the file (a virtual document's own type)."""
    chunks = list(chunk_file(rel, language, text, symbols))
    lines = text.split("\n")
    covered = bytearray(len(lines))
    for c in chunks:
        covered[c.start_line:c.end_line + 1] = b"\x01" * (min(c.end_line, len(lines) - 1) - c.start_line + 1)
    gaps: list[tuple[int, int]] = []
    i = covered.find(0)
    while i != -1:  # runs of uncovered lines holding a word
        j = covered.find(1, i)
        end = len(lines) if j == -1 else j
        run = [k for k in range(i, end) if _WORD.search(lines[k])]
        if run:
            gaps.append((run[0], run[-1]))
        i = -1 if j == -1 else covered.find(0, j)
    if gaps:
        kind = file_type(rel, language)
        for a, b in gaps:
            body = "\n".join(lines[a:b + 1]).strip("\n")
            if body.strip():
                chunks.append(window_chunk(rel, language, kind, a, b, body))
    word_lines = words.split("\n")
    rows = []
    for c in chunks:
        names = " ".join(w for w in (c.symbol, c.container) if w)
        # a class chunk's text is its summary (header, doc, member signatures), not its lines
        body = code_words(c.text) if c.kind in CONTAINER_KINDS else "\n".join(word_lines[c.start_line:c.end_line + 1])
        typ = type or c.type
        rows.append(ChunkRow(c.start_line, c.end_line, typ, c.kind, c.symbol, c.container, c.text_hash, c.embed_text,
                             chunk_json_rest(rel, language, typ, c.kind, c.symbol, c.start_line, c.end_line, body,
                                             " ".join(split_words(names)) if names else "")))
    return tuple(rows)


def exit_with_parent(parent: int) -> None:
    """Pool initializer: end this worker once the process that started it is gone. A
    process killed with SIGKILL cannot stop its pool, and its workers would wait on their
    task queue forever (they hold its write end themselves)."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="sylk-parent-watch", daemon=True).start()


def parse_batch(root: str, batch: Sequence[tuple[scan.FileEntry, str | None]], max_size: int,
                 languages: frozenset[str]) -> list[Parsed]:
    return [parse_file(root, e, h, max_size, languages) for e, h in batch]
