"""The worker side of indexing: load, hash and parse one file.

Runs in parser worker processes, so it imports only what parsing needs (no
Tantivy, no settings machinery): a spawned worker starts faster.
"""

from __future__ import annotations

import functools
import gc
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
from . import grams, occurrences, packages, source_files
from . import symbols as symbols_mod
from .chunks import CONTAINER_KINDS, Cut, cut_file, window_cut
from .lexical_docs import ChunkDocs, quote, quoted_lines
from .symbols import Symbol, encode_symbols

_WORD = re.compile(r"\w")
# A test hook, read in parse_batch (a worker) and nowhere else: with SYLK_FAULT_PARSE=<rel>
# in the environment, the parser process given the file <rel> dies at once, as a worker
# killed by the system would, so tests can drive a broken pool through a real run.
# Never set it otherwise.
FAULT_ENV = "SYLK_FAULT_PARSE"
# The skip reasons of files that failed for a reason other than their content: the next
# run tries them again (engine.planner).
ERROR_SKIP = "error: "


class ChunkRow(NamedTuple):
    """One chunk of a parsed file, as it crosses from a worker to the stores."""
    start_line: int
    end_line: int
    type: str  # file_types.file_type, or a virtual document's own type
    kind: str
    symbol: str
    container: str
    text_hash: str
    embed_text: str
    lexical_doc: str  # lexical_docs.chunk_json_rest(...): the text index document without its id
    exported: bool = False  # the definition it holds is exported (chunks.Cut.exported)


@attrs.frozen
class Parsed:
    """What a worker returns for one file."""
    rel: str
    size: int
    mtime_ns: int
    hash: str = ""
    language: str | None = None
    package: str = ""  # packages.package_of()
    lines: int = 0
    # Symbols travel encoded (symbols.encode_symbols): unpickling tens of thousands of
    # objects costs the main process more than decoding them where they are needed.
    symbol_count: int = 0
    symbol_data: str = "[]"  # symbols.encode_symbols(symbols)
    # The chunks' ChunkRow fields as plain tuples: a NamedTuple pickles through a
    # Python-level constructor, about 6x slower than a tuple (the stdlib's 80k chunks:
    # 0.24 s against 0.04 s to unpickle, on the main process's serial path). Read
    # them as records through ``chunks``.
    chunk_data: tuple[tuple, ...] = ()
    occurrence_data: bytes = occurrences.EMPTY  # occurrences.extract()
    file_doc: str = ""  # grams.file_doc(): the file's document in the text index (its trigrams)
    replaced: bool = False
    skip: str | None = None  # reason, if skipped
    unchanged: bool = False  # content hash equals the manifest's

    @property
    def chunks(self) -> tuple[ChunkRow, ...]:
        return tuple(map(ChunkRow._make, self.chunk_data))


def parse_file(root: str, entry: source_files.FileEntry, known_hash: str | None, max_size: int,
               languages: frozenset[str]) -> Parsed:
    """Load, hash and parse one file. Runs in worker processes; never raises."""
    return _with_occurrences([_parse(root, entry, known_hash, max_size, languages)])[0]


def _with_occurrences(done: Sequence[tuple[Parsed, tuple[bytes, occurrences.Marks | None] | None]]) -> list[Parsed]:
    """``_parse``'s results with their occurrences, extracted for all of them at once."""
    blobs = iter(occurrences.extract_many([text for _, text in done if text is not None]))
    return [parsed if text is None else attrs.evolve(parsed, occurrence_data=next(blobs)) for parsed, text in done]


def _parse(root: str, entry: source_files.FileEntry, known_hash: str | None, max_size: int,
           languages: frozenset[str]) -> tuple[Parsed, tuple[bytes, occurrences.Marks | None] | None]:
    """``parse_file`` but its occurrences: the file's bytes and marks for them, if it has any
    (``occurrences.extract_many`` of a batch at once)."""
    try:
        src = source_files.load_source(Path(root, entry.rel), max_size)
    except source_files.SkipFile as skip:
        return Parsed(entry.rel, entry.size, entry.mtime_ns, skip=skip.reason), None
    except Exception as exc:  # defensive: a worker must not die on one file
        return Parsed(entry.rel, entry.size, entry.mtime_ns, skip=f"{ERROR_SKIP}{exc}"), None
    if known_hash is not None and src.content_hash == known_hash:
        return Parsed(entry.rel, entry.size, entry.mtime_ns, src.content_hash, unchanged=True), None
    lang = language_for_path(entry.rel)
    syms: tuple[Symbol, ...] = ()
    marks = None
    if lang is not None and (not languages or lang in languages):
        try:
            found, marks = symbols_mod.extract_marked(src.data, lang)
            syms = tuple(found)
        except Exception:  # a grammar failure costs the symbols, not the text
            syms, marks = (), None
    words = code_words_utf8(src.data)
    package = packages.package_of(root, entry.rel, lang, src.data)
    return Parsed(entry.rel, entry.size, entry.mtime_ns, src.content_hash, lang, package,
                  src.data.count(b"\n") + 1, len(syms), encode_symbols(syms),
                  _row_tuples(entry.rel, lang, src.text, words, syms, package=package),
                  file_doc=grams.file_doc(entry.rel, src.text, src.data), replaced=src.replaced), (src.data, marks)


def chunk_rows(rel: str, language: str | None, text: str, words: str, symbols: Sequence[Symbol],
               type: str | None = None, package: str = "") -> tuple[ChunkRow, ...]:
    """The chunks of a file as rows for the stores, every non-blank line covered:
    lines no chunk holds become windows of their own. ``words`` is ``code_words`` of
    the text; ``type`` replaces the type told from the file (a virtual document's own type);
    ``package`` is the file's (packages.package_of; none for a virtual document)."""
    return tuple(map(ChunkRow._make, _row_tuples(rel, language, text, words, symbols, type, package)))


def _row_tuples(rel: str, language: str | None, text: str, words: str, symbols: Sequence[Symbol],
                type: str | None = None, package: str = "") -> tuple[tuple, ...]:
    """``chunk_rows`` as plain tuples (how they cross to the main process, see Parsed)."""
    ftype, lines, cuts = cut_file(rel, language, text, symbols)
    cuts.extend(window_cut(rel, a, lines[a:b + 1]) for a, b in _gaps(lines, cuts))
    typ = type or ftype
    docs = ChunkDocs(rel, language, typ, packages.ancestors(package) if package else ())
    word_lines = quoted_lines(words)  # JSON-escaped: a chunk's words are a join of its lines'
    summaries = _summary_words(cuts, lines, word_lines, "\r" in text)
    rows = []
    for i, c in enumerate(cuts):
        start, end = c.start_line, c.end_line
        # a class chunk's text is its summary (header, doc, member signatures), not its lines
        body = summaries[i] if i in summaries else '"' + "\\n".join(word_lines[start:end + 1]) + '"'
        names, more = _name_words(c.symbol), _name_words(c.container)
        if more:
            names = f"{names} {more}" if names else more
        rows.append((start, end, typ, c.kind, c.symbol, c.container, c.text_hash, c.embed_text,
                     docs.rest(c.kind, c.symbol, start, end, body, names), c.exported))
    return tuple(rows)


@functools.lru_cache(maxsize=65536)
def _name_words(name: str) -> str:
    """A name's words for ``name_words`` (a container recurs on each of its members)."""
    return " ".join(split_words(name))


def _gaps(lines: list[str], cuts: Sequence[Cut]) -> list[tuple[int, int]]:
    """(first, last) line of each run of lines no cut holds (``cuts`` in order of their
    first line), trimmed to the lines holding a word; runs without one are left out."""
    runs = []
    cursor = 0
    for c in cuts:
        if c.start_line > cursor:
            runs.append((cursor, c.start_line - 1))
        if c.end_line >= cursor:
            cursor = c.end_line + 1
    if cursor < len(lines):
        runs.append((cursor, len(lines) - 1))
    gaps = []
    search = _WORD.search
    for a, b in runs:
        while a <= b and not search(lines[a]):
            a += 1
        while b > a and not search(lines[b]):
            b -= 1
        if a <= b:
            gaps.append((a, b))
    return gaps


def _summary_words(cuts: Sequence[Cut], lines: list[str], word_lines: list[str], crlf: bool) -> dict[int, str]:
    """``quote(code_words(text))`` of each class summary among ``cuts``, by position. Code
    words are line-local (no word boundary spans a line end), so a summary line that is a
    line of the file takes that line of the file's words, and the member lines written anew
    go through code_words together, once per file."""
    boxes = [(i, c) for i, c in enumerate(cuts) if c.kind in CONTAINER_KINDS]
    if not boxes:
        return {}
    if not crlf:  # (in a file with "\r\n" its lines and its words' lines differ by the "\r")
        fresh = [t for _i, c in boxes for t, k in zip(c.texts, c.linenos, strict=True) if t is not lines[k]]
        quoted = quoted_lines(code_words_utf8("\n".join(fresh).encode("utf-8", "surrogatepass"))) if fresh else []
    if crlf or len(quoted) != len(fresh):  # (or a member line holding a newline)
        return {i: quote(code_words("\n".join(c.texts))) for i, c in boxes}
    it = iter(quoted)
    return {i: '"' + "\\n".join(word_lines[k] if t is lines[k] else next(it)
                                for t, k in zip(c.texts, c.linenos, strict=True)) + '"'
            for i, c in boxes}


def exit_with_parent(parent: int) -> None:
    """Pool initializer: end this worker once the process that started it is gone. A
    process killed with SIGKILL cannot stop its pool, and its workers would wait on their
    task queue forever (they hold its write end themselves)."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="sylk-parent-watch", daemon=True).start()


def parse_batch(root: str, batch: Sequence[tuple[source_files.FileEntry, str | None]], max_size: int,
                 languages: frozenset[str]) -> list[Parsed]:
    """``parse_file`` of each file of a batch, in a worker. The cyclic garbage collector waits
    meanwhile: parsing makes no reference cycles (reference counting frees all of it), and
    the collector's passes over the objects it makes cost about 1% of a worker's time."""
    fault = os.environ.get(FAULT_ENV)
    if fault and any(entry.rel == fault for entry, _h in batch):
        os._exit(70)  # the test hook: this worker dies as a killed one would
    grams.use_table()
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _with_occurrences([_parse(root, e, h, max_size, languages) for e, h in batch])
    finally:
        if collecting:
            gc.enable()
