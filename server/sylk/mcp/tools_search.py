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
from ..search.values import MODES, QueryError, check_min_score, read_filters, read_options
from ..search.query import Filters, GrepRequest, SearchRequest, line_request, search_request
from ..search.inline import parse_exclusions
from ..model import SYMBOL_KINDS
from ..search.symbol_search import SymbolFilter
from . import wire
from .arguments import split_options, table_arguments
from .docs import GREP_DOC, SEARCH_CODE_DOC, SEARCH_SYMBOL_DOC
from .folders import Folder, Folders

MAX_LIMIT = 100  # results per page: an agent's context is the scarce thing
MAX_SYMBOL_WINDOW = 2000  # offset + limit of symbol pages

ModeName = Literal[MODES]  # type: ignore[valid-type]
SymbolKind = Literal[SYMBOL_KINDS]  # type: ignore[valid-type]
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
    @table_arguments(lambda s: True, options=True)
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
        min_score: Annotated[float | None, Field(ge=0, le=1, description="Relevance floor: leave out hits only "
                                                                         "the semantic side found whose similarity "
                                                                         "is below it (0: no floor; default: the "
                                                                         "search.minScore setting)")] = None,
        **given: Any,
    ) -> dict[str, Any]:
        filters, options = split_options(given)
        left_out = exclusions(exclude)
        try:
            floor = {} if min_score is None else {"min_score": check_min_score("min_score", min_score)}
            options = read_options(options)

            def build(s: Settings) -> SearchRequest:  # with each folder's settings
                return search_request(s.search, query, mode=mode, limit=limit, offset=offset,
                                      filters=read_filters(filters, exclude=left_out), context_lines=context_lines,
                                      **options, **floor)
            req = build(folders.settings)
            if not req.words.text.strip():
                raise ToolError("invalid argument query: no words to search for (filters and words left out "
                                "alone select nothing)")
            answered = await _over(folders, over_folders.search, build)
        except QueryError as exc:
            raise argument_error(exc, filters) from exc
        answer = wire.search_answer_json(answered, over_folders.prepared(req), folders.tagged, facets=req.facets)
        return {**answer, **folders.indexing_note()}

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
    @table_arguments(lambda s: s.line)
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
        return {**wire.line_answer_json(answered, offset, folders.tagged), **folders.indexing_note()}
