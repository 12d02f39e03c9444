"""workspace/symbol, textDocument/documentSymbol, and re-indexing a saved file."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from ..symbols import extract_for_path
from . import convert

if TYPE_CHECKING:
    from .server import SylkServer

log = logging.getLogger("sylk.symbols")
UNSAVED_DELAY_S = 0.25


def setup(server: SylkServer) -> None:
    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(ls: SylkServer,
                               params: types.WorkspaceSymbolParams) -> list[types.SymbolInformation]:
        engine, root = ls.engine, ls.root
        if engine is None or root is None:
            return []  # still opening the index: nothing yet, never an error
        limit = ls.settings.symbols.limit
        if engine.symbols_ready:  # milliseconds: answer on the loop
            hits = engine.search_symbols(params.query, limit)
        else:  # the table is (re)building after changes: keep the loop free meanwhile
            hits = await asyncio.get_running_loop().run_in_executor(
                ls.thread_pool, engine.search_symbols, params.query, limit)
        return [convert.symbol_information(root, h) for h in hits]

    @server.thread()
    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
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

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: SylkServer, params: types.DidOpenTextDocumentParams) -> None:
        # a file the user opens is embedded next if the background pass has not reached it
        engine, root = ls.engine, ls.root
        if engine is not None and root is not None:
            rel = convert.uri_to_rel(root, params.text_document.uri)
            if rel is not None:
                engine.prioritize([rel])

    # Unsaved buffers: workspace/symbol finds a function typed a moment ago. The text is
    # parsed a short while after the typing stops, off the event loop.
    pending: dict[str, asyncio.TimerHandle] = {}

    def buffer_symbols(ls: SylkServer, uri: str) -> None:
        pending.pop(uri, None)
        engine, root = ls.engine, ls.root
        doc = ls.workspace.text_documents.get(uri)
        rel = convert.uri_to_rel(root, uri) if root is not None else None
        if engine is None or rel is None or doc is None or engine.scan_ignored(rel):
            return
        source = doc.source.encode("utf-8", "surrogatepass")
        asyncio.get_running_loop().run_in_executor(ls.thread_pool, engine.set_unsaved, rel, source)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: SylkServer, params: types.DidChangeTextDocumentParams) -> None:
        if not ls.settings.unsaved_symbols or ls.engine is None:
            return
        uri = params.text_document.uri
        timer = pending.pop(uri, None)
        if timer is not None:
            timer.cancel()
        pending[uri] = asyncio.get_running_loop().call_later(UNSAVED_DELAY_S, buffer_symbols, ls, uri)

    def back_to_disk(ls: SylkServer, uri: str, restore: bool) -> None:
        timer = pending.pop(uri, None)
        if timer is not None:
            timer.cancel()
        engine, root = ls.engine, ls.root
        rel = convert.uri_to_rel(root, uri) if root is not None else None
        if engine is not None and rel is not None:
            if restore:
                asyncio.get_running_loop().run_in_executor(ls.thread_pool, engine.set_unsaved, rel, None)
            else:
                engine.keep_unsaved(rel)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: SylkServer, params: types.DidCloseTextDocumentParams) -> None:
        back_to_disk(ls, params.text_document.uri, restore=True)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: SylkServer, params: types.DidSaveTextDocumentParams) -> None:
        # the file now holds the buffer's text: its symbols stay until the re-index replaces them
        back_to_disk(ls, params.text_document.uri, restore=False)
        engine, root = ls.engine, ls.root
        if engine is None or root is None or not engine.writable:
            return
        rel = convert.uri_to_rel(root, params.text_document.uri)
        if rel is None:
            return
        if engine.scan_ignored(rel):
            return
        def reindex_then_embed() -> None:
            engine.reindex_paths([rel])
            if engine.semantic_ready:
                # joins a running embedding pass as its next file, or runs one
                engine.prioritize([rel])
                ls.submit(f"embedding {rel}", lambda: engine.embed_pending(cancel=ls.cancel), embed=True)

        ls.submit(f"re-indexing {rel}", reindex_then_embed)
