"""The navigation tools: ``find_definition``, ``find_references``, ``get_callers`` and
``find_similar_code`` (``sylk/similar``: the code nearest by meaning to a place),
answered from each open folder's index (definitions ranked as the language server ranks
them across folders: lsp/navigation.py)."""

from __future__ import annotations

import functools
from typing import Annotated, Any

import anyio
import attrs
import pathspec
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from .. import over_folders
from .. import wire as shared
from ..errors import IndexClosed
from ..ingest.occurrences import IDENTIFIER
from ..languages import language_for_path
from ..search import definitions
from ..search.file_lines import file_lines, file_text
from . import wire
from .docs import FIND_DEFINITION_DOC, FIND_REFERENCES_DOC, FIND_SIMILAR_CODE_DOC, GET_CALLERS_DOC
from ..engine.workspace import Workspace
from ..search.filters import Filters
from .folders import Folder, Folders
from .tools_search import MAX_LIMIT, READ_ONLY, Engines, exclusions

SIMILAR = 10  # find_similar_code's default number of chunks


def _definitions(folders: Folders, engines: Engines, name: str, path: str | None,
                 limit: int) -> list[dict[str, Any]]:
    """The definitions of ``name``: those of the folder holding ``path`` ranked from that
    file, those of the other folders by its language only (no nearer than that), best first."""
    cursor = definitions.parse_name(name)
    try:
        found = folders.locate(path, "path") if path else None
    except ToolError:  # a path outside the workspace: nothing to rank from
        found = None
    language = language_for_path(found[1]) if found else None
    ranked: list[tuple[Any, definitions.Definition]] = []
    for folder, engine in engines:
        try:
            if found is not None and found[0] is folder:
                defs = definitions.lookup(engine, name, found[1], functools.partial(file_text, folder.root))
            else:  # another folder: the same language first, never nearer than that
                origin = definitions.Origin("", language) if language is not None else None
                defs = [attrs.evolve(d, near=max(d.near, definitions.Near.SAME_LANGUAGE))
                        for d in definitions.definitions(engine, cursor, origin)]
        except IndexClosed:  # cleared or rebuilt on the way
            continue
        ranked.extend((folder, d) for d in defs)
    if len(engines) > 1:
        ranked.sort(key=lambda fd: definitions.rank(fd[1], cursor))
    return [folders.tagged(folder, {**shared.symbol_json(d.hit), "near": d.near.name.lower()})
            for folder, d in ranked[:limit]]


def setup(app: MCPServer, folders: Folders) -> None:
    @app.tool(description=FIND_DEFINITION_DOC, annotations=READ_ONLY)
    async def find_definition(
        name: Annotated[str, Field(description="The identifier, e.g. 'parse_config', 'Repo.get' or 'geo::distance'")],
        path: Annotated[str | None, Field(description="The workspace-relative file that uses the name: rank from "
                                                      "it")] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Definitions at most")] = 20,
    ) -> dict[str, Any]:
        engines = await folders.engines()
        if not definitions.parse_name(name).name:
            raise ToolError("invalid argument name: no identifier in it")
        found = await anyio.to_thread.run_sync(_definitions, folders, engines, name, path, limit)
        return {"name": name, "definitions": found, **folders.indexing_note()}

    @app.tool(description=FIND_REFERENCES_DOC, annotations=READ_ONLY)
    async def find_references(
        name: Annotated[str, Field(description="The identifier, e.g. 'parse_config'")],
        path: Annotated[str | None, Field(description="Only in these files: a workspace-relative file or a "
                                                      "gitignore-style glob, e.g. 'app/**'")] = None,
        code_only: Annotated[bool, Field(description="Leave out occurrences in comments and strings")] = False,
        include_declarations: Annotated[bool, Field(description="Include the definitions' own names")] = True,
        exclude: Annotated[list[str] | None, Field(description="Leave out files these filters match: path:GLOB, "
                                                               "lang:L, type:T, package:P")] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Occurrences per page")] = 50,
        offset: Annotated[int, Field(ge=0, description="Occurrences to skip (nextOffset of a page)")] = 0,
    ) -> dict[str, Any]:
        engines = await folders.engines()
        name = name.strip()
        if not IDENTIFIER.fullmatch(name):
            raise ToolError(f"invalid argument name: {name!r} is not an identifier")
        left_out = exclusions(exclude, files=True)
        try:
            paths = pathspec.GitIgnoreSpec.from_lines([path]) if path else None
        except ValueError as exc:
            raise ToolError(f"invalid argument path: {exc}") from None

        def run() -> dict[str, Any]:
            answers = []
            for folder, ws in engines:  # each folder's first offset+limit, one folder after the other
                try:
                    answers.append((folder, ws, ws.find_references(
                        name, include_declaration=include_declarations, limit=offset + limit,
                        comments_and_strings=not code_only, paths=paths.match_file if paths is not None else None,
                        filters=Filters(exclude=left_out) if left_out is not None else None)))
                except IndexClosed:
                    continue
            total = sum(found.total for _f, _ws, found in answers)
            page = [(folder, r) for folder, _ws, found in answers for r in found.references][offset:offset + limit]
            rows = [folders.tagged(folder, shared.reference_json(s)) for folder, ws, found in answers
                    for s in ws.shown(found, [r for f, r in page if f is folder])]
            return {"name": name, "total": total, "references": rows,
                    "nextOffset": wire.next_offset(offset, len(rows), offset + len(rows) < total)}

        return {**await anyio.to_thread.run_sync(run), **folders.indexing_note()}

    @app.tool(description=GET_CALLERS_DOC, annotations=READ_ONLY)
    async def get_callers(
        name: Annotated[str, Field(description="The function or method name, e.g. 'parse_config'")],
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Callers per page")] = 50,
        offset: Annotated[int, Field(ge=0, description="Callers to skip (nextOffset of a page)")] = 0,
    ) -> dict[str, Any]:
        engines = await folders.engines()
        name = name.strip()
        if not IDENTIFIER.fullmatch(name):
            raise ToolError(f"invalid argument name: {name!r} is not an identifier")

        def run() -> dict[str, Any]:
            callers = []
            for folder, ws in engines:
                try:
                    callers.extend((folder, c) for c in ws.incoming_calls(name))
                except IndexClosed:
                    continue
            page = callers[offset:offset + limit]
            return {"name": name, "total": len(callers), "calls": sum(len(c.calls) for _f, c in callers),
                    "callers": [folders.tagged(f, shared.caller_json(c, file_lines(f.root / c.path) or []))
                                for f, c in page],
                    "nextOffset": wire.next_offset(offset, len(page), offset + len(page) < len(callers))}

        return {**await anyio.to_thread.run_sync(run), **folders.indexing_note()}

    @app.tool(description=FIND_SIMILAR_CODE_DOC, annotations=READ_ONLY)
    async def find_similar_code(
        path: Annotated[str, Field(description="The file: relative to the workspace root, or absolute")],
        line: Annotated[int, Field(ge=1, description="A 1-based line of it: the function, class or section "
                                                     "around it is the code compared")],
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Chunks at most")] = SIMILAR,
    ) -> dict[str, Any]:
        await folders.engines()
        folder, rel = folders.locate(path, "path")
        engine = folder.engine
        if engine is None:
            raise ToolError(f"the index of {folder.root} is not open yet; try again in a few seconds")
        if not folder.settings.embedding.enabled:
            raise ToolError(f"find_similar_code compares meaning, and semantic search is off for {folder.root} "
                            "(embedding.enabled = false in its settings); search_code in mode lexical, "
                            "find_references or grep answer without it")
        if folder.service.semantic_state() == "unavailable":
            raise ToolError(f"find_similar_code compares meaning, and semantic search is unavailable: "
                            f"{engine.semantic_message}")
        return await anyio.to_thread.run_sync(_similar, folders, folder, engine, rel, path, line, limit)


def _similar(folders: Folders, folder: Folder, engine: Workspace, rel: str, path: str, line: int,
             limit: int) -> dict[str, Any]:
    """find_similar_code's answer (on a worker thread)."""
    try:
        found = engine.similar_at(rel, line - 1, limit)
    except IndexClosed:
        raise ToolError(over_folders.REBUILT) from None
    if not found.indexed:
        raise ToolError(f"invalid argument path: {path} is not an indexed file"
                        + (f" of {folder.root}" if folders.several else "")
                        + " (search_code or search_symbol find the files that are)")
    lines = file_lines(folder.root / rel) or []
    if found.chunk is None:
        raise ToolError(f"invalid argument line: no indexed code at {rel}:{line} (the file has {len(lines)} lines)")
    out: dict[str, Any] = {"chunk": folders.tagged(folder, wire.chunk_json(found.chunk, None, lines)), "similar": []}
    for r in found.near or []:
        out["similar"].append(folders.tagged(folder, wire.chunk_json(
            r.chunk, r.score, file_lines(folder.root / r.chunk.path) or [])))
    if found.near is None:
        out["message"] = (f"this code is not embedded yet ({found.embedded} of {found.chunks} chunks "
                          "embedded): embedding continues in the background; ask again when get_status says "
                          "pending is 0")
    return out
