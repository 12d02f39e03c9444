"""The quick pass: before the embedding model's pass (minutes for a large tree: about 100
chunks/s on a laptop's CPU), every chunk not embedded yet gets a vector of the packaged
static model (``embed.static_encoder``: thousands of chunks a second) in a store of its
own (``Stores.quick``), so search by meaning covers the whole workspace seconds after the
text index does (search.nearest merges the two spaces).

The model's pass (engine.embedding) then replaces those vectors chunk by chunk: a chunk
it embeds leaves the quick store at once, and a complete index holds no quick vector.
The quick store keeps only chunks that exist and are not embedded (``reconcile`` at
load; ``Stores.apply`` drops deleted chunks'; chunk ids are never reused), and it is
saved with the model's vectors. The static model itself is loaded only when the quick
store has work or vectors (``embedder``): a search of a finished index never pays for it.
Off with ``embedding.quickPass = false``, and when the model is itself a static one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

import numpy as np

from ..config import EmbeddingSettings
from ..embed.embedder import Embedder
from ..embed.loading import load_quick_embedder
from ..embed.static_encoder import packaged_static_identity
from ..store.stores import Stores
from ..store.vectors import VectorIndex

log = logging.getLogger("sylk")

BATCH = 4096  # chunks read from the manifest and embedded per step


class QuickPass:
    """The quick pass of one workspace's stores: its store (opened by ``open``, attached
    by the caller as ``Stores.quick``), its model (loaded on first use) and its runs."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores
        self._embedder: Embedder | None = None
        self._tried = False
        # not the embedding queue's load lock: its unload() holds that one while it waits
        # for a pass, which may be loading the static model
        self._load_lock = threading.Lock()

    def open(self, settings: EmbeddingSettings, model: Embedder) -> VectorIndex | None:
        """The quick store, reconciled when this process writes; None when the quick pass
        is off, the model is static itself, or the packaged static model is damaged."""
        if not settings.quick_pass or model.model_id.startswith("static:"):
            return None
        try:
            model_id, dim = packaged_static_identity()
        except (OSError, ValueError, KeyError) as exc:
            log.warning("no quick pass: the packaged static model is damaged (%s)", exc)
            return None
        quick = self.stores.open_vectors(model_id, dim, quick=True)
        if self.stores.writable:  # a reader changes nothing: the writer reconciles
            self._reconcile(quick)
        return quick

    def _reconcile(self, quick: VectorIndex) -> None:
        """Keep the quick vectors of the chunks that exist and are not embedded; the others
        (embedded since, deleted while the quick store was not loaded) leave."""
        with self.stores.vectors_lock:
            keep = self.stores.manifest.all_chunk_ids() - self.stores.manifest.embedded_ids()
            stale = set(quick.ids().tolist()) - keep
            if stale:
                quick.remove(sorted(stale))

    @property
    def embedder(self) -> Embedder | None:
        """The static model, loaded on first use while the quick store is attached."""
        if self._embedder is None and not self._tried and self.stores.quick is not None:
            with self._load_lock:
                if not self._tried:
                    self._tried = True
                    self._embedder, why = load_quick_embedder()
                    if self._embedder is None:
                        log.warning("no quick pass: %s", why)
        return self._embedder

    def forget(self) -> None:
        """Drop the static model (the store is detached by the caller): the next load
        starts over."""
        self._embedder, self._tried = None, False

    def replaced(self, ids: Iterable[int] | np.ndarray) -> None:
        """The model embedded ``ids``: their quick vectors go (the caller holds the vectors lock)."""
        if self.stores.quick is not None:
            self.stores.quick.remove(ids)

    def run(self, cancel: threading.Event) -> int:
        """Give every pending chunk without one a quick vector; returns how many. The
        caller holds the embedding pass lock (one pass at a time, of either model)."""
        quick = self.stores.quick
        if quick is None:
            return 0
        have = set(quick.ids().tolist())
        todo = [i for i in self.stores.manifest.pending_order() if i not in have]
        embedder = self.embedder if todo else None
        if embedder is None:
            return 0
        done = 0
        for start in range(0, len(todo), BATCH):
            if cancel.is_set():
                break
            rows = self.stores.manifest.pending_rows(todo[start:start + BATCH])
            try:
                found = embedder.embed([r.embed_text or "" for r in rows])
            except Exception as exc:  # noqa: BLE001 - the model's pass still covers these chunks
                log.warning("the quick pass stopped: %s", exc)
                break
            with self.stores.vectors_lock:
                # chunks re-indexed, deleted or embedded meanwhile get no quick vector
                still = {r.id for r in self.stores.manifest.pending_rows([r.id for r in rows])}
                keep = [i for i, r in enumerate(rows) if r.id in still]
                if keep:
                    quick.add(np.fromiter((rows[i].id for i in keep), dtype=np.int64, count=len(keep)), found[keep])
            done += len(keep)
        if quick.dirty:
            quick.save()
        return done
