"""The packaged model run by Sylk itself: a BERT-style ONNX encoder with mean pooling
(what sentence-transformers and fastembed do for all-MiniLM-L6-v2), on an
onnxruntime session whose options are ours.

Running it without fastembed is a memory decision (issue 14): fastembed's import
costs 33 MB of modules a server never uses, it pads its tokenizer (so counting
tokens needed a second, unpadded copy of it), and it builds the session with no
way to keep the embedding table int8 (``int8_tables``). The vectors are the same:
the same tokens, the same graph up to the order of two multiplications of equal
numbers, the same pooling.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from . import folded_model
from .int8_tables import int8_rows_model

log = logging.getLogger(__name__)

PAD_TOKEN_DEFAULT = "[PAD]"


def _session(model: str, threads: int | None) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # no memory arena: it keeps the largest batch's memory for the life of the process
    # (50-300 MB on top of the model), and its reuse bought no speed here
    options.enable_cpu_mem_arena = False
    if threads is not None:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = threads
    return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])


def _folded_session(source: Path, threads: int | None) -> Any:
    """A session on the optimized copy of ``source`` (``folded_model``: a third of the
    start, and no peak of memory for the optimization), on ``source`` itself when the copy cannot be had."""
    folded = folded_model.folded_model(source)
    if folded is not None:
        try:
            return _session(str(folded), threads)
        except Exception as e:  # noqa: BLE001 - a damaged copy: ours to remove, built again next time
            log.warning("the optimized copy %s failed to load (%s); running %s", folded.parent, e, source.name)
            folded_model.forget(folded)
    return _session(str(source), threads)


def _read_json(path: Path) -> dict[str, Any]:
    value = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(value, dict):
        raise ValueError(f"{path.name} is not a JSON object")
    return value


class OnnxEncoder:
    """An ``embedder.Encoder``: one mean-pooled, L2-normalised float32 row per text."""

    def __init__(self, model_dir: Path, threads: int | None = None) -> None:
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        config = _read_json(model_dir / "tokenizer_config.json")
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()  # batches are padded here, to their longest text
        self.model_limit = int(config.get("model_max_length") or 512)
        self.limit_tokens(self.model_limit)
        pad = config.get("pad_token") or PAD_TOKEN_DEFAULT
        pad_id = self.tokenizer.token_to_id(pad if isinstance(pad, str) else pad.get("content", ""))
        if pad_id is None:
            raise ValueError(f"the tokenizer in {model_dir} has no id for its pad token {pad!r}")
        self.pad_id = int(pad_id)
        self.session = _folded_session(int8_rows_model(model_dir), threads)
        self._inputs = {i.name for i in self.session.get_inputs()}
        if "input_ids" not in self._inputs:
            raise ValueError(f"the model in {model_dir} takes no input_ids (inputs: {sorted(self._inputs)})")

    def limit_tokens(self, max_tokens: int) -> int:
        """Truncate at ``max_tokens``, never past the model's own limit; the limit in force."""
        limit = max(1, min(int(max_tokens), self.model_limit))
        self.tokenizer.enable_truncation(max_length=limit)
        return limit

    def token_counts(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self.tokenizer.encode_batch(texts)]

    def encode(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        """``query`` changes nothing: MiniLM embeds queries and code alike, without prefixes."""
        encodings = self.tokenizer.encode_batch(texts)
        width = max((len(e.ids) for e in encodings), default=0)
        ids = np.full((len(texts), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(texts), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        feed = {"input_ids": ids}
        if "attention_mask" in self._inputs:
            feed["attention_mask"] = mask
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feed)[0]
        # the mean over real tokens, summed in float64 (as sentence-transformers does)
        summed = np.sum(hidden, axis=1, where=mask[:, :, None].astype(bool), dtype=np.float64)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return (pooled / norms).astype(np.float32)
