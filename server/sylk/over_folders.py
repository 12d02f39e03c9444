"""Searches over a front end's open workspace folders, written once for the language
server and the MCP server: each folder's index answers its part of the request
(search/merge.py's ``folder_request``), the answers are merged, and what the options
ask for beyond the hits (the files the hits import, the semantic side's readiness) is
added. The front ends convert the request in and the answer out, nothing else.

Each folder answers the request made with its own settings (its search defaults, what
its ``search.exclude`` leaves out); the page is the first folder's. Runs on the caller's
thread, one folder after the other (a hybrid search runs its two sides in parallel
already); a folder whose index closed on the way (cleared, rebuilt) is left out, and
none left is ``NoAnswer``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Generic, TypeVar

import attrs

from .config import Settings
from .engine.workspace import Workspace
from .errors import IndexClosed
from .search import agent
from .search.agent import RelatedFile
from .search.file_lines import file_text
from .search.merge import MergedLines, MergedResult, folder_request, merge_line_results, merge_results, \
    merge_symbols
from .search.grep import GrepResult
from .search.query import GrepRequest, SearchRequest
from .search.results import SearchResult
from .search.symbol_search import SymbolFilter, SymbolHit
from .service import ServedFolder

T = TypeVar("T")
M = TypeVar("M", MergedResult, MergedLines, list[tuple[int, SymbolHit]])
REBUILT = "the index is being rebuilt; ask again in a moment"


F = TypeVar("F", bound=ServedFolder)


def holding(folders: Sequence[F], path: Path) -> tuple[F, str] | None:
    """The folder holding the absolute ``path`` (the innermost, for nested folders) and the
    path relative to its root ("" for the root itself): the path resolved (symlinks,
    as the index names files), else as written; None when no folder holds it. The one
    rule for a document of the LSP and a path given to MCP."""
    for candidate in dict.fromkeys((path.resolve(), Path(os.path.normpath(path)))):
        inside = [f for f in folders if candidate.is_relative_to(f.root)]
        if inside:
            folder = max(inside, key=lambda f: len(f.root.parts))
            rel = candidate.relative_to(folder.root).as_posix()
            return folder, "" if rel == "." else rel
    return None


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


def search(folders: Sequence[ServedFolder], build: Callable[[Settings], SearchRequest]) -> Answered[MergedResult]:
    """The request ``build`` makes with each folder's own settings (its defaults, what its
    ``search.exclude`` leaves out), answered by that folder, merged and paged (the first
    folder's page), with the files the hits import when it asks for them. QueryError for a
    folder whose settings make the request malformed."""
    if not folders:
        raise NoAnswer(REBUILT)
    page = prepared(build(folders[0].settings))

    def one(folder: ServedFolder, engine: Workspace) -> SearchResult:
        req = prepared(build(folder.settings)) if folder is not folders[0] else page
        return engine.search(folder_request(attrs.evolve(req, offset=page.offset, limit=page.limit), len(folders)))
    answered, results = _each(folders, one)
    out = Answered(answered, merge_results(results, page.offset, page.limit, len(folders)))
    return attrs.evolve(out, related=related_files(out)) if page.related_files else out


def grep(folders: Sequence[ServedFolder], build: Callable[[Settings], GrepRequest]) -> Answered[MergedLines]:
    """A line search over ``folders``, each with the request ``build`` makes with its
    settings, merged and paged (the first folder's page); PatternError (a FieldError) for a
    pattern that is not one."""
    if not folders:
        raise NoAnswer(REBUILT)
    page = build(folders[0].settings)

    def one(folder: ServedFolder, engine: Workspace) -> GrepResult:
        req = build(folder.settings) if folder is not folders[0] else page
        return engine.grep(folder_request(attrs.evolve(req, offset=page.offset, limit=page.limit), len(folders)))
    answered, results = _each(folders, one)
    return Answered(answered, merge_line_results(results, page.offset, page.limit, len(folders)))


def symbols(folders: Sequence[ServedFolder], query: str, limit: int,
            only: SymbolFilter | None = None) -> Answered[list[tuple[int, SymbolHit]]]:
    """The symbols of ``folders`` matching ``query``, each folder's best ``limit``, merged
    best first (each with the index of its folder in ``folders`` of the answer)."""
    answered, parts = _each(folders, lambda _f, e: e.search_symbols(query, limit, only))
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
                files = engine.files()
            except IndexClosed:
                continue
            found = agent.related_files(mine, functools.partial(file_text, folder.root), files)
            out.extend((folder, r) for r in found)
    return tuple(out)


def _each(folders: Sequence[ServedFolder],
          run: Callable[[ServedFolder, Workspace], T]) -> tuple[tuple[ServedFolder, ...], list[T]]:
    """Each folder's answer (``run`` on it and its engine), leaving out the folders whose
    index closed on the way; NoAnswer when none is left."""
    answered: list[ServedFolder] = []
    results: list[T] = []
    for folder in folders:
        engine = folder.engine
        if engine is None:
            continue
        try:
            results.append(run(folder, engine))
        except IndexClosed:
            continue
        answered.append(folder)
    if not results:
        raise NoAnswer(REBUILT)
    return tuple(answered), results
