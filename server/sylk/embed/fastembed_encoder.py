"""A model run by fastembed (a configured model directory, or a model by name): its
tokenizer truncated at Sylk's limit, and an unpadded copy of it to count tokens.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

log = logging.getLogger(__name__)


class FastembedEncoder:
    """An ``embedder.Encoder`` over a ``fastembed.TextEmbedding``."""

    def __init__(self, model: Any) -> None:
        self.model = model
        inner = getattr(model, "model", None)
        tokenizer = getattr(inner, "tokenizer", None)
        if tokenizer is None or not hasattr(tokenizer, "enable_truncation"):
            # texts are still cut by characters, and batches grouped by character length
            log.warning("fastembed's tokenizer is not reachable; grouping batches by characters")
            tokenizer = None
        self._tokenizer = tokenizer
        self._counter: Any = None

    def limit_tokens(self, max_tokens: int) -> int:
        """fastembed truncates at the model's limit (512 for MiniLM): set ours on its
        tokenizer, never past that limit (the position embeddings end there)."""
        if self._tokenizer is None:
            return max_tokens
        truncation = self._tokenizer.truncation or {}
        limit = truncation.get("max_length")
        if isinstance(limit, int) and limit > 0:
            max_tokens = min(max_tokens, limit)
        self._tokenizer.enable_truncation(max_length=max_tokens, direction=truncation.get("direction", "right"))
        from tokenizers import Tokenizer

        self._counter = Tokenizer.from_str(self._tokenizer.to_str())  # fastembed's pads every batch
        self._counter.no_padding()
        return max_tokens

    def token_counts(self, texts: list[str]) -> list[int]:
        if self._counter is None:
            return [len(t) // 4 + 2 for t in texts]
        return [len(e.ids) for e in self._counter.encode_batch(texts)]

    def encode(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        if query:
            rows = list(self.model.query_embed(texts))
        else:
            rows = list(self.model.embed(texts, batch_size=max(1, len(texts))))
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
