"""Fusing the lexical and the semantic ranking of one query into one list.

Two ways, compared on bench/relevance.py (the README's "How search works" has the
numbers):

``rrf``
    reciprocal rank fusion: score = sum of w / (k + rank) over the sides. Uses ranks
    only, so a side's confidence is lost: a lexical rank 1 that matched the whole
    name counts the same as a rank 1 that matched one common word.
``convex``
    each side's raw scores brought to [0, 1] over its first ``depth`` candidates
    (BM25 divided by the best BM25; cosine similarity min-max), then
    ``alpha * lexical + (1 - alpha) * semantic``, a side that did not find the chunk
    adding 0. ``alpha`` is the lexical share, chosen per query style
    (text/query_terms.py): an identifier leans on the lexical side. The request's
    weights scale each side on top.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from ..config import SearchSettings
from ..model import FUSIONS
from ..text.query_terms import IDENTIFIER, MIXED, NATURAL

CONVEX, RRF = FUSIONS
RRF_K = SearchSettings().rrf_k
# The lexical share of a convex fusion per query style.
ALPHA = {IDENTIFIER: 0.6, MIXED: 0.5, NATURAL: 0.5}
# Candidates of each side fused (at least): RRF does better on short lists, since a
# chunk ranked ~30th on both sides would beat one ranked first on one; convex does
# better on long ones, since a weak score counts for little.
DEPTH = {CONVEX: 100, RRF: 30}


@attrs.frozen(slots=True)
class Scored:
    """A candidate of one side: a chunk id and that side's raw score (BM25, cosine)."""

    id: int
    score: float


@attrs.frozen(slots=True)
class Fused:
    """A fused candidate, with what each side said of it (``explain``)."""

    id: int
    score: float
    lexical_rank: int | None = None
    semantic_rank: int | None = None
    lexical_score: float | None = None
    semantic_score: float | None = None


def rrf(rankings: Sequence[Sequence[int]], weights: Sequence[float], k: int = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal rank fusion: score(d) = sum_i w_i / (k + rank_i(d)), ranks from 1.
    Ties keep the order of first appearance (lexical first)."""
    scores: dict[int, float] = {}
    for ranking, w in zip(rankings, weights):
        for rank, doc in enumerate(ranking, 1):
            scores[doc] = scores.get(doc, 0.0) + w / (k + rank)
    order: dict[int, int] = {}
    for doc in (d for r in rankings for d in r):
        order.setdefault(doc, len(order))
    return sorted(scores.items(), key=lambda t: (-t[1], order[t[0]]))


def _by_top(side: Sequence[Scored]) -> dict[int, float]:
    """BM25 over the best BM25: the top lexical hit is 1, a weak match near 0."""
    top = max((c.score for c in side), default=0.0)
    return {c.id: c.score / top if top > 0 else 0.0 for c in side}


def _min_max(side: Sequence[Scored]) -> dict[int, float]:
    """Cosine similarities stretched over the candidates: they crowd into a narrow band
    (0.3 to 0.6 with all-MiniLM-L6-v2), so their raw values would weigh little."""
    if not side:
        return {}
    hi = max(c.score for c in side)
    lo = min(c.score for c in side)
    span = hi - lo
    return {c.id: (c.score - lo) / span if span > 0 else 1.0 for c in side}


def convex(lexical: Sequence[Scored], semantic: Sequence[Scored], alpha: float,
           weights: tuple[float, float] = (1.0, 1.0)) -> list[tuple[int, float]]:
    """``alpha * lexical + (1 - alpha) * semantic`` over normalised scores; ties keep
    the order of first appearance (lexical first)."""
    lex, sem = _by_top(lexical), _min_max(semantic)
    wl, ws = alpha * weights[0], (1.0 - alpha) * weights[1]
    order = list(dict.fromkeys([c.id for c in lexical] + [c.id for c in semantic]))
    scores = {d: wl * lex.get(d, 0.0) + ws * sem.get(d, 0.0) for d in order}
    position = {d: i for i, d in enumerate(order)}
    return sorted(scores.items(), key=lambda t: (-t[1], position[t[0]]))


def alpha_for(style: str, alpha: float | None = None, alphas: Mapping[str, float] = ALPHA) -> float:
    """The lexical share of a convex fusion: the request's, or its query style's."""
    return alphas.get(style, ALPHA[NATURAL]) if alpha is None else alpha


def fuse(method: str, lexical: Sequence[Scored], semantic: Sequence[Scored], *, depth: int, style: str,
         weights: tuple[float, float], k: int, alpha: float | None = None,
         alphas: Mapping[str, float] = ALPHA) -> list[Fused]:
    """The first ``depth`` candidates of each side fused by ``method``, with each
    side's rank (in the whole side list) and raw score kept for ``explain``."""
    lex = {c.id: (r, c.score) for r, c in enumerate(lexical, 1)}
    sem = {c.id: (r, c.score) for r, c in enumerate(semantic, 1)}
    lexical, semantic = lexical[:depth], semantic[:depth]
    if method == RRF:
        scored = rrf([[c.id for c in lexical], [c.id for c in semantic]], weights, k)
    elif method == CONVEX:
        scored = convex(lexical, semantic, alpha_for(style, alpha, alphas), weights)
    else:
        raise ValueError(f"fusion: one of {', '.join(FUSIONS)}, got {method!r}")
    out = []
    for d, score in scored:
        lr, ls = lex.get(d, (None, None))
        sr, ss = sem.get(d, (None, None))
        out.append(Fused(d, score, lr, sr, ls, ss))
    return out
