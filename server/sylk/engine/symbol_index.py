"""The workspace's symbol table (``workspace/symbol``), loaded from the manifest on
first use and kept current by index runs, with an overlay of the editor's unsaved
buffers: a file whose symbols come from a buffer keeps them until it is saved or
closed, whatever index runs do meanwhile."""

from __future__ import annotations

import threading

from ..ingest.symbols import decode_symbols, extract_for_path
from ..search.symbol_search import SymbolHit, SymbolTable
from ..store.stores import Stores


class SymbolIndex:
    def __init__(self, stores: Stores) -> None:
        self.stores = stores
        self._table: SymbolTable | None = None
        self._lock = threading.Lock()
        self._unsaved: dict[str, bool] = {}  # files whose symbols come from an editor buffer
        # What the running index run changed since its last flush to the manifest, while
        # no table was loaded (symbol data, or None for a file that went): a table loaded
        # mid-run reads the manifest and then these, so it misses nothing.
        self._unflushed: dict[str, str | None] = {}

    @property
    def loaded(self) -> bool:
        return self._table is not None

    @property
    def table(self) -> SymbolTable:
        """The table, loaded from the manifest on first use."""
        if self._table is not None:
            return self._table
        with self._lock:
            if self._table is None:
                table = SymbolTable()
                table.replace_all(self.stores.manifest.symbols_by_path())
                for rel, data in self._unflushed.items():
                    _apply(table, rel, data)
                self._unflushed = {}
                self._table = table
            return self._table

    @property
    def ready(self) -> bool:
        """Whether a search would answer without first loading or rebuilding."""
        return self._table is not None and not self._table.stale

    def search(self, query: str, limit: int) -> list[SymbolHit]:
        return self.table.search(query, limit)

    # kept current by index runs (a buffer's symbols stay) ------------------
    def remove(self, rel: str) -> None:
        self._change(rel, None)

    def set(self, rel: str, symbol_data: str) -> None:
        self._change(rel, symbol_data)

    def flushed(self) -> None:
        """The index run wrote its changes so far to the manifest."""
        with self._lock:
            self._unflushed = {}

    def _change(self, rel: str, symbol_data: str | None) -> None:
        if self._table is None:
            with self._lock:
                if self._table is None:  # not loaded: the manifest has it after the flush
                    self._unflushed[rel] = symbol_data
                    return
        if rel not in self._unsaved:
            _apply(self._table, rel, symbol_data)

    def warm(self) -> None:
        if self._table is not None:
            self._table.warm()

    def reload(self) -> None:
        """Everything again from the manifest (another process's run was followed)."""
        if self._table is not None:
            self._table.replace_all(self.stores.manifest.symbols_by_path())
            self._table.warm()

    def drop(self) -> None:
        """Forget the table (the stores started over); it loads again on next use."""
        with self._lock:
            self._table = None
            self._unflushed = {}

    # the editor's unsaved buffers ------------------------------------------
    def set_unsaved(self, rel: str, source: bytes | None) -> None:
        """Serve the symbols of ``rel`` from an editor buffer's unsaved text (``source``), or,
        with None, from the indexed file again. Only workspace symbols change: the stores
        hold what is on disk, and indexing runs leave a buffer's symbols alone."""
        table = self.table
        if source is None:
            if self._unsaved.pop(rel, None) is None:
                return
            stored = self.stores.manifest.symbols_of(rel)
            if stored is None:
                table.remove_file(rel)
            else:
                table.set_file(rel, stored)
        else:
            self._unsaved[rel] = True
            table.set_file(rel, extract_for_path(rel, source))
        table.warm()

    def keep_unsaved(self, rel: str) -> None:
        """The buffer of ``rel`` was saved: indexing takes over its symbols from here."""
        self._unsaved.pop(rel, None)


def _apply(table: SymbolTable, rel: str, symbol_data: str | None) -> None:
    """A file's symbols from an index run (None: the file went) into ``table``."""
    if symbol_data is None:
        table.remove_file(rel)
    else:
        table.set_file(rel, decode_symbols(symbol_data))
