"""A loaded embedding model (``Embedder``): length-grouped batching and truncation, and
``embed_cached``, which embeds only what the vector cache lacks. Which model is loaded
is ``loading``'s business; the shipped default is ``packaged``'s.

Cost drives the batching (issue 3): on a 2-core machine the int8 MiniLM runs
~180 sequences/s at 64 tokens, ~80/s at 128 and ~30/s at 256, flat in the batch
size from 4 to 32, while onnxruntime's memory grows with batch x length^2
(~+600 MB at 16 x 256 with its arena and memory patterns; fastembed's default
batch of 256 reached 10 GB on 2000 stdlib functions). So texts are truncated
to ``max_tokens``, sorted by token length, and cut into batches of at most
``batch_size * max_tokens`` padded tokens: no batch pads a short text to a long
one, and peak RSS stays near 400 MB. Results come back in input order.

A batch the model fails on (onnxruntime out of memory, a pathological text) is
halved and each half tried again, down to single texts; a text that fails alone is
left out and reported (``Batch.error``), and the rest goes on.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import NamedTuple, Protocol

import numpy as np

from ..store.embedding_cache import EmbeddingCache

# Characters kept before tokenising: a cheap bound so a megabyte of minified text
# is not tokenised in full only to be cut at max_tokens. Indented code averages
# 3-8 characters per token; 32 leaves a wide margin.
CHARS_PER_TOKEN_BOUND = 32
# A batch holds at most batch_size * max_tokens padded tokens, and at most this
# many times batch_size sequences (short texts gain nothing from huge batches).
MAX_BATCH_FACTOR = 4
PROBE_TEXT = "def probe(): return 1"
# A test hook, read in Embedder.__init__ and nowhere else: with SYLK_FAULT_EMBED=<text> in
# the environment, every batch of chunks holding <text> fails as a failing onnxruntime run
# would, so tests can drive a bad batch through a real server. Never set it otherwise.
FAULT_ENV = "SYLK_FAULT_EMBED"

log = logging.getLogger("sylk")

ProgressCallback = Callable[[int, int], None]
FailureCallback = Callable[[str, BaseException], None]


class Batch(NamedTuple):
    """What ``Embedder.iter_embed`` yields: indices into its texts and their vectors, or
    (``vectors`` None) one text the model failed on even alone, with the error."""
    indices: np.ndarray
    vectors: np.ndarray | None
    error: BaseException | None = None


class Encoder(Protocol):
    """A loaded model as the Embedder drives it (``onnx_encoder`` for the packaged model,
    ``fastembed_encoder`` for the others)."""

    def limit_tokens(self, max_tokens: int) -> int:
        """Truncate at ``max_tokens`` (never past the model's own limit); the limit in force."""

    def token_counts(self, texts: list[str]) -> list[int]:
        """Tokens per text after truncation, special tokens included."""

    def encode(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        """One row per text, in order."""


class Embedder:
    """A loaded model: ``embed`` for chunks, ``embed_query`` for queries.

    ``model_id`` names the vector space (the vector index records it);
    ``cache_key`` adds the truncation, since the same text embedded with another
    ``max_tokens`` gives another vector. Calls may come from several threads
    (onnxruntime sessions and tokenizers are thread-safe); one background embedding
    loop at a time keeps memory at the figure in the module docstring.
    """

    def __init__(self, model: Encoder, model_id: str, *, max_tokens: int, batch_size: int,
                 source: str) -> None:
        self._model = model
        self.model_id = model_id
        self.max_tokens = model.limit_tokens(max(8, int(max_tokens)))
        self.batch_size = max(1, int(batch_size))
        self.source = source
        self.cache_key = f"{model_id}#t{self.max_tokens}"
        self._max_chars = self.max_tokens * CHARS_PER_TOKEN_BOUND
        self._fault = os.environ.get(FAULT_ENV) or None
        probe = self._run([PROBE_TEXT], query=False)
        if probe.ndim != 2 or probe.shape[0] != 1 or probe.shape[1] == 0:
            raise ValueError(f"the model returned an embedding of shape {probe.shape}")
        if not np.all(np.isfinite(probe)):
            raise ValueError("the model returned a non-finite embedding")
        self.dim: int = int(probe.shape[1])

    def token_lengths(self, texts: Sequence[str]) -> np.ndarray:
        """Tokens per text after truncation (special tokens included)."""
        out = np.empty(len(texts), dtype=np.int64)
        # in slices: an Encoding carries tokens and offsets, 60k of them at once are GBs
        for start in range(0, len(texts), 1024):
            clipped = [t[: self._max_chars] for t in texts[start : start + 1024]]
            out[start : start + len(clipped)] = self._model.token_counts(clipped)
        return out

    def _run(self, texts: list[str], *, query: bool) -> np.ndarray:
        out = np.asarray(self._model.encode(texts, query=query), dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def batches(self, lengths: np.ndarray) -> list[np.ndarray]:
        """Indices grouped into batches by token length (shortest first)."""
        order = np.argsort(lengths, kind="stable")
        budget = self.batch_size * self.max_tokens
        max_count = self.batch_size * MAX_BATCH_FACTOR
        out: list[np.ndarray] = []
        start = 0
        for i in range(len(order)):
            count = i - start + 1
            # sorted ascending: the current text is the longest of the batch
            if count > 1 and (count > max_count or count * int(lengths[order[i]]) > budget):
                out.append(order[start:i])
                start = i
        if start < len(order):
            out.append(order[start:])
        return out

    def iter_embed(self, texts: Sequence[str]) -> Iterator[Batch]:
        """Yield the vectors one length-grouped batch at a time. A batch the model fails on
        is halved and each half tried again; a text that fails alone comes as a Batch with
        its error and no vectors."""
        texts = list(texts)
        if not texts:
            return
        if getattr(self._model, "length_free", False):  # no padding to save: slices in order
            slices = [np.arange(i, min(i + self.batch_size, len(texts))) for i in range(0, len(texts), self.batch_size)]
        else:
            slices = self.batches(self.token_lengths(texts))
        for idx in slices:
            yield from self._halving(idx, texts)

    def _halving(self, idx: np.ndarray, texts: list[str]) -> Iterator[Batch]:
        batch = [texts[i][: self._max_chars] for i in idx]
        try:
            if self._fault is not None and any(self._fault in t for t in batch):
                raise RuntimeError(f"injected failure ({FAULT_ENV})")
            vectors = self._run(batch, query=False)
        except Exception as exc:  # onnxruntime's errors, MemoryError, ...
            if len(idx) == 1:
                yield Batch(idx, None, exc)
                return
            log.debug("the model failed on a batch of %d texts (%s); trying halves", len(idx), exc)
            half = len(idx) // 2
            yield from self._halving(idx[:half], texts)
            yield from self._halving(idx[half:], texts)
            return
        yield Batch(idx, vectors)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (len(texts), dim), L2-normalised rows, in the order of ``texts``. Raises
        the model's error when it fails on a text even alone."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for batch in self.iter_embed(texts):
            if batch.vectors is None:
                assert batch.error is not None
                raise batch.error
            out[batch.indices] = batch.vectors
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """float32 (dim,), L2-normalised."""
        return self._run([text[: self._max_chars]], query=True)[0]


def embed_cached(
    embedder: Embedder,
    cache: EmbeddingCache | None,
    texts_by_hash: Mapping[str, str],
    progress: ProgressCallback | None = None,
    *,
    flush_every: int = 256,
    failed: FailureCallback | None = None,
) -> dict[str, np.ndarray]:
    """Vectors for every hash; only the cache misses are embedded.

    Misses are embedded in length-grouped batches, written to the cache every
    ``flush_every`` vectors (an interrupted run keeps what it finished), and
    reported as ``progress(done, total)`` over the misses, starting at
    ``(0, total)``. A callback may raise to cancel; what was flushed stays cached.
    A text the model fails on (even alone) is left out of the result and passed to
    ``failed`` (its hash, the error); it counts as done.
    """
    hashes = list(texts_by_hash)
    found = cache.get_many(embedder.cache_key, hashes) if cache is not None else {}
    misses = [h for h in hashes if h not in found]
    total = len(misses)
    if progress is not None:
        progress(0, total)
    pending: dict[str, np.ndarray] = {}
    done = 0
    try:
        for batch in embedder.iter_embed([texts_by_hash[h] for h in misses]):
            if batch.vectors is None:
                assert batch.error is not None
                for i in batch.indices:
                    if failed is not None:
                        failed(misses[i], batch.error)
            else:
                for i, vector in zip(batch.indices, batch.vectors, strict=True):
                    found[misses[i]] = vector
                    pending[misses[i]] = vector
            done += len(batch.indices)
            if cache is not None and len(pending) >= flush_every:
                cache.put_many(embedder.cache_key, pending)
                pending = {}
            if progress is not None:
                progress(done, total)
    finally:
        if cache is not None and pending:
            cache.put_many(embedder.cache_key, pending)
    return found
