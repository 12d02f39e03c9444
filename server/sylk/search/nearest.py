"""The semantic side's nearest chunks, over the model's vectors and the quick pass's.

While the embedding model works through a workspace, the chunks it has not reached yet
have a vector of the quick pass (engine.embedding: the packaged static model), in a
space of its own. A cosine of one space says nothing in the other: the static model's
scores run higher (a query's mean cosine to the stdlib's chunks: about 0.26 against
MiniLM's 0.10) and its best chunk is not as good. So a quick hit's cosine is calibrated:
how far it stands above that query's typical score in the quick space (in standard
deviations, over a sample of the quick vectors), put on the model's scale by the same
query's typical score and spread over a sample of the model's vectors. Before the model
has embedded MIN_SAMPLE chunks, both typical figures are fixed ones (FALLBACK_*, measured
on a large corpus): a small workspace's sample understates how far a good hit stands out.
One list results, in the model's units (so ``minScore`` keeps its meaning).

Measured (bench/README.md, "Quick pass"): with 30% of the Python corpus embedded by
MiniLM and the rest by the static model, semantic MRR@10 on bench/relevance.py's
sentences is 0.354 calibrated, 0.314 with raw cosines mixed, 0.243 with the static
vectors left out (the state before the quick pass).
"""

from __future__ import annotations

from typing import Protocol

import attrs
import numpy as np

SAMPLE = 512  # vectors of each space a query is compared with to calibrate
MIN_SAMPLE = 32  # fewer: the space's typical score is taken from FALLBACK instead
# A query's (mean, standard deviation) of cosines over a workspace's chunks, averaged over
# bench/relevance.py's Python queries: the packaged MiniLM, and the packaged static model.
# Used while the model's space holds fewer than MIN_SAMPLE vectors.
FALLBACK_MAIN = (0.095, 0.085)
FALLBACK_QUICK = (0.26, 0.09)


class Embeds(Protocol):
    model_id: str

    def embed_query(self, text: str) -> np.ndarray: ...


class Vectors(Protocol):
    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]: ...

    def sample(self, n: int) -> np.ndarray: ...

    def __len__(self) -> int: ...


@attrs.frozen
class VectorSpace:
    """One model and the vectors it made."""

    embedder: Embeds
    vectors: Vectors

    def __len__(self) -> int:
        return len(self.vectors)


def _typical(space: VectorSpace, query: np.ndarray, fallback: tuple[float, float]) -> tuple[float, float]:
    """(mean, standard deviation) of the query's cosines to the space's vectors."""
    sample = space.vectors.sample(SAMPLE)
    if len(sample) < MIN_SAMPLE:
        return fallback
    scores = sample @ query
    return float(scores.mean()), max(float(scores.std()), 1e-6)


def nearest(query: str, k: int, main: VectorSpace | None, quick: VectorSpace | None = None) -> list[tuple[int, float]]:
    """The ``k`` chunks nearest ``query``, best first, with their cosine in the main
    model's units: the model's own for its chunks, a calibrated one for quick-pass chunks
    (a chunk in both counts with the model's vector)."""
    main = main if main is not None and len(main) else None
    quick = quick if quick is not None and len(quick) else None
    if main is None and quick is None:
        return []
    qm = main.embedder.embed_query(query) if main is not None else None
    found = main.vectors.search(qm, k) if main is not None else []
    if quick is None:
        return found
    qq = quick.embedder.embed_query(query)
    mean, spread = _typical(main, qm, FALLBACK_MAIN) if main is not None else FALLBACK_MAIN
    # the query's own spread in the quick space where the model's is known too; else both
    # typical figures (a small workspace's sample understates how far a good hit stands out)
    q_mean, q_spread = _typical(quick, qq, FALLBACK_QUICK) if (mean, spread) != FALLBACK_MAIN else FALLBACK_QUICK
    scores = dict(found)
    for cid, cosine in quick.vectors.search(qq, k):
        if cid not in scores:
            scores[cid] = mean + spread * (cosine - q_mean) / q_spread
    return sorted(scores.items(), key=lambda t: -t[1])[:k]
