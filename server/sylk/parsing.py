"""The worker side of indexing: load, hash and parse one file.

Runs in parser worker processes, so it imports only what parsing needs (no
Tantivy, no settings machinery): a spawned worker starts faster.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs

from . import scan, symbols as symbols_mod
from .languages import language_for_path
from .manifest import encode_symbols
from .symbols import Symbol
from .words import code_words_utf8, name_words


@attrs.frozen
class Parsed:
    """What a worker returns for one file."""
    rel: str
    size: int
    mtime_ns: int
    hash: str = ""
    language: str | None = None
    words: str = ""  # the text through words.code_words_utf8
    lines: int = 0
    # Symbols travel encoded (manifest.encode_symbols): unpickling tens of thousands of
    # objects costs the main process more than decoding them where they are needed.
    names: tuple[str, ...] = ()
    symbol_data: str = "[]"  # manifest.encode_symbols(symbols)
    names_words: str = ""  # words.name_words(symbols)
    replaced: bool = False
    skip: str | None = None  # reason, if skipped
    unchanged: bool = False  # content hash equals the manifest's


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
    return Parsed(entry.rel, entry.size, entry.mtime_ns, src.content_hash, lang, code_words_utf8(src.data),
                  src.data.count(b"\n") + 1, tuple(s.name for s in syms), encode_symbols(syms), name_words(syms),
                  src.replaced)


def parse_batch(root: str, batch: Sequence[tuple[scan.FileEntry, str | None]], max_size: int,
                 languages: frozenset[str]) -> list[Parsed]:
    return [parse_file(root, e, h, max_size, languages) for e, h in batch]
