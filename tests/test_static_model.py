"""The static embedding model: a token-vector table, a text the mean of its tokens' rows."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from sylk.config import EmbeddingSettings
from sylk.embed.loading import load_embedder
from sylk.embed.packaged import PACKAGED_TOKENIZER_DIR
from tokenizers import Tokenizer

VOCAB = 30522  # the MiniLM tokenizer's


def write_model(folder: Path, table: np.ndarray, **meta: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "vectors.npy", table)
    digest = hashlib.sha256((folder / "vectors.npy").read_bytes()).hexdigest()
    (folder / "model.json").write_text(json.dumps({"vectors_sha256": digest, **meta}), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def table() -> np.ndarray:
    return np.random.default_rng(3).standard_normal((VOCAB, 16)).astype(np.float16)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory, table: np.ndarray) -> Path:
    return write_model(tmp_path_factory.mktemp("static") / "tiny", table)


def tokenizer() -> Tokenizer:
    tok = Tokenizer.from_file(str(PACKAGED_TOKENIZER_DIR / "tokenizer.json"))
    tok.no_padding()  # tokenizer.json pads to 128
    tok.no_truncation()
    return tok


def expected(table: np.ndarray, text: str) -> np.ndarray:
    tok = tokenizer()
    ids = tok.encode(text, add_special_tokens=False).ids
    mean = table[ids].astype(np.float64).mean(axis=0)
    return (mean / np.linalg.norm(mean)).astype(np.float32)


def test_a_text_is_the_normalised_mean_of_its_token_rows(model_dir: Path, table: np.ndarray,
                                                         tmp_path: Path) -> None:
    embedder, message = load_embedder(EmbeddingSettings(model_path=str(model_dir)), tmp_path)
    assert message is None and embedder is not None
    assert embedder.dim == 16
    digest = json.loads((model_dir / "model.json").read_text())["vectors_sha256"]
    assert embedder.model_id == f"static:tiny@{digest[:12]}"
    texts = ["def parse_header(line): return line.split(':')", "x", "retry with backoff " * 3]
    vectors = embedder.embed(texts)
    for text, vector in zip(texts, vectors, strict=True):
        np.testing.assert_allclose(vector, expected(table, text), atol=1e-5)
    np.testing.assert_allclose(embedder.embed_query(texts[0]), vectors[0], atol=1e-6)


def test_an_empty_text_and_a_batch_with_one_keep_their_places(model_dir: Path, table: np.ndarray,
                                                               tmp_path: Path) -> None:
    embedder, _ = load_embedder(EmbeddingSettings(model_path=str(model_dir)), tmp_path)
    assert embedder is not None
    vectors = embedder.embed(["open a socket", "", "close the socket"])
    assert not vectors[1].any()
    np.testing.assert_allclose(vectors[0], expected(table, "open a socket"), atol=1e-5)
    np.testing.assert_allclose(vectors[2], expected(table, "close the socket"), atol=1e-5)


def test_max_tokens_truncates_the_mean(model_dir: Path, table: np.ndarray, tmp_path: Path) -> None:
    embedder, _ = load_embedder(EmbeddingSettings(model_path=str(model_dir), max_tokens=8), tmp_path)
    assert embedder is not None and embedder.max_tokens == 8
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu"
    tok = tokenizer()
    first = tok.decode(tok.encode(text, add_special_tokens=False).ids[:8])
    np.testing.assert_allclose(embedder.embed([text])[0], expected(table, first), atol=1e-5)


def test_a_damaged_table_is_refused_with_a_message(model_dir: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "model.json").write_bytes((model_dir / "model.json").read_bytes())
    data = bytearray((model_dir / "vectors.npy").read_bytes())
    data[-1] ^= 0xFF
    (damaged / "vectors.npy").write_bytes(bytes(data))
    embedder, message = load_embedder(EmbeddingSettings(model_path=str(damaged)), tmp_path)
    assert embedder is None
    assert f"could not load the static model in {damaged}" in message
    assert "does not match the sha256" in message


def test_a_table_of_the_wrong_vocabulary_is_refused(tmp_path: Path) -> None:
    folder = write_model(tmp_path / "short", np.zeros((100, 8), dtype=np.float16))
    embedder, message = load_embedder(EmbeddingSettings(model_path=str(folder)), tmp_path)
    assert embedder is None
    assert "not one row per token of the tokenizer's 30522" in message


# --- refining a table on code (tools/refine_static.py) -----------------------------------

def test_refining_moves_a_table_toward_the_teachers_embeddings() -> None:
    """A 'teacher' whose embeddings are the mean rows of a hidden table; refining a noisy
    copy on some texts brings held-out texts closer to the teacher, and stops by itself."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    try:
        import refine_static
    finally:
        sys.path.pop(0)
    tok = Tokenizer.from_file(str(PACKAGED_TOKENIZER_DIR / "tokenizer.json"))
    words = "parse request header cache retry socket buffer token stream close open read write".split()
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(words, size=12)) for _ in range(240)]
    vocab = tok.get_vocab_size()
    hidden = rng.normal(size=(vocab, 16)).astype(np.float32)
    start = hidden + rng.normal(scale=1.5, size=hidden.shape).astype(np.float32)

    def teacher(bag):
        means, norms = bag.means(hidden)
        return means / norms[:, None]

    fit_bag = refine_static.Bags(tok, texts[:200], 128)
    held_bag = refine_static.Bags(tok, texts[200:], 128)
    refined, figures = refine_static.fit(start, fit_bag, teacher(fit_bag), held_bag, teacher(held_bag),
                                         steps=400, lr=0.05, l2=0.0, log=lambda _: None)
    assert figures["held_out_cosine_after"] > figures["held_out_cosine_before"] + 0.1
    assert figures["held_out_cosine_after"] == pytest.approx(
        refine_static.mean_cosine(refined, held_bag, teacher(held_bag)), abs=1e-3)
    # rows of tokens no text holds are left as they were
    unseen = np.setdiff1d(np.arange(vocab), fit_bag.ids)
    assert np.array_equal(refined[unseen], start[unseen])


# --- the packaged table (the quick pass's model) ---------------------------------------------

def test_the_packaged_table_is_int8_rows_with_a_scale_each_and_matches_its_notice() -> None:
    from sylk.embed.static_encoder import PACKAGED_STATIC_DIR, SCALES, VECTORS, read_meta
    from sylk.embed.static_encoder import table as read_table

    meta = read_meta(PACKAGED_STATIC_DIR)
    rows, scales = np.load(PACKAGED_STATIC_DIR / VECTORS), np.load(PACKAGED_STATIC_DIR / SCALES)
    assert rows.dtype == np.int8 and rows.shape == (VOCAB, meta["dims"]) and scales.shape == (VOCAB,)
    notice = (PACKAGED_STATIC_DIR / "NOTICE").read_text(encoding="utf-8")
    for name in (VECTORS, SCALES):
        digest = hashlib.sha256((PACKAGED_STATIC_DIR / name).read_bytes()).hexdigest()
        assert meta[f"{name.split('.')[0]}_sha256"] == digest
        assert any(line.split() == [name, digest] for line in notice.splitlines())
    assert "Apache License, Version 2.0" in (PACKAGED_STATIC_DIR / "LICENSE").read_text(encoding="utf-8")
    full = read_table(PACKAGED_STATIC_DIR)
    assert np.allclose(full, rows.astype(np.float32) * scales[:, None])


def test_a_damaged_scale_file_is_refused(tmp_path: Path) -> None:
    from sylk.embed.static_encoder import PACKAGED_STATIC_DIR

    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("vectors.npy", "scales.npy", "model.json"):
        (copy / name).write_bytes((PACKAGED_STATIC_DIR / name).read_bytes())
    data = bytearray((copy / "scales.npy").read_bytes())
    data[-1] ^= 0xFF
    (copy / "scales.npy").write_bytes(bytes(data))
    embedder, message = load_embedder(EmbeddingSettings(model_path=str(copy)), tmp_path)
    assert embedder is None and "scales.npy does not match the sha256" in message


def test_the_build_tools_quantization_keeps_every_text_where_it_was() -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    from build_static_model import quantized

    table = np.random.default_rng(5).standard_normal((VOCAB, 32)).astype(np.float32)
    table[7] = 0  # a row of zeros keeps a zero scale
    rows, scales = quantized(table)
    back = rows.astype(np.float32) * scales[:, None]
    assert rows.dtype == np.int8 and scales[7] == 0 and not back[7].any()
    tok = tokenizer()
    for text in ("def retry_with_backoff(attempts):", "parse the configuration file"):
        ids = tok.encode(text, add_special_tokens=False).ids
        a, b = table[ids].mean(axis=0), back[ids].mean(axis=0)
        assert float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)) > 0.999


def test_the_quick_stores_identity_is_the_one_the_loaded_model_gives() -> None:
    from sylk.embed.loading import load_quick_embedder
    from sylk.embed.static_encoder import packaged_static_identity

    embedder, why = load_quick_embedder()
    assert embedder is not None, why
    assert packaged_static_identity() == (embedder.model_id, embedder.dim)
