"""Searches over a front end's open workspace folders, written once for the language
server and the MCP server: each folder's index answers its part of the request
(search/merge.py's ``folder_request``), the answers are merged, and what the options
ask for beyond the hits (the files the hits import, the semantic side's readiness) is
added. The front ends convert the request in and the answer out, nothing else.

Runs on the caller's thread, one folder after the other (a hybrid search runs its two
sides in parallel already); a folder whose index closed on the way (cleared, rebuilt)
is left out, and none left is ``NoAnswer``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import attrs

from .engine.workspace import Workspace
from .errors import IndexClosed
from .search import agent
from .search.agent import RelatedFile
from .search.file_lines import file_text
from .search.merge import MergedLines, MergedResult, folder_request, merge_line_results, merge_results, \
    merge_symbols
from .search.query import GrepRequest, SearchRequest
from .search.symbol_search import SymbolFilter, SymbolHit
from .service import ServedFolder

T = TypeVar("T")
M = TypeVar("M", MergedResult, MergedLines, list[tuple[int, SymbolHit]])
REBUILT = "the index is being rebuilt; ask again in a moment"


class NoAnswer(Exception):
    """No folder could answer (each index closed on the way); the message says so."""


@attrs.frozen
class Answered(Generic[M]):
    """The merged answer, and the folders that gave it: ``merged.folders[i]`` indexes
    ``folders`` for hit ``i``."""

    folders: tuple[ServedFolder, ...]
    merged: M
    related: tuple[tuple[ServedFolder, RelatedFile], ...] = ()  # asked for with relatedFiles

    def folder_of_hits(self) -> list[ServedFolder]:
        return [self.folders[i] for i in self.merged.folders]

    @property
    def semantic_ready(self) -> bool:
        """Some folder's semantic side can answer (the follow-ups suggest a semantic search)."""
        return any(e.semantic_ready for e in self._engines())

    def semantic_state(self) -> tuple[str, str | None]:
        """The semantic side over the folders: ready when every one is, else the first
        other state; and the first folder's reason when it is unavailable."""
        states = [f.service.semantic_state() for f in self.folders]
        state = next((s for s in states if s != "ready"), "ready")
        return state, next((e.semantic_message for e in self._engines() if e.semantic_message), None)

    def _engines(self) -> list[Workspace]:
        return [e for f in self.folders if (e := f.engine) is not None]


def prepared(req: SearchRequest) -> SearchRequest:
    """``req`` as the folders answer it: follow-ups are read from the facets."""
    return attrs.evolve(req, facets=True) if req.follow_ups and not req.facets else req


def search(folders: Sequence[ServedFolder], req: SearchRequest) -> Answered[MergedResult]:
    """``req`` (``prepared``) answered by ``folders``, merged and paged, with the files the
    hits import when it asks for them."""
    each = folder_request(req, len(folders))
    answered, results = _each(folders, lambda e: e.search(each))
    merged = merge_results(results, req.offset, req.limit, len(folders))
    out = Answered(answered, merged)
    return attrs.evolve(out, related=related_files(out)) if req.related_files else out


def grep(folders: Sequence[ServedFolder], req: GrepRequest) -> Answered[MergedLines]:
    """A line search over ``folders``, merged and paged; PatternError (a FieldError) for a
    pattern that is not one."""
    each = folder_request(req, len(folders))
    answered, results = _each(folders, lambda e: e.grep(each))
    merged: MergedLines = merge_line_results(results, req.offset, req.limit, len(folders))
    return Answered(answered, merged)


def symbols(folders: Sequence[ServedFolder], query: str, limit: int,
            only: SymbolFilter | None = None) -> Answered[list[tuple[int, SymbolHit]]]:
    """The symbols of ``folders`` matching ``query``, each folder's best ``limit``, merged
    best first (each with the index of its folder in ``folders`` of the answer)."""
    answered, parts = _each(folders, lambda e: e.search_symbols(query, limit, only))
    return Answered(answered, merge_symbols(parts))


def related_files(answered: Answered[MergedResult]) -> tuple[tuple[ServedFolder, RelatedFile], ...]:
    """The files the hits' files import, folder by folder."""
    out: list[tuple[ServedFolder, RelatedFile]] = []
    hits = answered.merged.result.hits
    for i, folder in enumerate(answered.folders):
        mine = [h for h, f in zip(hits, answered.merged.folders, strict=True) if f == i]
        engine = folder.engine
        if mine and engine is not None:
            try:
                with engine.in_use():
                    files = engine.manifest.files()
            except IndexClosed:
                continue
            found = agent.related_files(mine, functools.partial(file_text, folder.root), files)
            out.extend((folder, r) for r in found)
    return tuple(out)


def _each(folders: Sequence[ServedFolder], run: Callable[[Workspace], T]) -> tuple[tuple[ServedFolder, ...], list[T]]:
    """Each folder's answer (``run`` on its engine), leaving out the folders whose index
    closed on the way; NoAnswer when none is left."""
    answered: list[ServedFolder] = []
    results: list[T] = []
    for folder in folders:
        engine = folder.engine
        if engine is None:
            continue
        try:
            results.append(run(engine))
        except IndexClosed:
            continue
        answered.append(folder)
    if not results:
        raise NoAnswer(REBUILT)
    return tuple(answered), results
