"""Indexing a workspace: scan, diff against the manifest, parse what changed, store.

``Workspace`` is the core object both front ends (LSP server, CLI) drive. It
owns the index folder of one workspace root: the Tantivy index, the SQLite
manifest and the in-memory symbol table served to ``workspace/symbol``.

Parsing runs in worker processes (tree-sitter holds the GIL during query
matching), the main process feeds Tantivy and the manifest. The symbol table is
updated file by file, so searches during the first index see what is done.
"""

from __future__ import annotations

import bisect
import concurrent.futures as cf
import json
import multiprocessing
import os
import shutil
import stat as stat_mod
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import attrs
import numpy as np

from ..config import Settings, cache_root, index_dir_for
from ..embed.embedder import Embedder, embed_cached, load_embedder
from ..errors import IndexError_
from ..ingest import gitsync, scan
from ..ingest.parsing import Parsed, exit_with_parent, parse_batch, parse_file
from ..ingest.symbols import decode_symbols, extract_for_path
from ..model import doc_id, is_virtual
from ..search.hybrid import HybridSearch, SearchResult
from ..search.query import SearchRequest
from ..search.symbol_search import SymbolHit, SymbolTable
from ..store import integrity
from ..store.embedding_cache import EmbeddingCache
from ..store.layout import SCHEMA_VERSION
from ..store.lexical import LexicalIndex
from ..store.manifest import FileRecord, Manifest
from ..store.stores import Stores
from ..store.vectors import VectorIndex
from . import documents

# Below this many files to parse, a process pool costs more than it saves.
POOL_THRESHOLD = 48
COMMIT_EVERY_S = 10.0


@attrs.frozen
class Progress:
    phase: str  # "scan" | "index" | "commit" | "done"
    done: int
    total: int
    message: str = ""


@attrs.define
class IndexReport:
    added: int = 0
    changed: int = 0
    deleted: int = 0
    unchanged: int = 0
    files: int = 0
    symbols: int = 0
    skipped: Counter = attrs.field(factory=Counter)
    replaced_utf8: int = 0
    seconds: float = 0.0
    cancelled: bool = False

    def summary(self) -> str:
        parts = [f"{self.files} files, {self.symbols} symbols indexed in {self.seconds:.2f}s",
                 f"{self.added} added, {self.changed} changed, {self.deleted} deleted, {self.unchanged} unchanged"]
        if self.skipped:
            parts.append("skipped: " + ", ".join(f"{n} {r}" for r, n in sorted(self.skipped.items())))
        if self.replaced_utf8:
            parts.append(f"{self.replaced_utf8} with invalid UTF-8 (decoded with replacement characters)")
        if self.cancelled:
            parts.append("cancelled")
        return "; ".join(parts)


SYNC_META = "sync_state"  # the git state at the last complete run (gitsync), JSON
MAX_TOUCHED = 5000
INDEX_SIZE_TTL_S = 5.0


@attrs.define
class _Plan:
    """What an index run does: files to parse (with their known hash), to delete, skipped."""
    known: dict[str, FileRecord]
    todo: list[tuple[scan.FileEntry, str | None]] = attrs.Factory(list)
    deleted: list[str] = attrs.Factory(list)
    skipped: list[tuple] = attrs.Factory(list)  # (rel, reason[, size, mtime_ns])
    unchanged: int = 0
    full: bool = False  # the whole tree was walked
    git: gitsync.GitState | None = None  # the git state to record at the end


class Workspace:
    """One workspace root and its index folder."""

    def __init__(self, root: Path, settings: Settings | None = None, *, writable: bool = True,
                 load_symbols: bool = False) -> None:
        self.root = root.resolve()
        self.settings = settings or Settings()
        self.index_dir = index_dir_for(self.root, self.settings)
        # The in-memory symbol table, loaded from the manifest on first use (or at
        # open with load_symbols=True) and kept current by indexing from then on.
        self._table: SymbolTable | None = None
        self._ignore: scan.IgnoreMatcher | None = None
        self._table_lock = threading.Lock()
        # semantic side: loaded on demand (load_semantic), None until then or when unavailable
        self.embedder: Embedder | None = None
        self.semantic_message: str | None = None  # why semantic search is unavailable
        self._semantic_lock = threading.Lock()
        self._semantic_tried = False
        self._embed_lock = threading.Lock()
        self._priority_lock = threading.Lock()
        self._unsaved: dict[str, bool] = {}  # files whose symbols come from an editor buffer
        self._size_cache: tuple[float, int] | None = None  # (when, bytes) of the index folder
        self._reader_stamp: str | None = None  # the writer's last run seen (follow_writer), set at open
        self._priority: dict[str, None] = {}  # paths to embed next, in order
        self._open(writable, load_symbols)
        if not self.writable:  # what was opened is current; follow_writer() reloads after the writer's runs
            self._reader_stamp = self.manifest.get_meta("last_indexed")

    # opening ------------------------------------------------------------
    def _open(self, writable: bool, load_symbols: bool) -> None:
        # one writer per index folder; damaged stores are set aside (store.stores, store.damage)
        self.stores = Stores.open(self.root, self.index_dir, writable=writable, deep=load_symbols)
        self.rebuilt_reason = self.stores.rebuilt_reason
        # what check_on_open repaired (orphan documents after a kill, ...), for the user
        self.repair_note = integrity.check_on_open(self.stores, self.reindex_files) if self.writable else None
        if load_symbols:
            self._load_table()

    # the stores, as the rest of the engine and the front ends read them
    @property
    def manifest(self) -> Manifest:
        return self.stores.manifest

    @property
    def lexical(self) -> LexicalIndex:
        return self.stores.lexical

    @property
    def vectors(self) -> VectorIndex | None:
        return self.stores.vectors

    @property
    def read_only_reason(self) -> str | None:
        return self.stores.read_only_reason

    def reindex_files(self, files: list[str]) -> None:
        """Index files again, virtual documents from their stored text (a repair's last step)."""
        for path in [f for f in files if is_virtual(f)]:
            doc = documents.get(self, doc_id(path))
            if doc is not None:
                documents.index_document(self, doc.id, doc.text, type=doc.type, title=doc.title, tags=doc.tags,
                                         metadata=doc.metadata)
        self.index(paths=[f for f in files if not is_virtual(f)])

    def verify(self, *, disk: bool = True) -> integrity.Verification:
        """``sylk status --verify``: drift between the stores and the disk (reads only)."""
        return integrity.verify(self.stores, self.settings, disk=disk)

    def repair(self) -> integrity.RepairReport:
        """``sylk index --repair``: fix the drift between the stores (see integrity.repair)."""
        report = integrity.repair(self.stores, self.reindex_files)
        if report.rebuilt:
            self._table = None
        return report

    def _load_table(self) -> SymbolTable:
        with self._table_lock:
            if self._table is None:
                table = SymbolTable()
                table.replace_all(self.manifest.symbols_by_path())
                self._table = table
            return self._table

    @property
    def table(self) -> SymbolTable:
        return self._table if self._table is not None else self._load_table()

    def _table_remove(self, rel: str) -> None:
        if self._table is not None and rel not in self._unsaved:
            self._table.remove_file(rel)

    def _table_set(self, rel: str, symbol_data: str) -> None:
        if self._table is not None and rel not in self._unsaved:
            self._table.set_file(rel, decode_symbols(symbol_data))

    def set_unsaved(self, rel: str, source: bytes | None) -> None:
        """Serve the symbols of ``rel`` from an editor buffer's unsaved text (``source``), or,
        with None, from the indexed file again. Only workspace symbols change: the stores
        hold what is on disk, and indexing runs leave a buffer's symbols alone."""
        table = self.table
        if source is None:
            if self._unsaved.pop(rel, None) is None:
                return
            stored = self.manifest.symbols_of(rel)
            if stored is None:
                table.remove_file(rel)
            else:
                table.set_file(rel, stored)
        else:
            self._unsaved[rel] = True
            table.set_file(rel, extract_for_path(rel, source))
        table.warm()

    def follow_writer(self) -> bool:
        """A read-only index (another process writes it): reload the text searcher and the
        symbol table when the writer finished a run since the last call (the manifest
        follows the writer's commits by itself). Vectors are not reloaded: a reader's
        semantic results cover what was embedded when it opened. True if reloaded."""
        if self.writable:
            return False
        stamp = self.manifest.get_meta("last_indexed")
        if stamp == self._reader_stamp:
            return False
        self._reader_stamp = stamp
        self.lexical.reload()
        if self._table is not None:
            self._table.replace_all(self.manifest.symbols_by_path())
            self._table.warm()
        return True

    def keep_unsaved(self, rel: str) -> None:
        """The buffer of ``rel`` was saved: indexing takes over its symbols from here."""
        self._unsaved.pop(rel, None)

    @property
    def writable(self) -> bool:
        return self.lexical.writable

    def close(self) -> None:
        with self._embed_lock:
            if self.writable and self.stores.chunks_left_unloaded:
                integrity.prune_vectors(self.stores)  # chunks left while the vectors were not loaded
            self.stores.close()  # saves the vectors, then says the index was closed cleanly

    # semantic side --------------------------------------------------------
    def load_semantic(self) -> str | None:
        """Load the embedding model and the vector index (once). Returns a message for
        the user when semantic search is unavailable or had to start over, else None."""
        with self._semantic_lock:
            if self._semantic_tried:
                return None
            self._semantic_tried = True
            embedder, message = load_embedder(self.settings.embedding, cache_root())
            if embedder is None:
                self.semantic_message = message or "no embedding model could be loaded"
                return f"{self.semantic_message}; serving lexical results only"
            vectors = VectorIndex.open(self.index_dir / "vectors", embedder.model_id, embedder.dim)
            note = None
            if vectors.rebuilt_reason and self.writable:
                self.manifest.reset_embedded()
                note = vectors.rebuilt_reason
            if self.writable:  # a reader changes nothing: the writer reconciles
                self._reconcile(vectors)
            self.embedder, self.stores.vectors = embedder, vectors
            return note

    def _reconcile(self, vectors: VectorIndex) -> None:
        """Make the manifest and the vectors agree after a crash or an index run without the
        model: vectors of chunks that are gone (or not marked embedded) leave, chunks
        marked embedded without a vector are embedded again."""
        with self.stores.vectors_lock:
            integrity.reconcile_vectors(self.manifest, vectors)

    @property
    def semantic_ready(self) -> bool:
        return self.embedder is not None and self.vectors is not None

    def prioritize(self, paths: Iterable[str]) -> None:
        """Embed the pending chunks of ``paths`` next (files opened or saved in the editor),
        also when a long embedding pass is already running."""
        with self._priority_lock:
            for p in paths:
                self._priority[p] = None

    def _take_priority(self) -> list[str]:
        with self._priority_lock:
            paths = list(self._priority)
            self._priority.clear()
            return paths

    def embed_pending(self, progress: Callable[[int, int], None] | None = None,
                      cancel: threading.Event | None = None, first_paths: Sequence[str] = (),
                      batch: int = 256, save_every_s: float = 30.0) -> int:
        """Embed every chunk not embedded yet; returns how many. Order: ``first_paths``
        and paths given to prioritize() (also while running), then the most recently
        modified files. When another pass is running, ``first_paths`` join its queue and
        this call returns 0 at once.

        Cached vectors (same model, same text) are reused without running the model.
        Vectors are saved before the manifest marks their chunks embedded, so a crash
        loses at most the work since the last save."""
        if not self.writable or self.embedder is None or self.vectors is None:
            return 0
        cancel = cancel or threading.Event()
        self.prioritize(first_paths)
        done = 0
        # The lock is tried again after a pass: a path queued by a caller that found the
        # lock taken just as the pass ran out of work is not left waiting.
        while not cancel.is_set() and self._embed_lock.acquire(blocking=False):
            try:
                done += self._embed_locked(progress, cancel, batch, save_every_s)
            finally:
                self._embed_lock.release()
            with self._priority_lock:
                if not self._priority:
                    break
        return done

    def _embed_locked(self, progress: Callable[[int, int], None] | None, cancel: threading.Event,
                      batch: int, save_every_s: float) -> int:
        embedder, vectors = self.embedder, self.vectors
        assert embedder is not None and vectors is not None
        total = self.manifest.chunk_counts()["pending"]
        done = 0
        last_save = time.monotonic()
        order: list[int] = []
        pos = 0
        if progress:
            progress(0, total)
        with EmbeddingCache.open(self.index_dir) as cache:
            while not cancel.is_set():
                rows = self.manifest.pending_for_paths(self._take_priority())
                if not rows:
                    if pos >= len(order):  # the order is used up: what is pending now (new chunks too)
                        order, pos = self.manifest.pending_order(), 0
                        if not order:
                            break
                    rows = self.manifest.pending_rows(order[pos:pos + batch])
                    pos += batch
                    if not rows:
                        continue
                texts = {h: t or "" for _i, h, t in rows}
                try:
                    found = embed_cached(embedder, cache, texts, progress=_stop_when(cancel))
                except _Cancelled:
                    break  # what was embedded is in the cache; the chunks stay pending
                with self.stores.vectors_lock:
                    # chunks re-indexed or deleted while the model ran are gone: no vectors for them
                    rows = self.manifest.pending_rows([i for i, _h, _t in rows])
                    if rows:
                        ids = np.fromiter((i for i, _h, _t in rows), dtype=np.int64, count=len(rows))
                        vectors.add(ids, np.stack([found[h] for _i, h, _t in rows]))
                        # in FAISS now: marked so the next pending query does not return them again
                        self.manifest.set_embedded(ids.tolist(), True, durable=False)
                done += len(rows)
                if progress:
                    progress(done, max(total, done))
                if time.monotonic() - last_save > save_every_s:
                    vectors.save()
                    self.manifest.commit_embedded()
                    last_save = time.monotonic()
        if vectors.dirty:
            vectors.save()
        self.manifest.commit_embedded()
        return done

    def index(self, progress: Callable[[Progress], None] | None = None,
              cancel: threading.Event | None = None, workers: int | None = None,
              paths: Iterable[str] | None = None, use_git: bool = True) -> IndexReport:
        """Bring the index up to date with the disk: only added, changed and deleted files are
        processed. ``paths`` (root-relative files or folders, e.g. from a file watcher)
        limits the work to them; a change to an ignore file among them widens it to the
        whole tree. Without ``paths``, a git work tree is checked through git (see
        gitsync) unless ``use_git`` is False, other trees by a walk and stat()."""
        if not self.writable:
            raise IndexError_(self.read_only_reason or "index is read-only")
        with self.stores.index_lock:
            return self._index(progress or (lambda p: None), cancel or threading.Event(), workers,
                               None if paths is None else list(paths), use_git)

    # planning: what to parse, what to delete ----------------------------
    def _settings_key(self) -> str:
        s = self.settings
        return json.dumps([SCHEMA_VERSION, sorted(s.exclude), s.max_file_size, sorted(s.languages)])

    def _matcher(self) -> scan.IgnoreMatcher:
        if self._ignore is None:
            self._ignore = scan.IgnoreMatcher(self.root, self.settings.exclude)
        return self._ignore

    def _info_exclude_mtime(self) -> int:
        found = scan._find_git(str(self.root))
        if found is None:
            return 0
        try:
            return os.stat(os.path.join(found[1], "info", "exclude")).st_mtime_ns
        except OSError:
            return 0

    def _plan_full(self) -> _Plan:
        git = gitsync.state(self.root) if scan._find_git(str(self.root)) is not None else None
        self._ignore = None  # ignore files are read afresh
        result = scan.scan_workspace(self.root, exclude=self.settings.exclude,
                                     max_file_size=self.settings.max_file_size, matcher=self._matcher())
        plan = self._compare(result.files, self.manifest.files())
        on_disk = {f.rel for f in result.files}
        # virtual documents (documents.py) live in the manifest, not on disk
        plan.deleted = [p for p in plan.known if p not in on_disk and not is_virtual(p)]
        plan.skipped = [(s.rel, s.reason) for s in result.skipped] + plan.skipped
        plan.full, plan.git = True, git
        return plan

    def _compare(self, files: Iterable[scan.FileEntry], known: dict[str, FileRecord]) -> _Plan:
        """Files whose size or mtime differ from the manifest's (or that are new) are to do;
        files skipped for their content last time and unchanged stay skipped unread."""
        plan = _Plan(known=known)
        skip_stats = self.manifest.skipped_stats()
        for f in files:
            rec = known.get(f.rel)
            if rec is not None and rec.size == f.size and rec.mtime_ns == f.mtime_ns:
                plan.unchanged += 1
                continue
            if rec is None:
                was = skip_stats.get(f.rel)
                if was is not None and was[:2] == (f.size, f.mtime_ns):
                    plan.skipped.append((f.rel, was[2], f.size, f.mtime_ns))
                    continue
            plan.todo.append((f, rec.hash if rec is not None else None))
        return plan

    def _plan_git(self) -> _Plan | None:
        """The start-up fast path (see gitsync), or None to walk the tree."""
        raw = self.manifest.get_meta(SYNC_META)
        if not raw:
            return None
        try:
            saved = json.loads(raw)
            old_head, old_dirty, touched = saved["head"], saved["dirty"], saved["touched"]
            if saved["settings"] != self._settings_key() or saved["info_exclude"] != self._info_exclude_mtime():
                return None
        except (ValueError, KeyError, TypeError):
            return None
        git = gitsync.state(self.root)
        if git is None or git.opaque or git.prefix != saved.get("prefix"):
            return None
        committed = gitsync.changed_between(self.root, old_head, git.head, git.prefix)
        if committed is None:
            return None
        candidates = set(committed) | set(git.dirty) | set(old_dirty) | set(touched)
        plan = self._plan_paths(sorted(candidates))
        if plan.full:  # an ignore file changed: the walk was done instead
            return plan
        plan.git = git
        # the rest is as the last run left it
        plan.unchanged = len(plan.known) - len(plan.deleted) - sum(1 for _e, h in plan.todo if h is not None)
        return plan

    def _plan_paths(self, rels: Sequence[str]) -> _Plan:
        """The plan for these root-relative files or folders only (added, changed, deleted,
        newly ignored); the whole tree when one of them is an ignore file."""
        norm = sorted({r.strip("/") for r in rels if r.strip("/") not in ("", ".")
                       and not is_virtual(r)})
        if any(r.rpartition("/")[2] in scan.IGNORE_FILES or r == ".git/info/exclude" for r in norm):
            return self._plan_full()
        known = self.manifest.files()
        known_sorted = sorted(known)
        matcher, max_size = self._matcher(), self.settings.max_file_size
        real_root = os.path.realpath(self.root)
        entries: dict[str, scan.FileEntry] = {}
        skipped: list[tuple] = []
        gone: set[str] = set()

        def under(rel: str) -> list[str]:
            lo = bisect.bisect_left(known_sorted, rel + "/")
            hi = bisect.bisect_left(known_sorted, rel + "0")  # "0" follows "/"
            return known_sorted[lo:hi]

        done_dirs: list[str] = []
        for rel in norm:
            if any(rel.startswith(d + "/") for d in done_dirs):
                continue
            path = self.root / rel
            try:
                st = path.stat()
            except OSError:
                st = None
            is_dir = st is not None and stat_mod.S_ISDIR(st.st_mode)
            if st is None or matcher.ignored(rel, is_dir):
                gone.add(rel)
                gone.update(under(rel))
                continue
            if path.is_symlink():
                target = os.path.realpath(path)
                if not target.startswith(real_root + os.sep):
                    skipped.append((rel, "symlink-outside"))
                    gone.add(rel)
                    continue
            if is_dir:
                done_dirs.append(rel)
                result = scan.scan_workspace(self.root, exclude=self.settings.exclude, max_file_size=max_size,
                                             start=rel, matcher=matcher)
                present = {f.rel for f in result.files}
                for f in result.files:
                    entries[f.rel] = f
                skipped.extend((s.rel, s.reason) for s in result.skipped)
                gone.update(p for p in under(rel) if p not in present)
            elif stat_mod.S_ISREG(st.st_mode):
                if st.st_size > max_size:
                    skipped.append((rel, "too-large"))
                    gone.add(rel)
                else:
                    entries[rel] = scan.FileEntry(rel, st.st_size, st.st_mtime_ns)
            else:
                skipped.append((rel, "special-file"))
                gone.add(rel)
        plan = self._compare(entries.values(), known)
        plan.deleted = sorted(p for p in gone if p in known and p not in entries)
        plan.skipped = skipped + plan.skipped
        return plan

    def _save_sync_state(self, git: gitsync.GitState | None) -> None:
        if git is None:
            self.manifest.set_meta(**{SYNC_META: ""})
            return
        self.manifest.set_meta(**{SYNC_META: json.dumps({
            "head": git.head, "prefix": git.prefix, "dirty": list(git.dirty), "touched": [],
            "settings": self._settings_key(), "info_exclude": self._info_exclude_mtime()})})

    def _note_touched(self, rels: Iterable[str]) -> None:
        """Record paths about to be re-indexed outside a full run, before they are: the git
        fast path must look at them again at the next start (an edit reverted while Sylk
        was not running is not in git's diff or status)."""
        raw = self.manifest.get_meta(SYNC_META)
        if not raw:
            return
        try:
            saved = json.loads(raw)
            touched = set(saved["touched"]) | set(rels)
        except (ValueError, KeyError, TypeError):
            self.manifest.set_meta(**{SYNC_META: ""})
            return
        if len(touched) > MAX_TOUCHED:  # cheaper to walk the tree next time
            self.manifest.set_meta(**{SYNC_META: ""})
            return
        saved["touched"] = sorted(touched)
        self.manifest.set_meta(**{SYNC_META: json.dumps(saved)})

    # indexing -------------------------------------------------------------
    def _index(self, progress: Callable[[Progress], None], cancel: threading.Event,
               workers: int | None, paths: list[str] | None, use_git: bool) -> IndexReport:
        t0 = time.perf_counter()
        report = IndexReport()
        progress(Progress("scan", 0, 0, "scanning files"))
        if paths is not None:
            plan = self._plan_paths(paths)
        else:
            plan = (self._plan_git() if use_git else None) or self._plan_full()
        if plan.full or plan.git is not None:
            self.manifest.set_meta(**{SYNC_META: ""})  # a crash before the end: walk the tree next time
        else:
            self._note_touched([e.rel for e, _h in plan.todo] + plan.deleted)
        known, deleted, todo = plan.known, plan.deleted, plan.todo
        report.unchanged = plan.unchanged
        skipped: list[tuple] = list(plan.skipped)
        total = len(todo)
        progress(Progress("index", 0, total, f"{total} files to index"))
        forget: list[str] = list(deleted)  # files whose old chunks (and vectors) go at the next flush
        if deleted:
            self.lexical.delete_paths(deleted)
            for p in deleted:
                self._table_remove(p)
            report.deleted = len(deleted)

        pending: list[tuple[FileRecord, str]] = []
        pending_chunks: list[tuple] = []
        pending_skips: list[tuple] = [] if plan.full else list(plan.skipped)
        pending_deletes: list[str] = list(deleted)
        pending_touches: list[tuple[str, int, int]] = []
        last_commit = time.monotonic()
        done = 0

        def flush() -> None:
            nonlocal pending, pending_chunks, pending_skips, pending_deletes, pending_touches, last_commit, forget
            progress(Progress("commit", done, total, "committing"))
            self.lexical.commit()
            self.stores.apply(forget, pending, pending_deletes, pending_skips, pending_touches, pending_chunks)
            pending, pending_chunks, pending_skips, pending_deletes, pending_touches = [], [], [], [], []
            forget = []
            last_commit = time.monotonic()

        languages = frozenset(self.settings.languages)
        for parsed in self._parse_all(todo, languages, workers, cancel):
            done += 1
            rec = known.get(parsed.rel)
            if parsed.skip is not None:
                # a binary file is not read again while its size and mtime stay the same
                entry = ((parsed.rel, parsed.skip, parsed.size, parsed.mtime_ns) if parsed.skip == "binary"
                         else (parsed.rel, parsed.skip))
                skipped.append(entry)
                pending_skips.append(entry)
                if rec is not None:  # it was indexed before: it leaves the index
                    forget.append(parsed.rel)
                    self.lexical.delete_paths([parsed.rel])
                    self._table_remove(parsed.rel)
                    pending_deletes.append(parsed.rel)
            elif parsed.unchanged:
                assert rec is not None
                report.unchanged += 1
                pending_touches.append((parsed.rel, parsed.size, parsed.mtime_ns))
            else:
                if rec is not None:
                    forget.append(parsed.rel)
                    self.lexical.delete_paths([parsed.rel])
                    report.changed += 1
                else:
                    report.added += 1
                pending_chunks.extend(self.stores.add_chunks(parsed.rel, parsed.language, parsed.chunks))
                self._table_set(parsed.rel, parsed.symbol_data)
                if parsed.replaced:
                    report.replaced_utf8 += 1
                pending.append((FileRecord(parsed.rel, parsed.hash, parsed.size, parsed.mtime_ns,
                                           parsed.language, len(parsed.names), parsed.replaced),
                                parsed.symbol_data))
            if done % 64 == 0 or done == total:
                progress(Progress("index", done, total, f"{done}/{total} files"))
            if time.monotonic() - last_commit > COMMIT_EVERY_S:
                flush()
            if cancel.is_set():
                break
        report.cancelled = cancel.is_set()
        flush()
        if plan.full or plan.git is None:
            for entry in skipped:
                report.skipped[entry[1]] += 1
        else:  # the skipped files git said nothing about are still skipped
            report.skipped.update(reason for _p, reason in self.manifest.skipped())
        if not report.cancelled:
            if plan.full:
                self.manifest.replace_skipped(skipped)
            if plan.full or plan.git is not None:
                self._save_sync_state(plan.git)
            self.manifest.set_meta(last_indexed=str(time.time()))
        if self._table is not None:
            self._table.warm()
        counts = self.manifest.counts()
        report.files, report.symbols = counts["files"], counts["symbols"]
        report.seconds = time.perf_counter() - t0
        progress(Progress("done", done, total, report.summary()))
        return report

    def _parse_all(self, todo: list[tuple[scan.FileEntry, str | None]], languages: frozenset[str],
                   workers: int | None, cancel: threading.Event) -> Iterable[Parsed]:
        root, max_size = str(self.root), self.settings.max_file_size
        workers = workers if workers is not None else (os.cpu_count() or 1)
        if len(todo) < POOL_THRESHOLD or workers <= 1:
            for entry, known_hash in todo:
                if cancel.is_set():
                    return
                yield parse_file(root, entry, known_hash, max_size, languages)
            return
        # Largest files first, so the last batches are small and both workers finish together.
        todo = sorted(todo, key=lambda t: -t[0].size)
        size = 16
        batches = [todo[i:i + size] for i in range(0, len(todo), size)]
        ctx = multiprocessing.get_context("spawn")
        with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=exit_with_parent,
                                    initargs=(os.getpid(),)) as pool:
            futures = [pool.submit(parse_batch, root, b, max_size, languages) for b in batches]
            try:
                for fut in futures:
                    if cancel.is_set():
                        break
                    yield from fut.result()
            finally:
                for fut in futures:
                    fut.cancel()

    def reindex_paths(self, rels: Iterable[str]) -> IndexReport:
        """Re-index given files now (a save, a few changes): ``index(paths=rels)``."""
        return self.index(paths=rels)

    def scan_ignored(self, rel: str, is_dir: bool = False) -> bool:
        """Whether the ignore rules of this workspace exclude ``rel`` (a saved or changed path)."""
        return self._matcher().ignored(rel, is_dir)

    # queries ------------------------------------------------------------
    @property
    def symbols_ready(self) -> bool:
        """Whether a symbol search would answer without first loading or rebuilding."""
        return self._table is not None and not self._table.stale

    def search_symbols(self, query: str, limit: int | None = None) -> list[SymbolHit]:
        return self.table.search(query, limit if limit is not None else self.settings.symbols.limit)

    def index_state(self) -> dict:
        """The ``index`` block of a search result: how complete each side is."""
        chunks = self.manifest.chunk_counts()
        files = self.manifest.counts()["files"]
        return {"files": files, "chunks": chunks["chunks"], "embedded": chunks["embedded"],
                "pending": chunks["pending"], "ready": chunks["pending"] == 0 and self.semantic_ready}

    def search_paths(self, text: str, limit: int = 20) -> list[str]:
        """Paths of the files whose chunks match ``text`` lexically, best first."""
        return list(dict.fromkeys(h.path for h in self.search(SearchRequest(text, "lexical", limit=limit * 5,
                                                                            context_lines=0)).hits))[:limit]

    def search(self, req: SearchRequest) -> SearchResult:
        if req.mode != "lexical" and not self._semantic_tried:
            self.load_semantic()
        state = self.index_state()
        note = self.semantic_message
        if note is None and state["embedded"] == 0:
            note = "semantic search is not ready yet: no chunk is embedded"
        return HybridSearch(self.root, self.lexical, self.manifest, self.vectors, self.embedder,
                            semantic_note=note).search(req, state)

    def _index_bytes(self) -> int:
        """The index folder's size; walked at most every INDEX_SIZE_TTL_S (clients poll status)."""
        now = time.monotonic()
        cached = self._size_cache
        if cached is None or now - cached[0] > INDEX_SIZE_TTL_S:
            total = 0
            for p in self.index_dir.rglob("*"):
                try:
                    if p.is_file():
                        total += p.stat().st_size
                except OSError:  # a file replaced while walking (a commit, a save)
                    continue
            cached = self._size_cache = (now, total)
        return cached[1]

    def status(self) -> dict:
        counts = self.manifest.counts()
        last = self.manifest.get_meta("last_indexed")
        skipped = self.manifest.skipped()
        size = self._index_bytes()
        return {
            "root": str(self.root),
            "indexDir": str(self.index_dir),
            "files": counts["files"],
            "symbols": counts["symbols"],
            "languages": [{"language": l, "files": f, "symbols": s or 0} for l, f, s in self.manifest.languages()],
            "indexBytes": size,
            "lastIndexed": float(last) if last else None,
            "skipped": [{"path": p, "reason": r} for p, r in skipped],
            "readOnly": not self.writable,
            "merkleRoot": self.manifest.merkle_root(store=self.writable),
            **{k: v for k, v in self.manifest.chunk_counts().items()},
        }


class _Cancelled(Exception):
    pass


def semantic_state(settings: Settings, ws: Workspace | None) -> str:
    """``off`` (disabled in the settings), ``loading`` (not tried yet, or the model is
    loading), ``ready``, or ``unavailable`` (see ``Workspace.semantic_message``)."""
    if not settings.embedding.enabled:
        return "off"
    if ws is not None and ws.semantic_ready:
        return "ready"
    if ws is not None and ws.semantic_message:
        return "unavailable"
    return "loading"


def _stop_when(cancel: threading.Event) -> Callable[[int, int], None]:
    """A progress callback for embed_cached that stops it between batches once cancelled."""
    def check(done: int, total: int) -> None:
        if cancel.is_set():
            raise _Cancelled
    return check


def clear_index(root: Path, settings: Settings | None = None) -> Path | None:
    """Remove a workspace's index folder without opening it; returns it if it existed."""
    folder = index_dir_for(root.resolve(), settings or Settings())
    if folder.exists():
        shutil.rmtree(folder)
        return folder
    return None
