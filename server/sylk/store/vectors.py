"""The vector index: chunk vectors in FAISS, persisted beside the lexical index.

One ``VectorIndex`` per workspace index folder, one lock around it (STYLE: one
owner per store). Vectors are L2-normalised, so inner product is cosine. Ids are
int64s chosen by the caller; the manifest maps them to chunks.

The index is a flat scan of one byte per component:
``IndexIDMap2(IndexScalarQuantizer(dim, QT_8bit_uniform))``, every component mapped
linearly from one range [-r, r] to 0..255 (format 3). Against half precision
(format 2) it halves the memory again (80k x 384 vectors: 31 MB, not 62 MB; float32
took 124 MB) and the scan is no slower. On the stdlib's vectors 99.3% of the top 20
are the same as with half precision, and the first hit is the same for 99.7% of
queries (bench/relevance.py's semantic MRR: in bench/README.md). The range is the
only trained part: it is set by the first vectors added to an empty index
(``RANGE_FACTOR`` times the 99.9th percentile of their components' magnitudes, so a
later outlier is clipped rather than the scale stretched for it) and saved with the
index; adds and removes stay incremental. An index of format 1 (float32,
``IndexFlatIP``) or 2 (half precision) is converted when it is opened (0.3 s for 80k
vectors) and written in the new format at the next save. Past roughly 500k vectors
the place to switch is ``_new_index``: ``IndexHNSWSQ`` for query time.

Files: ``vectors.faiss`` (faiss.write_index) and ``vectors.json`` (model id,
dimension, count, file size). Both are written to a temporary file in the folder,
fsynced and renamed. ``open`` never mixes vectors of another model and never
crashes on a damaged file: it starts empty and says why in ``rebuilt_reason``
(the embedding cache makes the rebuild cheap: no chunk is embedded again).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import faiss

INDEX_FILE = "vectors.faiss"
META_FILE = "vectors.json"
FORMAT = 3  # 1: float32 (IndexFlatIP), 2: half precision; both converted on open
# The quantizer's range, [-r, r]: r is this many times the 99.9th percentile of the
# magnitudes of the components of the first vectors added. MiniLM's unit vectors on
# the stdlib: that percentile is 0.17, the largest component 0.32; 1 in 350,000
# components is clipped at r = 0.26, and a wider range costs precision on all.
RANGE_FACTOR = 1.5
RANGE_QUANTILE = 0.999
# ... and at least this many times 1/sqrt(dim), the spread of a unit vector's
# components (0.26 for 384 dimensions), so that a first add of one short chunk does
# not set a range its successors overflow; never past 1, which holds every unit vector.
RANGE_FLOOR = 5.0
# Vectors converted per slice when an older index is opened (bounds the float32 copy).
CONVERT_SLICE = 8192


# One query vector is scanned by one thread whatever this says, but FAISS's OpenMP
# workers still wake and spin on every search, and they fight the embedder's
# onnxruntime threads (which also spin after each query embedding) for the cores: on
# this 2-core machine a semantic search over 80k vectors took 37-64 ms with the
# default thread count and 13 ms with one (bench/search_latency.py). Nothing here
# searches or adds batches large enough to gain from more. OpenMP keeps the count
# per thread, and a thread that never set it gets one worker per core: so every
# FAISS call here sets it first, on whatever thread it runs (the language server
# searches on its thread pool).
@functools.cache
def _faiss() -> ModuleType:
    """FAISS, imported when vectors are first touched: it takes a third of a second (seconds
    under load), which ``sylk index --no-embed`` and a lexical search never need to pay."""
    return importlib.import_module("faiss")


def _one_omp_thread() -> None:
    _faiss().omp_set_num_threads(1)


def _new_index(dim: int) -> faiss.IndexIDMap2:
    """Empty, and untrained: ``_trained_on`` sets the range from the first vectors."""
    fs = _faiss()
    return fs.IndexIDMap2(fs.IndexScalarQuantizer(dim, fs.ScalarQuantizer.QT_8bit_uniform, fs.METRIC_INNER_PRODUCT))


def _quantizer(index: faiss.IndexIDMap2) -> faiss.IndexScalarQuantizer:
    return _faiss().downcast_index(index.index)


def _trained_on(index: faiss.IndexIDMap2, vectors: np.ndarray) -> None:
    """Set the quantizer's range [-r, r] from ``vectors`` (see RANGE_FACTOR and RANGE_FLOOR)."""
    inner = _quantizer(index)
    r = RANGE_FACTOR * float(np.quantile(np.abs(vectors), RANGE_QUANTILE)) if vectors.size else 0.0
    r = min(1.0, max(r if np.isfinite(r) else 1.0, RANGE_FLOOR / np.sqrt(index.d)))
    _faiss().copy_array_to_vector(np.array([-r, 2 * r], dtype=np.float32), inner.sq.trained)
    inner.is_trained = index.is_trained = True


def _is_current(index: faiss.IndexIDMap2) -> bool:
    inner = _quantizer(index)
    fs = _faiss()
    return isinstance(inner, fs.IndexScalarQuantizer) and inner.sq.qtype == fs.ScalarQuantizer.QT_8bit_uniform


def _is_convertible(index: faiss.IndexIDMap2) -> bool:
    """Format 1 (float32, flat) or 2 (half precision)."""
    inner = _quantizer(index)
    fs = _faiss()
    return isinstance(inner, fs.IndexFlatIP) or (
        isinstance(inner, fs.IndexScalarQuantizer) and inner.sq.qtype == fs.ScalarQuantizer.QT_fp16)


def _converted(index: faiss.IndexIDMap2, dim: int) -> faiss.IndexIDMap2:
    """The vectors of a format 1 or 2 index in a new one, under the same ids, a slice at a
    time; the range is set from the first slice."""
    out = _new_index(dim)
    ids = _faiss().vector_to_array(index.id_map).astype(np.int64)
    for start in range(0, index.ntotal, CONVERT_SLICE):
        n = min(CONVERT_SLICE, index.ntotal - start)
        vectors = index.index.reconstruct_n(start, n)
        if start == 0:
            _trained_on(out, vectors)
        out.add_with_ids(vectors, ids[start : start + n])
    return out


def _as_ids(ids: Iterable[int] | np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(ids, dtype=np.int64).reshape(-1))


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class VectorIndex:
    """Cosine k-NN over chunk vectors of one model, with caller-chosen int64 ids."""

    def __init__(self, folder: Path, model_id: str, dim: int,
                 index: faiss.IndexIDMap2 | None = None, rebuilt_reason: str | None = None) -> None:
        if dim <= 0:
            raise ValueError(f"dimension must be positive, got {dim}")
        self.folder = Path(folder)
        self.model_id = model_id
        self.dim = int(dim)
        # Why the saved vectors were discarded (another model, a damaged file); None
        # when they were loaded or there were none.
        self.rebuilt_reason = rebuilt_reason
        self._index = index if index is not None else _new_index(self.dim)
        self._lock = threading.RLock()
        self._sample: tuple[int, np.ndarray] | None = None  # (ntotal when drawn, the sample)
        self._dirty = index is None and rebuilt_reason is not None
        if index is not None and not _is_current(index):
            self._index = _converted(index, self.dim)
            self._dirty = True

    # --- opening ----------------------------------------------------------------

    @classmethod
    def open(cls, folder: Path, model_id: str, dim: int) -> VectorIndex:
        """The saved index in ``folder`` if it holds vectors of ``model_id``/``dim``, else empty."""
        folder = Path(folder)
        index_path, meta_path = folder / INDEX_FILE, folder / META_FILE
        if not index_path.exists() and not meta_path.exists():
            return cls(folder, model_id, dim)
        index, reason = cls._load(index_path, meta_path, model_id, dim)
        return cls(folder, model_id, dim, index=index, rebuilt_reason=reason)

    @staticmethod
    def _load(index_path: Path, meta_path: Path, model_id: str,
              dim: int) -> tuple[faiss.IndexIDMap2 | None, str | None]:
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None, f"{meta_path.name} is missing; rebuilding the vectors"
        except (OSError, ValueError) as e:
            return None, f"{meta_path.name} is unreadable ({e}); rebuilding the vectors"
        if not isinstance(meta, dict):
            return None, f"{meta_path.name} is not an object; rebuilding the vectors"
        if meta.get("model_id") != model_id or meta.get("dim") != dim:
            return None, (
                f"the vectors were made by {meta.get('model_id')!r} ({meta.get('dim')} dims), "
                f"the model is now {model_id!r} ({dim} dims); rebuilding the vectors"
            )
        try:
            size = index_path.stat().st_size
        except OSError as e:
            return None, f"{index_path.name} is missing ({e}); rebuilding the vectors"
        if meta.get("bytes") is not None and meta.get("bytes") != size:
            return None, (
                f"{index_path.name} is {size} bytes, {meta.get('bytes')} were written; "
                "rebuilding the vectors"
            )
        try:
            index = _faiss().read_index(str(index_path))
        except Exception as e:  # noqa: BLE001 - faiss raises RuntimeError with C++ text
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            return None, f"{index_path.name} is damaged ({first[:200]}); rebuilding the vectors"
        if not isinstance(index, _faiss().IndexIDMap2):
            return None, f"{index_path.name} holds a {type(index).__name__}; rebuilding the vectors"
        if not (_is_current(index) or _is_convertible(index)):
            inner = _quantizer(index)
            return None, f"{index_path.name} holds a {type(inner).__name__}; rebuilding the vectors"
        if (index.d != dim or index.metric_type != _faiss().METRIC_INNER_PRODUCT
                or index.ntotal != meta.get("count")):
            return None, (
                f"{index_path.name} disagrees with {meta_path.name} (dim {index.d}, "
                f"{index.ntotal} vectors, expected {meta.get('count')}); rebuilding the vectors"
            )
        return index, None

    # --- changes ----------------------------------------------------------------

    def _check_vectors(self, vectors: np.ndarray, n: int) -> np.ndarray:
        vectors = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
        if vectors.ndim == 1:
            vectors = vectors.reshape(1, -1)
        if vectors.shape != (n, self.dim):
            raise ValueError(f"expected vectors of shape ({n}, {self.dim}), got {vectors.shape}")
        return vectors

    def add(self, ids: np.ndarray | Iterable[int], vectors: np.ndarray) -> None:
        """Add vectors under ``ids``, replacing any vector already stored under one of them."""
        ids = _as_ids(ids)
        vectors = self._check_vectors(vectors, len(ids))
        if len(ids) == 0:
            return
        if len(np.unique(ids)) != len(ids):
            # the last vector given for an id wins, as with repeated adds
            _, last = np.unique(ids[::-1], return_index=True)
            keep = np.sort(len(ids) - 1 - last)
            ids, vectors = ids[keep], vectors[keep]
        with self._lock:
            _one_omp_thread()
            if not self._index.is_trained:
                _trained_on(self._index, vectors)
            self._index.remove_ids(_faiss().IDSelectorBatch(ids))
            self._index.add_with_ids(vectors, ids)
            self._dirty = True

    def remove(self, ids: np.ndarray | Iterable[int]) -> int:
        """Remove the vectors of ``ids`` (unknown ids are ignored); returns how many went."""
        ids = _as_ids(ids)
        if len(ids) == 0:
            return 0
        with self._lock:
            _one_omp_thread()
            removed = int(self._index.remove_ids(_faiss().IDSelectorBatch(ids)))
            self._dirty = self._dirty or removed > 0
            return removed

    def clear(self) -> None:
        with self._lock:
            self._index = _new_index(self.dim)
            self._dirty = True

    # --- queries ----------------------------------------------------------------

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The ``k`` nearest ids with their cosine similarity, best first."""
        q = self._check_vectors(query, 1)
        with self._lock:
            k = min(int(k), self._index.ntotal)
            if k <= 0:
                return []
            _one_omp_thread()
            scores, ids = self._index.search(q, k)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i != -1]

    def vectors_for(self, ids: np.ndarray | Iterable[int]) -> np.ndarray:
        """The stored vectors of ``ids``, one row each; KeyError names the ids not stored."""
        ids = _as_ids(ids)
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        missing: list[int] = []
        with self._lock:
            for row, i in enumerate(ids):
                try:
                    out[row] = self._index.reconstruct(int(i))
                except RuntimeError:
                    missing.append(int(i))
        if missing:
            raise KeyError(f"no vector for ids {missing[:10]}{'...' if len(missing) > 10 else ''}")
        return out

    def sample(self, n: int) -> np.ndarray:
        """Up to ``n`` stored vectors, evenly spaced in storage order: what the scores of a
        query against the whole index look like (search.nearest calibrates with it). Drawn
        again once the index has grown or shrunk by a tenth since the last draw."""
        with self._lock:
            total = int(self._index.ntotal)
            cached = self._sample
            if cached is not None and abs(total - cached[0]) <= total // 10 and (total > 0) == (cached[0] > 0):
                return cached[1]
            inner = self._index.index
            positions = np.unique(np.linspace(0, total - 1, num=min(n, total)).astype(np.int64)) if total else []
            out = np.empty((len(positions), self.dim), dtype=np.float32)
            for row, pos in enumerate(positions):
                out[row] = inner.reconstruct(int(pos))
            self._sample = (total, out)
            return out

    def ids(self) -> np.ndarray:
        with self._lock:
            return _faiss().vector_to_array(self._index.id_map).astype(np.int64, copy=True)

    def __len__(self) -> int:
        with self._lock:
            return int(self._index.ntotal)

    def __contains__(self, id_: object) -> bool:
        if not isinstance(id_, (int, np.integer)):
            return False
        try:
            self.vectors_for([int(id_)])
        except KeyError:
            return False
        return True

    @property
    def dirty(self) -> bool:
        """Changed since it was opened or saved."""
        return self._dirty

    # --- saving -----------------------------------------------------------------

    def save(self) -> None:
        """Write both files atomically (temporary files, fsync, rename). Both are written
        before either is renamed, so a kill leaves the old pair, the new pair, or (in the
        instant between the renames) a pair open() refuses; temporary files a kill leaves
        behind are removed by integrity.check_on_open."""
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(prefix=f".{INDEX_FILE}.", suffix=".tmp", dir=self.folder)
            os.close(fd)
            tmp = Path(tmp_name)
            tmp_meta: Path | None = None
            try:
                _faiss().write_index(self._index, str(tmp))
                with tmp.open("rb+") as f:
                    os.fsync(f.fileno())
                meta = {"format": FORMAT, "model_id": self.model_id, "dim": self.dim,
                        "count": int(self._index.ntotal), "bytes": tmp.stat().st_size}
                fd, tmp_name = tempfile.mkstemp(prefix=f".{META_FILE}.", suffix=".tmp", dir=self.folder)
                tmp_meta = Path(tmp_name)
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(meta, f)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, self.folder / INDEX_FILE)
                os.replace(tmp_meta, self.folder / META_FILE)
            except BaseException:
                tmp.unlink(missing_ok=True)
                if tmp_meta is not None:
                    tmp_meta.unlink(missing_ok=True)
                raise
            _fsync_dir(self.folder)
            self._dirty = False
