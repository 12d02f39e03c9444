"""Integrity of a workspace's index: one writer, damage found and set aside, drift
between the stores (and the disk) measured and repaired.

An index folder (see stores.Stores, damage) holds stores tied together by chunk ids: the
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
2. ``Stores.open``: damage that makes a store unreadable (garbage or truncation in
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

import json
from collections import Counter
from collections.abc import Callable

import attrs

from ..config import Settings
from ..errors import IndexError_, first_line
from ..ingest import scan
from ..model import is_virtual
from ..ingest.grams import path_key
from .damage import remove_leftovers, tantivy_damage, writer_active
from .layout import MANIFEST_FILE, TEXT_INDEX_DIRS, VECTORS_DIR, remove_named
from .manifest import MERKLE_META, Manifest, merkle_root
from .stores import Stores
from .vectors import INDEX_FILE as VECTORS_FILE
from .vectors import META_FILE as VECTORS_META
from .vectors import VectorIndex

SAMPLES = 5  # paths shown per kind of drift
# Indexes files again (virtual documents from their stored text): the engine's part of a repair.
Reindex = Callable[[list[str]], None]


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


def _open_vectors(stores: Stores) -> tuple[VectorIndex | None, str | None]:
    """The workspace's vectors (loaded, or read from their folder with the model id and
    dimension they were saved with) and what is wrong with them. (None, None): no vectors."""
    if stores.vectors is not None:
        return stores.vectors, None
    folder = stores.index_dir / VECTORS_DIR
    index_path, meta_path = folder / VECTORS_FILE, folder / VECTORS_META
    if not index_path.exists() and not meta_path.exists():
        return None, None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        model_id, dim = str(meta["model_id"]), int(meta["dim"])
    except FileNotFoundError:
        return None, f"{VECTORS_META} is missing"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, f"{VECTORS_META} is unreadable ({first_line(exc)})"
    index = VectorIndex.open(folder, model_id, dim)
    if index.rebuilt_reason:
        return None, index.rebuilt_reason
    return index, None


def store_drift(stores: Stores, *, vectors: bool = True) -> StoreDrift:
    """Compare the chunk ids of the manifest, the text index and (``vectors``) FAISS."""
    drift = StoreDrift()
    chunks = stores.manifest.all_chunk_ids()
    per_id = Counter(stores.lexical.chunk_ids())
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
        index, drift.vectors_damage = _open_vectors(stores)
        in_faiss = set(index.ids().tolist()) if index is not None else set()
        embedded = stores.manifest.embedded_ids()
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


def prune_vectors(stores: Stores) -> int:
    """Drop the saved vectors of chunks that left the manifest while the vectors were not
    loaded (an index run without the model, e.g. ``sylk index --no-embed``), so FAISS
    never holds a vector without its chunk. Run by a writer when it closes; returns how
    many went."""
    with stores.vectors_lock:
        index, damage = _open_vectors(stores)
        if index is None or damage is not None:
            return 0  # damaged vectors are rebuilt when they are loaded
        removed, _unmarked = reconcile_vectors(stores.manifest, index)
        if index.dirty:
            index.save()
    return removed


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _repair_stores(stores: Stores, drift: StoreDrift, reindex: Reindex) -> list[str]:
    """Fix what ``drift`` found; returns what was done, in words."""
    done: list[str] = []
    files: list[str] = []
    with stores.index_lock:
        bad_ids = drift.orphans | drift.duplicates
        if bad_ids:
            stores.lexical.delete_chunk_ids(sorted(bad_ids))
            stores.lexical.commit()
            if drift.orphan_docs:
                done.append(f"deleted {_plural(drift.orphan_docs, 'orphan text document')}")
            if drift.duplicates:
                done.append(f"deleted the {_plural(drift.duplicate_docs + len(drift.duplicates), 'document')} "
                            f"of {_plural(len(drift.duplicates), 'duplicated chunk')}")
        owners = drift.missing | drift.duplicates
        if owners:
            files = sorted({r.path for r in stores.manifest.chunks_by_id(sorted(owners)).values()})
            # parsed again as changed files: their documents (if any) go, new ones come
            stores.manifest.invalidate(files)
    if files:
        reindex(files)
        done.append(f"indexed {_plural(len(files), 'file')} again "
                    f"({_plural(len(drift.missing), 'chunk')} had no text document)")
    if drift.vectors_checked:
        done.extend(_repair_vectors(stores, drift.vectors_damage))
    return done


def _repair_vectors(stores: Stores, damage: str | None) -> list[str]:
    if damage is not None:
        remove_named(stores.index_dir / VECTORS_DIR, (VECTORS_FILE, VECTORS_META))
        if stores.vectors is not None:
            stores.vectors.clear()
        stores.manifest.reset_embedded()
        return [f"started the vectors over ({damage}); they are rebuilt from the embedding cache"]
    with stores.vectors_lock:
        index, _ = _open_vectors(stores)
        if index is None:
            index_gone = stores.manifest.embedded_ids()
            if index_gone:
                stores.manifest.set_embedded(sorted(index_gone), False)
                return [f"marked {_plural(len(index_gone), 'chunk')} to embed again (no vectors saved)"]
            return []
        removed, unmarked = reconcile_vectors(stores.manifest, index)
        if index is not stores.vectors and index.dirty:
            index.save()
    done = []
    if removed:
        done.append(f"removed {_plural(removed, 'stale vector')}")
    if unmarked:
        done.append(f"marked {_plural(unmarked, 'chunk')} to embed again")
    return done


def check_on_open(stores: Stores, reindex: Reindex) -> str | None:
    """The cheap check a writer runs when it opens the index, and the repair of what it
    finds. Cheap: two counts, unless the last writer was killed (``unclean``): then the
    chunk ids of all three stores. Returns one line for the user, or None."""
    unclean = stores.unclean
    remove_leftovers(stores.index_dir)
    if unclean:
        stores.lexical.garbage_collect()
    done: list[str] = []
    if unclean or stores.manifest.chunk_counts()["chunks"] != stores.lexical.num_docs():
        drift = store_drift(stores, vectors=unclean)
        if not drift.clean:
            done += _repair_stores(stores, drift, reindex)
    done += _repair_file_documents(stores, reindex)
    if not done:
        return None
    when = "after an unclean shutdown" if unclean else "on open"
    return f"repaired the index {when}: {'; '.join(done)}"


def _repair_file_documents(stores: Stores, reindex: Reindex) -> list[str]:
    """Index again the files without a document in the trigram index (exact and regex
    search would never read them). Written with the chunks, before the manifest, so none
    is missing but after damage; cheap: a count, then the keys only when it differs."""
    if stores.lexical.file_count() == stores.manifest.counts()["files"]:
        return []  # (counts only: the paths are read when they differ)
    files = stores.manifest.file_languages()
    held = set(stores.lexical.file_keys())
    lacking = sorted(p for p in files if path_key(p) not in held)
    if not lacking:
        return []
    with stores.index_lock:
        stores.manifest.invalidate(lacking)
    reindex(lacking)
    return [f"indexed {_plural(len(lacking), 'file')} again (no trigram document)"]


# --- verify ---------------------------------------------------------------------------


@attrs.frozen
class DriftCounts:
    """How many things of each kind disagree between the manifest, the stores and the disk."""

    files_not_indexed: int
    files_gone: int
    files_changed: int
    chunks_without_document: int
    orphan_documents: int
    duplicate_documents: int
    vectors_without_chunk: int
    vectors_not_embedded: int
    embedded_without_vector: int
    stale_merkle_root: int  # 1 when the root kept in the manifest is out of date


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

    def counts(self) -> DriftCounts:
        s = self.stores
        return DriftCounts(
            files_not_indexed=len(self.not_indexed), files_gone=len(self.gone), files_changed=len(self.changed),
            chunks_without_document=len(s.missing), orphan_documents=s.orphan_docs,
            duplicate_documents=s.duplicate_docs, vectors_without_chunk=len(s.vectors_without_chunk),
            vectors_not_embedded=len(s.vectors_not_embedded), embedded_without_vector=len(s.embedded_without_vector),
            stale_merkle_root=int(self.stored_root is not None and self.stored_root != self.manifest_root))

    @property
    def clean(self) -> bool:
        return not self.damage and not any(attrs.astuple(self.counts()))


def verify(stores: Stores, settings: Settings, *, disk: bool = True) -> Verification:
    """Compare the manifest, the text index, the vectors and (``disk``) the files on disk.
    Reads only: safe on a read-only Workspace. Deep checks too: SQLite's quick_check and
    the checksums of Tantivy's segment files."""
    damage: list[str] = []
    problem = stores.manifest.quick_check()
    if problem:
        damage.append(f"{MANIFEST_FILE}: {problem}")
    damage.extend(p for name in TEXT_INDEX_DIRS for p in tantivy_damage(stores.index_dir / name))
    drift = store_drift(stores, vectors=True)
    if drift.vectors_damage:
        damage.append(f"vectors: {drift.vectors_damage}")
    files = stores.manifest.files()
    manifest_root = merkle_root(sorted((p, r.hash) for p, r in files.items()))
    if disk:
        not_indexed, gone, changed, hashes = _disk_drift(stores, settings, files)
        disk_root = merkle_root(sorted(hashes.items()))
    else:
        not_indexed, gone, changed, disk_root = [], [], [], manifest_root
    other_writer = not stores.holds_writer_lock and writer_active(stores.index_dir)
    return Verification(damage, drift, not_indexed, gone, changed, manifest_root,
                        stores.manifest.get_meta(MERKLE_META), disk_root, other_writer)


def _disk_drift(stores: Stores, settings: Settings, files: dict) -> tuple[list[str], list[str], list[str], dict[str, str]]:
    """Files on disk the index lacks, indexed files gone, and indexed files whose content
    differs: a file whose size and mtime match the manifest's is taken as unchanged,
    others are hashed. Also the (path, hash) of every indexable file on disk."""
    result = scan.scan_workspace(stores.root, exclude=settings.exclude, max_file_size=settings.max_file_size)
    hashes: dict[str, str] = {}
    not_indexed: list[str] = []
    changed: list[str] = []
    for f in result.files:
        rec = files.get(f.rel)
        if rec is not None and (rec.size, rec.mtime_ns) == (f.size, f.mtime_ns):
            hashes[f.rel] = rec.hash
            continue
        try:
            src = scan.load_source(stores.root / f.rel, settings.max_file_size)
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


def repair(stores: Stores, reindex: Reindex) -> RepairReport:
    """Fix the drift between the stores without a rebuild: orphan and duplicate documents
    deleted, files whose documents are missing indexed again, vectors and flags made to
    agree, the Merkle root recomputed. A damaged manifest or text index is set aside and
    started over instead (the index run that follows fills it). Drift against the disk
    is left to that index run (``sylk index --repair`` runs it)."""
    if not stores.writable:
        raise IndexError_(stores.read_only_reason or "the index is read-only")
    report = RepairReport()
    damage = []
    problem = stores.manifest.quick_check()
    if problem:
        damage.append(f"{MANIFEST_FILE}: {problem}")
    damage.extend(p for name in TEXT_INDEX_DIRS for p in tantivy_damage(stores.index_dir / name))
    if damage:
        report.rebuilt = "; ".join(damage)
        stores.start_over()
        return report
    report.done = _repair_stores(stores, store_drift(stores, vectors=True), reindex)
    stored = stores.manifest.get_meta(MERKLE_META)
    if stored is not None:
        files = stores.manifest.files()
        if stored != merkle_root(sorted((p, r.hash) for p, r in files.items())):
            stores.manifest.set_meta(**{MERKLE_META: ""})
            stores.manifest.merkle_root()
            report.done.append("recomputed the Merkle root")
    return report
