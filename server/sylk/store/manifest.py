"""What is indexed, at which content hash: SQLite in WAL mode.

The manifest is written *after* the Tantivy commit that holds the same files, so
after a crash the manifest never claims more than the lexical index has: a file
whose row is missing or stale is simply indexed again on the next run.

The files' (path, content hash) pairs have a Merkle root (``merkle_root``), kept in
``meta`` until the files change: two index states, or an index and the disk
(integrity.verify), are compared by one hash.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from ..ingest.symbols import Symbol, decode_symbols
from .annotations import Annotations
from .chunk_rows import ChunkRecord, ChunkRows

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    lang TEXT,
    symbols INTEGER NOT NULL DEFAULT 0,
    replaced INTEGER NOT NULL DEFAULT 0,
    indexed_at REAL NOT NULL,
    -- the file's symbols, encode_symbols(): one row per file keeps writes and loads cheap
    symbol_data TEXT NOT NULL DEFAULT '[]',
    package TEXT NOT NULL DEFAULT ''  -- ingest.packages.package_of(); '' for a virtual document
);
CREATE TABLE IF NOT EXISTS skipped (path TEXT PRIMARY KEY, reason TEXT NOT NULL);
-- Every identifier of each indexed file with its positions (ingest.occurrences.extract),
-- written with the file's row: what Find References reads.
CREATE TABLE IF NOT EXISTS occurrences (path TEXT PRIMARY KEY, data BLOB NOT NULL);
-- Chunks: the unit of retrieval. ``id`` is the Tantivy chunk_id and the FAISS id.
-- ``embed_text`` is what the embedding model sees (kept for a model change).
-- ``embedded``: 0 waiting for a vector, 1 in the vectors, 2 the model failed on it
-- (EMBED_FAILED: not waiting; tried again when the model is loaded next).
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    language TEXT,
    type TEXT NOT NULL,
    kind TEXT NOT NULL,
    symbol TEXT NOT NULL,
    container TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    embed_text TEXT,
    embedded INTEGER NOT NULL DEFAULT 0,
    exported INTEGER NOT NULL DEFAULT 0  -- 1: the definition it holds is exported (Symbol.exported)
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
-- Virtual documents (documents.py): their text lives here; chunks under path 'sylk:/<id>'.
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    title TEXT NOT NULL,
    tags TEXT NOT NULL,
    metadata TEXT NOT NULL,
    text TEXT NOT NULL,
    created REAL NOT NULL
);
-- User tags on files and documents.
CREATE TABLE IF NOT EXISTS tags (path TEXT NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (path, tag));
-- The last commit that touched each file (gitsync.last_commits), for filters and facets.
CREATE TABLE IF NOT EXISTS git_files (
    path TEXT PRIMARY KEY,
    commit_id TEXT NOT NULL,
    author TEXT NOT NULL,
    time INTEGER NOT NULL
);

"""


@attrs.frozen(slots=True)
class IndexedFile:
    """A file's row as an index run writes it: the record, its symbols (encode_symbols())
    and its occurrences (occurrences.extract(); None for a virtual document)."""

    record: FileRecord
    symbol_data: str = "[]"
    occurrence_data: bytes | None = None


@attrs.frozen(slots=True)
class FileSymbolData:
    """A file's symbols as its row holds them."""

    path: str
    stamp: str  # Manifest.symbol_stamps()
    data: str  # encode_symbols()


@attrs.frozen(slots=True)
class FileRecord:
    path: str
    hash: str
    size: int
    mtime_ns: int
    lang: str | None
    symbols: int = 0
    replaced: bool = False
    package: str = ""  # ingest.packages.package_of()


_FILE_COLUMNS = "path, hash, size, mtime_ns, lang, symbols, replaced, package"
# SQLite's limit on the variables of one statement is 999 (older builds): IN lists go in parts
_IN_BATCH = 500


def _file_record(r: Sequence[Any]) -> FileRecord:
    return FileRecord(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6]), r[7])


_INSERT_SKIPPED = "INSERT OR REPLACE INTO skipped (path, reason, size, mtime_ns) VALUES (?, ?, ?, ?)"


def _skip_row(t: Sequence) -> tuple[str, str, int, int]:
    """A skipped entry, (path, reason) or (path, reason, size, mtime_ns), as a row."""
    return (t[0], t[1], t[2], t[3]) if len(t) > 2 else (t[0], t[1], -1, -1)


MERKLE_META = "merkle_root"
# The largest chunk id ever written: ids are never handed out twice in an index's life, so
# a vector saved for a chunk since deleted (while its store was not loaded) can never be
# taken for a new chunk's (store.stores.Stores.open)
CHUNK_ID_HIGH_META = "chunk_id_high"


def merkle_root(rows: Iterable[tuple[str, str]]) -> str:
    """The root of a Merkle tree shaped like the folder tree (as git's trees): a folder's
    node hashes its entries, ``f name\0hash`` for a file and ``d name\0node`` for a
    sub-folder, in path order. ``rows`` are (root-relative path, content hash) sorted
    by path; one pass, a folder's node is finished when the walk leaves it (the paths
    under a folder are contiguous in sorted order)."""
    names: list[str] = []  # the open folders below the root
    nodes = [hashlib.sha256()]
    for path, content in rows:
        *folders, name = path.split("/")
        same = 0
        while same < len(names) and same < len(folders) and names[same] == folders[same]:
            same += 1
        while len(names) > same:
            node = nodes.pop().hexdigest()
            nodes[-1].update(f"d {names.pop()}\0{node}\n".encode())
        for folder in folders[same:]:
            names.append(folder)
            nodes.append(hashlib.sha256())
        nodes[-1].update(f"f {name}\0{content}\n".encode())
    while names:
        node = nodes.pop().hexdigest()
        nodes[-1].update(f"d {names.pop()}\0{node}\n".encode())
    return nodes[0].hexdigest()


class Manifest(ChunkRows, Annotations):
    """What is indexed (SQLite, WAL): files with their content hash, package, symbols and
    occurrences, skipped files, meta; (``ChunkRows``) chunks with their embedded state;
    and (``Annotations``) virtual documents, tags, git metadata and commit messages.

    About 270 lines: each method is one statement or transaction over the same
    connection and lock, which the mixins share."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._lock = threading.RLock()
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        cols = {r[1] for r in self._db.execute("PRAGMA table_info(skipped)")}
        if "size" not in cols:  # an index from before skipped files kept their stat
            self._db.execute("ALTER TABLE skipped ADD COLUMN size INTEGER NOT NULL DEFAULT -1")
            self._db.execute("ALTER TABLE skipped ADD COLUMN mtime_ns INTEGER NOT NULL DEFAULT -1")
        # counts are asked for on every search: cached until the next write
        self._generation = 0
        self._cached: dict[str, tuple[int, dict[str, int]]] = {}
        self._files_generation = 0  # a new one whenever files come or go (or change language)
        self._languages: tuple[int, dict[str, str | None]] | None = None
        self._packages: tuple[int, dict[str, str]] | None = None
        self._fts: bool | None = None  # FTS5 available (the commits table), once known

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction under the lock (a new write generation). Embedded flags
        awaiting a vector save (set_embedded durable=False) are let through first."""
        with self._lock:
            self._generation += 1
            db = self._db
            if db.in_transaction:
                db.execute("COMMIT")
            db.execute("BEGIN")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    # meta -------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def chunk_id_high(self) -> int:
        """The largest chunk id ever recorded (0 for an index older than the record)."""
        value = self.get_meta(CHUNK_ID_HIGH_META)
        return int(value) if value and value.isdigit() else 0

    def set_meta(self, **values: str) -> None:
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", values.items())

    # files ------------------------------------------------------------
    def files(self) -> dict[str, FileRecord]:
        with self._lock:
            rows = self._db.execute(f"SELECT {_FILE_COLUMNS} FROM files").fetchall()
        return {r[0]: _file_record(r) for r in rows}

    def file_languages(self) -> dict[str, str | None]:
        """path -> language of every indexed file; the same object (shared: do not change
        it) until files come or go, so a caller may key what it derives on its identity."""
        with self._lock:
            if self._languages is None or self._languages[0] != self._files_generation:
                rows = self._db.execute("SELECT path, lang FROM files").fetchall()
                self._languages = (self._files_generation, dict(rows))
            return self._languages[1]

    def file_packages(self) -> dict[str, str]:
        """path -> package of every indexed file (ingest.packages), shared as file_languages is."""
        with self._lock:
            if self._packages is None or self._packages[0] != self._files_generation:
                rows = self._db.execute("SELECT path, package FROM files").fetchall()
                self._packages = (self._files_generation, dict(rows))
            return self._packages[1]

    def reread(self) -> None:
        """Another process wrote the manifest (a reader following the writer): what is
        cached of it is read again when next asked for."""
        with self._lock:
            self._generation += 1
            self._files_generation += 1

    def file_records(self, paths: Iterable[str]) -> dict[str, FileRecord]:
        """The rows of some files (those indexed among ``paths``): a page of hits, not the tree."""
        with self._lock:
            return {r[0]: _file_record(r)
                    for r in self._rows_in(f"SELECT {_FILE_COLUMNS} FROM files WHERE path IN", list(paths))}

    def _rows_in(self, select: str, values: Sequence[Any]) -> list[Any]:
        """The rows of ``select`` (ending in ``... IN``) for ``values``, asked in parts."""
        rows: list[Any] = []
        for i in range(0, len(values), _IN_BATCH):
            part = list(values[i:i + _IN_BATCH])
            rows.extend(self._db.execute(f"{select} ({','.join('?' * len(part))})", part))
        return rows

    def apply(self, upserts: Iterable[IndexedFile], deletes: Iterable[str],
              skipped: Iterable[tuple] = (),
              touches: Iterable[tuple[str, int, int]] = (),
              chunks: Iterable[ChunkRecord] = ()) -> None:
        """One transaction: replace files (with their symbols and occurrences), delete files, note skips,
        and record new (size, mtime) of files whose content did not change. ``chunks``
        are the upserted files' chunks, replacing their old ones."""
        now = time.time()
        with self._transaction() as db:
            db.executemany("DELETE FROM files WHERE path=?", ((p,) for p in deletes))
            db.executemany("DELETE FROM skipped WHERE path=?", ((p,) for p in deletes))
            upserts = list(upserts)
            db.executemany("DELETE FROM chunks WHERE path=?", ((p,) for p in deletes))
            db.executemany("DELETE FROM chunks WHERE path=?", ((f.record.path,) for f in upserts))
            chunks = list(chunks)
            db.executemany("INSERT INTO chunks (id, path, start_line, end_line, language, type, kind, symbol, "
                           "container, text_hash, embed_text, exported) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", chunks)
            if chunks:
                db.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                           "value=max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))",
                           (CHUNK_ID_HIGH_META, str(max(c.id for c in chunks))))
            db.executemany("DELETE FROM skipped WHERE path=?", ((f.record.path,) for f in upserts))
            db.executemany(
                "INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?,?,?)",
                ((r.path, r.hash, r.size, r.mtime_ns, r.lang, r.symbols, int(r.replaced), now, f.symbol_data, r.package)
                 for f in upserts for r in (f.record,)))
            db.executemany("DELETE FROM occurrences WHERE path=?", ((p,) for p in deletes))
            db.executemany("INSERT OR REPLACE INTO occurrences VALUES (?,?)",
                           ((f.record.path, f.occurrence_data) for f in upserts if f.occurrence_data is not None))
            db.executemany("UPDATE files SET size=?, mtime_ns=? WHERE path=?",
                           ((size, mtime, path) for path, size, mtime in touches))
            db.executemany(_INSERT_SKIPPED, map(_skip_row, skipped))
            if upserts or deletes:  # the Merkle root is computed again when next asked for
                db.execute("DELETE FROM meta WHERE key=?", (MERKLE_META,))
                self._files_generation += 1

    def replace_skipped(self, skipped: Iterable[tuple]) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM skipped")
            self._db.executemany(_INSERT_SKIPPED, map(_skip_row, skipped))
            self._db.execute("COMMIT")

    def skipped(self) -> list[tuple[str, str]]:
        with self._lock:
            return self._db.execute("SELECT path, reason FROM skipped ORDER BY path").fetchall()

    def skipped_counts(self) -> dict[str, int]:
        """Skipped files per reason, the most first (then by reason)."""
        with self._lock:
            return dict(self._db.execute(
                "SELECT reason, COUNT(*) AS n FROM skipped GROUP BY reason ORDER BY n DESC, reason").fetchall())

    def skipped_paths(self, per_reason: int | None) -> dict[str, list[str]]:
        """The skipped files of each reason in path order: the first ``per_reason`` of
        each, or all of them (None)."""
        ranked = "SELECT reason, path, ROW_NUMBER() OVER (PARTITION BY reason ORDER BY path) AS n FROM skipped"
        with self._lock:
            if per_reason is None:
                rows = self._db.execute("SELECT reason, path FROM skipped ORDER BY reason, path").fetchall()
            else:
                rows = self._db.execute(f"SELECT reason, path FROM ({ranked}) WHERE n <= ? ORDER BY reason, path",
                                        (per_reason,)).fetchall()
        out: dict[str, list[str]] = {}
        for reason, path in rows:
            out.setdefault(reason, []).append(path)
        return out

    def skipped_stats(self) -> dict[str, tuple[int, int, str]]:
        """(size, mtime_ns, reason) of files skipped for their content (binary), to skip
        them again without reading them while they do not change."""
        with self._lock:
            return {r[0]: (r[1], r[2], r[3]) for r in self._db.execute(
                "SELECT path, size, mtime_ns, reason FROM skipped WHERE size >= 0")}

    # symbols ----------------------------------------------------------
    def symbols_of(self, path: str) -> list[Symbol] | None:
        """The stored symbols of one file; None when the file is not indexed."""
        with self._lock:
            row = self._db.execute("SELECT symbol_data FROM files WHERE path=?", (path,)).fetchone()
        return decode_symbols(row[0]) if row else None

    def symbols_by_path(self) -> dict[str, list[Symbol]]:
        return {r.path: decode_symbols(r.data) for r in self.symbol_rows()}

    # A file row's stamp: its content hash and when the row was written. A row written
    # again (a new content, or the same content indexed again) gets a new stamp.
    _STAMP = "hash || '@' || CAST(indexed_at AS TEXT)"

    def symbol_stamps(self) -> dict[str, str]:
        """The stamp of each file with symbols: what a symbol snapshot compares."""
        with self._lock:
            return dict(self._db.execute(f"SELECT path, {self._STAMP} FROM files WHERE symbols > 0"))

    def file_stamps(self) -> dict[str, str]:
        """The stamp of every file: what a reader's reference table compares."""
        with self._lock:
            return dict(self._db.execute(f"SELECT path, {self._STAMP} FROM files"))

    def symbol_rows(self, paths: Sequence[str] | None = None) -> list[FileSymbolData]:
        """The symbols of every file with symbols, or of those among ``paths``."""
        select = f"SELECT path, {self._STAMP}, symbol_data FROM files WHERE symbols > 0"
        with self._lock:
            rows = self._db.execute(select).fetchall() if paths is None else \
                self._rows_in(f"{select} AND path IN", list(paths))
        return [FileSymbolData(*r) for r in rows]

    # occurrences --------------------------------------------------------
    def occurrence_rows(self, paths: Sequence[str] | None = None) -> list[tuple[str, bytes]]:
        """(path, occurrences.extract() blob) of every indexed file, or of those among ``paths``."""
        with self._lock:
            if paths is None:
                return self._db.execute("SELECT path, data FROM occurrences").fetchall()
            return self._rows_in("SELECT path, data FROM occurrences WHERE path IN", list(paths))

    # integrity (see integrity.py) ---------------------------------------
    def merkle_root(self, *, store: bool = True) -> str:
        """The Merkle root over the files' (path, content hash): read from ``meta``, or
        computed in one pass over the files in path order (and kept, with ``store``)."""
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (MERKLE_META,)).fetchone()
            if row and row[0]:
                return row[0]
            root = merkle_root(self._db.execute("SELECT path, hash FROM files ORDER BY path"))
            if store:
                self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (MERKLE_META, root))
            return root

    def invalidate(self, paths: Sequence[str]) -> None:
        """Make files look changed (no size, no hash), so the next run parses them again."""
        with self._lock:
            self._generation += 1
            own = not self._db.in_transaction  # else it joins the embedded flags' transaction
            if own:
                self._db.execute("BEGIN")
            self._db.executemany("UPDATE files SET hash='', size=-1, mtime_ns=-1 WHERE path=?",
                                 ((p,) for p in paths))
            self._db.execute("DELETE FROM meta WHERE key=?", (MERKLE_META,))
            if own:
                self._db.execute("COMMIT")

    def quick_check(self) -> str | None:
        """SQLite's quick_check (reads every page): None when the file is sound."""
        with self._lock:
            rows = [r[0] for r in self._db.execute("PRAGMA quick_check(5)")]
        return None if rows == ["ok"] else "; ".join(rows)

    def _shared(self, key: str, compute):
        """``compute()`` cached until the next write, shared (not copied): callers must not
        change it."""
        with self._lock:
            hit = self._cached.get(key)
            if hit is None or hit[0] != self._generation:
                hit = self._cached[key] = (self._generation, compute())
            return hit[1]

    def _memo(self, key: str, compute) -> dict[str, int]:
        with self._lock:
            hit = self._cached.get(key)
            if hit is not None and hit[0] == self._generation:
                return dict(hit[1])
            value = compute()
            self._cached[key] = (self._generation, value)
            return dict(value)

    def counts(self) -> dict[str, int]:
        return self._memo("files", self._counts)

    def _counts(self) -> dict[str, int]:
        with self._lock:
            files = self._db.execute("SELECT count(*) FROM files").fetchone()[0]
            symbols = self._db.execute("SELECT coalesce(sum(symbols), 0) FROM files").fetchone()[0]
        return {"files": files, "symbols": symbols}

    def languages(self) -> list[tuple[str, int, int]]:
        """(language, files, symbols), most files first."""
        with self._lock:
            return self._db.execute(
                "SELECT coalesce(lang, 'text'), count(*), sum(symbols) FROM files "
                "GROUP BY coalesce(lang, 'text') ORDER BY count(*) DESC, 1").fetchall()
