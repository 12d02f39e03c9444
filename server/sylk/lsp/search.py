"""The ``sylk/search`` request (and ``workspace/executeCommand sylk.search``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from pygls.exceptions import JsonRpcInvalidParams

from .. import wire as shared
from ..engine import documents
from ..errors import IndexClosed
from ..search import agent
from ..errors import FieldError
from ..search.grep import GrepResult
from ..search.merge import MergedResult, folder_request, merge_line_results, merge_results
from ..search.params import line_request_from_params, request_from_params, wants_lines
from ..search.query import GrepRequest, QueryError, SearchRequest
from ..search.results import IndexState, SearchResult
from . import convert, wire
from .handlers import command, feature
from .wire import DocumentInfo

if TYPE_CHECKING:
    from ..engine.workspace import Workspace
    from .folders import Folder
    from .server import SylkServer

SEARCH = "sylk/search"
CMD_SEARCH = "sylk.search"


def _documents(engine: Workspace) -> DocumentInfo:
    def info(id_: str) -> dict[str, Any] | None:
        doc = documents.get(engine, id_)
        return doc.summary() if doc else None
    return info


def related_files_of(engines: list[tuple[Folder, Workspace]], merged: MergedResult) -> list[dict[str, Any]]:
    """The files the hits' files import, per folder."""
    out: list[dict[str, Any]] = []
    for i, (folder, engine) in enumerate(engines):
        mine = [h for h, f in zip(merged.result.hits, merged.folders, strict=True) if f == i]
        if not mine:
            continue

        def read(path: str, root: Path = folder.root) -> str | None:
            try:
                return (root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                return None
        found = agent.related_files(mine, read, engine.manifest.files())
        out.extend(wire.related_file_to_wire(f, folder.root if len(engines) > 1 else None) for f in found)
    return out


def _search_open(engine: Workspace, req: SearchRequest) -> SearchResult | None:
    """The engine's answer; None when its index closed on the way (cleared, rebuilt)."""
    try:
        return engine.search(req)
    except IndexClosed:
        return None


def _not_open(query: str, mode: str, message: str) -> dict[str, Any]:
    return shared.result_json(SearchResult(query, mode, 0, 0, [], {}, IndexState(0, 0, 0, 0, False), message))


def _grep_open(engine: Workspace, req: GrepRequest) -> GrepResult | None:
    """The engine's answer to a line search; None when its index closed on the way."""
    try:
        return engine.grep(req)
    except IndexClosed:
        return None


async def run_lines(ls: SylkServer, raw: Any) -> dict[str, Any]:
    """``sylk/search`` in modes exact and regex (or a ``/regex/`` query): matching lines."""
    try:
        req = line_request_from_params(raw, ls.settings.search)
    except QueryError as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc
    engines = ls.engines()
    empty = IndexState(0, 0, 0, 0, False)
    if not engines:
        return shared.line_result_json(GrepResult(req.pattern, req.mode, 0, 0, [], empty,
                                                  message="the index is still opening"))
    loop = asyncio.get_running_loop()
    asked, each = len(engines), folder_request(req, len(engines))
    try:
        answers = await asyncio.gather(*(loop.run_in_executor(ls.thread_pool, _grep_open, engine, each)
                                         for _f, engine in engines))
    except FieldError as exc:  # the pattern (search.pattern.PatternError)
        raise JsonRpcInvalidParams(str(exc)) from exc
    engines = [e for e, r in zip(engines, answers, strict=True) if r is not None]
    results = [r for r in answers if r is not None]
    if not results:
        return shared.line_result_json(GrepResult(req.pattern, req.mode, 0, 0, [], empty,
                                                  message="the index is being rebuilt; ask again in a moment"))
    merged = merge_line_results(results, req.offset, req.limit, asked)
    return shared.line_result_json(merged.result, [wire.line_hit_to_wire(engines[i][0].root, h)
                                                   for h, i in zip(merged.result.hits, merged.folders, strict=True)])


def setup(server: SylkServer) -> None:
    async def run(ls: SylkServer, params: Any) -> dict[str, Any]:
        raw = convert.params_dict(params)
        if isinstance(raw, dict) and wants_lines(raw):
            return await run_lines(ls, raw)
        s = ls.settings
        try:
            req = request_from_params(raw, s.search)
        except QueryError as exc:
            raise JsonRpcInvalidParams(str(exc)) from exc
        engines = ls.engines()
        if not engines:
            return _not_open(raw.get("query", ""), req.mode, "the index is still opening")
        loop = asyncio.get_running_loop()
        if req.follow_ups and not req.facets:  # refinements are read from the facets
            req = attrs.evolve(req, facets=True)
        asked, each = len(engines), folder_request(req, len(engines))  # several: merged by score, then the page
        answers = await asyncio.gather(*(loop.run_in_executor(ls.thread_pool, _search_open, engine, each)
                                         for _f, engine in engines))
        engines = [e for e, r in zip(engines, answers, strict=True) if r is not None]
        results = [r for r in answers if r is not None]
        if not results:
            return _not_open(raw.get("query", ""), req.mode, "the index is being rebuilt; ask again in a moment")
        merged = merge_results(results, req.offset, req.limit, asked)
        result = merged.result
        docs = [_documents(e) for _f, e in engines]
        out = shared.result_json(result, [wire.hit_to_wire(engines[i][0].root, h, docs[i])
                                          for h, i in zip(result.hits, merged.folders, strict=True)])
        if req.related_files:
            out["relatedFiles"] = await loop.run_in_executor(ls.thread_pool, related_files_of, engines, merged)
        out.update(shared.agent_json(req, result, semantic_ready=any(e.semantic_ready for _f, e in engines)))
        return out

    # pygls resolves the annotations of custom handlers at run time: keep them to builtins
    @feature(server, "search", SEARCH)
    async def sylk_search(ls: Any, params: Any) -> Any:
        return await run(ls, params)

    @command(server, "search", CMD_SEARCH)
    async def cmd_search(ls: Any, *args: Any) -> Any:
        params = args[0] if len(args) == 1 else (args[0][0] if args and isinstance(args[0], list) and args[0] else {})
        return await run(ls, params)
