"""``textDocument/definition`` (search/definitions.py) and ``textDocument/references``
(search/references.py) from the index: each registered when its setting
(``navigation.definition``, ``navigation.references``) is on in some folder. Files of
the languages in ``navigation.skipLanguages`` (those whose own language server most
editors run) get an empty answer, which adds nothing beside that server's."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from ..config import NavigationSettings
from ..errors import IndexClosed
from ..languages import language_for_path
from ..search import definitions as defs
from . import convert, texts, uris
from .handlers import feature

if TYPE_CHECKING:
    from .server import SylkServer


def definitions_at(ls: SylkServer, uri: str, line: int, cursor: defs.Cursor,
            language: str | None) -> list[tuple[Path, defs.Definition]]:
    """The definitions of the folder holding ``uri`` (ranked from that file and the scope
    around ``line``), then those of the other folders (by language only), best first."""
    found = ls.folder_for(uri)
    text = texts.text_of(ls, uri)
    ranked: list[tuple[Path, defs.Definition]] = []
    for folder, engine in ls.engines():
        origin = None
        if found is not None and found[0] is folder:
            origin = defs.origin_of(found[1], language, text, engine.table.file_set(),
                                    engine.table.scope(found[1], line))
        elif language is not None:
            origin = defs.Origin("", language)  # another folder: the same language first
        try:
            ranked.extend((folder.root, d) for d in defs.definitions(engine, cursor, origin))
        except IndexClosed:  # cleared or rebuilt on the way
            continue
    ranked.sort(key=lambda rd: defs.rank(rd[1], cursor))
    return ranked[:defs.answered([d for _root, d in ranked], cursor)]


def cursor_for(ls: SylkServer, uri: str, position: types.Position,
            enabled: Callable[[NavigationSettings], bool]) -> tuple[defs.Cursor, str | None] | None:
    """The identifier under ``position`` and the document's language; None when there is
    none, or the feature is off (``enabled``) or skipped for the language in its folder."""
    found = ls.folder_for(uri)
    settings = found[0].settings if found is not None else None
    if settings is not None and not enabled(settings.navigation):
        return None  # turned off for this folder while running
    language = language_for_path(found[1] if found is not None else uri)
    if settings is not None and language in settings.navigation.skip_languages:
        return None
    line = texts.line_of(ls, uri, position.line)
    cursor = defs.cursor_at(line, position.character, language) if line is not None else None
    if cursor is None or not ls.engines():
        return None
    return cursor, language


def _references(ls: SylkServer, uri: str, name: str, include_declaration: bool) -> list[types.Location]:
    """The occurrences of ``name`` in every folder, those of the folder holding ``uri``
    first (that file leading), each folder's answer cut at its ``references.limit``."""
    found = ls.folder_for(uri)
    out: list[types.Location] = []
    engines = sorted(ls.engines(), key=lambda fe: found is None or fe[0] is not found[0])
    for folder, engine in engines:
        first = found[1] if found is not None and found[0] is folder else None
        try:
            answer = engine.find_references(name, include_declaration=include_declaration, first=first)
        except IndexClosed:  # cleared or rebuilt on the way
            continue
        if answer.truncated:
            ls.log(f"references of {name!r} in {folder.root}: the first {len(answer.references)} of "
                   f"{answer.total} (references.limit)", types.MessageType.Warning)
        out.extend(types.Location(uri=uris.path_uri(folder.root, r.path),
                                  range=types.Range(types.Position(r.line, r.column), types.Position(r.line, r.end)))
                   for r in answer.references)
    return out


def setup_references(server: SylkServer) -> None:
    @feature(server, "navigation", types.TEXT_DOCUMENT_REFERENCES)
    async def references(ls: SylkServer, params: types.ReferenceParams) -> list[types.Location]:
        uri = params.text_document.uri
        at = cursor_for(ls, uri, params.position, lambda n: n.references)
        if at is None:
            return []
        include = params.context.include_declaration if params.context is not None else True
        return await asyncio.get_running_loop().run_in_executor(ls.thread_pool, _references, ls, uri,
                                                                at[0].name, include)


def setup(server: SylkServer) -> None:
    @feature(server, "navigation", types.TEXT_DOCUMENT_DEFINITION)
    async def definition(ls: SylkServer, params: types.DefinitionParams) -> list[Any] | None:
        uri = params.text_document.uri
        at = cursor_for(ls, uri, params.position, lambda n: n.definition)
        if at is None:
            return []
        cursor, language = at
        answer = await asyncio.get_running_loop().run_in_executor(ls.thread_pool, definitions_at, ls, uri,
                                                                  params.position.line, cursor, language)
        caps = ls.client_capabilities.text_document
        links = bool(caps and caps.definition and caps.definition.link_support)
        origin = types.Range(types.Position(params.position.line, cursor.start),
                             types.Position(params.position.line, cursor.end))
        out: list[Any] = []
        for root, d in answer:
            target = uris.path_uri(root, d.hit.path)
            s = d.hit.symbol
            if links:
                out.append(types.LocationLink(target_uri=target, target_range=convert.to_range(s.range),
                                              target_selection_range=convert.to_range(s.selection),
                                              origin_selection_range=origin))
            else:
                out.append(types.Location(uri=target, range=convert.to_range(s.selection)))
        return out
