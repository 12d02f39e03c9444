"""workspace/symbol, textDocument/documentSymbol, and re-indexing a saved file. The
symbols of unsaved buffers (``textDocument/didChange``, setting ``unsavedSymbols``) are
registered by ``setup_unsaved`` only when that setting is on."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from ..errors import IndexClosed
from ..ingest.symbols import extract_for_path
from ..search.merge import merge_symbols
from ..search.symbol_search import SymbolHit
from . import convert
from .handlers import feature

if TYPE_CHECKING:
    from ..engine.workspace import Workspace
    from .folders import Folder
    from .server import SylkServer

log = logging.getLogger("sylk.symbols")
UNSAVED_DELAY_S = 0.25
# A symbol query is a name or a few words; ranking a 100 kB one took 28 s on the loop.
MAX_SYMBOL_QUERY = 512
# Unsaved buffers waiting to be parsed (uri -> timer); one server per process.
pending: dict[str, asyncio.TimerHandle] = {}


def _located(ls: SylkServer, uri: str) -> tuple[Folder, Workspace, str] | None:
    """The folder, its index and the folder-relative path of document ``uri`` (None when no
    folder holds it or its index is not open yet)."""
    found = ls.folder_for(uri)
    if found is None or found[0].engine is None:
        return None
    folder, rel = found
    assert folder.engine is not None
    return folder, folder.engine, rel


def setup(server: SylkServer) -> None:
    @feature(server, "symbols", types.WORKSPACE_SYMBOL)
    async def workspace_symbol(ls: SylkServer, params: types.WorkspaceSymbolParams) -> list[dict[str, Any]]:
        """SymbolInformation as JSON (convert.symbol_information), best first."""
        if len(params.query) > MAX_SYMBOL_QUERY:
            raise JsonRpcInvalidParams(f"query: longer than {MAX_SYMBOL_QUERY} characters ({len(params.query)})")
        engines = ls.engines()
        if not engines:
            return []  # still opening the index: nothing yet, never an error
        # each folder answers with its own symbols.limit; the answer holds at most the largest
        limit = max(f.settings.symbols.limit for f, _e in engines)
        loop = asyncio.get_running_loop()
        roots: list[Path] = []
        parts: list[list[SymbolHit]] = []
        for folder, engine in engines:
            try:
                mine = folder.settings.symbols.limit
                if engine.symbols_ready:  # milliseconds: answer on the loop
                    hits = engine.search_symbols(params.query, mine)
                else:  # the table is (re)building after changes: keep the loop free meanwhile
                    hits = await loop.run_in_executor(ls.thread_pool, engine.search_symbols, params.query, mine)
            except IndexClosed:  # cleared or rebuilt on the way: nothing from it yet
                continue
            roots.append(folder.root)
            parts.append(hits)
        return [convert.symbol_information(roots[f], h) for f, h in merge_symbols(parts)[:limit]]

    @feature(server, "symbols", types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, thread=True)
    def document_symbol(ls: SylkServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
        uri = params.text_document.uri
        doc = ls.workspace.text_documents.get(uri)
        fs = to_fs_path(uri)
        if fs is None:
            return []
        if doc is not None:
            source = doc.source.encode("utf-8", "surrogatepass")
        else:
            try:
                source = Path(fs).read_bytes()
            except OSError:
                return []
        return convert.document_symbols(extract_for_path(fs, source))

    @feature(server, "symbols", types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: SylkServer, params: types.DidOpenTextDocumentParams) -> None:
        # a file the user opens is embedded next if the background pass has not reached it
        found = _located(ls, params.text_document.uri)
        if found is not None:
            found[1].prioritize([found[2]])

    def back_to_disk(ls: SylkServer, uri: str, restore: bool) -> None:
        timer = pending.pop(uri, None)
        if timer is not None:
            timer.cancel()
        found = _located(ls, uri)
        if found is not None:
            _folder, engine, rel = found
            if restore:
                asyncio.get_running_loop().run_in_executor(ls.thread_pool, engine.set_unsaved, rel, None)
            else:
                engine.keep_unsaved(rel)

    @feature(server, "symbols", types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: SylkServer, params: types.DidCloseTextDocumentParams) -> None:
        back_to_disk(ls, params.text_document.uri, restore=True)

    @feature(server, "symbols", types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: SylkServer, params: types.DidSaveTextDocumentParams) -> None:
        # the file now holds the buffer's text: its symbols stay until the re-index replaces them
        back_to_disk(ls, params.text_document.uri, restore=False)
        found = _located(ls, params.text_document.uri)
        if found is None:
            return
        folder, engine, rel = found
        if not engine.writable or engine.scan_ignored(rel):
            return

        def reindex_then_embed() -> None:
            engine.reindex_paths([rel])
            folder.embed_soon([rel])  # joins a running embedding pass as its next file, or runs one

        ls.submit(f"re-indexing {rel}", reindex_then_embed)


def setup_unsaved(server: SylkServer) -> None:
    """Unsaved buffers: workspace/symbol finds a function typed a moment ago. The text is
    parsed a short while after the typing stops, off the event loop."""

    def buffer_symbols(ls: SylkServer, uri: str) -> None:
        pending.pop(uri, None)
        found = _located(ls, uri)
        doc = ls.workspace.text_documents.get(uri)
        if found is None or doc is None:
            return
        folder, engine, rel = found
        if not folder.settings.unsaved_symbols or engine.scan_ignored(rel):
            return
        source = doc.source.encode("utf-8", "surrogatepass")
        asyncio.get_running_loop().run_in_executor(ls.thread_pool, engine.set_unsaved, rel, source)

    @feature(server, "symbols", types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: SylkServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if _located(ls, uri) is None:
            return
        timer = pending.pop(uri, None)
        if timer is not None:
            timer.cancel()
        pending[uri] = asyncio.get_running_loop().call_later(UNSAVED_DELAY_S, buffer_symbols, ls, uri)
