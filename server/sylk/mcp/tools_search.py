"""The search tools: ``search_code`` (hybrid, lexical or semantic search over code chunks,
with the agent options of ``sylk/search``), ``search_symbol`` and ``grep``.

The filter arguments are made from the filter table (arguments.py) and read, with the
query's inline filters, into the requests every front end builds (query.search_request,
query.line_request); over_folders.py answers them over the open folders, as it does for
the language server.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from .. import over_folders
from .. import wire as shared
from ..config import Settings
from ..engine.workspace import Workspace
from ..errors import FieldError
from ..search import agent
from ..search.grep import GrepResult
from ..search.merge import MergedResult
from ..search.values import MODES, QueryError, check_min_score, read_filters
from ..search.query import Filters, GrepRequest, SearchRequest, line_request, search_request
from ..search.inline import parse_exclusions
from ..search.results import SearchResult
from ..model import SYMBOL_KINDS
from ..search.symbol_search import SymbolFilter
from . import wire
from .arguments import filter_arguments
from .docs import GREP_DOC, SEARCH_CODE_DOC, SEARCH_SYMBOL_DOC
from .folders import Folder, Folders

MAX_LIMIT = 100  # results per page: an agent's context is the scarce thing
MAX_SYMBOL_WINDOW = 2000  # offset + limit of symbol pages

ModeName = Literal[MODES]  # type: ignore[valid-type]
SymbolKind = Literal[SYMBOL_KINDS]  # type: ignore[valid-type]
GroupName = Literal[agent.GROUP_BY]  # type: ignore[valid-type]
CaseName = Literal["smart", "sensitive", "insensitive"]

_CASE: dict[str, bool | str] = {"smart": "smart", "sensitive": True, "insensitive": False}
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
Engines = list[tuple[Folder, Workspace]]
T = TypeVar("T")


def argument_error(exc: QueryError, filters: Mapping[str, Any]) -> ToolError:
    """A QueryError as a tool error naming the argument: a filter given (``filters``, by
    name), the query or the floor; else an inline filter of the query, or a setting."""
    message = str(exc).split(": ", 1)[1] if ": " in str(exc) else str(exc)
    if exc.field.startswith("search."):
        return ToolError(f"the setting {exc.field} is invalid: {message}")
    if exc.field in ("query", "min_score") or filters.get(exc.field) is not None:
        return ToolError(f"invalid argument {exc.field}: {message}")
    return ToolError(f"invalid argument query: inline filter {exc.field}: {message}")


def exclusions(items: list[str] | None, *, line: bool = False, files: bool = False) -> Filters | None:
    """The ``exclude`` argument: inline filters to leave out (inline.parse_exclusions)."""
    try:
        return parse_exclusions("exclude", items or (), line=line, files=files)
    except QueryError as exc:
        raise ToolError(f"invalid argument exclude: {str(exc).split(': ', 1)[-1]}") from exc


async def _over(folders: Folders, run: Callable[..., T], *args: Any) -> T:
    """``run(the open folders, *args)`` (over_folders) on a worker thread; no folder left to
    answer is a ToolError."""
    engines = await folders.engines()
    try:
        return await anyio.to_thread.run_sync(run, [f for f, _e in engines], *args)
    except over_folders.NoAnswer as exc:
        raise ToolError(str(exc)) from None


def setup(app: MCPServer, folders: Folders) -> None:
    settings = folders.command_line_settings  # the defaults the schemas show

    @app.tool(description=SEARCH_CODE_DOC, annotations=READ_ONLY)
    @filter_arguments(lambda s: True)
    async def search_code(
        query: Annotated[str, Field(description="Words, an identifier, or a description of what the code does; "
                                                "may hold inline filters (lang:go path:src/** kind:function)")],
        mode: Annotated[ModeName, Field(description="hybrid (default): words and meaning fused; lexical: words "
                                                    "only; semantic: meaning only")] = settings.search.mode,
        exclude: Annotated[list[str] | None, Field(description="Leave out what these filters match, written as "
                                                               "inline filters: path:vendor/**, role:test, "
                                                               "lang:markdown, kind:heading, ...")] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Hits per page")] = min(
            settings.search.limit, MAX_LIMIT),
        offset: Annotated[int, Field(ge=0, description="Hits to skip: the nextOffset of the previous "
                                                       "page")] = 0,
        context_lines: Annotated[int, Field(ge=0, le=20, description="Lines of context around the best "
                                                                    "matching line in each snippet")] = 2,
        expand: Annotated[bool, Field(description="Also search the words inside identifiers and common "
                                                  "synonyms (delete/remove, fetch/get ...); reported as "
                                                  "expandedTerms")] = False,
        fuzzy: Annotated[bool, Field(description="Let the words match with a typo or two (lexical side)")] = False,
        group_by: Annotated[GroupName | None, Field(description="Also answer groups of the page's hits by this "
                                                                "key, each with the indexes of its hits")] = None,
        facets: Annotated[bool, Field(description="Also count all matches by language, type, kind, folder and package "
                                                  "(facets)")] = False,
        related_files: Annotated[bool, Field(description="Also list the files the hits' files import "
                                                         "(relatedFiles)")] = False,
        follow_ups: Annotated[bool, Field(description="Also suggest refined searches worth trying "
                                                      "(followUps)")] = False,
        summary: Annotated[bool, Field(description="Also count the page's hits by file, language and "
                                                   "kind (summary)")] = False,
        explain: Annotated[bool, Field(description="Give each hit each side's rank and raw score "
                                                   "(explain)")] = False,
        min_score: Annotated[float | None, Field(ge=0, le=1, description="Relevance floor: leave out hits only "
                                                                         "the semantic side found whose similarity "
                                                                         "is below it (0: no floor; default: the "
                                                                         "search.minScore setting)")] = None,
        **filters: Any,
    ) -> dict[str, Any]:
        left_out = exclusions(exclude)
        floor = {} if min_score is None else {"min_score": check_min_score("min_score", min_score)}

        def build(s: Settings) -> SearchRequest:  # with each folder's settings
            return search_request(s.search, query, mode=mode, limit=limit, offset=offset,
                                  filters=read_filters(filters, exclude=left_out), context_lines=context_lines,
                                  expand=expand, fuzzy=fuzzy, group_by=group_by, facets=facets,
                                  related_files=related_files, follow_ups=follow_ups, summary=summary,
                                  explain=explain, **floor)
        try:
            req = build(folders.settings)
            if not req.words.text.strip():
                raise ToolError("invalid argument query: no words to search for (filters and words left out "
                                "alone select nothing)")
            answered = await _over(folders, over_folders.search, build)
        except QueryError as exc:
            raise argument_error(exc, filters) from exc
        return _search_answer(folders, answered, over_folders.prepared(req), facets)

    @app.tool(description=SEARCH_SYMBOL_DOC, annotations=READ_ONLY)
    async def search_symbol(
        query: Annotated[str, Field(description="A name or part of one (fuzzy; 'Container.name' to match members "
                                                "of a container); empty lists the top symbols")],
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Symbols per page")] = 20,
        offset: Annotated[int, Field(ge=0, le=MAX_SYMBOL_WINDOW, description="Symbols to skip: the nextOffset "
                                                                            "of the previous page")] = 0,
        kind: Annotated[list[SymbolKind] | None, Field(description="Only symbols of these kinds")] = None,
        exported: Annotated[bool | None, Field(description="true: only exported (public) definitions; false: "
                                                           "only the others; unset: both")] = None,
    ) -> dict[str, Any]:
        window = min(offset + limit, MAX_SYMBOL_WINDOW)
        only = SymbolFilter(frozenset(kind or ()), exported)
        # one more than the page tells whether there is a next one
        answered = await _over(folders, over_folders.symbols, query, window + 1, only)
        hits = answered.merged
        page = hits[offset:window]
        more = len(hits) > window and window < MAX_SYMBOL_WINDOW
        return {"query": query, "symbols": [folders.tagged(answered.folders[f], shared.symbol_json(h))
                                            for f, h in page],
                "offset": offset, "nextOffset": wire.next_offset(offset, len(page), more),
                **folders.indexing_note()}

    @app.tool(description=GREP_DOC, annotations=READ_ONLY)
    @filter_arguments(lambda s: s.line)
    async def grep(
        pattern: Annotated[str, Field(description="A regular expression (Python re), or a literal with exact=true")],
        exact: Annotated[bool, Field(description="pattern is a literal string, punctuation and all")] = False,
        case: Annotated[CaseName, Field(description="smart (default): case-insensitive unless the pattern has an "
                                                    "upper-case letter; sensitive; insensitive")] = "smart",
        whole_word: Annotated[bool, Field(description="Only matches that are whole words (rg -w)")] = False,
        exclude: Annotated[list[str] | None, Field(description="Leave out files these filters match: path:GLOB, "
                                                               "lang:L, type:T, package:P")] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Lines per page")] = 50,
        offset: Annotated[int, Field(ge=0, description="Lines to skip: the nextOffset of the previous page")] = 0,
        **filters: Any,
    ) -> dict[str, Any]:
        left_out = exclusions(exclude, line=True)

        def build(s: Settings) -> GrepRequest:  # with each folder's settings
            return line_request(s.search, pattern, "exact" if exact else "regex",
                                filters=read_filters(filters, exclude=left_out), case=_CASE[case],
                                whole_word=whole_word, limit=limit, offset=offset)
        try:
            answered = await _over(folders, over_folders.grep, build)
        except QueryError as exc:
            raise argument_error(exc, filters) from exc
        except FieldError as exc:  # the pattern
            raise ToolError(f"invalid argument pattern: {str(exc).removeprefix('query: ')}") from None
        result: GrepResult = answered.merged.result
        out = shared.line_result_json(result, [folders.tagged(f, shared.line_hit_json(h))
                                               for h, f in zip(result.hits, answered.folder_of_hits(), strict=True)])
        out.pop("index")
        out.pop("tookMs")
        out["nextOffset"] = wire.next_offset(offset, len(result.hits), offset + len(result.hits) < result.total_hits)
        return {**out, **folders.indexing_note()}


def _search_answer(folders: Folders, answered: over_folders.Answered[MergedResult], req: SearchRequest,
                   facets: bool) -> dict[str, Any]:
    """search_code's answer: the page's hits (each with its folder's ``root`` when there
    are several), the counts and pages, how complete the semantic side is, and what the
    agent options asked for."""
    result: SearchResult = answered.merged.result
    out = shared.result_json(result, [folders.tagged(f, shared.hit_json(h))
                                      for h, f in zip(result.hits, answered.folder_of_hits(), strict=True)])
    if not facets:  # (asked for by the follow-ups only)
        out.pop("facets")
    out.pop("tookMs")
    out.pop("index")
    out["offset"] = req.offset
    out["nextOffset"] = wire.next_offset(req.offset, len(result.hits),
                                         req.offset + len(result.hits) < result.total_hits)
    if req.mode != "lexical":
        state, message = answered.semantic_state()
        out["semantic"] = wire.semantic_json(result.index, state, message)
    out["index"] = {"files": result.index.files, "chunks": result.index.chunks}
    out.update(shared.agent_json(req, result, semantic_ready=answered.semantic_ready))
    if req.related_files:
        out["relatedFiles"] = [folders.tagged(f, shared.related_file_json(r)) for f, r in answered.related]
    out.update(folders.indexing_note())
    return out
