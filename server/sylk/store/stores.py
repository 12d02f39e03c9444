"""``Stores``: the stores of one index folder, opened together under the writer lock.

The manifest (SQLite), the text index (Tantivy) and, once the model is loaded, the
vectors (FAISS) are tied together by chunk ids; ``Stores`` is their one owner. It
opens them (checking the schema stamp, setting damaged stores aside: see ``damage``),
hands out chunk ids, writes a file's chunks and the manifest rows that go with them,
and closes them. Nothing else opens these files or touches their locks.

Writes to the manifest's chunks and to the vectors happen under ``vectors_lock``, so
the embedding thread never adds a vector for a chunk that is gone nor loses one for a
chunk that stays; ``index_lock`` serialises index runs and document writes.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import IndexError_, first_line
from ..ingest.parsing import ChunkRow
from .damage import WriterLock, check_segments, set_aside, sqlite_damage
from .layout import (
    GRAMS_DIR,
    LOCK_FILE,
    MANIFEST_FILE,
    META_FILE,
    QUICK_VECTORS_DIR,
    SCHEMA_VERSION,
    TANTIVY_DIR,
    VECTORS_DIR,
    WRITE_PROBE,
    FolderCheck,
    FolderState,
    folder_state,
    is_cache_name,
    remove_layout,
    write_stamp,
)
from .lexical import LexicalIndex, LexicalIndexLocked
from .manifest import ChunkRecord, Manifest
from .vectors import VectorIndex

READ_ONLY_REASON = "another Sylk process is indexing this workspace; serving its index read-only"


class Stores:
    """The stores of ``index_dir`` (the index of the workspace at ``root``)."""

    manifest: Manifest
    lexical: LexicalIndex

    def __init__(self, root: Path, index_dir: Path) -> None:
        self.root = root
        self.index_dir = index_dir
        self.read_only_reason: str | None = None
        self.rebuilt_reason: str | None = None  # why the stores started over at open
        self.unclean = False  # the last writer did not close (a kill, a crash)
        self.vectors: VectorIndex | None = None  # attached once the model is loaded
        # the quick pass's vectors (engine.embedding): chunks the model has not embedded yet
        self.quick: VectorIndex | None = None
        self.index_lock = threading.Lock()
        self.vectors_lock = threading.Lock()
        self._writer_lock: WriterLock | None = None
        self._next_chunk_id = 0
        self._opened = (0, 0)  # (chunk ids handed out, chunks held) at open

    # opening --------------------------------------------------------------
    @classmethod
    def open(cls, root: Path, index_dir: Path, *, writable: bool, deep: bool = False) -> Stores:
        """Open the stores; a writer takes the writer lock first (another writer makes this
        one read-only, saying why). ``deep`` adds SQLite's quick_check (after an unclean
        shutdown it always runs). Raises IndexError_ with one line for the user."""
        stores = cls(root, index_dir)
        check = folder_state(index_dir)
        if check.refused:  # a folder of the user's: not even a probe or a lock file goes in
            raise IndexError_(check.why or f"cannot use the index folder {index_dir}")
        try:
            index_dir.mkdir(parents=True, exist_ok=True)
            probe = index_dir / f"{WRITE_PROBE}.{os.getpid()}"
            probe.unlink(missing_ok=True)  # (a leftover, or a link: never written through)
            os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            probe.unlink(missing_ok=True)
        except OSError as exc:
            raise IndexError_(f"cannot write the index folder {index_dir}: {exc.strerror or exc}") from exc
        stores._writer_lock = WriterLock.acquire(index_dir) if writable else None
        if writable and stores._writer_lock is None:
            writable, stores.read_only_reason = False, READ_ONLY_REASON
        stores.unclean = stores._writer_lock is not None and stores._writer_lock.unclean
        try:
            stores.rebuilt_reason = stores._open_all(writable, deep=deep or stores.unclean)
        except BaseException:
            stores._release(clean=False)
            raise
        # after a crash Tantivy may hold chunks the manifest never recorded, and a deleted
        # chunk may still have a saved vector: never reuse an id
        stores._next_chunk_id = max(stores.manifest.max_chunk_id(), stores.lexical.max_chunk_id(),
                                    stores.manifest.chunk_id_high())
        stores._opened = (stores._next_chunk_id, stores.manifest.chunk_counts()["chunks"])
        return stores

    def _wipe_and_stamp(self, check: FolderCheck) -> None:
        """Stamp the folder (the writer only), first emptying it of Sylk's layout when it
        cannot be used as it is (``check.stale``). Only Sylk's names go (links unlinked,
        never followed); the lock, the stamp (replaced last, so a kill midway leaves a
        folder that is still Sylk's and still stale) and the embedding cache stay: its
        vectors are keyed by model and chunk text, whatever the schema, so an upgrade does
        not embed every chunk again."""
        folder = self.index_dir
        if check.stale:
            def keep(name: str) -> bool:
                if name == META_FILE:
                    return True  # replaced by write_stamp (a link too: os.replace)
                return (name == LOCK_FILE or is_cache_name(name)) and not (folder / name).is_symlink()
            failed = remove_layout(folder, keep)
            if failed:
                raise IndexError_(f"the index in {folder} must be rebuilt ({check.why}) but "
                                  f"{', '.join(failed)} could not be removed")
        if check.stale or check.state in (FolderState.MISSING, FolderState.EMPTY):
            write_stamp(folder, {"schema": SCHEMA_VERSION, "root": str(self.root)})

    def _open_all(self, writable: bool, *, deep: bool) -> str | None:
        """Check the folder (``layout.folder_state``) and open the manifest and the text
        index. Returns why the index starts over, if it does, else None. A writer empties
        a stale folder, sets damaged stores aside and opens fresh ones; a reader raises
        IndexError_."""
        check = folder_state(self.index_dir)
        if check.refused:
            raise IndexError_(check.why or f"cannot use the index folder {self.index_dir}")
        reason = check.why if check.stale else None
        if not writable:
            if reason:
                raise IndexError_(f"the index in {self.index_dir} cannot be read ({reason}); "
                                  "the next 'sylk index' rebuilds it")
        else:
            self._wipe_and_stamp(check)
        damage = self._try_open(writable, deep)
        if damage is None:
            return reason
        if not writable or self.read_only_reason is not None:
            raise IndexError_(f"the index in {self.index_dir} is damaged ({damage}); "
                              "the next 'sylk index' rebuilds it")
        moved = set_aside(self.index_dir)
        again = self._try_open(writable, False)
        if again is not None:
            raise IndexError_(f"the index in {self.index_dir} is damaged ({damage}) and could not be "
                              f"started over ({again})")
        where = f"moved to {moved}" if moved else "deleted"
        return f"{damage}; the damaged index was {where}"

    def _try_open(self, writable: bool, deep: bool) -> str | None:
        """Open both stores, or return what is damaged (nothing left open)."""
        folder = self.index_dir
        try:
            manifest = Manifest(folder / MANIFEST_FILE)
        except sqlite3.DatabaseError as exc:
            return sqlite_damage(exc)
        try:
            chunks = manifest.chunk_counts()["chunks"]
            manifest.counts()
            manifest.max_chunk_id()
            problem = manifest.quick_check() if deep else None
            if problem:
                raise sqlite3.DatabaseError(problem)
        except sqlite3.DatabaseError as exc:
            manifest.close()
            return sqlite_damage(exc)
        tantivy_dir, grams_dir = folder / TANTIVY_DIR, folder / GRAMS_DIR
        for name in (TANTIVY_DIR, GRAMS_DIR):
            if chunks and not (folder / name / "meta.json").exists():
                manifest.close()
                return f"the text index is gone ({name}/meta.json is missing)"
        problems = check_segments(manifest, (tantivy_dir, grams_dir), writable)
        if problems:
            manifest.close()
            return f"the text index is damaged: {problems[0]}"
        try:
            try:
                lexical = LexicalIndex(tantivy_dir, grams_dir, writable=writable)
            except LexicalIndexLocked:  # a Sylk without the WriterLock holds Tantivy's lock
                lexical = LexicalIndex(tantivy_dir, grams_dir, writable=False)
                self.read_only_reason = READ_ONLY_REASON
            try:
                lexical.max_chunk_id()  # reads a stored document
            except BaseException:
                lexical.close()
                raise
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # ValueError, OSError, or a Rust panic (pyo3's PanicException)
            manifest.close()
            return f"the text index is damaged: {first_line(exc)}"
        self.manifest, self.lexical = manifest, lexical
        return None

    def start_over(self) -> None:
        """Set the stores of this (writable) folder aside and open fresh, empty ones."""
        with self.index_lock, self.vectors_lock:
            self.lexical.close()
            self.manifest.close()
            set_aside(self.index_dir)
            problem = self._try_open(True, False)
            if problem is not None:
                raise IndexError_(f"the index in {self.index_dir} could not be started over ({problem})")
            for vectors in self.vector_indexes():
                vectors.clear()
            self._next_chunk_id = 0

    # the vectors ----------------------------------------------------------
    def open_vectors(self, model_id: str, dim: int, *, quick: bool = False) -> VectorIndex:
        """The vector index of this folder for a model (``quick``: the quick pass's), opened
        (started over when damaged or of another model: its ``rebuilt_reason``) for the
        caller to reconcile and attach (``vectors``, ``quick``)."""
        return VectorIndex.open(self.index_dir / (QUICK_VECTORS_DIR if quick else VECTORS_DIR), model_id, dim)

    def detach_vectors(self) -> None:
        """The model unloaded: the attached vector indexes saved (a writer's) and let go."""
        with self.vectors_lock:
            self._save_vectors()
            self.vectors = self.quick = None

    def _save_vectors(self) -> None:
        if self.writable:
            for vectors in self.vector_indexes():
                if vectors.dirty:
                    vectors.save()

    # state ----------------------------------------------------------------
    def vector_indexes(self) -> list[VectorIndex]:
        """The vector indexes attached now (the model's, the quick pass's)."""
        return [v for v in (self.vectors, self.quick) if v is not None]

    @property
    def writable(self) -> bool:
        return self.lexical.writable

    @property
    def holds_writer_lock(self) -> bool:
        return self._writer_lock is not None

    @property
    def chunks_left_unloaded(self) -> bool:
        """Chunks left the manifest since open while no vectors were loaded (their saved
        vectors, if any, must go: see integrity.prune_vectors)."""
        first_id, chunks = self._opened
        return self.vectors is None and self.manifest.chunk_counts()["chunks"] < chunks + self._next_chunk_id - first_id

    # writing --------------------------------------------------------------
    def add_chunks(self, rel: str, language: str | None, chunks: Sequence[ChunkRow],
                   file_doc: str = "") -> list[ChunkRecord]:
        """Add a file's parsed chunks (``Parsed.chunks``) to the text index under new chunk
        ids, and its file document (``Parsed.file_doc``: its trigrams) when given, and
        return the manifest rows for the chunks. The caller deleted the file's old
        documents and commits."""
        rows = []
        docs = []
        for c in chunks:
            self._next_chunk_id += 1
            cid = self._next_chunk_id
            docs.append((cid, c.lexical_doc))
            rows.append(ChunkRecord(cid, rel, c.start_line, c.end_line, language, c.type, c.kind, c.symbol,
                                   c.container, c.text_hash, c.embed_text, c.exported))
        self.lexical.add_chunks(docs)
        if file_doc:
            self.lexical.add_file(file_doc)
        return rows

    def apply(self, forget: Sequence[str], *args: Any, **kw: Any) -> None:
        """Write to the manifest (``Manifest.apply``) and drop the vectors of the chunks it
        replaces or deletes (of the files ``forget``), as one step for the embedding thread."""
        with self.vectors_lock:
            attached = self.vector_indexes()
            ids = self.manifest.chunk_ids(forget) if attached and forget else []
            self.manifest.apply(*args, **kw)
            if ids:
                for vectors in attached:
                    vectors.remove(ids)

    # closing --------------------------------------------------------------
    def close(self) -> None:
        """Close every store; a writer saves its vectors first and then says, in the lock
        file, that it closed cleanly."""
        self._save_vectors()
        if self.writable:
            self.manifest.merkle_root()  # kept for the next reader
        self.lexical.close()
        self.manifest.close()
        self._release(clean=True)

    def _release(self, *, clean: bool) -> None:
        if self._writer_lock is not None:
            self._writer_lock.release(clean=clean)
            self._writer_lock = None
