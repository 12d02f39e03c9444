"""The workspace's occurrences of every identifier (Find References, the call hierarchy),
built on first use from the manifest's blobs and kept current by index runs, with the
editor's unsaved buffers on top: a file whose occurrences come from a buffer keeps them
until it is saved or closed, whatever index runs do meanwhile.

Nothing is kept beside the manifest: the table is built in memory when first asked for
(the stdlib's 3.5 million occurrences in about a second) and built again at the end of
an index run that changed many files (``REBUILD_FILES``), so its live layer stays small.
"""

from __future__ import annotations

import logging
import sqlite3
import threading

from ..errors import IndexError_
from ..ingest.occurrences import FileOccurrences, OccurrenceDataError, decode
from ..memory import release_memory
from ..search.references import ReferenceTable
from ..store.stores import Stores

log = logging.getLogger(__name__)

# The table is built again from the manifest when more files than this changed since it
# was (or a tenth of its files, when that is more).
REBUILD_FILES = 1000


class ReferenceIndex:
    def __init__(self, stores: Stores) -> None:
        self.stores = stores
        self._table: ReferenceTable | None = None
        self._lock = threading.Lock()
        self._unsaved: dict[str, FileOccurrences] = {}
        # What the running index run changed since its last flush to the manifest, while no
        # table was built (a blob, or None for a file that went): a table built mid-run
        # reads the manifest and then these, so it misses nothing.
        self._unflushed: dict[str, bytes | None] = {}
        self._changed = 0
        self._stamps: dict[str, str] = {}  # the manifest's stamp of each file the table was built from

    @property
    def table(self) -> ReferenceTable:
        """The table, built on first use."""
        if self._table is not None:
            return self._table
        with self._lock:
            if self._table is None:
                table = self._build()
                for rel, blob in self._unflushed.items():
                    _apply(table, rel, blob)
                self._unflushed = {}
                self._table = table
            return self._table

    def warm(self) -> None:
        """Build the table now, if it is not built (after an index run, in the background)."""
        try:
            self.table  # noqa: B018 - builds it
        except (IndexError_, sqlite3.Error) as exc:  # closed on the way: built on first use instead
            log.debug("reference table not built: %s", exc)

    def _build(self) -> ReferenceTable:
        self._stamps = self.stores.manifest.file_stamps()  # (before the rows: a later change is seen)
        rows = self.stores.manifest.occurrence_rows()
        try:
            table = ReferenceTable(rows)
        except OccurrenceDataError as exc:  # a damaged row: the rest still answer
            log.warning("occurrence data not used (%s): reading the rows one by one", exc)
            table = ReferenceTable(_usable(rows))
        for rel, occ in self._unsaved.items():
            table.set_file(rel, occ)
        self._changed = 0
        release_memory()  # the build's temporary arrays (140 MB on the stdlib) go back to the system
        return table

    def file(self, rel: str) -> FileOccurrences | None:
        """The occurrences of one file as served: an unsaved buffer's or a changed file's,
        else the manifest's; None for a file without any."""
        live = self.table.live_of(rel)
        if live is not None:
            return live
        rows = self.stores.manifest.occurrence_rows([rel])
        try:
            return decode(rows[0][1]) if rows else None
        except OccurrenceDataError as exc:
            log.warning("occurrences of %s not used: %s", rel, exc)
            return None

    # kept current by index runs (a buffer's occurrences stay) -----------------
    def set(self, rel: str, blob: bytes) -> None:
        self._change(rel, blob)

    def remove(self, rel: str) -> None:
        self._change(rel, None)

    def flushed(self) -> None:
        """The index run wrote its changes so far to the manifest."""
        with self._lock:
            self._unflushed = {}

    def _change(self, rel: str, blob: bytes | None) -> None:
        self._changed += 1
        if self._table is None:
            with self._lock:
                if self._table is None:
                    self._unflushed[rel] = blob
                    return
        if rel not in self._unsaved:
            _apply(self._table, rel, blob)

    def compact(self) -> None:
        """An index run ended: build the table again when many files changed since it was built."""
        table = self._table
        if table is None or self._changed <= max(REBUILD_FILES, len(table) // 10):
            return
        with self._lock:
            self._table = self._build()

    def reload(self) -> None:
        """Another process's run was followed: the files whose rows it wrote are read again
        (everything, when that is many)."""
        if self._table is None:
            return
        with self._lock:
            table = self._table
            if table is None:
                return
            stamps = self.stores.manifest.file_stamps()
            changed = [p for p, stamp in stamps.items() if self._stamps.get(p) != stamp]
            gone = [p for p in self._stamps if p not in stamps]
            if len(changed) + len(gone) > max(REBUILD_FILES, len(table) // 10):
                self._table = self._build()
                return
            self._stamps = stamps
            fresh = dict(self.stores.manifest.occurrence_rows(changed)) if changed else {}
            for rel in [*changed, *gone]:
                if rel not in self._unsaved:
                    _apply(table, rel, fresh.get(rel))

    def drop(self) -> None:
        """Forget the table (the stores started over); it is built again on next use."""
        with self._lock:
            self._table = None
            self._unflushed = {}

    # the editor's unsaved buffers ------------------------------------------
    def set_unsaved(self, rel: str, blob: bytes | None) -> None:
        """Serve the occurrences of ``rel`` from an editor buffer's unsaved text (``blob``,
        ``occurrences.extract`` of it) or, with None, from the indexed file again."""
        table = self.table
        with self._lock:
            table = self._table or table
            if blob is None:
                if self._unsaved.pop(rel, None) is None:
                    return
                rows = self.stores.manifest.occurrence_rows([rel])
                if rows:
                    _apply(table, rel, rows[0][1])
                else:
                    table.remove_file(rel)
            else:
                occ = decode(blob)
                self._unsaved[rel] = occ
                table.set_file(rel, occ)

    def keep_unsaved(self, rel: str) -> None:
        """The buffer of ``rel`` was saved: indexing takes over its occurrences from here."""
        self._unsaved.pop(rel, None)


def _usable(rows: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    out = []
    for path, blob in rows:
        try:
            decode(blob)
        except OccurrenceDataError as exc:
            log.warning("occurrences of %s not used: %s", path, exc)
            continue
        out.append((path, blob))
    return out


def _apply(table: ReferenceTable, rel: str, blob: bytes | None) -> None:
    if blob is None:
        table.remove_file(rel)
        return
    try:
        table.set_file(rel, decode(blob))
    except OccurrenceDataError as exc:
        log.warning("occurrences of %s not used: %s", rel, exc)
        table.remove_file(rel)
