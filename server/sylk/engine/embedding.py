"""The semantic side of a workspace: the embedding model loaded on demand, and the
queue of chunks to embed (files opened or saved in the editor first, then the most
recently modified files). One pass at a time; vectors are saved before the manifest
marks their chunks embedded, so a crash loses at most the work since the last save.

Before the model's pass, the quick pass (engine.quick_pass) gives every pending chunk a
static vector, which the model's vectors replace chunk by chunk.

A chunk the model fails on even alone (embed.embedder halves a failing batch down to
single texts) is marked failed in the manifest (EMBED_FAILED): not pending, so no pass
tries it again and the pass goes on; the index status counts it. Each load of the model
(a server start, ``sylk index``, an embedding settings change) makes such chunks pending
again, so they get one more try per run: a failure that came from a passing shortage
(memory) heals, a pathological text costs one failed batch per run. A chunk whose text
changes is a new chunk, and a new model re-embeds everything anyway.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..config import EmbeddingSettings, cache_root
from ..embed.embedder import Embedder, embed_cached
from ..embed.loading import load_embedder
from ..store import integrity
from ..store.embedding_cache import EmbeddingCache
from ..store.chunk_rows import PendingChunk
from ..store.stores import Stores
from ..store.vectors import VectorIndex
from .quick_pass import QuickPass

log = logging.getLogger("sylk")

# A test hook, read in _embed_locked and nowhere else: with SYLK_HOLD_EMBED=<path> in the
# environment, a pass saves its first batch, then waits while <path> exists (or until it
# is cancelled), so a test can act while a pass is certainly under way. Never set it
# otherwise.
HOLD_ENV = "SYLK_HOLD_EMBED"
FAILURES_LOGGED = 10  # chunks the model failed on named in the log per pass; the rest counted


class _Cancelled(Exception):
    pass


def _stop_when(cancel: threading.Event, pause: Callable[[], None] | None) -> Callable[[int, int], None]:
    """A progress callback for embed_cached that stops it between batches once cancelled,
    and first calls ``pause`` (which may block while requests are being answered)."""
    def check(done: int, total: int) -> None:
        if pause is not None:
            pause()
        if cancel.is_set():
            raise _Cancelled
    return check


class EmbedQueue:
    """The model (``load``, once) and the embedding passes (``embed_pending``) of one
    workspace's stores. ``settings`` may be replaced (the workspace's settings changed)."""

    def __init__(self, stores: Stores, settings: EmbeddingSettings) -> None:
        self.stores = stores
        self.settings = settings
        self.embedder: Embedder | None = None
        self.quick = QuickPass(stores)
        self.message: str | None = None  # why semantic search is unavailable
        self.tried = False
        self._load_lock = threading.Lock()
        self.lock = threading.Lock()  # held by an embedding pass (and by close)
        self._priority_lock = threading.Lock()
        self._priority: dict[str, None] = {}  # paths to embed next, in order

    def load(self) -> str | None:
        """Load the embedding model and the vector index (once). Returns a message for
        the user when semantic search is unavailable or had to start over, else None."""
        with self._load_lock:
            if self.tried:
                return None
            self.tried = True
            embedder, message = load_embedder(self.settings, cache_root())
            if embedder is None:
                self.message = message or "no embedding model could be loaded"
                return f"{self.message}; serving lexical results only"
            vectors = self.stores.open_vectors(embedder.model_id, embedder.dim)
            note = None
            if vectors.rebuilt_reason and self.stores.writable:
                self.stores.manifest.reset_embedded()
                note = vectors.rebuilt_reason
            if self.stores.writable:  # a reader changes nothing: the writer reconciles
                self._reconcile(vectors)
                retried = self.stores.manifest.retry_embed_failed()  # one more try per load
                if retried:
                    log.info("%d chunks the model failed on before are tried again", retried)
            self.embedder, self.stores.vectors = embedder, vectors
            self.stores.quick = self.quick.open(self.settings, embedder)
            return note

    @property
    def quick_embedder(self) -> Embedder | None:
        """The quick pass's static model (loaded on first use)."""
        return self.quick.embedder

    def unload(self) -> None:
        """Forget the model and detach the vectors (saved first), so that the next ``load``
        starts over with the current settings: embedding turned off, on again, or another
        model. Waits for a running pass (the caller cancels it first). Chunks that change
        while nothing is loaded are reconciled by the next ``load``, as after a run
        without the model."""
        with self._load_lock, self.lock:
            self.stores.detach_vectors()
            self.embedder, self.message, self.tried = None, None, False
            self.quick.forget()

    def _reconcile(self, vectors: VectorIndex) -> None:
        """Make the manifest and the vectors agree after a crash or an index run without the
        model: vectors of chunks that are gone (or not marked embedded) leave, chunks
        marked embedded without a vector are embedded again."""
        with self.stores.vectors_lock:
            integrity.reconcile_vectors(self.stores.manifest, vectors)

    def quick_pass(self, cancel: threading.Event | None = None) -> int:
        """Give every pending chunk without one a quick vector; returns how many. Returns 0
        at once when the model's pass is running (it gives new chunks theirs as it goes)."""
        if not self.stores.writable or not self.lock.acquire(blocking=False):
            return 0
        try:
            return self.quick.run(cancel or threading.Event())
        finally:
            self.lock.release()

    @property
    def ready(self) -> bool:
        return self.embedder is not None and self.stores.vectors is not None

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
                      batch: int = 256, save_every_s: float = 30.0,
                      pause: Callable[[], None] | None = None) -> int:
        """Embed every chunk not embedded yet; returns how many. Order: ``first_paths``
        and paths given to prioritize() (also while running), then the most recently
        modified files. When another pass is running, ``first_paths`` join its queue and
        this call returns 0 at once. ``pause`` runs before each batch of the model.

        Cached vectors (same model, same text) are reused without running the model.
        Vectors are saved before the manifest marks their chunks embedded, so a crash
        loses at most the work since the last save."""
        if not self.stores.writable or self.embedder is None or self.stores.vectors is None:
            return 0
        cancel = cancel or threading.Event()
        self.prioritize(first_paths)
        done = 0
        # The lock is tried again after a pass: a path queued by a caller that found the
        # lock taken just as the pass ran out of work is not left waiting.
        while not cancel.is_set() and self.lock.acquire(blocking=False):
            try:
                done += self._embed_locked(progress, cancel, batch, save_every_s, pause)
            finally:
                self.lock.release()
            with self._priority_lock:
                if not self._priority:
                    break
        return done

    def _embed_locked(self, progress: Callable[[int, int], None] | None, cancel: threading.Event,
                      batch: int, save_every_s: float, pause: Callable[[], None] | None) -> int:
        embedder, vectors = self.embedder, self.stores.vectors
        if embedder is None or vectors is None:  # unloaded between the caller's check and the lock
            return 0
        total = self.stores.manifest.chunk_counts()["pending"]
        done = failed = 0
        last_save = time.monotonic()
        order: list[int] = []
        pos = 0
        if progress:
            progress(0, total)
        hold = os.environ.get(HOLD_ENV)
        with EmbeddingCache.open(self.stores.index_dir) as cache:
            while not cancel.is_set():
                rows = self.stores.manifest.pending_for_paths(self._take_priority())
                if not rows:
                    if pos >= len(order):  # the order is used up: what is pending now (new chunks too)
                        self.quick.run(cancel)  # new chunks get their quick vectors first
                        order, pos = self.stores.manifest.pending_order(), 0
                        if not order:
                            break
                    rows = self.stores.manifest.pending_rows(order[pos:pos + batch])
                    pos += batch
                    if not rows:
                        continue
                texts = {r.text_hash: r.embed_text or "" for r in rows}
                errors: dict[str, BaseException] = {}
                try:
                    found = embed_cached(embedder, cache, texts, progress=_stop_when(cancel, pause),
                                         failed=errors.__setitem__)
                except _Cancelled:
                    break  # what was embedded is in the cache; the chunks stay pending
                with self.stores.vectors_lock:
                    # chunks re-indexed or deleted while the model ran are gone: no vectors for them
                    rows = self.stores.manifest.pending_rows([r.id for r in rows])
                    bad = [r for r in rows if r.text_hash not in found]
                    rows = [r for r in rows if r.text_hash in found]
                    if rows:
                        ids = np.fromiter((r.id for r in rows), dtype=np.int64, count=len(rows))
                        vectors.add(ids, np.stack([found[r.text_hash] for r in rows]))
                        self.quick.replaced(ids)  # the model's vector replaces the quick one
                        # in FAISS now: marked so the next pending query does not return them again
                        self.stores.manifest.set_embedded(ids.tolist(), True, durable=False)
                    if bad:  # not pending any more: the pass goes on without them
                        self.stores.manifest.set_embed_failed([r.id for r in bad])
                if bad:
                    self._log_failures(bad, errors, failed)
                done += len(rows)
                failed += len(bad)
                if progress:
                    progress(done + failed, max(total, done + failed))
                if time.monotonic() - last_save > save_every_s or hold:
                    self._save_vectors()
                    self.stores.manifest.commit_embedded()
                    last_save = time.monotonic()
                if hold:  # the test hook, after the first batch
                    while os.path.exists(hold) and not cancel.wait(0.05):
                        pass
                    hold = None
        self._save_vectors()
        self.stores.manifest.commit_embedded()
        if failed > FAILURES_LOGGED:
            log.warning("%d chunks could not be embedded in this pass (%d named above); they are left out of "
                        "semantic search until the next start", failed, FAILURES_LOGGED)
        return done

    def _save_vectors(self) -> None:
        """Save what changed: the model's vectors (before the manifest marks their chunks
        embedded), and the quick store (a kill between the two leaves quick vectors of
        embedded chunks, which the next load's reconcile drops)."""
        for vectors in self.stores.vector_indexes():
            if vectors.dirty:
                vectors.save()

    def _log_failures(self, bad: Sequence[PendingChunk], errors: dict[str, BaseException], before: int) -> None:
        """Name the chunks the model failed on (the first FAILURES_LOGGED of the pass)."""
        named = bad[:max(0, FAILURES_LOGGED - before)]
        where = self.stores.manifest.chunks_by_id([r.id for r in named])
        for r in named:
            c = where.get(r.id)
            place = f"{c.path}:{c.start_line + 1}-{c.end_line + 1}" if c is not None else f"chunk {r.id}"
            log.warning("could not embed %s (%s); the model leaves it out until the next start (a quick-pass "
                        "vector stands in where it has one)",
                        place, errors.get(r.text_hash, "the model failed on it"))
