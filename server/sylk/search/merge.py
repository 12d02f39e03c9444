"""The results of several workspace folders as one (the language server serves each
folder from its own index)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import attrs

from .results import Hit, IndexState, SearchResult


@attrs.frozen
class MergedResult:
    """One result over several folders; ``folders[i]`` is the index (into the parts
    merged) of the folder ``result.hits[i]`` came from."""

    result: SearchResult
    folders: tuple[int, ...]


def merge_results(parts: Sequence[SearchResult], offset: int, limit: int) -> MergedResult:
    """Hits by score (a folder's order kept among equal scores), then the page; counts,
    facets and the index summed; the slowest folder's time; every folder's message."""
    ranked: list[tuple[int, Hit]] = sorted(((i, h) for i, p in enumerate(parts) for h in p.hits),
                                           key=lambda ih: -ih[1].score)
    page = ranked[offset:offset + limit]
    facets: dict[str, Counter[str]] = {}
    for p in parts:
        for name, values in p.facets.items():
            counts = facets.setdefault(name, Counter())
            for value, n in values:
                counts[value] += n
    index = IndexState(sum(p.index.files for p in parts), sum(p.index.chunks for p in parts),
                       sum(p.index.embedded for p in parts), sum(p.index.pending for p in parts),
                       all(p.index.ready for p in parts), any(p.index.indexing for p in parts),
                       sum(p.index.files_pending for p in parts))
    messages = sorted({p.message for p in parts if p.message})
    result = SearchResult(parts[0].query, parts[0].mode, max(p.took_ms for p in parts),
                          sum(p.total_hits for p in parts), [h for _i, h in page],
                          {name: c.most_common() for name, c in facets.items()}, index,
                          "; ".join(messages) or None)
    return MergedResult(result, tuple(i for i, _h in page))
