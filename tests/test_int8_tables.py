"""The packaged model runs without fastembed, with its embedding tables kept int8
(sylk.embed.int8_tables, onnx_encoder): the same vectors, a smaller model in memory."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from sylk.config import MODEL_ID_DEFAULT, EmbeddingSettings
from sylk.embed import int8_tables
from sylk.embed.embedder import Embedder
from sylk.embed.fastembed_encoder import FastembedEncoder
from sylk.embed.int8_tables import REWRITTEN_NAME, gather_int8_rows, int8_rows_model
from sylk.embed.loading import load_embedder
from sylk.embed.onnx_encoder import OnnxEncoder
from sylk.embed.packaged import PACKAGED_MODEL_ID, assemble_packaged_model
from sylk.embed.protobuf_wire import read_fields, strings, write_fields

INT8 = 3  # onnx TensorProto.DataType


def _real_code() -> list[str]:
    """Functions of the standard library's json and email packages, whole files cut in parts."""
    import json as json_pkg

    root = Path(json_pkg.__file__).parent.parent
    texts: list[str] = []
    for path in sorted((root / "json").glob("*.py")) + sorted((root / "email").glob("*.py"))[:6]:
        source = path.read_text(encoding="utf-8")
        texts += [part for part in source.split("\ndef ") if part.strip()][:12]
    return texts


CODE = _real_code()


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path, reason = assemble_packaged_model(tmp_path_factory.mktemp("sylk-cache"))
    assert path is not None, reason
    return path


def _session(path: Path) -> ort.InferenceSession:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def _feed(session: ort.InferenceSession, encoder: OnnxEncoder, texts: list[str]) -> dict[str, np.ndarray]:
    rows = [e.ids for e in encoder.tokenizer.encode_batch(texts)]
    width = max(map(len, rows))
    ids = np.array([r + [encoder.pad_id] * (width - len(r)) for r in rows], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": (ids != encoder.pad_id).astype(np.int64),
            "token_type_ids": np.zeros_like(ids)}
    return {i.name: feed[i.name] for i in session.get_inputs()}


def _gathered_tables(model: bytes) -> dict[str, int]:
    """{initializer read by a Gather: its data type}."""
    graph = read_fields(next(f.value for f in read_fields(model) if f.number == 7))
    types = {}
    for f in graph:
        if f.number == 5:
            tensor = read_fields(f.value)
            types[strings(tensor, 8)[0]] = next(int(t.value) for t in tensor if t.number == 2)
    gathered = {}
    for f in graph:
        if f.number == 1:
            node = read_fields(f.value)
            if strings(node, 4) == ["Gather"] and strings(node, 1)[0] in types:
                gathered[strings(node, 1)[0]] = types[strings(node, 1)[0]]
    return gathered


def test_the_word_embedding_table_stays_int8(model_dir: Path) -> None:
    original = (model_dir / "model.onnx").read_bytes()
    rewritten = int8_rows_model(model_dir)
    assert rewritten.name == REWRITTEN_NAME
    before, after = _gathered_tables(original), _gathered_tables(rewritten.read_bytes())
    assert "inner.embeddings.word_embeddings.weight_q" not in before  # a float copy is gathered
    assert after["inner.embeddings.word_embeddings.weight_q"] == INT8
    assert after["inner.embeddings.position_embeddings.weight_q"] == INT8


def test_the_rewrite_changes_no_output(model_dir: Path) -> None:
    encoder = OnnxEncoder(model_dir)
    encoder.limit_tokens(128)
    original, rewritten = _session(model_dir / "model.onnx"), _session(int8_rows_model(model_dir))
    for start in range(0, len(CODE), 8):
        batch = CODE[start : start + 8]
        a = original.run(None, _feed(original, encoder, batch))[0]
        b = rewritten.run(None, _feed(rewritten, encoder, batch))[0]
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_a_model_without_the_pattern_is_left_alone(model_dir: Path) -> None:
    model = (model_dir / "model.onnx").read_bytes()
    once, tables = gather_int8_rows(model)
    assert tables == 2
    assert gather_int8_rows(once) == (once, 0)
    assert write_fields(read_fields(model)) == model  # what is not rewritten is written back as it was


def test_a_truncated_model_is_refused(tmp_path: Path, model_dir: Path) -> None:
    with pytest.raises(ValueError):
        gather_int8_rows((model_dir / "model.onnx").read_bytes()[:5000])


def test_the_packaged_model_embeds_as_fastembed_does(model_dir: Path) -> None:
    from fastembed import TextEmbedding

    ours, message = load_embedder(EmbeddingSettings(), model_dir.parent.parent)
    assert message is None and ours is not None
    fastembed = TextEmbedding(MODEL_ID_DEFAULT, specific_model_path=str(model_dir),
                              cache_dir=str(model_dir.parent.parent / "fastembed"))
    theirs = Embedder(FastembedEncoder(fastembed), PACKAGED_MODEL_ID, max_tokens=ours.max_tokens,
                      batch_size=ours.batch_size, source="fastembed")
    long_text = "def f():\n" + "    x = compute(x, y)\n" * 300  # cut at max_tokens by both
    texts = [*CODE, long_text, "", "x"]
    assert ours.token_lengths(texts).tolist() == theirs.token_lengths(texts).tolist()
    cosine = np.sum(ours.embed(texts) * theirs.embed(texts), axis=1)
    assert cosine.min() >= 0.99999
    query = "parse the header of an email message"
    assert float(ours.embed_query(query) @ theirs.embed_query(query)) >= 0.99999


def test_the_packaged_model_loads_without_fastembed(model_dir: Path, tmp_path: Path) -> None:
    import subprocess

    code = ("import sys; from pathlib import Path; from sylk.config import EmbeddingSettings; "
            "from sylk.embed.loading import load_embedder; "
            f"e, m = load_embedder(EmbeddingSettings(), Path({str(tmp_path)!r})); "
            "assert e is not None, m; e.embed(['def f(): pass']); "
            "print('fastembed' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"


def test_a_model_folder_that_cannot_be_written_runs_the_model_as_it_is(model_dir: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    folder = tmp_path / "read-only"
    shutil.copytree(model_dir, folder, ignore=shutil.ignore_patterns("*.folded-*"))
    (folder / REWRITTEN_NAME).unlink(missing_ok=True)

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(folder))

    monkeypatch.setattr(int8_tables.tempfile, "mkstemp", refuse)
    monkeypatch.setattr(int8_tables.tempfile, "mkdtemp", refuse)  # nor the folded copy (folded_model)
    assert int8_rows_model(folder) == folder / "model.onnx"
    assert OnnxEncoder(folder).encode(["def f(): pass"]).shape == (1, 384)
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in model_dir.iterdir()
                                                              if p.name != REWRITTEN_NAME and ".folded-" not in p.name)


def test_a_damaged_rewritten_model_is_written_again(tmp_path: Path) -> None:
    path, reason = assemble_packaged_model(tmp_path)
    assert path is not None, reason
    first, message = load_embedder(EmbeddingSettings(), tmp_path)
    assert message is None and first is not None
    rewritten = path / REWRITTEN_NAME
    good = rewritten.read_bytes()
    rewritten.write_bytes(good[:4096])
    again, message = load_embedder(EmbeddingSettings(), tmp_path)
    assert message is None and again is not None
    assert rewritten.read_bytes() == good
    np.testing.assert_array_equal(again.embed(CODE[:4]), first.embed(CODE[:4]))
