"""Integrity of a workspace's index: one writer, damage found and set aside, drift
between the stores (and the disk) measured and repaired.

An index folder (see indexer.Workspace) holds stores tied together by chunk ids: the
manifest (SQLite: files, chunks, ``embedded`` flags), the text index (Tantivy: one
document per chunk), the vectors (FAISS: one vector per embedded chunk) and the
embedding cache. They are written in an order that keeps what a kill can leave
behind small and findable:

* Tantivy commits before the manifest records the same chunks: a kill in between
  leaves *orphan* documents (chunk ids the manifest never recorded); a file that was
  new then is indexed again as new, so without a repair its documents would be
  doubled;
* vectors are saved before their chunks are marked embedded, and the manifest may
  drop chunks whose vectors are removed only at the next save: a kill leaves vectors
  of chunks that are gone or not marked yet (a manifest write can also commit pending
  flags early, so a chunk can be marked embedded without its vector);
* FAISS files are replaced by rename; a kill mid-save leaves a temporary file.

The defences, in the order an index is opened:

1. ``WriterLock``: one writer per index folder, an advisory lock on ``sylk.lock``
   taken before anything is read, moved or repaired. Another process (a second
   language server, a CLI run) opens the index read-only and says so. The lock file
   also records whether the last writer closed cleanly.
2. ``open_stores``: damage that makes a store unreadable (garbage or truncation in
   the manifest or in Tantivy's files, a lost Tantivy meta.json, a bad schema stamp)
   is found when the index opens; the writer moves the damaged stores aside to
   ``<index dir>.corrupt-<time>`` (keeping the embedding cache, so nothing is embedded
   twice) and starts over, with one message. A reader raises IndexError_ instead.
   Damaged vectors are rebuilt by vectors.VectorIndex.open (from the cache).
3. ``check_on_open``: after an unclean shutdown (or when the document and chunk
   counts differ) the chunk ids of the three stores are compared and the drift
   repaired at once: orphan and duplicate documents deleted, files whose documents
   are missing parsed again, vectors and ``embedded`` flags made to agree.
4. ``verify`` (``sylk status --verify``) counts all of that plus the disk (files not
   indexed, gone, changed) and deep damage (SQLite quick_check, Tantivy checksums);
   ``repair`` (``sylk index --repair``) fixes the stores without a rebuild unless a
   store is damaged; the index run after it brings the disk in.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import struct
import time
import zlib
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..ingest import scan
from ..model import doc_id, is_virtual
from ..store.embedding_cache import EmbeddingCache
from ..store.lexical import LexicalIndex, LexicalIndexLocked
from ..store.manifest import MERKLE_META, Manifest, merkle_root
from ..store.vectors import INDEX_FILE as VECTORS_FILE
from ..store.vectors import META_FILE as VECTORS_META
from ..store.vectors import VectorIndex
from . import documents

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: Tantivy's own writer lock is the guard
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from .indexer import Workspace

LOCK_FILE = "sylk.lock"
MANIFEST_FILE = "manifest.sqlite3"
TANTIVY_DIR = "tantivy"
VECTORS_DIR = "vectors"
READ_ONLY_REASON = "another Sylk process is indexing this workspace; serving its index read-only"
SAMPLES = 5  # paths shown per kind of drift

# Tantivy ends every segment file with a JSON footer, its length and this magic number;
# the footer's crc is the CRC-32 of everything before it.
_TANTIVY_MAGIC = 1337
_SEGMENT_PARTS = ("idx", "pos", "term", "store", "fast", "fieldnorm")


def _index_error(message: str) -> Exception:
    from .indexer import IndexError_

    return IndexError_(message)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]


# --- the writer lock ------------------------------------------------------------------


class WriterLock:
    """The index folder's writer lock: ``flock`` on ``sylk.lock``, held for the life of a
    writing Workspace and dropped by the OS when its process dies. The file says ``open``
    while a writer holds it and ``closed`` after a clean close, so the next writer knows
    whether the last one was killed (``unclean``)."""

    def __init__(self, file: Any, unclean: bool) -> None:
        self._file = file
        self.unclean = unclean

    @classmethod
    def acquire(cls, folder: Path) -> WriterLock | None:
        """The lock, or None when another process (or another Workspace) holds it."""
        fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        f = os.fdopen(fd, "r+b")
        if fcntl is not None:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.close()
                return None
            except OSError:  # a file system without locks: Tantivy's writer lock still guards
                pass
        unclean = f.read(16).startswith(b"open")
        f.seek(0)
        f.truncate()
        f.write(f"open {os.getpid()}\n".encode())
        f.flush()
        return cls(f, unclean)

    def release(self, *, clean: bool = True) -> None:
        if self._file is None:
            return
        with contextlib.suppress(OSError):
            if clean:
                self._file.seek(0)
                self._file.truncate()
                self._file.write(b"closed\n")
                self._file.flush()
        self._file.close()  # closing the file drops the lock
        self._file = None


def writer_active(folder: Path) -> bool:
    """Whether a writer holds the index folder's lock now (another process, or another
    Workspace of this one)."""
    if fcntl is None or not (folder / LOCK_FILE).exists():
        return False
    try:
        with open(folder / LOCK_FILE, "rb") as f:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    except OSError:
        return False
    return False


# --- opening: damage found and set aside ----------------------------------------------


def open_stores(ws: Workspace, writable: bool, *, deep: bool = False) -> str | None:
    """Check the schema stamp and open ``ws.manifest`` and ``ws.lexical``. Returns why the
    index starts over, if it does (one line for the user), else None.

    A writer (holding the WriterLock) sets damaged stores aside and opens fresh ones; a
    reader raises IndexError_. ``deep`` adds SQLite's quick_check (reads the whole
    manifest: after an unclean shutdown, and in the language server)."""
    if not writable:
        problem = ws._check_version(wipe=False)
        if problem:
            raise _index_error(f"the index in {ws.index_dir} cannot be read ({problem}); "
                               "the next 'sylk index' rebuilds it")
        reason = None
    else:
        reason = ws._check_version()
    damage = _try_open(ws, writable, deep)
    if damage is None:
        return reason
    if not writable or ws.read_only_reason is not None:
        raise _index_error(f"the index in {ws.index_dir} is damaged ({damage}); "
                           "the next 'sylk index' rebuilds it")
    moved = set_aside(ws.index_dir)
    again = _try_open(ws, writable, False)
    if again is not None:
        raise _index_error(f"the index in {ws.index_dir} is damaged ({damage}) and could not be "
                           f"started over ({again})")
    where = f"moved to {moved}" if moved else "deleted"
    return f"{damage}; the damaged index was {where}"


# SQLite errors that say nothing about the file's content: never a reason to set it aside
_NOT_DAMAGE = ("locked", "busy", "unable to open", "readonly", "disk i/o", "full")


def _sqlite_damage(exc: sqlite3.DatabaseError) -> str:
    """The damage an SQLite error reports, or IndexError_ for a passing or access problem."""
    text = _first_line(exc)
    if any(word in text.lower() for word in _NOT_DAMAGE):
        raise _index_error(f"cannot open {MANIFEST_FILE}: {text}") from exc
    return f"{MANIFEST_FILE} is damaged: {text}"


def _try_open(ws: Workspace, writable: bool, deep: bool) -> str | None:
    """Open both stores onto ``ws``, or return what is damaged (nothing left open)."""
    folder = ws.index_dir
    try:
        manifest = Manifest(folder / MANIFEST_FILE)
    except sqlite3.DatabaseError as exc:
        return _sqlite_damage(exc)
    try:
        chunks = manifest.chunk_counts()["chunks"]
        manifest.counts()
        manifest.max_chunk_id()
        problem = manifest.quick_check() if deep else None
        if problem:
            raise sqlite3.DatabaseError(problem)
    except sqlite3.DatabaseError as exc:
        manifest.close()
        return _sqlite_damage(exc)
    tantivy_dir = folder / TANTIVY_DIR
    if chunks and not (tantivy_dir / "meta.json").exists():
        manifest.close()
        return f"the text index is gone ({TANTIVY_DIR}/meta.json is missing)"
    problems = _check_segments(manifest, tantivy_dir, writable) if (tantivy_dir / "meta.json").exists() else []
    if problems:
        manifest.close()
        return f"the text index is damaged: {problems[0]}"
    try:
        try:
            lexical = LexicalIndex(tantivy_dir, writable=writable)
        except LexicalIndexLocked:  # a Sylk without the WriterLock holds Tantivy's lock
            lexical = LexicalIndex(tantivy_dir, writable=False)
            ws.read_only_reason = READ_ONLY_REASON
        try:
            lexical.max_chunk_id()  # reads a stored document
        except BaseException:
            lexical.close()
            raise
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # ValueError, OSError, or a Rust panic (pyo3's PanicException)
        manifest.close()
        return f"the text index is damaged: {_first_line(exc)}"
    ws.manifest, ws.lexical = manifest, lexical
    return None


def set_aside(folder: Path) -> Path | None:
    """Move the stores of an index folder to ``<folder>.corrupt-<time>`` (older such
    folders are deleted: one is kept for a bug report), keeping the lock file, the schema
    stamp and the embedding cache. Returns where they went; None when they were deleted
    (the parent folder is not writable)."""
    from .indexer import META_FILE

    keep = {LOCK_FILE, META_FILE}
    for old in folder.parent.glob(f"{folder.name}.corrupt-*"):
        shutil.rmtree(old, ignore_errors=True)
    dest: Path | None = folder.with_name(f"{folder.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        dest.mkdir()  # type: ignore[union-attr]
    except OSError:
        dest = None
    for child in list(folder.iterdir()):
        if child.name in keep or child.name.startswith(EmbeddingCache.FILENAME):
            continue
        if dest is not None:
            try:
                os.replace(child, dest / child.name)
                continue
            except OSError:
                pass
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                child.unlink()
    return dest


def _remove_leftovers(folder: Path) -> None:
    """Temporary files of writes a kill interrupted (FAISS saves, the schema stamp)."""
    for pattern in (f"{VECTORS_DIR}/.{VECTORS_FILE}.*.tmp", f"{VECTORS_DIR}/.{VECTORS_META}.*.tmp",
                    "*.tmp", ".write-test"):
        for p in folder.glob(pattern):
            with contextlib.suppress(OSError):
                p.unlink()


# --- drift between the stores ---------------------------------------------------------


@attrs.define
class StoreDrift:
    """How the manifest, the text index and the vectors disagree, by chunk id."""

    missing: set[int] = attrs.Factory(set)  # manifest chunks without a Tantivy document
    orphans: set[int] = attrs.Factory(set)  # chunk ids in Tantivy the manifest does not know
    orphan_docs: int = 0
    duplicates: set[int] = attrs.Factory(set)  # manifest chunk ids held by several documents
    duplicate_docs: int = 0  # documents beyond the first of each
    vectors_checked: bool = False
    vectors_damage: str | None = None  # the vector files cannot be read
    vectors_without_chunk: set[int] = attrs.Factory(set)
    vectors_not_embedded: set[int] = attrs.Factory(set)  # chunk there, not marked embedded
    embedded_without_vector: set[int] = attrs.Factory(set)

    @property
    def clean(self) -> bool:
        return not (self.missing or self.orphans or self.duplicates or self.vectors_damage
                    or self.vectors_without_chunk or self.vectors_not_embedded or self.embedded_without_vector)


def _open_vectors(ws: Workspace) -> tuple[VectorIndex | None, str | None]:
    """The workspace's vectors (loaded, or read from their folder with the model id and
    dimension they were saved with) and what is wrong with them. (None, None): no vectors."""
    if ws.vectors is not None:
        return ws.vectors, None
    folder = ws.index_dir / VECTORS_DIR
    index_path, meta_path = folder / VECTORS_FILE, folder / VECTORS_META
    if not index_path.exists() and not meta_path.exists():
        return None, None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        model_id, dim = str(meta["model_id"]), int(meta["dim"])
    except FileNotFoundError:
        return None, f"{VECTORS_META} is missing"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, f"{VECTORS_META} is unreadable ({_first_line(exc)})"
    index = VectorIndex.open(folder, model_id, dim)
    if index.rebuilt_reason:
        return None, index.rebuilt_reason
    return index, None


def store_drift(ws: Workspace, *, vectors: bool = True) -> StoreDrift:
    """Compare the chunk ids of the manifest, the text index and (``vectors``) FAISS."""
    drift = StoreDrift()
    chunks = ws.manifest.all_chunk_ids()
    per_id = Counter(ws.lexical.chunk_ids())
    for cid, n in per_id.items():
        if cid not in chunks:
            drift.orphans.add(cid)
            drift.orphan_docs += n
        elif n > 1:
            drift.duplicates.add(cid)
            drift.duplicate_docs += n - 1
    drift.missing = chunks - per_id.keys()
    if vectors:
        drift.vectors_checked = True
        index, drift.vectors_damage = _open_vectors(ws)
        in_faiss = set(index.ids().tolist()) if index is not None else set()
        embedded = ws.manifest.embedded_ids()
        drift.vectors_without_chunk = in_faiss - chunks
        drift.vectors_not_embedded = (in_faiss - embedded) - drift.vectors_without_chunk
        if drift.vectors_damage is None:
            drift.embedded_without_vector = embedded - in_faiss
    return drift


def reconcile_vectors(manifest: Manifest, vectors: VectorIndex) -> tuple[int, int]:
    """Make FAISS hold exactly the vectors of the chunks marked embedded: vectors of chunks
    that are gone or not marked (their save outran the flags' commit) leave, and chunks
    marked embedded without a vector are embedded again (from the cache, without the
    model). Returns (vectors removed, chunks unmarked)."""
    in_faiss = set(vectors.ids().tolist())
    embedded = manifest.embedded_ids()
    extra = in_faiss - embedded
    if extra:
        vectors.remove(sorted(extra))
    missing = embedded - in_faiss
    if missing:
        manifest.set_embedded(sorted(missing), False)
    return len(extra), len(missing)


def prune_vectors(ws: Workspace) -> int:
    """Drop the saved vectors of chunks that left the manifest while the vectors were not
    loaded (an index run without the model, e.g. ``sylk index --no-embed``), so FAISS
    never holds a vector without its chunk. Run by a writer when it closes; returns how
    many went."""
    with ws._vectors_lock:
        index, damage = _open_vectors(ws)
        if index is None or damage is not None:
            return 0  # damaged vectors are rebuilt when they are loaded
        removed, _unmarked = reconcile_vectors(ws.manifest, index)
        if index.dirty:
            index.save()
    return removed


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _repair_stores(ws: Workspace, drift: StoreDrift) -> list[str]:
    """Fix what ``drift`` found; returns what was done, in words."""
    done: list[str] = []
    files: list[str] = []
    with ws._index_lock:
        bad_ids = drift.orphans | drift.duplicates
        if bad_ids:
            ws.lexical.delete_chunk_ids(sorted(bad_ids))
            ws.lexical.commit()
            if drift.orphan_docs:
                done.append(f"deleted {_plural(drift.orphan_docs, 'orphan text document')}")
            if drift.duplicates:
                done.append(f"deleted the {_plural(drift.duplicate_docs + len(drift.duplicates), 'document')} "
                            f"of {_plural(len(drift.duplicates), 'duplicated chunk')}")
        owners = drift.missing | drift.duplicates
        if owners:
            files = sorted({r.path for r in ws.manifest.chunks_by_id(sorted(owners)).values()})
            # parsed again as changed files: their documents (if any) go, new ones come
            ws.manifest.invalidate(files)
    if files:
        for path in [f for f in files if is_virtual(f)]:  # their text is in the manifest
            doc = documents.get(ws, doc_id(path))
            if doc is not None:
                documents.index_document(ws, doc.id, doc.text, type=doc.type, title=doc.title, tags=doc.tags,
                                         metadata=doc.metadata)
        ws.index(paths=[f for f in files if not is_virtual(f)])
        done.append(f"indexed {_plural(len(files), 'file')} again "
                    f"({_plural(len(drift.missing), 'chunk')} had no text document)")
    if drift.vectors_checked:
        done.extend(_repair_vectors(ws, drift.vectors_damage))
    return done


def _repair_vectors(ws: Workspace, damage: str | None) -> list[str]:
    if damage is not None:
        folder = ws.index_dir / VECTORS_DIR
        for name in (VECTORS_FILE, VECTORS_META):
            with contextlib.suppress(OSError):
                (folder / name).unlink()
        if ws.vectors is not None:
            ws.vectors.clear()
        ws.manifest.reset_embedded()
        return [f"started the vectors over ({damage}); they are rebuilt from the embedding cache"]
    with ws._vectors_lock:
        index, _ = _open_vectors(ws)
        if index is None:
            index_gone = ws.manifest.embedded_ids()
            if index_gone:
                ws.manifest.set_embedded(sorted(index_gone), False)
                return [f"marked {_plural(len(index_gone), 'chunk')} to embed again (no vectors saved)"]
            return []
        removed, unmarked = reconcile_vectors(ws.manifest, index)
        if index is not ws.vectors and index.dirty:
            index.save()
    done = []
    if removed:
        done.append(f"removed {_plural(removed, 'stale vector')}")
    if unmarked:
        done.append(f"marked {_plural(unmarked, 'chunk')} to embed again")
    return done


def check_on_open(ws: Workspace, unclean: bool) -> str | None:
    """The cheap check a writer runs when it opens the index, and the repair of what it
    finds. Cheap: two counts, unless the last writer was killed (``unclean``): then the
    chunk ids of all three stores. Returns one line for the user, or None."""
    _remove_leftovers(ws.index_dir)
    if unclean:
        ws.lexical.garbage_collect()
    elif ws.manifest.chunk_counts()["chunks"] == ws.lexical.num_docs():
        return None
    drift = store_drift(ws, vectors=unclean)
    if drift.clean:
        return None
    done = _repair_stores(ws, drift)
    when = "after an unclean shutdown" if unclean else "on open"
    return f"repaired the index {when}: {'; '.join(done)}"


# --- verify ---------------------------------------------------------------------------


CHECKED_META = "tantivy_checked"  # manifest meta: segment files whose checksum was right


def _check_segments(manifest: Manifest, folder: Path, writable: bool) -> list[str]:
    """_tantivy_damage for the segment files not checked before: Tantivy's segment files
    never change once committed, so each is read once (the checked ones are remembered
    by name, size and mtime in the manifest); a garbled one would make searches fail, or
    panic, later."""
    try:
        checked = json.loads(manifest.get_meta(CHECKED_META) or "{}")
        if not isinstance(checked, dict):
            checked = {}
    except ValueError:
        checked = {}
    seen: dict[str, list[int]] = {}
    problems = _tantivy_damage(folder, checked, seen)
    if writable and not problems and seen != checked:
        manifest.set_meta(**{CHECKED_META: json.dumps(seen, separators=(",", ":"))})
    return problems


def _tantivy_damage(folder: Path, checked: dict | None = None, seen: dict | None = None) -> list[str]:
    """Checksum every file of the committed segments (Tantivy itself checks only the
    footers, when it opens them). Files in ``checked`` with the same [size, mtime_ns]
    are skipped; ``seen`` receives the [size, mtime_ns] of every file found sound."""
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        segments = meta["segments"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"{TANTIVY_DIR}/meta.json: {_first_line(exc)}"]
    problems = []
    for seg in segments:
        sid = str(seg.get("segment_id", "")).replace("-", "")
        names = [f"{sid}.{part}" for part in _SEGMENT_PARTS]
        deletes = seg.get("deletes")
        if deletes:
            names.append(f"{sid}.{deletes.get('opstamp')}.del")
        for name in names:
            path = folder / name
            try:
                st = path.stat()
            except OSError:
                if name.endswith(".del"):
                    problems.append(f"{TANTIVY_DIR}/{name}: missing")
                continue
            stamp = [st.st_size, st.st_mtime_ns]
            if checked is not None and checked.get(name) == stamp:
                problem = None
            else:
                problem = _footer_problem(path)
            if problem:
                problems.append(f"{TANTIVY_DIR}/{name}: {problem}")
            elif seen is not None:
                seen[name] = stamp
    return problems


def _footer_problem(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < 8:
                return "truncated"
            f.seek(size - 8)
            length, magic = struct.unpack("<II", f.read(8))
            if magic != _TANTIVY_MAGIC or length + 8 > size:
                return "no valid footer"
            f.seek(size - 8 - length)
            footer = json.loads(f.read(length))
            f.seek(0)
            crc, left = 0, size - 8 - length
            while left:
                block = f.read(min(left, 1 << 20))
                if not block:
                    return "truncated"
                crc = zlib.crc32(block, crc)
                left -= len(block)
    except FileNotFoundError:
        return "missing"
    except (OSError, ValueError, struct.error) as exc:
        return _first_line(exc)
    if not isinstance(footer, dict) or footer.get("crc") != crc:
        return "checksum mismatch"
    return None


@attrs.define
class Verification:
    """What ``sylk status --verify`` found."""

    damage: list[str]
    stores: StoreDrift
    not_indexed: list[str]
    gone: list[str]
    changed: list[str]
    manifest_root: str  # computed now from the manifest's files
    stored_root: str | None  # as kept in the manifest (None: not computed since the last change)
    disk_root: str
    writer_active: bool = False

    def counts(self) -> dict[str, int]:
        s = self.stores
        return {
            "filesNotIndexed": len(self.not_indexed),
            "filesGone": len(self.gone),
            "filesChanged": len(self.changed),
            "chunksWithoutDocument": len(s.missing),
            "orphanDocuments": s.orphan_docs,
            "duplicateDocuments": s.duplicate_docs,
            "vectorsWithoutChunk": len(s.vectors_without_chunk),
            "vectorsNotEmbedded": len(s.vectors_not_embedded),
            "embeddedWithoutVector": len(s.embedded_without_vector),
            "staleMerkleRoot": int(self.stored_root is not None and self.stored_root != self.manifest_root),
        }

    @property
    def clean(self) -> bool:
        return not self.damage and not any(self.counts().values())

    def to_json(self) -> dict[str, Any]:
        return {
            "clean": self.clean,
            "drift": self.counts(),
            "damage": self.damage,
            "samples": {"filesNotIndexed": self.not_indexed[:SAMPLES], "filesGone": self.gone[:SAMPLES],
                        "filesChanged": self.changed[:SAMPLES]},
            "merkleRoot": {"manifest": self.manifest_root, "disk": self.disk_root},
            "writerActive": self.writer_active,
        }


def verify(ws: Workspace, *, disk: bool = True) -> Verification:
    """Compare the manifest, the text index, the vectors and (``disk``) the files on disk.
    Reads only: safe on a read-only Workspace. Deep checks too: SQLite's quick_check and
    the checksums of Tantivy's segment files."""
    damage: list[str] = []
    problem = ws.manifest.quick_check()
    if problem:
        damage.append(f"{MANIFEST_FILE}: {problem}")
    damage.extend(_tantivy_damage(ws.index_dir / TANTIVY_DIR))
    stores = store_drift(ws, vectors=True)
    if stores.vectors_damage:
        damage.append(f"vectors: {stores.vectors_damage}")
    files = ws.manifest.files()
    manifest_root = merkle_root(sorted((p, r.hash) for p, r in files.items()))
    if disk:
        not_indexed, gone, changed, hashes = _disk_drift(ws, files)
        disk_root = merkle_root(sorted(hashes.items()))
    else:
        not_indexed, gone, changed, disk_root = [], [], [], manifest_root
    other_writer = ws._writer_lock is None and writer_active(ws.index_dir)
    return Verification(damage, stores, not_indexed, gone, changed, manifest_root,
                        ws.manifest.get_meta(MERKLE_META), disk_root, other_writer)


def _disk_drift(ws: Workspace, files: dict) -> tuple[list[str], list[str], list[str], dict[str, str]]:
    """Files on disk the index lacks, indexed files gone, and indexed files whose content
    differs: a file whose size and mtime match the manifest's is taken as unchanged,
    others are hashed. Also the (path, hash) of every indexable file on disk."""
    result = scan.scan_workspace(ws.root, exclude=ws.settings.exclude, max_file_size=ws.settings.max_file_size)
    hashes: dict[str, str] = {}
    not_indexed: list[str] = []
    changed: list[str] = []
    for f in result.files:
        rec = files.get(f.rel)
        if rec is not None and (rec.size, rec.mtime_ns) == (f.size, f.mtime_ns):
            hashes[f.rel] = rec.hash
            continue
        try:
            src = scan.load_source(ws.root / f.rel, ws.settings.max_file_size)
        except scan.SkipFile:
            continue  # binary, unreadable: never indexed
        hashes[f.rel] = src.content_hash
        if rec is None:
            not_indexed.append(f.rel)
        elif src.content_hash != rec.hash:
            changed.append(f.rel)
    for p, rec in files.items():  # virtual documents (documents.py) live in the manifest, not on disk
        if is_virtual(p):
            hashes[p] = rec.hash
    gone = sorted(p for p in files if p not in hashes)
    return not_indexed, gone, changed, hashes


# --- repair ---------------------------------------------------------------------------


@attrs.define
class RepairReport:
    done: list[str] = attrs.Factory(list)
    rebuilt: str | None = None  # why the stores started over

    def summary(self) -> str:
        if self.rebuilt:
            return f"the index was damaged ({self.rebuilt}); it is rebuilt"
        return "; ".join(self.done) if self.done else "nothing to repair"


def repair(ws: Workspace) -> RepairReport:
    """Fix the drift between the stores without a rebuild: orphan and duplicate documents
    deleted, files whose documents are missing indexed again, vectors and flags made to
    agree, the Merkle root recomputed. A damaged manifest or text index is set aside and
    started over instead (the index run that follows fills it). Drift against the disk
    is left to that index run (``sylk index --repair`` runs it)."""
    if not ws.writable:
        raise _index_error(ws.read_only_reason or "the index is read-only")
    report = RepairReport()
    damage = []
    problem = ws.manifest.quick_check()
    if problem:
        damage.append(f"{MANIFEST_FILE}: {problem}")
    damage.extend(_tantivy_damage(ws.index_dir / TANTIVY_DIR))
    if damage:
        report.rebuilt = "; ".join(damage)
        _start_over(ws)
        return report
    report.done = _repair_stores(ws, store_drift(ws, vectors=True))
    stored = ws.manifest.get_meta(MERKLE_META)
    if stored is not None:
        files = ws.manifest.files()
        if stored != merkle_root(sorted((p, r.hash) for p, r in files.items())):
            ws.manifest.set_meta(**{MERKLE_META: ""})
            ws.manifest.merkle_root()
            report.done.append("recomputed the Merkle root")
    return report


def _start_over(ws: Workspace) -> None:
    """Set the stores of an open writable Workspace aside and open fresh ones."""
    with ws._index_lock, ws._vectors_lock:
        ws.lexical.close()
        ws.manifest.close()
        set_aside(ws.index_dir)
        problem = _try_open(ws, True, False)
        if problem is not None:
            raise _index_error(f"the index in {ws.index_dir} could not be started over ({problem})")
        if ws.vectors is not None:
            ws.vectors.clear()
        ws._table = None
        ws._next_chunk_id = 0
