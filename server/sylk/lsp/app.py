"""The language server assembled: lifecycle handlers, then each feature module's
``setup(server)``; ``serve`` runs it. The one module that imports every feature, so
the features import the server (for its type) and never the other way round.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from . import documents, hover, search, symbols
from .server import CMD_REINDEX, CMD_STATUS, STATUS, SylkServer, log, roots_of


def create_server() -> SylkServer:
    server = SylkServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: SylkServer, params: types.InitializeParams) -> None:
        options = params.initialization_options
        ls.client_options = options if options is not None else None
        for root in roots_of(params):
            ls.add_folder(root)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: SylkServer, params: types.InitializedParams) -> None:
        ls.loop = asyncio.get_running_loop()
        problems = ls.take_problems()
        if problems:
            ls.message("invalid settings, using defaults for them: " + "; ".join(problems),
                       types.MessageType.Warning)
        if not ls.folders:
            ls.message("no workspace folder: open a folder to index it", types.MessageType.Warning)
            return
        ls.start_indexing()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_workspace_folders(ls: SylkServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for removed in params.event.removed:
            fs = to_fs_path(removed.uri)
            if fs:
                ls.remove_folder(Path(fs).resolve())
        added = []
        for new in params.event.added:
            fs = to_fs_path(new.uri)
            folder = ls.add_folder(Path(fs).resolve()) if fs else None
            if folder is not None:
                added.append(folder)
        problems = ls.take_problems()
        if problems:
            ls.message("invalid settings, using defaults for them: " + "; ".join(problems),
                       types.MessageType.Warning)
        for folder in added:
            folder.start_indexing()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: SylkServer, params: types.DidChangeConfigurationParams) -> None:
        options: Any = None
        ws_caps = ls.client_capabilities.workspace
        if ws_caps is not None and ws_caps.configuration:
            try:
                result = await ls.workspace_configuration_async(types.ConfigurationParams(
                    items=[types.ConfigurationItem(section="sylk")]))
                options = result[0] if result else None
            except Exception as exc:
                log.warning("workspace/configuration failed: %s", exc)
        if options is None and isinstance(params.settings, dict):
            options = params.settings.get("sylk", params.settings)
        if options is None:
            return
        for folder in ls.apply_settings(options):
            folder.start_indexing("Re-indexing after a settings change")

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: SylkServer, params: None) -> None:
        ls.shutdown_work()

    @server.feature(STATUS)
    def sylk_status(ls: SylkServer, params: Any) -> dict[str, Any]:
        return ls.status()

    @server.command(CMD_STATUS)
    def cmd_status(ls: SylkServer, *args: Any) -> dict[str, Any]:
        return ls.status()

    @server.command(CMD_REINDEX)
    async def cmd_reindex(ls: SylkServer, *args: Any) -> dict[str, Any]:
        ls.start_indexing("Re-indexing workspace")
        return {"started": True}

    symbols.setup(server)
    search.setup(server)
    hover.setup(server)
    documents.setup(server)
    return server


def serve(tcp: str | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    server = create_server()
    if tcp:
        host, _, port = tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
