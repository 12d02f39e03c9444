"""The results of several workspace folders as one (the language server and the MCP
server serve each folder from its own index): what each folder is asked, and how the
answers are merged. The front ends decide the threads."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TypeVar

import attrs

from .grep import GrepResult
from .query import GrepRequest, SearchRequest
from .results import Hit, IndexState, SearchResult
from .symbol_search import SymbolHit

Request = TypeVar("Request", SearchRequest, GrepRequest)


def folder_request(req: Request, folders: int) -> Request:
    """The request each of ``folders`` folders answers: the request itself for one folder;
    for several, each folder's first offset+limit hits (merged, then paged). ``req``: a
    SearchRequest or a GrepRequest (whose limit None asks for every line)."""
    if folders <= 1:
        return req
    return attrs.evolve(req, offset=0, limit=None if req.limit is None else req.offset + req.limit)


@attrs.frozen
class MergedResult:
    """One result over several folders; ``folders[i]`` is the index (into the parts
    merged) of the folder ``result.hits[i]`` came from."""

    result: SearchResult
    folders: tuple[int, ...]


def merge_results(parts: Sequence[SearchResult], offset: int, limit: int, asked: int) -> MergedResult:
    """The answers of the ``asked`` folders that answered (``folder_request``): one folder
    asked answered the request itself, and its result is the page. Else hits by score (a
    folder's order kept among equal scores), then the page; counts, facets and the index
    summed; the slowest folder's time; every folder's message, but when some folder found
    hits, not the message of a folder that only says why it found none (the relevance
    floor, a package it does not hold: its index is complete)."""
    if asked <= 1:
        return MergedResult(parts[0], (0,) * len(parts[0].hits))
    ranked: list[tuple[int, Hit]] = sorted(((i, h) for i, p in enumerate(parts) for h in p.hits),
                                           key=lambda ih: -ih[1].score)
    page = ranked[offset:offset + limit]
    facets: dict[str, Counter[str]] = {}
    for p in parts:
        for name, values in p.facets.items():
            counts = facets.setdefault(name, Counter())
            for value, n in values:
                counts[value] += n
    result = SearchResult(parts[0].query, parts[0].mode, max(p.took_ms for p in parts),
                          sum(p.total_hits for p in parts), [h for _i, h in page],
                          {name: c.most_common() for name, c in facets.items()}, _index(parts),
                          _messages([p for p in parts if not _why_none(p)] if ranked else parts),
                          semantic_covered=_covered(parts),
                          semantic_quick=sum(p.semantic_quick for p in parts if p.semantic_covered is not None))
    return MergedResult(result, tuple(i for i, _h in page))


def _why_none(part: SearchResult) -> bool:
    """A folder's answer with no hits whose index is complete: its message can only say
    why it found nothing."""
    return not part.total_hits and part.index.ready and not part.index.indexing


@attrs.frozen
class MergedLines:
    """``merge_line_results``: one result over several folders; ``folders[i]`` is the
    index of the folder ``result.hits[i]`` came from."""

    result: GrepResult
    folders: tuple[int, ...]


def merge_line_results(parts: Sequence[GrepResult], offset: int, limit: int | None, asked: int) -> MergedLines:
    """The answers of the ``asked`` folders that answered (``folder_request``): one folder
    asked answered the request itself. Else the folders' matching lines one folder after
    the other (each asked for its first offset+limit), then the page; counts summed,
    lower bound or partial if any part is."""
    if asked <= 1:
        return MergedLines(parts[0], (0,) * len(parts[0].hits))
    lines = [(i, h) for i, p in enumerate(parts) for h in p.hits]
    page = lines[offset:None if limit is None else offset + limit]
    first = parts[0]
    result = GrepResult(first.query, first.mode, max(p.took_ms for p in parts), sum(p.total_hits for p in parts),
                        [h for _i, h in page], _index(parts), lower_bound=any(p.lower_bound for p in parts),
                        scanned=any(p.scanned for p in parts), partial=any(p.partial for p in parts),
                        files_searched=sum(p.files_searched for p in parts), message=_messages(parts))
    return MergedLines(result, tuple(i for i, _h in page))


def _index(parts: Sequence[SearchResult | GrepResult]) -> IndexState:
    """The ``index`` blocks of several folders summed."""
    return IndexState(sum(p.index.files for p in parts), sum(p.index.chunks for p in parts),
                      sum(p.index.embedded for p in parts), sum(p.index.pending for p in parts),
                      all(p.index.ready for p in parts), any(p.index.indexing for p in parts),
                      sum(p.index.files_pending for p in parts), sum(p.index.quick for p in parts))


def _covered(parts: Sequence[SearchResult]) -> int | None:
    """The chunks the folders' semantic sides searched; None where none ran."""
    ran = [p.semantic_covered for p in parts if p.semantic_covered is not None]
    return sum(ran) if ran else None


def _messages(parts: Sequence[SearchResult | GrepResult]) -> str | None:
    return "; ".join(sorted({p.message for p in parts if p.message})) or None


def merge_symbols(parts: Sequence[Sequence[SymbolHit]]) -> list[tuple[int, SymbolHit]]:
    """Symbol hits of several folders (each best first) as one list of (folder index, hit):
    the better matching tier first, then each folder's own order (one folder: its order)."""
    ranked = [(h.tier, i, f, h) for f, hits in enumerate(parts) for i, h in enumerate(hits)]
    if len(parts) > 1:
        ranked.sort(key=lambda t: (t[0], t[1]))
    return [(f, h) for _t, _i, f, h in ranked]
