from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest
from sylk.store.vectors import INDEX_FILE, META_FILE, VectorIndex

DIM = 16
MODEL = "test-model@1"
# vectors are stored with one byte per component over [-r, r] (r = 1 at 16 dimensions):
# a component comes back within r / 255 (4e-3), a cosine within 4e-3 * sqrt(16)
BYTE = 5e-3
COSINE = 2e-2


def unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


def random_vectors(n: int, seed: int = 0) -> np.ndarray:
    return unit(np.random.default_rng(seed).normal(size=(n, DIM)))


@pytest.fixture
def index(tmp_path: Path) -> VectorIndex:
    return VectorIndex.open(tmp_path / "idx", MODEL, DIM)


def test_empty_index_answers_nothing(index: VectorIndex) -> None:
    assert len(index) == 0
    assert index.search(random_vectors(1)[0], 5) == []
    assert index.rebuilt_reason is None


def test_search_finds_the_nearest_vector_first(index: VectorIndex) -> None:
    vectors = random_vectors(50)
    ids = np.arange(1000, 1050, dtype=np.int64)
    index.add(ids, vectors)
    hits = index.search(vectors[7], 3)
    assert hits[0][0] == 1007
    assert hits[0][1] == pytest.approx(1.0, abs=COSINE)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert len(index.search(vectors[0], 500)) == 50  # k past the size is fine


def test_add_replaces_vectors_under_the_same_id(index: VectorIndex) -> None:
    a, b = random_vectors(2, seed=1)
    index.add([5], a[None])
    index.add([5], b[None])
    assert len(index) == 1
    np.testing.assert_allclose(index.vectors_for([5])[0], b, atol=BYTE)
    assert index.search(b, 1) == [(5, pytest.approx(1.0, abs=COSINE))]


def test_repeated_ids_in_one_add_keep_the_last_vector(index: VectorIndex) -> None:
    a, b = random_vectors(2, seed=2)
    index.add([9, 9], np.stack([a, b]))
    assert len(index) == 1
    np.testing.assert_allclose(index.vectors_for([9])[0], b, atol=BYTE)


def test_remove_drops_the_ids_and_ignores_unknown_ones(index: VectorIndex) -> None:
    vectors = random_vectors(10)
    index.add(np.arange(10), vectors)
    assert index.remove([2, 3, 99]) == 2
    assert len(index) == 8
    assert sorted(index.ids().tolist()) == [0, 1, 4, 5, 6, 7, 8, 9]
    assert 2 not in {i for i, _ in index.search(vectors[2], 10)}
    with pytest.raises(KeyError, match="2"):
        index.vectors_for([2])
    np.testing.assert_allclose(index.vectors_for([4, 0]), vectors[[4, 0]], atol=BYTE)


def test_wrong_shapes_are_refused(index: VectorIndex) -> None:
    with pytest.raises(ValueError, match="shape"):
        index.add([1, 2], random_vectors(3))
    with pytest.raises(ValueError, match="shape"):
        index.add([1], np.ones((1, DIM + 1), dtype=np.float32))


def test_save_and_open_round_trip(tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    index = VectorIndex.open(folder, MODEL, DIM)
    vectors = random_vectors(20, seed=3)
    ids = np.arange(20, dtype=np.int64) * 7 + (1 << 40)  # large ids survive
    index.add(ids, vectors)
    index.remove([ids[0]])
    index.save()
    assert not index.dirty
    assert sorted(p.name for p in folder.iterdir()) == [INDEX_FILE, META_FILE]  # no temp files left

    again = VectorIndex.open(folder, MODEL, DIM)
    assert again.rebuilt_reason is None
    assert len(again) == 19
    assert sorted(again.ids().tolist()) == sorted(ids[1:].tolist())
    np.testing.assert_allclose(again.vectors_for(ids[1:]), vectors[1:], atol=BYTE)
    assert again.search(vectors[5], 1)[0][0] == ids[5]
    assert json.loads((folder / META_FILE).read_text())["model_id"] == MODEL


@pytest.mark.parametrize(
    ("model", "dim", "reason"),
    [
        pytest.param("other-model", DIM, "other-model", id="other-model"),
        pytest.param(MODEL, DIM * 2, "32 dims", id="other-dim"),
    ],
)
def test_another_model_starts_empty_and_says_why(tmp_path: Path, model: str, dim: int, reason: str) -> None:
    folder = tmp_path / "idx"
    index = VectorIndex.open(folder, MODEL, DIM)
    index.add(np.arange(5), random_vectors(5))
    index.save()
    other = VectorIndex.open(folder, model, dim)
    assert len(other) == 0
    assert other.rebuilt_reason is not None
    assert reason in other.rebuilt_reason and "rebuilding" in other.rebuilt_reason
    # once saved, the new model's vectors are what the folder holds
    other.add([1], unit(np.ones((1, dim))))
    other.save()
    assert VectorIndex.open(folder, model, dim).rebuilt_reason is None
    assert len(VectorIndex.open(folder, model, dim)) == 1


def _saved(folder: Path) -> None:
    index = VectorIndex.open(folder, MODEL, DIM)
    index.add(np.arange(30), random_vectors(30))
    index.save()


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda f: f.joinpath(INDEX_FILE).write_bytes(f.joinpath(INDEX_FILE).read_bytes()[:100]),
                     id="truncated-index"),
        pytest.param(lambda f: f.joinpath(INDEX_FILE).write_bytes(b"\x00garbage" * 50), id="garbage-index"),
        pytest.param(lambda f: f.joinpath(META_FILE).write_text("{not json"), id="garbage-meta"),
        pytest.param(lambda f: f.joinpath(META_FILE).unlink(), id="missing-meta"),
        pytest.param(lambda f: f.joinpath(INDEX_FILE).unlink(), id="missing-index"),
    ],
)
def test_damaged_files_start_empty_with_a_reason(tmp_path: Path, damage) -> None:
    folder = tmp_path / "idx"
    _saved(folder)
    damage(folder)
    index = VectorIndex.open(folder, MODEL, DIM)
    assert len(index) == 0
    assert index.rebuilt_reason and "rebuilding" in index.rebuilt_reason
    index.add([1], random_vectors(1))  # and it works from there
    index.save()
    assert len(VectorIndex.open(folder, MODEL, DIM)) == 1


def test_garbage_with_a_matching_size_is_still_caught(tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    _saved(folder)
    path = folder / INDEX_FILE
    path.write_bytes(b"\xff" * path.stat().st_size)
    index = VectorIndex.open(folder, MODEL, DIM)
    assert len(index) == 0 and "damaged" in (index.rebuilt_reason or "")


def test_concurrent_adds_removes_and_searches(index: VectorIndex) -> None:
    errors: list[BaseException] = []
    query = random_vectors(1, seed=9)[0]

    def writer(offset: int) -> None:
        try:
            for round_ in range(40):
                ids = np.arange(offset, offset + 10) + round_ % 3
                index.add(ids, random_vectors(10, seed=offset + round_))
                index.remove(ids[:2])
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    def reader() -> None:
        try:
            for _ in range(200):
                for i, score in index.search(query, 5):
                    assert -1.01 <= score <= 1.01 and i >= 0
                len(index)
                index.ids()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(o,)) for o in (0, 1000, 2000)]
    threads += [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(index) == len(set(index.ids().tolist())) == 3 * 10


def _float32_index():
    import faiss

    return faiss.IndexIDMap2(faiss.IndexFlatIP(DIM))


def _half_precision_index():
    import faiss

    return faiss.IndexIDMap2(faiss.IndexScalarQuantizer(DIM, faiss.ScalarQuantizer.QT_fp16,
                                                        faiss.METRIC_INNER_PRODUCT))


@pytest.mark.parametrize(("old_format", "make", "shrink"), [(1, _float32_index, 0.4), (2, _half_precision_index, 0.7)],
                         ids=["float32", "half-precision"])
def test_an_older_index_is_converted_on_open_and_saved_smaller(tmp_path: Path, old_format: int, make,
                                                               shrink: float) -> None:
    import faiss

    folder = tmp_path / "old"
    folder.mkdir()
    vectors = random_vectors(200, seed=3)
    ids = np.arange(500, 700, dtype=np.int64)
    old = make()
    old.add_with_ids(vectors, ids)
    faiss.write_index(old, str(folder / INDEX_FILE))
    old_bytes = (folder / INDEX_FILE).stat().st_size
    (folder / META_FILE).write_text(json.dumps({"format": old_format, "model_id": MODEL, "dim": DIM, "count": 200,
                                                "bytes": old_bytes}))

    index = VectorIndex.open(folder, MODEL, DIM)
    assert index.rebuilt_reason is None  # nothing is thrown away
    assert len(index) == 200 and index.dirty
    assert [i for i, _ in index.search(vectors[42], 3)][0] == 542
    np.testing.assert_allclose(index.vectors_for([542])[0], vectors[42], atol=BYTE)
    index.save()
    again = VectorIndex.open(folder, MODEL, DIM)
    assert not again.dirty and json.loads((folder / META_FILE).read_text())["format"] == 3
    assert (folder / INDEX_FILE).stat().st_size < shrink * old_bytes
    assert [i for i, _ in again.search(vectors[42], 3)][0] == 542
    assert sorted(again.ids().tolist()) == ids.tolist()


def test_the_range_set_by_a_small_first_add_holds_the_vectors_after_it(index: VectorIndex) -> None:
    """One short vector first (small components), then vectors that reach further: none
    is clipped, since the range never starts narrower than unit vectors spread."""
    first = unit(np.full((1, DIM), 1.0))  # every component 0.25
    index.add([0], first)
    later = unit(np.eye(DIM)[:4] + 0.01)  # one component near 1
    index.add([1, 2, 3, 4], later)
    np.testing.assert_allclose(index.vectors_for([1, 2, 3, 4]), later, atol=BYTE)
    assert [i for i, _ in index.search(later[2], 1)] == [3]


def test_nearest_neighbours_of_real_sized_vectors_survive_the_byte_per_component(tmp_path: Path) -> None:
    """384-dimensional unit vectors clustered as embeddings are: the top 10 by exact cosine
    and by the stored index agree almost everywhere."""
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(50, 384))
    vectors = (centres[rng.integers(0, 50, 5000)] + rng.normal(scale=0.8, size=(5000, 384))).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = VectorIndex.open(tmp_path / "big", MODEL, 384)
    for start in range(0, 5000, 256):  # as an embedding pass adds them
        index.add(np.arange(start, min(start + 256, 5000)), vectors[start : start + 256])
    queries = vectors[rng.choice(5000, 100, replace=False)] + rng.normal(scale=0.05, size=(100, 384))
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    overlap = np.mean([len(set(e.tolist()) & {i for i, _ in index.search(q, 10)}) / 10
                       for q, e in zip(queries, exact, strict=True)])
    assert overlap >= 0.97


def test_an_index_of_another_faiss_kind_is_rebuilt_with_the_reason(tmp_path: Path) -> None:
    import faiss

    folder = tmp_path / "hnsw"
    folder.mkdir()
    other = faiss.IndexIDMap2(faiss.IndexHNSWFlat(DIM, 8, faiss.METRIC_INNER_PRODUCT))
    other.add_with_ids(random_vectors(10), np.arange(10, dtype=np.int64))
    faiss.write_index(other, str(folder / INDEX_FILE))
    (folder / META_FILE).write_text(json.dumps({"format": 1, "model_id": MODEL, "dim": DIM, "count": 10,
                                                "bytes": (folder / INDEX_FILE).stat().st_size}))
    index = VectorIndex.open(folder, MODEL, DIM)
    assert len(index) == 0
    assert "IndexHNSWFlat" in (index.rebuilt_reason or "")


def test_a_search_on_a_fresh_thread_scans_with_one_openmp_thread(index: VectorIndex) -> None:
    """OpenMP keeps its thread count per thread: a search on a thread of the language
    server's pool must not wake one spinning FAISS worker per core (they fight the
    embedder for the cores)."""
    import faiss

    vectors = random_vectors(20)
    index.add(np.arange(20), vectors)
    seen: list[tuple[int, int]] = []

    def search() -> None:
        before = faiss.omp_get_max_threads()
        index.search(vectors[3], 2)
        seen.append((before, faiss.omp_get_max_threads()))

    t = threading.Thread(target=search)
    t.start()
    t.join()
    before, after = seen[0]
    if before == 1:
        pytest.skip("this machine gives OpenMP one thread anyway")
    assert after == 1
