"""``sylk mcp``: the same engine for agents, over the Model Context Protocol on stdio.

The server assembled: the workspace folders (folders.py: the client's roots, else the
folder on the command line, each with its own ``WorkspaceService``, learnt by a server
middleware once the client is initialized), then each group of tools' ``setup`` and the
resources'. Tools: ``search_code``, ``search_symbol``, ``grep``, ``find_similar_code``
(tools_search.py), ``find_definition``, ``find_references``, ``get_callers``
(tools_navigation.py), ``get_status``, ``index``, ``reindex``, ``clear_index``
(tools_index.py); resources: ``sylk://status`` and ``sylk://symbols/<path>``
(resources.py); every description is in docs.py.

Each folder's index opens and is brought up to date in the background, then git
metadata is refreshed and pending chunks are embedded, and changes on disk (or another
process's index runs) are followed: tools answer at once from what is indexed, and
their results say how complete the index is. Requests are built by the core's own
builders (query.search_request, query.line_request: the same filters and checks as
``sylk/search``, the filter arguments made from the filter table by arguments.py); results are shaped by mcp/wire.py and the JSON shared with the CLI (sylk/wire.py).

Only MCP messages go to stdout (the SDK points the process's fd 1 at stderr while
it serves, so worker processes cannot write there either); logs go to stderr.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer

from .. import __version__, config
from . import resources, tools_index, tools_navigation, tools_search
from .docs import INSTRUCTIONS
from .folders import Folders


def create_server(root: Path, settings: config.Settings, notes: list[str] | None = None) -> tuple[MCPServer, Folders]:
    """The MCP server of the folder ``root`` (with its ``settings``, and ``notes`` about
    them for its status), served until the client announces its own roots."""
    folders = Folders(root, settings, notes)

    @asynccontextmanager
    async def lifespan(_app: MCPServer) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            await anyio.to_thread.run_sync(folders.close)

    app = MCPServer("sylk", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan,
                    log_level="WARNING")
    app.middleware.append(folders.middleware())
    tools_search.setup(app, folders)
    tools_navigation.setup(app, folders)
    tools_index.setup(app, folders)
    resources.setup(app, folders)
    return app, folders


def serve(root: Path, settings: config.Settings, notes: list[str] | None = None) -> None:
    """Serve the workspace ``root`` (or the client's roots) over MCP on stdin/stdout until
    the client disconnects."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    app, _folders = create_server(root, settings, notes)
    app.run("stdio")
