"""The quick pass (issue 31 item 3): every chunk gets a vector of the packaged static model
before the embedding model's pass, so search by meaning covers the whole workspace at
once; the model's vectors then replace those chunk by chunk, and a complete index holds
no quick vector. Real index, real FAISS stores, the packaged models."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import attrs
import numpy as np
import pytest
from conftest import WORKSPACE
from sylk.config import Settings
from sylk.engine.workspace import Workspace
from sylk.search.nearest import FALLBACK_MAIN, MIN_SAMPLE, VectorSpace, nearest
from sylk.search.query import SearchRequest
from sylk.store.layout import QUICK_VECTORS_DIR

QUERY = "wait longer after each failed request, with random jitter"


def _workspace(tmp_path: Path, **embedding) -> Workspace:
    root = tmp_path / "workspace"
    shutil.copytree(WORKSPACE, root)
    settings = Settings(index_dir=str(tmp_path / "index"))
    settings = attrs.evolve(settings, embedding=attrs.evolve(settings.embedding, **embedding))
    return Workspace(root, settings)


@pytest.fixture
def quick_only(tmp_path: Path):
    """The fixture workspace indexed, with the quick pass run and the model's not yet."""
    w = _workspace(tmp_path)
    w.index()
    assert w.load_semantic() is None
    yield w
    w.close()


def test_the_quick_pass_covers_every_chunk_before_the_model_embeds_one(quick_only: Workspace):
    chunks = quick_only.manifest.chunk_counts()
    assert quick_only.quick_pass() == chunks["chunks"] == chunks["pending"] > 0
    assert quick_only.quick_pass() == 0  # nothing left to do
    result = quick_only.search(SearchRequest(QUERY, "semantic", limit=3))
    assert result.index.embedded == 0 and result.index.quick == chunks["chunks"]
    assert result.semantic_covered == chunks["chunks"] and result.semantic_quick == chunks["chunks"]
    assert "app/http.py" in [h.path for h in result.hits], [h.path for h in result.hits]
    assert result.notes == (f"semantic side: {chunks['chunks']} of {chunks['chunks']} chunks (100%) by the quick "
                            "model until the embedding model reaches them")
    hybrid = quick_only.search(SearchRequest(QUERY, "hybrid", limit=3))
    assert any(h.path == "app/http.py" and h.semantic_rank is not None for h in hybrid.hits)


def test_the_models_vectors_replace_the_quick_ones_chunk_by_chunk(quick_only: Workspace):
    quick_only.quick_pass()
    stop = threading.Event()
    first = quick_only.embed_pending(progress=lambda done, _total: done and stop.set(), cancel=stop, batch=16)
    stores = quick_only.stores
    assert stores.vectors is not None and stores.quick is not None
    model_ids, quick_ids = set(stores.vectors.ids().tolist()), set(stores.quick.ids().tolist())
    chunks = quick_only.manifest.chunk_counts()["chunks"]
    assert len(model_ids) == first > 0 and not model_ids & quick_ids and len(quick_ids) == chunks - first
    part = quick_only.search(SearchRequest(QUERY, "hybrid", limit=5))
    assert part.semantic_covered == chunks and part.semantic_quick == chunks - first
    assert part.notes is not None and f"{chunks - first} of {chunks} chunks" in part.notes
    quick_only.embed_pending()
    assert len(stores.quick) == 0 and len(stores.vectors) == chunks
    done = quick_only.search(SearchRequest(QUERY, "hybrid", limit=5))
    assert done.index.quick == 0 and done.semantic_quick == 0 and done.notes is None
    quick_only.close()
    again = Workspace(quick_only.root, quick_only.settings)  # a finished index: the static model is not loaded
    try:
        assert again.search(SearchRequest(QUERY, "hybrid", limit=5)).hits
        assert again.stores.quick is not None and len(again.stores.quick) == 0
        assert again.semantic.quick._embedder is None and not again.semantic.quick._tried
    finally:
        again.close()


def test_a_deleted_file_takes_its_quick_vectors_along_and_ids_are_not_reused(quick_only: Workspace):
    quick_only.quick_pass()
    stores = quick_only.stores
    gone = set(quick_only.manifest.chunk_ids(["app/http.py"]))
    high = max(stores.quick.ids().tolist())
    (quick_only.root / "app" / "http.py").unlink()
    quick_only.index()
    assert gone and not gone & set(stores.quick.ids().tolist())
    (quick_only.root / "app" / "http.py").write_text("def again():\n    return 1\n", encoding="utf-8")
    quick_only.index()
    assert quick_only.quick_pass() > 0
    assert min(quick_only.manifest.chunk_ids(["app/http.py"])) > high


def test_chunks_deleted_while_the_quick_store_was_not_loaded_leave_it_at_the_next_load(tmp_path: Path):
    w = _workspace(tmp_path)
    w.index()
    w.load_semantic()
    w.quick_pass()
    gone = set(w.manifest.chunk_ids(["app/http.py"]))
    w.close()
    (w.root / "app" / "http.py").unlink()
    w = Workspace(w.root, w.settings)  # an index run without the models (sylk index --no-embed)
    w.index()
    w.close()
    w = Workspace(w.root, w.settings)
    try:
        w.load_semantic()
        assert w.stores.quick is not None and len(w.stores.quick) > 0
        assert not gone & set(w.stores.quick.ids().tolist())
    finally:
        w.close()


def test_quick_pass_off_leaves_chunks_to_the_model(tmp_path: Path):
    w = _workspace(tmp_path, quick_pass=False)
    try:
        w.index()
        w.load_semantic()
        assert w.quick_pass() == 0 and w.stores.quick is None
        assert not (tmp_path / "index" / QUICK_VECTORS_DIR).exists()
        result = w.search(SearchRequest(QUERY, "hybrid", limit=3))
        assert result.notes == "semantic search is not ready yet: no chunk is embedded"
    finally:
        w.close()


# --- the calibration (pure logic: vectors given by hand) ---------------------------------

class _Vectors:
    def __init__(self, rows: dict[int, np.ndarray], sample: np.ndarray) -> None:
        self.rows, self._sample = rows, sample

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        scored = sorted(((i, float(v @ query)) for i, v in self.rows.items()), key=lambda t: -t[1])
        return scored[:k]

    def sample(self, n: int) -> np.ndarray:
        return self._sample[:n]

    def __len__(self) -> int:
        return len(self.rows)


class _Embedder:
    model_id = "hand"

    def __init__(self, query: np.ndarray) -> None:
        self.query = query

    def embed_query(self, text: str) -> np.ndarray:
        return self.query


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_a_quick_hit_counts_by_how_far_it_stands_out_in_its_own_space():
    q = _unit(1, 0)
    # the model's typical score for this query: mean 0.1, spread 0.1 (half 0.0, half 0.2)
    main_sample = np.array([[0.0, 1.0], [0.2, 0.98]] * (MIN_SAMPLE // 2), dtype=np.float32)
    # the quick model's: mean 0.5, spread 0.1 (half 0.4, half 0.6); its hit at 0.8 stands 3 spreads out
    quick_sample = np.array([[0.4, 0.9], [0.6, 0.8]] * (MIN_SAMPLE // 2), dtype=np.float32)
    main = VectorSpace(_Embedder(q), _Vectors({1: _unit(0.35, 0.94), 2: _unit(0.1, 1)}, main_sample))
    quick = VectorSpace(_Embedder(q), _Vectors({3: _unit(0.8, 0.6), 4: _unit(0.45, 0.89)}, quick_sample))
    found = dict(nearest("q", 4, main, quick))
    # 4's quick cosine 0.45 is below its space's typical 0.5: below the model's 2 at 0.1
    assert list(found) == [3, 1, 2, 4]
    assert found[3] == pytest.approx(0.1 + 0.1 * (0.8 - 0.5) / 0.1, abs=1e-3)  # 0.4, in the model's units
    assert found[1] == pytest.approx(float(_unit(0.35, 0.94) @ q))  # the model's own cosine, untouched


def test_a_chunk_in_both_spaces_counts_with_the_models_vector_and_a_tiny_space_uses_the_fallback():
    q = _unit(1, 0)
    main = VectorSpace(_Embedder(q), _Vectors({1: _unit(0.1, 1)}, np.zeros((1, 2), dtype=np.float32)))
    quick = VectorSpace(_Embedder(q), _Vectors({1: _unit(1, 0)}, np.zeros((1, 2), dtype=np.float32)))
    assert nearest("q", 5, main, quick) == [(1, pytest.approx(float(_unit(0.1, 1) @ q)))]
    only_quick = nearest("q", 5, None, quick)
    assert only_quick[0][0] == 1 and only_quick[0][1] > FALLBACK_MAIN[0]


def test_mcp_says_the_quick_model_stands_in_for_the_rest():
    from sylk.mcp.wire import semantic_json
    from sylk.search.results import IndexState

    partly = semantic_json(IndexState(10, 100, 30, 70, False, quick=70), "ready", None)
    assert partly["quickChunks"] == 70 and partly["complete"] is False
    assert partly["note"].startswith("30 of 100 chunks embedded; the other 70 are searched by the quick pass's")
    without = semantic_json(IndexState(10, 100, 30, 70, False), "ready", None)
    assert "quickChunks" not in without and without["note"].endswith("may miss the rest")
