"""Find References from the index: every whole-identifier occurrence of a name in the
indexed files (``ingest.occurrences``), with its line, UTF-16 columns and flags.

``ReferenceTable`` holds the occurrences of every file in two layers, like the symbol
table: a base of arrays sorted by word, built in one go from the manifest's blobs, and a
live layer of the files that changed since (and the editor's unsaved buffers), each
decoded on its own. A file that changes is hidden in the base, never rewritten in it.
A lookup is a slice of the base's arrays plus the live files holding the word.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path

import attrs
import numpy as np

from ..ingest.occurrences import (
    CALL,
    COMMENT,
    STRING,
    TEXT,
    FileOccurrences,
    decode,
    utf16_length,
    word_hash,
)
from .file_lines import file_lines
from .symbol_search import SymbolTable


@attrs.frozen(slots=True)
class Reference:
    """One occurrence of a name: where it is (0-based line, UTF-16 columns) and what it is."""
    path: str
    line: int
    column: int
    end: int
    flags: int = 0

    @property
    def in_comment(self) -> bool:
        return bool(self.flags & COMMENT)

    @property
    def in_string(self) -> bool:
        return bool(self.flags & STRING)

    @property
    def call(self) -> bool:
        return bool(self.flags & CALL)

    @property
    def code(self) -> bool:
        return not self.flags & TEXT


class _Base:
    """The occurrences of many files as arrays grouped by word (``build``): the rows of the
    word whose hash is ``hashes[i]`` are ``starts[i]:starts[i + 1]``, by file then position."""

    def __init__(self, paths: list[str], hashes: np.ndarray, starts: np.ndarray, files: np.ndarray,
                 lines: np.ndarray, columns: np.ndarray, flags: np.ndarray) -> None:
        self.paths = paths
        self.ids = {p: i for i, p in enumerate(paths)}
        self.order = np.argsort(np.argsort(np.array(paths, dtype=object))) if paths else np.zeros(0, np.int64)
        self.hashes = hashes
        self.starts = starts
        self.files, self.lines, self.columns, self.flags = files, lines, columns, flags

    @classmethod
    def build(cls, rows: Iterable[tuple[str, FileOccurrences]]) -> _Base:
        paths: list[str] = []
        per_file: list[FileOccurrences] = []
        for path, occ in rows:
            paths.append(path)
            per_file.append(occ)
        if not per_file:
            empty = np.zeros(0, np.uint32)
            return cls([], np.zeros(0, np.uint64), np.zeros(1, np.int64), empty, empty, empty, np.zeros(0, np.uint8))
        # one group per (file, word); groups ordered by word, then file (no Python object per word)
        hashes, group_word = np.unique(np.concatenate([o.hashes for o in per_file]), return_inverse=True)
        group_file = np.repeat(np.arange(len(per_file)), [len(o.hashes) for o in per_file])
        counts = np.concatenate([o.counts for o in per_file]).astype(np.int64)
        at = np.concatenate(([0], np.cumsum(counts)))
        order = np.argsort(group_word, kind="stable")
        sizes = counts[order]
        total = int(at[-1])
        # the rows of each group, in the new order: its old start plus 0, 1, ...
        take = np.repeat(at[:-1][order] - np.concatenate(([0], np.cumsum(sizes)[:-1])), sizes) + np.arange(total)
        files = np.repeat(group_file[order], sizes)
        word_starts = np.searchsorted(group_word[order], np.arange(len(hashes) + 1))
        starts = np.concatenate(([0], np.cumsum(sizes)))[word_starts]
        lines = _compact(np.concatenate([o.lines for o in per_file]).astype(np.uint32)[take])
        columns = _compact(np.concatenate([o.columns for o in per_file]).astype(np.uint32)[take])
        flags = np.concatenate([o.flags for o in per_file])[take]
        return cls(paths, hashes, starts, _compact(files.astype(np.uint32)), lines, columns, flags)

    def rows(self, word: str) -> slice:
        h = word_hash(word)
        i = int(np.searchsorted(self.hashes, np.uint64(h)))
        if i >= len(self.hashes) or int(self.hashes[i]) != h:
            return slice(0, 0)
        return slice(int(self.starts[i]), int(self.starts[i + 1]))

    def __len__(self) -> int:
        return len(self.paths)


def _compact(a: np.ndarray) -> np.ndarray:
    """``a`` (unsigned) in 16 bits when every value fits."""
    return a.astype(np.uint16) if not a.size or int(a.max()) <= 0xFFFF else a


class Rows:
    """The occurrences of one word as found: the base's as arrays (narrowed with numpy),
    the live files' as records; made into records only for the page answered."""

    def __init__(self, word: str, base: _Base, at: np.ndarray, live: list[Reference]) -> None:
        self.word, self._base, self._at, self.live = word, base, at, live

    def __len__(self) -> int:
        return int(self._at.size) + len(self.live)

    def keep(self, code_only: bool = False, paths: AbstractSet[str] | None = None) -> None:
        b, at = self._base, self._at
        if code_only:
            at = at[(b.flags[at] & TEXT) == 0]
            self.live = [r for r in self.live if not r.flags & TEXT]
        if paths is not None:
            ids = np.fromiter((b.ids[p] for p in paths if p in b.ids), np.int64)
            at = at[np.isin(b.files[at], ids)]
            self.live = [r for r in self.live if r.path in paths]
        self._at = at

    def paths(self) -> set[str]:
        b = self._base
        return {b.paths[f] for f in np.unique(b.files[self._at]).tolist()} | {r.path for r in self.live}

    def drop(self, places: AbstractSet[tuple[str, int, int]]) -> None:
        """Leave out the occurrences at ``places`` (path, line, column)."""
        b, at = self._base, self._at
        by_file: dict[int, set[tuple[int, int]]] = {}
        for path, line, column in places:
            if path in b.ids:
                by_file.setdefault(b.ids[path], set()).add((line, column))
        if by_file:
            suspects = np.flatnonzero(np.isin(b.files[at], np.fromiter(by_file, np.int64)))
            gone = [i for i in suspects.tolist()
                    if (int(b.lines[at[i]]), int(b.columns[at[i]])) in by_file[int(b.files[at[i]])]]
            self._at = np.delete(at, gone)
        self.live = [r for r in self.live if (r.path, r.line, r.column) not in places]

    def ordered(self, first: str | None = None, limit: int | None = None) -> list[Reference]:
        """The occurrences by path then position, those of ``first`` first; at most ``limit``."""
        b, at = self._base, self._at
        rank = b.order[b.files[at]] if at.size else np.zeros(0, np.int64)
        if first is not None and first in b.ids:
            rank = np.where(b.files[at] == b.ids[first], -1, rank)
        page = at[np.argsort(rank, kind="stable")][:limit]
        width = utf16_length(self.word)
        found = [Reference(b.paths[f], ln, c, c + width, fl)
                 for f, ln, c, fl in zip(b.files[page].tolist(), b.lines[page].tolist(), b.columns[page].tolist(),
                                         b.flags[page].tolist(), strict=True)]
        found.extend(self.live)
        found.sort(key=lambda r: (r.path != first, r.path, r.line, r.column))
        return found[:limit]


class ReferenceTable:
    """The occurrences of every indexed file (base + live layer); thread-safe."""

    def __init__(self, rows: Iterable[tuple[str, bytes]] = ()) -> None:
        self._lock = threading.Lock()
        self._base = _Base.build((path, decode(blob)) for path, blob in rows)
        self._hidden: set[int] = set()
        self._hidden_ids = np.zeros(0, np.int64)
        self._live: dict[str, FileOccurrences] = {}

    def set_file(self, path: str, occ: FileOccurrences) -> None:
        with self._lock:
            self._hide(path)
            self._live[path] = occ

    def remove_file(self, path: str) -> None:
        with self._lock:
            self._hide(path)
            self._live.pop(path, None)

    def _hide(self, path: str) -> None:
        i = self._base.ids.get(path)
        if i is not None and i not in self._hidden:
            self._hidden.add(i)
            self._hidden_ids = np.fromiter(self._hidden, np.int64)

    def live_of(self, path: str) -> FileOccurrences | None:
        with self._lock:
            return self._live.get(path)

    def __len__(self) -> int:
        with self._lock:
            return len(self._base) - len(self._hidden) + len(self._live)

    def rows(self, word: str) -> Rows:
        """Every occurrence of ``word`` (a whole identifier, case-sensitive)."""
        with self._lock:
            base, hidden, live = self._base, self._hidden_ids, list(self._live.items())
        at = np.arange(base.rows(word).start, base.rows(word).stop)
        if hidden.size and at.size:
            at = at[~np.isin(base.files[at], hidden)]
        found = [Reference(path, o.line, o.column, o.end, o.flags) for path, occ in live for o in occ.of(word)]
        return Rows(word, base, at, found)

    def occurrences(self, word: str) -> list[Reference]:
        """Every occurrence of ``word``, by path and position."""
        return self.rows(word).ordered()


@attrs.frozen
class References:
    """The answer to Find References."""
    name: str
    references: list[Reference]
    total: int  # occurrences found before the limit
    declarations: frozenset[tuple[str, int, int]] = frozenset()  # (path, line, column) of definitions' names

    @property
    def truncated(self) -> bool:
        return self.total > len(self.references)

    def is_declaration(self, r: Reference) -> bool:
        return (r.path, r.line, r.column) in self.declarations


def find(table: ReferenceTable, symbols: SymbolTable, name: str, *, include_declaration: bool = True,
         comments_and_strings: bool = True, limit: int | None = None,
         paths: AbstractSet[str] | Callable[[str], bool] | None = None, first: str | None = None) -> References:
    """The occurrences of ``name``: without the definitions' names (``symbols``) unless
    ``include_declaration``, without those in comments and strings unless
    ``comments_and_strings``, only in ``paths`` when given (a set, or a test of a path);
    the file ``first`` leads (where the cursor is), then by path; at most ``limit``."""
    rows = table.rows(name)
    if callable(paths):
        paths = {p for p in rows.paths() if paths(p)}
    rows.keep(code_only=not comments_and_strings, paths=paths)
    files = rows.paths() if len(rows) else set()
    declared = frozenset((h.path, h.symbol.selection[0], h.symbol.selection[1])
                         for h in (symbols.named_in(name, files) if files else ()) if h.symbol.name == name)
    if not include_declaration and declared:
        rows.drop(declared)
    return References(name, rows.ordered(first, limit), len(rows), declared)


@attrs.frozen
class Shown:
    """An occurrence as a person or an agent reads it: with the symbol around it
    (``Class.method``) and its line's text."""
    reference: Reference
    symbol: str
    text: str
    declaration: bool


def shown(found: References, refs: Sequence[Reference], symbols: SymbolTable, root: Path) -> list[Shown]:
    """``refs`` (some of ``found``'s) with their enclosing symbols and lines (read from
    the files under ``root``: "" for a line that is not there now)."""
    out = []
    for r in refs:
        lines = file_lines(root / r.path) or []
        text = lines[r.line].rstrip("\r\n") if r.line < len(lines) else ""
        out.append(Shown(r, symbols.scope(r.path, r.line), text, found.is_declaration(r)))
    return out
