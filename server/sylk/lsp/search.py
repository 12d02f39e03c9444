"""The ``sylk/search`` request (and ``workspace/executeCommand sylk.search``): the params
read into a request, over_folders answers it, the answer converted to the protocol's."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from .. import over_folders
from ..config import Settings
from .. import wire as shared
from ..engine import documents
from ..errors import FieldError
from ..search.grep import GrepResult
from ..params import line_request_from_params, request_from_params, wants_lines
from ..search.query import GrepRequest, QueryError, SearchRequest
from ..search.results import IndexState, SearchResult
from . import convert, wire
from .handlers import command, feature
from .wire import DocumentInfo

if TYPE_CHECKING:
    from ..engine.workspace import Workspace
    from .server import SylkServer

SEARCH = "sylk/search"
CMD_SEARCH = "sylk.search"
OPENING = "the index is still opening"
_NONE = IndexState(0, 0, 0, 0, False)


def _documents(engine: Workspace | None) -> DocumentInfo:
    def info(id_: str) -> dict[str, Any] | None:
        doc = documents.get(engine, id_) if engine is not None else None
        return doc.summary() if doc else None
    return info


async def _answer(ls: SylkServer, run: Any, *args: Any) -> Any:
    """``run(folders, *args)`` on a worker thread; the params' errors are InvalidParams (a
    folder's settings making them malformed, the pattern of a line search)."""
    folders = [f for f, _e in ls.engines()]
    try:
        return await asyncio.get_running_loop().run_in_executor(ls.thread_pool, run, folders, *args)
    except FieldError as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc


async def run_lines(ls: SylkServer, raw: Any) -> dict[str, Any]:
    """``sylk/search`` in modes exact and regex (or a ``/regex/`` query): matching lines."""
    def build(settings: Settings) -> GrepRequest:  # with each folder's settings
        return line_request_from_params(raw, settings.search)
    try:
        req = build(ls.settings)
    except QueryError as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc
    if not ls.engines():
        return shared.line_result_json(GrepResult(req.pattern, req.mode, 0, 0, [], _NONE, message=OPENING))
    try:
        answered = await _answer(ls, over_folders.grep, build)
    except over_folders.NoAnswer as exc:
        return shared.line_result_json(GrepResult(req.pattern, req.mode, 0, 0, [], _NONE, message=str(exc)))
    result = answered.merged.result
    return shared.line_result_json(result, [wire.line_hit_to_wire(f.root, h)
                                            for h, f in zip(result.hits, answered.folder_of_hits(), strict=True)])


async def run(ls: SylkServer, params: Any) -> dict[str, Any]:
    raw = convert.params_dict(params)
    if isinstance(raw, dict) and wants_lines(raw):
        return await run_lines(ls, raw)
    def build(settings: Settings) -> SearchRequest:  # with each folder's settings
        return request_from_params(raw, settings.search)
    try:
        req = over_folders.prepared(build(ls.settings))
    except QueryError as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc
    if not ls.engines():
        return _not_open(raw.get("query", ""), req.mode, OPENING)
    try:
        answered = await _answer(ls, over_folders.search, build)
    except over_folders.NoAnswer as exc:
        return _not_open(raw.get("query", ""), req.mode, str(exc))
    result = answered.merged.result
    out = shared.result_json(result, [wire.hit_to_wire(f.root, h, _documents(f.engine))
                                      for h, f in zip(result.hits, answered.folder_of_hits(), strict=True)])
    if req.related_files:
        several = len(answered.folders) > 1
        out["relatedFiles"] = [wire.related_file_to_wire(r, f.root if several else None) for f, r in answered.related]
    out.update(shared.agent_json(req, result, semantic_ready=answered.semantic_ready))
    return out


def _not_open(query: str, mode: str, message: str) -> dict[str, Any]:
    return shared.result_json(SearchResult(query, mode, 0, 0, [], {}, _NONE, message))


def setup(server: SylkServer) -> None:
    # pygls resolves the annotations of custom handlers at run time: keep them to builtins
    @feature(server, "search", SEARCH)
    async def sylk_search(ls: Any, params: Any) -> Any:
        return await run(ls, params)

    @command(server, "search", CMD_SEARCH)
    async def cmd_search(ls: Any, *args: Any) -> Any:
        params = args[0] if len(args) == 1 else (args[0][0] if args and isinstance(args[0], list) and args[0] else {})
        return await run(ls, params)
