"""``sylk mcp``: the same engine for agents, over the Model Context Protocol on stdio.

Tools: ``search_code`` (hybrid, lexical or semantic search over code chunks),
``search_symbol`` (fuzzy definitions by name), ``find_definition``,
``find_references``, ``get_callers``, ``grep`` (exact and regex lines),
``get_status`` and ``reindex``; their descriptions are in mcp/docs.py.

The same ``WorkspaceService`` as the language server's: the index opens and is
brought up to date in the background, then git metadata is refreshed and pending
chunks are embedded, and changes on disk (or another process's index runs) are
followed: tools answer at once from what is indexed, and their results say how
complete the index is. This module is a thin front end: requests are parsed by
``query.request_from_params`` (the same filters and checks as ``sylk/search``),
results are shaped by mcp/wire.py and the JSON shared with the CLI (sylk/wire.py).

Only MCP messages go to stdout (the SDK points the process's fd 1 at stderr while
it serves, so worker processes cannot write there either); logs go to stderr.
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import pathspec
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from .. import __version__, config
from .. import wire as shared
from ..engine.indexer import IndexReport
from ..engine.status import SKIPPED_EXAMPLES
from ..engine.workspace import Workspace
from ..errors import FieldError
from ..ingest.occurrences import IDENTIFIER
from ..search import definitions, references
from ..search.file_lines import file_lines, file_text
from ..search.query import MODES, TYPES, QueryError, line_request_from_params, request_from_params
from ..search.roles import ROLES
from ..service import WorkspaceService
from ..steps import Reporter, Severity
from . import wire
from .docs import (
    FIND_DEFINITION_DOC,
    FIND_REFERENCES_DOC,
    GET_CALLERS_DOC,
    GET_STATUS_DOC,
    GREP_DOC,
    INSTRUCTIONS,
    REINDEX_DOC,
    SEARCH_CODE_DOC,
    SEARCH_SYMBOL_DOC,
)

log = logging.getLogger("sylk.mcp")

MAX_LIMIT = 100  # results per page: an agent's context is the scarce thing
MAX_SYMBOL_WINDOW = 2000  # offset + limit of symbol pages
OPEN_WAIT_S = 30.0  # a tool waits this long for the index to open before it answers "not yet"
REINDEX_WAIT_S = 45.0  # reindex(wait=true) reports "still running" after this (clients time out)

ModeName = Literal[MODES]  # type: ignore[valid-type]
RoleName = Literal[ROLES]  # type: ignore[valid-type]
CaseName = Literal["smart", "sensitive", "insensitive"]
SkippedChoice = Literal[shared.SKIPPED_CHOICES]  # type: ignore[valid-type]

class Service(Reporter):
    """One workspace served over MCP: a ``WorkspaceService`` (opened, indexed, given git
    metadata and embedded on background threads, kept current by a watcher, or following
    the process that writes the index) and what it reports, kept for ``get_status``."""

    reindex_hint = "the reindex tool"

    def __init__(self, root: Path, settings: config.Settings) -> None:
        self.workspace = WorkspaceService(root, settings, self)
        self.notes: list[str] = []  # things the user should know (rebuilt, repaired, model problems)

    def start(self) -> None:
        self.workspace.start_indexing()

    def close(self) -> None:
        self.workspace.close()

    # Reporter ------------------------------------------------------------------------
    def message(self, text: str, severity: Severity) -> None:
        if severity is not Severity.LOG and text not in self.notes:
            self.notes.append(text)
        self.log(text, severity)

    def log(self, text: str, severity: Severity = Severity.LOG) -> None:
        log.log(LOG_LEVELS[severity], "%s", text)

    # state -----------------------------------------------------------------------
    def state(self) -> str:
        ws = self.workspace
        if ws.engine is None:
            return "unavailable" if ws.opened.is_set() else "opening"
        if ws.indexing:
            return "indexing"
        return "embedding" if ws.embedding else "ready"

    def status(self, skipped_limit: int | None = SKIPPED_EXAMPLES) -> dict[str, Any]:
        return wire.status_json(self.workspace, self.state(), self.notes, skipped_limit)


LOG_LEVELS = {Severity.ERROR: logging.ERROR, Severity.WARNING: logging.WARNING, Severity.INFO: logging.INFO,
              Severity.LOG: logging.INFO}


def _result_within(fut: cf.Future, seconds: float) -> Any:
    try:
        return fut.result(seconds)
    except cf.TimeoutError:
        return None


# QueryError fields (``sylk/search`` params) -> the tool's argument names
_ARGUMENT = {"query": "query", "mode": "mode", "limit": "limit", "offset": "offset",
             "contextLines": "context_lines", "filters.languages": "languages", "filters.types": "types",
             "filters.paths": "paths", "filters.kinds": "kinds", "filters.roles": "roles",
             "caseSensitive": "case", "wholeWord": "whole_word"}


def _argument_error(exc: QueryError) -> ToolError:
    """A QueryError as a tool error naming the argument (an inline filter is part of ``query``)."""
    name = _ARGUMENT.get(exc.field)
    message = str(exc).split(": ", 1)[1] if ": " in str(exc) else str(exc)
    if name is None:
        return ToolError(f"invalid argument query: inline filter {exc.field}: {message}")
    return ToolError(f"invalid argument {name}: {message}")


def _page(offset: int, shown: int, more: bool) -> int | None:
    return offset + shown if more and shown else None


def create_server(root: Path, settings: config.Settings) -> tuple[MCPServer, Service]:
    service = Service(root, settings)

    @asynccontextmanager
    async def lifespan(_app: MCPServer) -> AsyncIterator[None]:
        service.start()
        try:
            yield None
        finally:
            await anyio.to_thread.run_sync(service.close)

    app = MCPServer("sylk", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan,
                    log_level="WARNING")

    workspace = service.workspace

    async def engine() -> Workspace:
        """The open index; waits (briefly) while it opens."""
        if not workspace.opened.is_set():
            await anyio.to_thread.run_sync(workspace.opened.wait, OPEN_WAIT_S)
        if workspace.engine is None:
            raise ToolError(workspace.open_error or "the index is still opening; try again in a few seconds")
        return workspace.engine

    def _indexing_note() -> dict[str, Any]:
        if not workspace.indexing:
            return {"indexing": False}
        return {"indexing": True, "note": "the index is being updated: results may miss files not indexed yet "
                                          "(get_status shows the progress)"}

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @app.tool(description=SEARCH_CODE_DOC, annotations=read_only)
    async def search_code(
        query: Annotated[str, Field(description="Words, an identifier, or a description of what the code does; "
                                                "may hold inline filters (lang:go path:src/** kind:function)")],
        mode: Annotated[ModeName, Field(description="hybrid (default): words and meaning fused; lexical: words "
                                                    "only; semantic: meaning only")] = settings.search.mode,
        languages: Annotated[list[str] | None, Field(description="Only these languages, e.g. python, go, "
                                                                 "typescript, rust, java, markdown")] = None,
        types: Annotated[list[str] | None, Field(description="Only these document types: "
                                                             + ", ".join(TYPES)
                                                             + ", or a virtual document type (note, ...); "
                                                             "git_commit searches commit messages")] = None,
        paths: Annotated[list[str] | None, Field(description="Only files matching these gitignore-style globs, "
                                                             "relative to the workspace root")] = None,
        kinds: Annotated[list[str] | None, Field(description="Only chunks of these kinds: function, method, "
                                                             "class, struct, interface, heading, ...")] = None,
        roles: Annotated[list[RoleName] | None, Field(description="Only code with these roles, told from names "
                                                                  "and paths (test code, repositories, ...)")] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Hits per page")] = min(
            settings.search.limit, MAX_LIMIT),
        offset: Annotated[int, Field(ge=0, description="Hits to skip: the nextOffset of the previous "
                                                       "page")] = 0,
        context_lines: Annotated[int, Field(ge=0, le=20, description="Lines of context around the best "
                                                                    "matching line in each snippet")] = 2,
        tags: Annotated[list[str] | None, Field(description="Only files and documents with one of these user "
                                                            "tags")] = None,
        authors: Annotated[list[str] | None, Field(description="Only files whose last commit is by one of these "
                                                               "authors (git repositories)")] = None,
        modified_after: Annotated[str | None, Field(description="Only files last committed on or after this "
                                                                "date, e.g. 2024-05-31 (git)")] = None,
        modified_before: Annotated[str | None, Field(description="Only files last committed before this "
                                                                 "date (git)")] = None,
        expand: Annotated[bool, Field(description="Also search the words inside identifiers and common "
                                                  "synonyms (delete/remove, fetch/get ...); reported as "
                                                  "expandedTerms")] = False,
    ) -> dict[str, Any]:
        filters = {k: v for k, v in (("languages", languages), ("types", types), ("paths", paths),
                                     ("kinds", kinds), ("roles", roles), ("tags", tags), ("authors", authors),
                                     ("modifiedAfter", modified_after), ("modifiedBefore", modified_before)) if v}
        params = {"query": query, "mode": mode, "limit": limit, "offset": offset, "filters": filters,
                  "contextLines": context_lines, "expand": expand}
        s = settings.search
        try:
            req = request_from_params(params, s)
        except QueryError as exc:
            raise _argument_error(exc) from exc
        if not req.query.strip():
            raise ToolError("invalid argument query: no words to search for (inline filters alone select nothing)")
        ws = await engine()
        result = await anyio.to_thread.run_sync(ws.search, req)
        out = shared.result_json(result)
        out.pop("facets", None)
        out.pop("tookMs", None)
        out.pop("index")
        out["offset"] = req.offset
        out["nextOffset"] = _page(req.offset, len(result.hits), req.offset + len(result.hits) < result.total_hits)
        if req.mode != "lexical":
            out["semantic"] = wire.semantic_json(result.index, workspace.semantic_state(),
                                                 ws.semantic_message)
        out["index"] = {"files": result.index.files, "chunks": result.index.chunks}
        if req.expand:
            out["expandedTerms"] = list(req.extra_terms)
        out.update(_indexing_note())
        return out

    @app.tool(description=SEARCH_SYMBOL_DOC, annotations=read_only)
    async def search_symbol(
        query: Annotated[str, Field(description="A name or part of one (fuzzy; 'Container.name' to match members "
                                                "of a container); empty lists the top symbols")],
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Symbols per page")] = 20,
        offset: Annotated[int, Field(ge=0, le=MAX_SYMBOL_WINDOW, description="Symbols to skip: the nextOffset "
                                                                            "of the previous page")] = 0,
    ) -> dict[str, Any]:
        ws = await engine()
        window = min(offset + limit, MAX_SYMBOL_WINDOW)
        # one more than the page tells whether there is a next one
        hits = await anyio.to_thread.run_sync(ws.search_symbols, query, window + 1)
        page = hits[offset:window]
        more = len(hits) > window and window < MAX_SYMBOL_WINDOW
        return {"query": query, "symbols": [shared.symbol_json(h) for h in page], "offset": offset,
                "nextOffset": _page(offset, len(page), more), **_indexing_note()}

    @app.tool(description=FIND_DEFINITION_DOC, annotations=read_only)
    async def find_definition(
        name: Annotated[str, Field(description="The identifier, e.g. 'parse_config', 'Repo.get' or 'geo::distance'")],
        path: Annotated[str | None, Field(description="The workspace-relative file that uses the name: rank from "
                                                      "it")] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Definitions at most")] = 20,
    ) -> dict[str, Any]:
        ws = await engine()
        if not definitions.parse_name(name).name:
            raise ToolError("invalid argument name: no identifier in it")
        found = await anyio.to_thread.run_sync(definitions.lookup, ws, name, path, functools.partial(file_text, root))
        return {"name": name, "definitions": [{**shared.symbol_json(d.hit), "near": d.near.name.lower()}
                                              for d in found[:limit]], **_indexing_note()}

    @app.tool(description=FIND_REFERENCES_DOC, annotations=read_only)
    async def find_references(
        name: Annotated[str, Field(description="The identifier, e.g. 'parse_config'")],
        path: Annotated[str | None, Field(description="Only in these files: a workspace-relative file or a "
                                                      "gitignore-style glob, e.g. 'app/**'")] = None,
        code_only: Annotated[bool, Field(description="Leave out occurrences in comments and strings")] = False,
        include_declarations: Annotated[bool, Field(description="Include the definitions' own names")] = True,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Occurrences per page")] = 50,
        offset: Annotated[int, Field(ge=0, description="Occurrences to skip (nextOffset of a page)")] = 0,
    ) -> dict[str, Any]:
        ws = await engine()
        name = name.strip()
        if not IDENTIFIER.fullmatch(name):
            raise ToolError(f"invalid argument name: {name!r} is not an identifier")
        try:
            paths = pathspec.GitIgnoreSpec.from_lines([path]) if path else None
        except ValueError as exc:
            raise ToolError(f"invalid argument path: {exc}") from None

        def run() -> dict[str, Any]:
            found = ws.find_references(name, include_declaration=include_declarations, limit=offset + limit,
                                       comments_and_strings=not code_only,
                                       paths=paths.match_file if paths is not None else None)
            page = found.references[offset:]
            return {"name": name, "total": found.total,
                    "references": [shared.reference_json(s) for s in references.shown(found, page, ws.table, root)],
                    "nextOffset": _page(offset, len(page), offset + len(page) < found.total)}

        return {**await anyio.to_thread.run_sync(run), **_indexing_note()}

    @app.tool(description=GREP_DOC, annotations=read_only)
    async def grep(
        pattern: Annotated[str, Field(description="A regular expression (Python re), or a literal with exact=true")],
        exact: Annotated[bool, Field(description="pattern is a literal string, punctuation and all")] = False,
        case: Annotated[CaseName, Field(description="smart (default): case-insensitive unless the pattern has an "
                                                    "upper-case letter; sensitive; insensitive")] = "smart",
        whole_word: Annotated[bool, Field(description="Only matches that are whole words (rg -w)")] = False,
        languages: Annotated[list[str] | None, Field(description="Only these languages")] = None,
        paths: Annotated[list[str] | None, Field(description="Only files matching these gitignore-style globs")] = None,
        kinds: Annotated[list[str] | None, Field(description="Only lines inside a symbol of these kinds "
                                                             "(function, method, class, ...)")] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Lines per page")] = 50,
        offset: Annotated[int, Field(ge=0, description="Lines to skip: the nextOffset of the previous page")] = 0,
    ) -> dict[str, Any]:
        filters = {k: v for k, v in (("languages", languages), ("paths", paths), ("kinds", kinds)) if v}
        params = {"query": pattern, "mode": "exact" if exact else "regex", "filters": filters, "limit": limit,
                  "offset": offset, "wholeWord": whole_word,
                  "caseSensitive": {"smart": "smart", "sensitive": True, "insensitive": False}[case]}
        try:
            req = line_request_from_params(params, settings.search)
        except QueryError as exc:
            raise _argument_error(exc) from exc
        ws = await engine()
        try:
            result = await anyio.to_thread.run_sync(ws.grep, req)
        except FieldError as exc:  # the pattern
            raise ToolError(f"invalid argument pattern: {str(exc).removeprefix('query: ')}") from None
        out = shared.line_result_json(result)
        out.pop("index")
        out.pop("tookMs")
        out["nextOffset"] = _page(offset, len(result.hits), offset + len(result.hits) < result.total_hits)
        return {**out, **_indexing_note()}

    @app.tool(description=GET_CALLERS_DOC, annotations=read_only)
    async def get_callers(
        name: Annotated[str, Field(description="The function or method name, e.g. 'parse_config'")],
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Callers per page")] = 50,
        offset: Annotated[int, Field(ge=0, description="Callers to skip (nextOffset of a page)")] = 0,
    ) -> dict[str, Any]:
        ws = await engine()
        name = name.strip()
        if not IDENTIFIER.fullmatch(name):
            raise ToolError(f"invalid argument name: {name!r} is not an identifier")

        def run() -> dict[str, Any]:
            callers = ws.incoming_calls(name)
            page = callers[offset:offset + limit]
            return {"name": name, "total": len(callers), "calls": sum(len(c.calls) for c in callers),
                    "callers": [shared.caller_json(c, file_lines(root / c.path) or []) for c in page],
                    "nextOffset": _page(offset, len(page), offset + len(page) < len(callers))}

        return {**await anyio.to_thread.run_sync(run), **_indexing_note()}

    @app.tool(description=GET_STATUS_DOC, annotations=read_only)
    async def get_status(
        skipped: Annotated[SkippedChoice, Field(description="Skipped files to list: the first 20 of each reason "
                                                            "(sample), or every one (all)")] = "sample",
    ) -> dict[str, Any]:
        limit = shared.skipped_limit(skipped)
        if not workspace.opened.is_set():
            return service.status(limit)
        return await anyio.to_thread.run_sync(service.status, limit)

    @app.tool(description=REINDEX_DOC,
              annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                          open_world_hint=False))
    async def reindex(
        wait: Annotated[bool, Field(description="Wait for the files to be indexed (embedding always continues in "
                                                "the background)")] = True,
    ) -> dict[str, Any]:
        ws = await engine()
        if not ws.writable:
            raise ToolError(f"cannot reindex: {ws.read_only_reason or 'the index is read-only'}; the process "
                            "that writes it keeps it up to date")
        fut = workspace.start_indexing("Re-indexing workspace")
        if fut is None:
            raise ToolError("the server is shutting down")
        out: dict[str, Any] = {}
        report: IndexReport | None = None
        if wait:
            try:
                report = await anyio.to_thread.run_sync(_result_within, fut, REINDEX_WAIT_S)
            except Exception as exc:
                raise ToolError(f"reindex failed: {exc}") from exc
        if report is not None:
            out["indexed"] = "done"
            out["changes"] = wire.report_json(report)
        else:
            out["indexed"] = "running in the background"
        counts = await anyio.to_thread.run_sync(ws.manifest.chunk_counts)
        if workspace.semantic_state() in ("off", "unavailable"):
            out["embedding"] = "off: semantic search is unavailable, search_code answers by words only"
        elif report is None:
            out["embedding"] = "starts in the background when the index run ends; poll get_status"
        elif counts["pending"]:
            out["embedding"] = (f"running in the background ({counts['embedded']} of {counts['chunks']} chunks "
                                "embedded); poll get_status until pending is 0")
        else:
            out["embedding"] = "done: every chunk is embedded"
        return out

    return app, service


def serve(root: Path, settings: config.Settings) -> None:
    """Serve the workspace ``root`` over MCP on stdin/stdout until the client disconnects."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    app, _service = create_server(root, settings)
    app.run("stdio")
