"""The call hierarchy from the index (search/calls.py): ``textDocument/prepareCallHierarchy``,
``callHierarchy/incomingCalls`` and ``callHierarchy/outgoingCalls``, registered when the
setting ``navigation.callHierarchy`` is on in some folder; files of the languages in
``navigation.skipLanguages`` get no items (their own server answers).

- prepare: the definitions of the name under the cursor that can be called, nearest
  first (as Go to Definition ranks them);
- incoming: the call sites of the item's name in every folder, grouped by the function
  around each (a call at a file's top level comes from an item for that file);
- outgoing: the calls inside the item's range, each name resolved to its nearest
  definition from the item's file; names with none (builtins, libraries) are left out.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from ..errors import IndexClosed
from ..ingest.symbols import Symbol
from ..languages import language_for_path
from ..search import definitions as defs
from ..search.calls import CALLABLE
from . import convert, texts, uris
from .handlers import feature
from .navigation import cursor_for, definitions_at

if TYPE_CHECKING:
    from .server import SylkServer

# What a call's name can resolve to: a function, or a type called as its constructor.
CALLED = CALLABLE | {"class", "struct"}


def item(root: Path, path: str, s: Symbol) -> types.CallHierarchyItem:
    return types.CallHierarchyItem(name=s.name, kind=convert.symbol_kind(s.kind), uri=uris.path_uri(root, path),
                                   range=convert.to_range(s.range), selection_range=convert.to_range(s.selection),
                                   detail=s.container or None)


def _span(r: types.Range) -> tuple[int, int, int, int]:
    return (r.start.line, r.start.character, r.end.line, r.end.character)


def _prepare(ls: SylkServer, uri: str, line: int, cursor: defs.Cursor,
             language: str | None) -> list[types.CallHierarchyItem]:
    return [item(root, d.hit.path, d.hit.symbol) for root, d in definitions_at(ls, uri, line, cursor, language)
            if d.hit.symbol.kind in CALLABLE]


def _incoming(ls: SylkServer, target: types.CallHierarchyItem) -> list[types.CallHierarchyIncomingCall]:
    out = []
    for folder, engine in ls.engines():
        try:
            callers = engine.incoming_calls(target.name)
        except IndexClosed:
            continue
        for c in callers:
            ranges = [types.Range(types.Position(r.line, r.column), types.Position(r.line, r.end)) for r in c.calls]
            if c.symbol is not None:
                source = item(folder.root, c.path, c.symbol)
            else:  # the file's top level
                last = c.calls[-1]
                source = types.CallHierarchyItem(
                    name=c.path.rsplit("/", 1)[-1], kind=types.SymbolKind.File, uri=uris.path_uri(folder.root, c.path),
                    range=types.Range(types.Position(0, 0), types.Position(last.line, last.end)),
                    selection_range=ranges[0], detail=c.path)
            out.append(types.CallHierarchyIncomingCall(from_=source, from_ranges=ranges))
    return out


def _outgoing(ls: SylkServer, source: types.CallHierarchyItem) -> list[types.CallHierarchyOutgoingCall]:
    found = ls.folder_for(source.uri)
    if found is None or found[0].engine is None:
        return []
    folder, rel = found
    engine = folder.engine
    language = language_for_path(rel)
    try:
        callees = engine.outgoing_calls(rel, _span(source.range))
        origin = engine.origin_at(rel, language, texts.text_of(ls, source.uri))
        out = []
        for callee in callees:
            cursor = defs.Cursor(callee.name, "", 0, 0)
            to = next((d.hit for d in defs.definitions(engine, cursor, origin)
                       if d.hit.symbol.name == callee.name and d.hit.symbol.kind in CALLED), None)
            if to is None:
                continue
            out.append(types.CallHierarchyOutgoingCall(
                to=item(folder.root, to.path, to.symbol),
                from_ranges=[types.Range(types.Position(o.line, o.column), types.Position(o.line, o.end))
                             for o in callee.calls]))
        return out
    except IndexClosed:
        return []


def setup(server: SylkServer) -> None:
    @feature(server, "navigation", types.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY)
    async def prepare(ls: SylkServer, params: types.CallHierarchyPrepareParams) -> list[types.CallHierarchyItem] | None:
        uri = params.text_document.uri
        at = cursor_for(ls, uri, params.position, lambda n: n.call_hierarchy)
        if at is None:
            return None
        items = await asyncio.get_running_loop().run_in_executor(ls.thread_pool, _prepare, ls, uri,
                                                                 params.position.line, *at)
        return items or None

    @feature(server, "navigation", types.CALL_HIERARCHY_INCOMING_CALLS)
    async def incoming(ls: SylkServer,
                       params: types.CallHierarchyIncomingCallsParams) -> list[types.CallHierarchyIncomingCall]:
        return await asyncio.get_running_loop().run_in_executor(ls.thread_pool, _incoming, ls, params.item)

    @feature(server, "navigation", types.CALL_HIERARCHY_OUTGOING_CALLS)
    async def outgoing(ls: SylkServer,
                       params: types.CallHierarchyOutgoingCallsParams) -> list[types.CallHierarchyOutgoingCall]:
        return await asyncio.get_running_loop().run_in_executor(ls.thread_pool, _outgoing, ls, params.item)
