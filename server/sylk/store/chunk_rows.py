"""The ``chunks`` table of the manifest: the unit of retrieval, and whether each chunk is
in the vectors yet (waiting, embedded, or failed: the model could not embed it).

A mixin of ``Manifest`` (as ``Annotations`` is): the same connection, lock and write
generation.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple


class ChunkRecord(NamedTuple):
    """A chunk as the manifest holds it (a row of the ``chunks`` table). ``embed_text``
    travels only with a new chunk; records read back leave it empty."""
    id: int
    path: str
    start_line: int
    end_line: int
    language: str | None
    type: str
    kind: str
    symbol: str
    container: str
    text_hash: str
    embed_text: str = ""
    exported: bool = False  # the definition it holds is exported (Symbol.exported)


class PendingChunk(NamedTuple):
    """A chunk waiting for its vector."""
    id: int
    text_hash: str
    embed_text: str


# the ``embedded`` state of a chunk the model failed on, alone (engine.embedding)
EMBED_FAILED = 2


class ChunkRows:
    _db: sqlite3.Connection
    _lock: threading.RLock
    _generation: int
    _rows_in: Callable[[str, Sequence[Any]], list[Any]]
    _memo: Callable[[str, Callable[[], dict[str, int]]], dict[str, int]]

    def max_chunk_id(self) -> int:
        with self._lock:
            return self._db.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()[0]

    def chunk_ids(self, paths: Iterable[str]) -> list[int]:
        with self._lock:
            out: list[int] = []
            for p in paths:
                out.extend(r[0] for r in self._db.execute("SELECT id FROM chunks WHERE path=?", (p,)))
            return out

    def chunks_by_id(self, ids: Sequence[int]) -> dict[int, ChunkRecord]:
        with self._lock:
            return {r[0]: ChunkRecord(*r[:10], exported=r[10] == 1) for r in self._rows_in(
                "SELECT id, path, start_line, end_line, language, type, kind, symbol, container, text_hash, exported "
                "FROM chunks WHERE id IN", ids)}

    def pending_order(self) -> list[int]:
        """Ids of the chunks not embedded yet, most recently modified files first
        (then in file order): what the user touched last is searchable by meaning first."""
        with self._lock:
            return [r[0] for r in self._db.execute(
                "SELECT c.id FROM chunks c LEFT JOIN files f ON f.path = c.path WHERE c.embedded=0 "
                "ORDER BY f.mtime_ns DESC, c.id")]

    def pending_rows(self, ids: Sequence[int]) -> list[PendingChunk]:
        """Those of ``ids`` still waiting for a vector, in that order."""
        if not ids:
            return []
        with self._lock:
            found = {r[0]: PendingChunk(*r) for r in self._rows_in(
                "SELECT id, text_hash, embed_text FROM chunks WHERE embedded=0 AND id IN", ids)}
        return [found[i] for i in ids if i in found]

    def pending_for_paths(self, paths: Iterable[str]) -> list[PendingChunk]:
        """The chunks of ``paths`` still waiting for a vector."""
        with self._lock:
            rows: list[PendingChunk] = []
            for p in paths:
                rows.extend(PendingChunk(*r) for r in self._db.execute(
                    "SELECT id, text_hash, embed_text FROM chunks WHERE embedded=0 AND path=? ORDER BY id", (p,)))
            return rows

    def set_embedded(self, ids: Sequence[int], value: bool, *, durable: bool = True) -> None:
        """Mark chunks embedded (or not). ``durable=False`` keeps the change in an open
        transaction until commit_embedded(): the vectors are saved first."""
        with self._lock:
            self._generation += 1
            if not self._db.in_transaction:
                self._db.execute("BEGIN")
            self._db.executemany("UPDATE chunks SET embedded=? WHERE id=?", ((int(value), i) for i in ids))
            if durable:
                self._db.execute("COMMIT")

    def commit_embedded(self) -> None:
        with self._lock:
            if self._db.in_transaction:
                self._db.execute("COMMIT")

    def set_embed_failed(self, ids: Sequence[int]) -> None:
        """Mark waiting chunks the model failed on (EMBED_FAILED): no longer pending. Joins
        the open transaction of the embedded flags (set_embedded durable=False) if any."""
        with self._lock:
            self._generation += 1
            self._db.executemany(f"UPDATE chunks SET embedded={EMBED_FAILED} WHERE id=? AND embedded=0",
                                 ((i,) for i in ids))

    def retry_embed_failed(self) -> int:
        """The chunks the model failed on wait for a vector again; returns how many."""
        with self._lock:
            self._generation += 1
            return self._db.execute(f"UPDATE chunks SET embedded=0 WHERE embedded={EMBED_FAILED}").rowcount

    def embedded_ids(self) -> set[int]:
        with self._lock:
            return {r[0] for r in self._db.execute("SELECT id FROM chunks WHERE embedded=1")}

    def all_chunk_ids(self) -> set[int]:
        with self._lock:
            return {r[0] for r in self._db.execute("SELECT id FROM chunks")}

    def reset_embedded(self) -> None:
        """After a model change: every chunk is embedded again."""
        with self._lock:
            self._generation += 1
            self._db.execute("UPDATE chunks SET embedded=0")

    def chunk_counts(self) -> dict[str, int]:
        return self._memo("chunks", self._chunk_counts)

    def _chunk_counts(self) -> dict[str, int]:
        with self._lock:
            total, embedded, failed = self._db.execute(
                f"SELECT count(*), coalesce(sum(embedded = 1), 0), coalesce(sum(embedded = {EMBED_FAILED}), 0) "
                "FROM chunks").fetchone()
        return {"chunks": total, "embedded": embedded, "pending": total - embedded - failed, "failed": failed}
