"""Exact and regex search over one workspace (``search.grep``): the files the trigram
index holds a pattern's literals for, and the editor's unsaved buffers, verified
against their text.

The buffers: the text of each document the editor changed without saving
(``set_buffer``), searched in place of the file on disk. A saved buffer stays until
the index run that re-indexes its file is over (``saved``, then ``indexed``), so a
search between the save and the end of that run still finds what was saved.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from ..ingest import source_files
from ..ingest.file_types import file_type
from ..ingest.grams import path_key
from ..languages import language_for_path
from ..search import grep
from ..search.filters import FILE_FILTERS, Admit, Filters, Lookups
from ..search.grep import GrepFile, GrepResult
from ..search.pattern import compile_pattern
from ..search.query import GrepRequest
from ..search.results import IndexState
from ..store.stores import Stores
from .symbol_index import SymbolIndex


class LineSearch:
    """Exact and regex search of a workspace's indexed files and unsaved buffers."""

    def __init__(self, root: Path, stores: Stores, symbols: SymbolIndex, max_file_size: Callable[[], int]) -> None:
        self.root = root
        self.stores = stores
        self.symbols = symbols
        self._max_file_size = max_file_size
        self._lock = threading.Lock()
        self._buffers: dict[str, str] = {}
        self._saved: set[str] = set()
        # (the manifest's file languages object, the files by key, every file in path order)
        self._files: tuple[object, dict[int, GrepFile], list[GrepFile]] | None = None

    # the editor's buffers --------------------------------------------------------------
    def set_buffer(self, rel: str, text: str | None) -> None:
        """The editor's text of ``rel``; None: the file on disk again (closed unsaved)."""
        with self._lock:
            self._saved.discard(rel)
            if text is None:
                self._buffers.pop(rel, None)
            else:
                self._buffers[rel] = text

    def saved(self, rel: str) -> None:
        """The buffer of ``rel`` was saved: kept until its file is indexed again."""
        with self._lock:
            if rel in self._buffers:
                self._saved.add(rel)

    def indexed(self, rels: Iterable[str] | None) -> None:
        """An index run covered ``rels`` (None: the whole tree): saved buffers among them go."""
        with self._lock:
            done = self._saved if rels is None else self._saved.intersection(rels)
            for rel in list(done):
                self._buffers.pop(rel, None)
                self._saved.discard(rel)

    # searching ------------------------------------------------------------------------
    def grep(self, req: GrepRequest, state: IndexState) -> GrepResult:
        """``req`` answered: PatternError (a FieldError) for a pattern that is not one."""
        pattern = compile_pattern(req.pattern, mode=req.mode, case=req.case, whole_word=req.whole_word)
        by_key, everything = self._indexed_files()
        with self._lock:
            buffers = dict(self._buffers)
        if pattern.grams is None:
            found = everything
        else:
            keys = self.stores.lexical.files_holding(pattern.grams, len(by_key))
            found = sorted((by_key[k] for k in keys if k in by_key), key=lambda f: f.path)
        files = [f for f in found if f.path not in buffers]
        files.extend(_described(rel, language_for_path(rel)) for rel in buffers)
        files.sort(key=lambda f: f.path)
        files = _filtered(files, req, self.stores.manifest.file_packages())
        max_size = self._max_file_size()
        holds = grep.needle_test(pattern)
        root = str(self.root)

        def read(rel: str) -> str | None:
            text = buffers.get(rel)
            if text is not None:
                return text
            try:
                raw = source_files.read_bytes(Path(root, rel), max_size)
            except source_files.SkipFile:
                return None
            # (a file without the needle has no line to match: not decoded, read as empty)
            return source_files.decoded(raw) if holds is None or holds(raw) else ""

        table = self.symbols.table
        return grep.search(req, pattern, files, read, table.enclosing, state, scanned=pattern.grams is None)

    def file_test(self, filters: Filters) -> Callable[[str], bool]:
        """Whether an indexed file passes ``filters``' file filters (languages, types,
        paths, packages and their exclusions; a Find References)."""
        languages = self.stores.manifest.file_languages()
        admit = Admit(filters.only(FILE_FILTERS), Lookups(self.stores.manifest.file_packages()))
        return lambda rel: admit(_described(rel, languages.get(rel)))

    def _indexed_files(self) -> tuple[dict[int, GrepFile], list[GrepFile]]:
        """The indexed files by ``file_key`` and in path order, made again when files come or go."""
        languages = self.stores.manifest.file_languages()
        cached = self._files
        if cached is None or cached[0] is not languages:
            every = sorted((_described(rel, lang) for rel, lang in languages.items()), key=lambda f: f.path)
            cached = self._files = (languages, {path_key(f.path): f for f in every}, every)
        return cached[1], cached[2]


def _described(rel: str, language: str | None) -> GrepFile:
    return GrepFile(rel, language or "text", file_type(rel, language))


def _filtered(files: list[GrepFile], req: GrepRequest, packages: Mapping[str, str]) -> list[GrepFile]:
    """The files the filters keep (the kind of a line's symbol is grep.py's to check)."""
    admit = Admit(req.filters.only(FILE_FILTERS), Lookups(packages))
    return [x for x in files if admit(x)] if admit else files
