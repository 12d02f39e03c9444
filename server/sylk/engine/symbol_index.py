"""The workspace's symbol table (``workspace/symbol``), opened on first use and kept
current by index runs, with an overlay of the editor's unsaved buffers: a file whose
symbols come from a buffer keeps them until it is saved or closed, whatever index runs
do meanwhile.

The table opens from its snapshot beside the index (``SYMBOLS_FILE``, arrays mapped
from disk: ``search.frozen_symbols``) plus the files whose manifest rows changed since
the snapshot was written, so opening a large index takes a read, not a rebuild. The
writer writes the snapshot again at the end of an index run when none is there or
when many files changed since (``COMPACT_FILES``). A missing or damaged snapshot only
costs a rebuild from the manifest.
"""

from __future__ import annotations

import logging
import threading

from ..errors import describe
from ..ingest.symbols import Symbol, decode_symbols
from ..search.frozen_symbols import FrozenSymbols
from ..search.symbol_search import SymbolFilter, SymbolHit, SymbolTable
from ..store.array_file import ArrayFileError
from ..store.layout import SYMBOLS_FILE
from ..store.stores import Stores

log = logging.getLogger(__name__)

# The snapshot is written again when more files than this changed since it was (or a
# twentieth of its files, when that is more); below, opening reads those files' rows.
COMPACT_FILES = 500


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
        self._changed = 0  # files changed since the snapshot was written

    @property
    def loaded(self) -> bool:
        return self._table is not None

    @property
    def table(self) -> SymbolTable:
        """The table, opened on first use."""
        if self._table is not None:
            return self._table
        with self._lock:
            if self._table is None:
                table = self._open({})
                for rel, data in self._unflushed.items():
                    _apply(table, rel, data)
                self._unflushed = {}
                self._table = table
            return self._table

    def _open(self, keep: dict[str, list[Symbol]]) -> SymbolTable:
        """A table from the snapshot and the manifest rows changed since (or, without a
        usable snapshot, one built from the manifest), with ``keep`` (buffers) over it."""
        path = self.stores.index_dir / SYMBOLS_FILE
        manifest = self.stores.manifest
        base: FrozenSymbols | None = None
        try:
            base = FrozenSymbols.load(path)
        except ArrayFileError as exc:
            if path.exists():
                log.warning("symbol snapshot not used (%s): building it again", exc)
        stamps = manifest.symbol_stamps()
        old = base.stamps() if base is not None else {}
        changed = [p for p, stamp in stamps.items() if old.get(p) != stamp]
        gone = [p for p in old if p not in stamps]
        if base is None or len(changed) + len(gone) > self._compact_limit(len(stamps)):
            base = self._rebuild()
            changed, gone = [], []
        live = {r.path: decode_symbols(r.data) for r in manifest.symbol_rows(changed)} if changed else {}
        live.update(keep)
        for p in gone:
            base.hide(p)
        table = SymbolTable()
        table.rebase(base, live)
        self._changed = len(changed) + len(gone)
        return table

    @staticmethod
    def _compact_limit(files: int) -> int:
        return max(COMPACT_FILES, files // 20)

    def _rebuild(self) -> FrozenSymbols:
        """A snapshot from the manifest, saved by the writer."""
        base = FrozenSymbols.build(self.stores.manifest.symbol_rows())
        if self.stores.writable:
            try:
                base.save(self.stores.index_dir / SYMBOLS_FILE)
            except OSError as exc:
                log.warning("could not save the symbol snapshot: %s", describe(exc))
        return base

    def compact(self) -> None:
        """An index run ended (its changes are in the manifest): write the snapshot again
        when it is missing or many files changed since it was written, and serve from it."""
        if not self.stores.writable:
            return
        if (self.stores.index_dir / SYMBOLS_FILE).exists() and \
                self._changed <= self._compact_limit(self.stores.manifest.counts()["files"]):
            return
        base = self._rebuild()
        with self._lock:
            self._changed = 0
            table = self._table
            if table is not None:
                table.rebase(base, {rel: table.symbols_of_live(rel) or [] for rel in self._unsaved})
        if table is not None:
            table.warm()

    @property
    def ready(self) -> bool:
        """Whether a search would answer without first loading or rebuilding."""
        return self._table is not None and not self._table.stale

    def search(self, query: str, limit: int, only: SymbolFilter | None = None) -> list[SymbolHit]:
        return self.table.search(query, limit, only)

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
        self._changed += 1
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
        """Everything again from the snapshot and the manifest (another process's run was
        followed); the buffers' symbols stay."""
        if self._table is not None:
            with self._lock:
                table = self._open({rel: self._table.symbols_of_live(rel) or [] for rel in self._unsaved})
                table.warm()
                self._table = table

    def drop(self) -> None:
        """Forget the table (the stores started over); it loads again on next use."""
        with self._lock:
            self._table = None
            self._unflushed = {}

    # the editor's unsaved buffers ------------------------------------------
    def set_unsaved(self, rel: str, symbols: list[Symbol] | None) -> None:
        """Serve the symbols of ``rel`` from an editor buffer's unsaved text (``symbols``, found
        in it), or, with None, from the indexed file again. Only workspace symbols change:
        the stores hold what is on disk, and indexing runs leave a buffer's symbols alone."""
        table = self.table
        with self._lock:  # not while compact() swaps the snapshot
            table = self._table or table
            if symbols is None:
                if self._unsaved.pop(rel, None) is None:
                    return
                stored = self.stores.manifest.symbols_of(rel)
                if stored is None:
                    table.remove_file(rel)
                else:
                    table.set_file(rel, stored)
            else:
                self._unsaved[rel] = True
                table.set_file(rel, symbols or [])
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
