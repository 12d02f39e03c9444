"""The embedding cache: vectors by (model key, chunk text hash), across restarts and
branch switches, so an unchanged chunk is never embedded twice."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from .layout import EMBEDDING_CACHE_FILE

log = logging.getLogger(__name__)


class EmbeddingCache:
    """Vectors by (model key, chunk text hash) in SQLite (WAL), across restarts.

    One connection behind a lock. A corrupt file is moved aside and started over
    (``reset_reason`` says so); a failing read is a miss and a failing write is
    logged, so the cache can cost work but never correctness.
    """

    FILENAME = EMBEDDING_CACHE_FILE
    _CHUNK = 500  # SQLite parameters per IN (...)

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.reset_reason: str | None = None
        self._lock = threading.Lock()
        try:
            self._db = self._connect()
        except sqlite3.DatabaseError as e:
            self.reset_reason = f"the embedding cache {self.path} was unreadable ({e}); starting over"
            log.warning("%s", self.reset_reason)
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(OSError):
                    os.replace(f"{self.path}{suffix}", f"{self.path}.corrupt{suffix}")
            self._db = self._connect()

    @classmethod
    def open(cls, folder: Path) -> EmbeddingCache:
        return cls(Path(folder) / cls.FILENAME)

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS vectors ("
                " model TEXT NOT NULL, hash TEXT NOT NULL, vec BLOB NOT NULL,"
                " PRIMARY KEY (model, hash)) WITHOUT ROWID"
            )
            db.execute("SELECT count(*) FROM (SELECT 1 FROM vectors LIMIT 1)").fetchone()
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def get_many(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        hashes = list(dict.fromkeys(hashes))
        try:
            with self._lock:
                for i in range(0, len(hashes), self._CHUNK):
                    part = hashes[i : i + self._CHUNK]
                    marks = ",".join("?" * len(part))
                    rows = self._db.execute(
                        f"SELECT hash, vec FROM vectors WHERE model = ? AND hash IN ({marks})",
                        (model_id, *part),
                    ).fetchall()
                    for h, blob in rows:
                        out[h] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
        except sqlite3.Error as e:
            log.warning("embedding cache read failed: %s", e)
        return out

    def put_many(self, model_id: str, items: Mapping[str, np.ndarray]) -> None:
        if not items:
            return
        rows = [(model_id, h, np.ascontiguousarray(v, dtype="<f4").tobytes()) for h, v in items.items()]
        try:
            with self._lock:
                self._db.execute("BEGIN")
                try:
                    self._db.executemany(
                        "INSERT OR REPLACE INTO vectors (model, hash, vec) VALUES (?, ?, ?)", rows
                    )
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
        except sqlite3.Error as e:
            log.warning("embedding cache write failed: %s", e)

    def count(self, model_id: str | None = None) -> int:
        with self._lock:
            if model_id is None:
                return self._db.execute("SELECT count(*) FROM vectors").fetchone()[0]
            return self._db.execute(
                "SELECT count(*) FROM vectors WHERE model = ?", (model_id,)
            ).fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
