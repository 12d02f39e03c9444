"""A static embedding model: one vector per token, a text's embedding the mean of its
tokens' rows (the model2vec technique). ``tools/build_static_model.py`` builds the table
from the packaged MiniLM and says how; ``vectors.npy`` (int8 rows, with ``scales.npy``
holding one float32 scale per row; or float16 rows alone) and ``model.json`` (its
provenance and sha256) are all a model folder holds, the tokenizer is MiniLM's own.
Sylk ships one (``PACKAGED_STATIC_DIR``, see its NOTICE): the quick pass
(engine.embedding) embeds a workspace with it before the transformer does.

No transformer runs: a text costs a tokenisation and a gather, so a workspace is
embedded in seconds where the transformer takes minutes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from .packaged import PACKAGED_TOKENIZER_DIR, sha256

# Tokens per text when the setting allows more: a mean over more tokens costs little.
MODEL_LIMIT = 8192
VECTORS, SCALES, META = "vectors.npy", "scales.npy", "model.json"
PACKAGED_STATIC_DIR = Path(__file__).resolve().parents[1] / "models" / "static-minilm-256"
PACKAGED_STATIC_NAME = "sylk-static-minilm-256"


def read_meta(model_dir: Path) -> dict[str, Any]:
    meta = json.loads((model_dir / META).read_text(encoding="utf-8"))
    if not isinstance(meta, dict):
        raise ValueError(f"{model_dir / META} is not a JSON object")
    return meta


def is_static_model(model_dir: Path) -> bool:
    return (model_dir / VECTORS).is_file() and (model_dir / META).is_file()


def verified_id(model_dir: Path, name: str) -> str:
    """``name@<12 hex>`` of the table, after checking it against the sha256 its
    model.json records (a damaged table must not fill an index with wrong vectors)."""
    meta = read_meta(model_dir)
    digest = sha256(model_dir / VECTORS)
    if meta.get("vectors_sha256") != digest:
        raise ValueError(f"{model_dir / VECTORS} does not match the sha256 in {META}")
    if (model_dir / SCALES).exists() and meta.get("scales_sha256") != sha256(model_dir / SCALES):
        raise ValueError(f"{model_dir / SCALES} does not match the sha256 in {META}")
    return f"{name}@{digest[:12]}"


def packaged_static_identity() -> tuple[str, int]:
    """(model id, dimensions) of the packaged static model as its model.json records them,
    the id ``verified_id`` gives an intact table: the quick store is opened with them on
    every load (each ``sylk search``), so the 7.6 MiB table is not hashed there; it is
    checked when the model itself is loaded, before it embeds anything."""
    meta = read_meta(PACKAGED_STATIC_DIR)
    return f"{PACKAGED_STATIC_NAME}@{str(meta['vectors_sha256'])[:12]}", int(meta["dims"])


def table(model_dir: Path) -> np.ndarray:
    """The token table as float32: int8 rows times their scales, or float16 rows."""
    rows = np.load(model_dir / VECTORS)
    if rows.dtype == np.int8:
        scales = np.load(model_dir / SCALES)
        if scales.shape != rows.shape[:1]:
            raise ValueError(f"{model_dir / SCALES} has shape {scales.shape}, not one scale per row of "
                             f"{model_dir / VECTORS}")
        return rows.astype(np.float32) * scales.astype(np.float32)[:, None]
    # float16 on disk, float32 in memory: numpy converts float16 slowly, and a
    # conversion per gathered row cost ten times the gather (30k x 256: 31 MB)
    return rows.astype(np.float32)


class StaticEncoder:
    """An ``embedder.Encoder``: the mean of the text's token rows (normalised by the Embedder)."""

    # a text's cost is its own tokens, not the batch's longest: the Embedder need not sort
    # texts by length (a second tokenisation) to batch them
    length_free = True

    def __init__(self, model_dir: Path, tokenizer_dir: Path = PACKAGED_TOKENIZER_DIR) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.vectors = table(model_dir)
        if self.vectors.ndim != 2 or self.vectors.shape[0] != self.tokenizer.get_vocab_size():
            raise ValueError(f"{model_dir / VECTORS} has shape {self.vectors.shape}, not one row per token of "
                             f"the tokenizer's {self.tokenizer.get_vocab_size()}")
        self.limit_tokens(MODEL_LIMIT)

    def limit_tokens(self, max_tokens: int) -> int:
        limit = max(1, min(int(max_tokens), MODEL_LIMIT))
        self.tokenizer.enable_truncation(max_length=limit)
        return limit

    def token_counts(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self.tokenizer.encode_batch(texts, add_special_tokens=False)]

    def encode(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        """``query`` changes nothing: queries and code share the table."""
        encodings = self.tokenizer.encode_batch(texts, add_special_tokens=False)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        out = np.zeros((len(texts), self.vectors.shape[1]), dtype=np.float32)
        if lengths.sum() == 0:
            return out
        ids = np.concatenate([np.asarray(e.ids, dtype=np.int64) for e in encodings])
        rows = self.vectors[ids]
        nonempty = lengths > 0
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[nonempty]
        out[nonempty] = np.add.reduceat(rows, starts, axis=0) / lengths[nonempty, None]
        return out
