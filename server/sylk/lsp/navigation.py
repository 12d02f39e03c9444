"""``textDocument/definition`` (search/definitions.py) and ``textDocument/references``
(search/references.py) from the index: each registered when its setting
(``navigation.definition``, ``navigation.references``) is on in some folder. Files of
the languages in ``navigation.skipLanguages`` (those whose own language server most
editors run) get an empty answer, which adds nothing beside that server's.

``sylk/references`` (always registered) answers for every language, as ``sylk refs``
does: the occurrences of a ``name`` (or of the identifier at a ``textDocument`` and
``position``), each with its URI, range, enclosing symbol and line text (``:SylkRefs``)."""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from .. import wire as shared
from ..config import NavigationSettings
from ..errors import IndexClosed
from ..ingest.occurrences import IDENTIFIER
from ..languages import language_for_path
from ..search import definitions as defs
from ..search.references import Reference, References
from . import convert, texts, uris
from .handlers import feature

REFERENCES = "sylk/references"

if TYPE_CHECKING:
    from ..engine.workspace import Workspace
    from .folders import Folder
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
        try:
            if found is not None and found[0] is folder:
                origin = engine.origin_at(found[1], language, text, line)
            elif language is not None:
                origin = defs.Origin("", language)  # another folder: the same language first
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


def _references(ls: SylkServer, uri: str | None, name: str, include_declaration: bool,
                comments_and_strings: bool | None = None,
                limit: int | None = None) -> list[tuple[Folder, Workspace, References]]:
    """The occurrences of ``name`` in every folder, those of the folder holding ``uri``
    first (that file leading), each folder's answer cut at ``limit`` (its
    ``references.limit`` unless given; a cut answer is logged)."""
    found = ls.folder_for(uri) if uri else None
    out = []
    engines = sorted(ls.engines(), key=lambda fe: found is None or fe[0] is not found[0])
    for folder, engine in engines:
        first = found[1] if found is not None and found[0] is folder else None
        try:
            answer = engine.find_references(name, include_declaration=include_declaration, first=first,
                                            comments_and_strings=comments_and_strings, limit=limit)
        except IndexClosed:  # cleared or rebuilt on the way
            continue
        if answer.truncated:
            ls.log(f"references of {name!r} in {folder.root}: the first {len(answer.references)} of "
                   f"{answer.total} (references.limit)", types.MessageType.Warning)
        out.append((folder, engine, answer))
    return out


def _range(r: Reference) -> types.Range:
    return types.Range(types.Position(r.line, r.column), types.Position(r.line, r.end))


def _locations(ls: SylkServer, uri: str, name: str, include_declaration: bool) -> list[types.Location]:
    return [types.Location(uri=uris.path_uri(folder.root, r.path), range=_range(r))
            for folder, _engine, answer in _references(ls, uri, name, include_declaration)
            for r in answer.references]


def _described(ls: SylkServer, uri: str | None, name: str, include_declaration: bool, code_only: bool,
               limit: int | None) -> dict[str, Any]:
    """The answer of ``sylk/references``: each occurrence with its URI, range, enclosing
    symbol and line text (``wire.reference_json``)."""
    rows: list[dict[str, Any]] = []
    total = 0
    for folder, engine, answer in _references(ls, uri, name, include_declaration,
                                              False if code_only else None, limit):
        total += answer.total
        for s in engine.shown(answer, answer.references):
            r = s.reference
            rows.append({**shared.reference_json(s), "uri": uris.path_uri(folder.root, r.path),
                         "range": convert.range_json(r.line, r.column, r.line, r.end)})
    return {"name": name, "total": total, "truncated": total > len(rows), "references": rows}


def _reference_params(ls: SylkServer, raw: Any) -> tuple[str | None, str, bool, bool, int | None]:
    """(uri, name, includeDeclaration, codeOnly, limit) of ``sylk/references`` params: a
    ``name``, or a ``textDocument`` and ``position`` (the identifier there)."""
    if not isinstance(raw, dict):
        raise JsonRpcInvalidParams("params: expected an object with a name, or a textDocument and a position")
    include, code_only, limit = raw.get("includeDeclaration", True), raw.get("codeOnly", False), raw.get("limit")
    if not isinstance(include, bool) or not isinstance(code_only, bool):
        raise JsonRpcInvalidParams("includeDeclaration and codeOnly: expected true or false")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise JsonRpcInvalidParams(f"limit: expected a positive integer, got {limit!r}")
    doc, position = raw.get("textDocument"), raw.get("position")
    uri = doc.get("uri") if isinstance(doc, dict) else None
    name = raw.get("name")
    if name is not None:
        if not isinstance(name, str) or not IDENTIFIER.fullmatch(name.strip()):
            raise JsonRpcInvalidParams(f"name: expected an identifier, got {name!r}")
        return uri if isinstance(uri, str) else None, name.strip(), include, code_only, limit
    if not isinstance(uri, str) or not isinstance(position, dict) or not isinstance(position.get("line"), int) \
            or not isinstance(position.get("character"), int):
        raise JsonRpcInvalidParams("expected a name, or a textDocument {uri} and a position {line, character}")
    line = texts.line_of(ls, uri, position["line"])
    cursor = defs.cursor_at(line, position["character"]) if line is not None else None
    return uri, cursor.name if cursor is not None else "", include, code_only, limit


def setup_references(server: SylkServer) -> None:
    @feature(server, "navigation", types.TEXT_DOCUMENT_REFERENCES)
    async def references(ls: SylkServer, params: types.ReferenceParams) -> list[types.Location]:
        uri = params.text_document.uri
        at = cursor_for(ls, uri, params.position, lambda n: n.references)
        if at is None:
            return []
        include = params.context.include_declaration if params.context is not None else True
        return await asyncio.get_running_loop().run_in_executor(ls.thread_pool, _locations, ls, uri,
                                                                at[0].name, include)


def setup_described(server: SylkServer) -> None:
    # pygls resolves the annotations of custom handlers at run time: keep them to builtins
    @feature(server, "navigation", REFERENCES)
    async def sylk_references(ls: Any, params: Any) -> Any:
        uri, name, include, code_only, limit = _reference_params(ls, convert.params_dict(params))
        if not name or not ls.engines():
            return {"name": name, "total": 0, "truncated": False, "references": []}
        return await asyncio.get_running_loop().run_in_executor(ls.thread_pool, _described, ls, uri, name,
                                                                include, code_only, limit)


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
