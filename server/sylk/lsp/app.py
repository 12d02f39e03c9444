"""The language server assembled: lifecycle handlers, then each feature module's
``setup(server)`` (every handler registered through ``handlers.feature``, which contains
its failures); features with an on/off setting are registered at initialize when on
(``OPTIONAL``); ``serve`` runs it. The one module that imports every feature, so
the features import the server (for its type) and never the other way round.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from .. import config
from .. import wire as shared
from . import calls, convert, documents, hover, navigation, search, settings, symbols
from .handlers import command, feature
from .server import CMD_CLEAR, CMD_REINDEX, CMD_STATUS, STATUS, SylkServer, roots_of

# Features with an on/off setting, registered only when some folder has them on at
# initialize (so the capabilities tell the truth), or later when a settings change turns
# them on; turned off while running, each handler answers as "off" (see the modules).
OPTIONAL: list[tuple[str, Callable[[config.Settings], bool], Callable[[SylkServer], None]]] = [
    (hover.SIMILAR, lambda s: s.embedding.enabled, hover.setup_similar),
    (types.TEXT_DOCUMENT_DID_CHANGE, lambda s: s.unsaved_symbols, symbols.setup_unsaved),
    (types.TEXT_DOCUMENT_DEFINITION, lambda s: s.navigation.definition, navigation.setup),
    (types.TEXT_DOCUMENT_REFERENCES, lambda s: s.navigation.references, navigation.setup_references),
    (types.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY, lambda s: s.navigation.call_hierarchy, calls.setup),
]


def register_enabled(ls: SylkServer) -> None:
    """Register the optional features that some folder has on (and are not registered)."""
    every = [f.settings for f in ls.folders.values()] or [config.Settings()]
    for method, enabled, setup in OPTIONAL:
        if method not in ls.protocol.fm.features and any(enabled(s) for s in every):
            setup(ls)


def skipped_limit_of(params: Any) -> int | None:
    """``sylk/status`` params (absent, or an object with ``skipped``: "sample" or "all"):
    how many skipped files of each reason to name."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise JsonRpcInvalidParams("params: expected an object, e.g. {\"skipped\": \"all\"}")
    choice = params.get("skipped", "sample")
    if choice not in shared.SKIPPED_CHOICES:
        raise JsonRpcInvalidParams(f"skipped: expected one of {', '.join(map(repr, shared.SKIPPED_CHOICES))}, "
                                   f"got {choice!r}")
    return shared.skipped_limit(choice)


def create_server() -> SylkServer:
    server = SylkServer()

    @feature(server, "lifecycle", types.INITIALIZE)
    def initialize(ls: SylkServer, params: types.InitializeParams) -> None:
        options = params.initialization_options
        ls.client_options = options if options is not None else None
        for root, uri in roots_of(params).items():
            ls.add_folder(root, uri)
        register_enabled(ls)  # before pygls computes the capabilities from the registered features

    @feature(server, "lifecycle", types.INITIALIZED)
    async def initialized(ls: SylkServer, params: types.InitializedParams) -> None:
        ls.loop = asyncio.get_running_loop()
        problems, notices = ls.take_problems(), ls.take_notices()
        if not ls.folders:
            settings.report(ls, problems, notices)
            ls.message("no workspace folder: open a folder to index it", types.MessageType.Warning)
            return
        await settings.configure(ls, list(ls.folders.values()), problems=problems, notices=notices)
        register_enabled(ls)
        ls.start_indexing()

    @feature(server, "lifecycle", types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_workspace_folders(ls: SylkServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for removed in params.event.removed:
            fs = to_fs_path(removed.uri)
            if fs:
                ls.remove_folder(Path(fs).resolve())
        added = []
        for new in params.event.added:
            fs = to_fs_path(new.uri)
            folder = ls.add_folder(Path(fs).resolve(), new.uri) if fs else None
            if folder is not None:
                added.append(folder)
        await settings.configure(ls, added, problems=ls.take_problems(), notices=ls.take_notices())
        register_enabled(ls)
        for folder in added:
            folder.start_indexing()

    @feature(server, "lifecycle", types.SHUTDOWN)
    def shutdown(ls: SylkServer, params: None) -> None:
        ls.shutdown_work()

    # clients poll it (every 50 ms while a test waits for embedding): no reason to pause for it
    @feature(server, "status", STATUS, foreground=False)
    def sylk_status(ls: SylkServer, params: Any) -> dict[str, Any]:
        return ls.status(skipped_limit_of(convert.params_dict(params)))

    @command(server, "status", CMD_STATUS)
    def cmd_status(ls: SylkServer, *args: Any) -> dict[str, Any]:
        arg = args[0] if args else None
        if isinstance(arg, list):  # pygls hands the arguments over as one list
            arg = arg[0] if arg else None
        return ls.status(skipped_limit_of(convert.params_dict(arg)))

    @command(server, "lifecycle", CMD_REINDEX)
    async def cmd_reindex(ls: SylkServer, *args: Any) -> dict[str, Any]:
        ls.start_indexing("Re-indexing workspace")
        return {"started": True}

    @command(server, "lifecycle", CMD_CLEAR)
    async def cmd_clear(ls: SylkServer, *args: Any) -> dict[str, Any]:
        """Every folder's index, or the one folder given (its URI or path, alone or as
        ``{"folder": ...}``), deleted and built again."""
        arg = args[0] if args else None
        if isinstance(arg, list):
            arg = arg[0] if arg else None
        if isinstance(arg, dict):
            arg = arg.get("folder")
        if arg is None:
            targets = list(ls.folders.values())
        else:
            folder = ls.folder_named(arg) if isinstance(arg, str) else None
            if folder is None:
                raise JsonRpcInvalidParams(f"{CMD_CLEAR}: {arg!r} is not a workspace folder")
            targets = [folder]
        return await ls.clear_indexes(targets)

    settings.setup(server, on_change=register_enabled)
    symbols.setup(server)
    search.setup(server)
    hover.setup(server)
    documents.setup(server)
    navigation.setup_described(server)
    return server


def serve(tcp: str | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    # pygls logs the whole body of every message it sends at INFO: megabytes a minute of
    # symbol lists in the editor's log, and a server blocked on a full stderr pipe when its
    # reader falls behind or gives up (a line longer than the reader takes)
    logging.getLogger("pygls").setLevel(logging.WARNING)
    server = create_server()
    if tcp:
        host, _, port = tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
