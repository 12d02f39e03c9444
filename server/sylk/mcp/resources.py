"""The MCP resources: ``sylk://status`` (what ``get_status`` answers) and, for each
indexed file, its symbols: ``sylk://symbols/<path>`` (a resource template; ``path``
relative to the workspace root; ``?root=<folder name>`` picks the folder when several
are served, else the first folder that indexed the path answers). Both are JSON."""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError

from .. import wire as shared
from ..engine.workspace import Workspace
from ..errors import IndexClosed
from . import wire
from .docs import STATUS_RESOURCE_DOC, SYMBOLS_RESOURCE_DOC
from .folders import Folder, Folders

STATUS_URI = "sylk://status"
SYMBOLS_TEMPLATE = "sylk://symbols/{+path}{?root}"
JSON = "application/json"


def _file_symbols(folders: Folders, engines: list[tuple[Folder, Workspace]], path: str,
                  root: str | None) -> dict[str, Any]:
    if root is not None:
        engines = [(f, ws) for f, ws in engines if root in (f.name, str(f.root))]
        if not engines:
            raise ResourceNotFoundError(f"{root!r} is not a workspace folder (they are: "
                                        + ", ".join(f.name for f in folders.all()) + ")")
    for _folder, ws in engines:
        try:
            found = ws.file_symbols(path)
            if found is not None:
                return wire.file_symbols_json(path, *found)
        except IndexClosed:
            continue
    where = ", ".join(str(f.root) for f, _ws in engines)
    raise ResourceNotFoundError(f"{path} is not an indexed file of {where} (paths are relative to the "
                                "workspace root; search_symbol and search_code find the files that are)")


def setup(app: MCPServer, folders: Folders) -> None:
    @app.resource(STATUS_URI, name="status", title="Index status", description=STATUS_RESOURCE_DOC, mime_type=JSON)
    async def status() -> str:
        status = await anyio.to_thread.run_sync(folders.status, shared.skipped_limit("sample"))
        return json.dumps(status, indent=2)

    @app.resource(SYMBOLS_TEMPLATE, name="symbols", title="A file's symbols", description=SYMBOLS_RESOURCE_DOC,
                  mime_type=JSON)
    async def symbols(path: str, root: str | None = None) -> str:
        try:
            engines = await folders.engines()
        except ToolError as exc:  # still opening
            raise ResourceError(str(exc)) from None
        found = await anyio.to_thread.run_sync(_file_symbols, folders, engines, path.strip("/"), root)
        return json.dumps(found, indent=2)
