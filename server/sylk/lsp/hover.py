"""Hover: the definition(s) of the identifier under the cursor, from the index (any
file, any folder), and the code nearest to it by meaning. ``sylk/similar``: the
chunks nearest by meaning to a location. Both read stored vectors only. Hover is always
registered (its definitions need no model; the related code says when semantic search
is off); ``sylk/similar`` only by ``setup_similar``, when embedding is on."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from ..errors import IndexClosed
from ..languages import language_for_path
from ..search import related
from ..search.symbol_search import SymbolHit
from . import convert, texts, uris
from .handlers import feature

if TYPE_CHECKING:
    from ..engine.workspace import Workspace
    from .folders import Folder
    from .server import SylkServer

SIMILAR = "sylk/similar"
DEFINITIONS = 3  # shown in a hover
RELATED = 5


def _link(root: Path, path: str, line: int) -> str:
    """A Markdown link to ``path`` at ``line`` (0-based): a file, or a virtual document's sylk: URI."""
    return f"[{path}:{line + 1}]({uris.path_uri(root, path)}#L{line + 1})"


def hover_markdown(name: str, defs: list[tuple[Folder, SymbolHit]],
                   near: list[tuple[Folder, related.Related]] | None, note: str | None) -> str:
    """The hover text: the best definition's signature and doc, where it and the others
    are, then the related code (or why there is none)."""
    folder, best = defs[0]
    sym = best.symbol
    lang = language_for_path(best.path) or ""
    head = f"```{lang}\n{sym.signature or sym.name}\n```"
    parts = [f"{head}\n\n{sym.doc}" if sym.doc else head]
    where = [f"{sym.kind} `{sym.qualified_name}` in {_link(folder.root, best.path, sym.selection[0])}"]
    for f, other in defs[1:]:
        where.append(f"also {other.symbol.kind} `{other.symbol.qualified_name}` in "
                     f"{_link(f.root, other.path, other.symbol.selection[0])}")
    parts.append("  \n".join(where))
    if near:
        lines = [f"- `{related.qualified(r.chunk)}` {_link(f.root, r.chunk.path, r.chunk.start_line)}"
                 f" ({r.score:.2f})" for f, r in near]
        parts.append("**Related code**\n\n" + "\n".join(lines))
    elif note:
        parts.append(f"*Related code: {note}*")
    return "\n\n---\n\n".join(parts)


def _find(ls: SylkServer, name: str) -> tuple[list[tuple[Folder, SymbolHit]],
                                              list[tuple[Folder, related.Related]] | None, str | None]:
    defs: list[tuple[Folder, SymbolHit]] = []
    for folder, engine in ls.engines():
        try:
            defs.extend((folder, h) for h in related.definitions(engine, name, DEFINITIONS))
        except IndexClosed:  # cleared or rebuilt on the way
            continue
    defs.sort(key=lambda fd: fd[1].symbol.name != name)
    defs = defs[:DEFINITIONS]
    if not defs:
        return [], None, None
    folder, best = defs[0]
    engine = folder.engine
    try:
        found = engine.similar_at(best.path, best.symbol.range[0], RELATED, best.symbol.name) if engine else None
    except IndexClosed:
        found = None
    if found is None or found.chunk is None:
        return defs, None, None
    if found.near is None:
        note = ("semantic search is off" if folder.semantic_state() in ("off", "unavailable")
                else "not embedded yet")
        return defs, None, note
    return defs, [(folder, r) for r in found.near], None


def _wire(root: Path, r: related.Related) -> dict[str, Any]:
    c = r.chunk
    return {"uri": uris.path_uri(root, c.path), "path": c.path,
            "range": convert.range_json(c.start_line, 0, c.end_line + 1, 0),
            "language": c.language, "type": c.type, "kind": c.kind, "symbol": c.symbol,
            "containerName": c.container, "score": round(r.score, 6)}


def setup(server: SylkServer) -> None:
    @feature(server, "hover", types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: SylkServer, params: types.HoverParams) -> types.Hover | None:
        line = texts.line_of(ls, params.text_document.uri, params.position.line)
        if line is None:
            return None
        name = related.identifier_at(line, params.position.character)
        if not name or not ls.engines():
            return None
        defs, near, note = await asyncio.get_running_loop().run_in_executor(ls.thread_pool, _find, ls, name)
        if not defs:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                        value=hover_markdown(name, defs, near, note)))


def setup_similar(server: SylkServer) -> None:
    def similar_at(ls: SylkServer, folder: Folder, engine: Workspace, rel: str, line: int,
                   limit: int) -> dict[str, Any]:
        try:
            found = engine.similar_at(rel, line, limit)
        except IndexClosed:
            return {"chunk": None, "similar": [], "message": "the index is being rebuilt; ask again in a moment"}
        chunk, near = found.chunk, found.near
        if chunk is None:
            return {"chunk": None, "similar": [], "message": f"nothing indexed at {rel}:{line + 1}"}
        out: dict[str, Any] = {"chunk": _wire(folder.root, related.Related(chunk, 1.0)),
                               "similar": [_wire(folder.root, r) for r in near or []]}
        if near is None:
            out["message"] = ("semantic search is off" if folder.semantic_state() in ("off", "unavailable")
                              else "this code is not embedded yet")
        return out

    # pygls resolves the annotations of custom handlers at run time: keep them to builtins
    @feature(server, "similar", SIMILAR)
    async def sylk_similar(ls: Any, params: Any) -> Any:
        raw = convert.params_dict(params)
        if not isinstance(raw, dict):
            raise JsonRpcInvalidParams("params must be an object with uri and position")
        uri, pos, limit = raw.get("uri"), raw.get("position"), raw.get("limit", RELATED)
        if not isinstance(uri, str):
            raise JsonRpcInvalidParams("uri: expected a document URI string")
        if not isinstance(pos, dict) or not isinstance(pos.get("line"), int) or pos["line"] < 0:
            raise JsonRpcInvalidParams("position: expected {line, character} with a line number >= 0")
        if not isinstance(limit, int) or not 1 <= limit <= 100:
            raise JsonRpcInvalidParams("limit: expected a number from 1 to 100")
        found = ls.folder_for(uri)
        if found is None or found[0].engine is None:
            return {"chunk": None, "similar": [], "message": "the document is not in an indexed workspace folder"}
        folder, rel = found
        return await asyncio.get_running_loop().run_in_executor(
            ls.thread_pool, similar_at, ls, folder, folder.engine, rel, pos["line"], limit)
