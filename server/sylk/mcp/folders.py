"""The workspace folders of ``sylk mcp``: a ``Folder`` (a ``WorkspaceService`` and what
it reported) per root, and ``Folders``, the set one connection serves.

The folders are the client's roots when it declares the roots capability (``roots/list``,
asked once the connection is initialized and again on each
``notifications/roots/list_changed``), else the folder named on the command line (also
when the client announces no local folder). Each folder has its own index, as each
workspace folder of the language server does (lsp/folders.py), and they share one pair
of threads (``Jobs``), so long work runs one job at a time for all of them. Tools answer
from every open folder: search/merge.py merges their results, and an item says which
folder it is from (``root``) when there are several.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

import anyio
from mcp import types
from mcp.server.mcpserver.exceptions import ToolError

from .. import config, over_folders, settings_sources
from ..engine.status import SKIPPED_EXAMPLES
from ..engine.workspace import Workspace
from ..jobs import Jobs
from ..service import ServedFolder, WorkspaceService
from ..status import Rollup, folder_status
from ..steps import Severity
from . import wire

log = logging.getLogger("sylk.mcp")

ROOTS_CHANGED = "notifications/roots/list_changed"
# messages that may come before the folders are known (the rest wait for them)
BEFORE_ROOTS = frozenset({"initialize", "ping", "notifications/cancelled", "notifications/progress"})
ROOTS_WAIT_S = 10.0  # the client has this long to answer roots/list
OPEN_WAIT_S = 30.0  # a tool waits this long for the indexes to open before it answers "not yet"
COMMAND_LINE = "command line"
CLIENT = "client"

LOG_LEVELS = {Severity.ERROR: logging.ERROR, Severity.WARNING: logging.WARNING, Severity.INFO: logging.INFO,
              Severity.LOG: logging.INFO}


class Folder(ServedFolder):
    """One workspace folder served over MCP: a ``WorkspaceService`` (opened, indexed, given
    git metadata and embedded on background threads, kept current by a watcher, or
    following the process that writes the index) and what it reported, kept for
    ``get_status``."""

    reindex_hint = "the reindex tool"

    def __init__(self, root: Path, settings: config.Settings, jobs: Jobs, notes: list[str] | None = None) -> None:
        self.service = WorkspaceService(root, settings, self, jobs=jobs)
        self.notes: list[str] = list(notes or ())  # what the user should know (settings, rebuilt, model)

    # Reporter ------------------------------------------------------------------------
    def message(self, text: str, severity: Severity) -> None:
        if severity is not Severity.LOG and text not in self.notes:
            self.notes.append(text)
        self.log(text, severity)

    def log(self, text: str, severity: Severity = Severity.LOG) -> None:
        log.log(LOG_LEVELS[severity], "%s: %s", self.name, text)


def path_of_uri(uri: str) -> Path | None:
    """The local folder a ``file:`` URI names (None for any other URI)."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return Path(url2pathname(parts.path))


class Folders:
    """The folders one MCP connection serves (see the module's docstring), in the order
    the client gave them. Changed on the event loop only (the roots middleware)."""

    def __init__(self, root: Path, settings: config.Settings, notes: list[str] | None = None) -> None:
        self.command_line = root
        self.command_line_settings = settings
        self.command_line_notes = list(notes or ())  # about its settings (settings_sources.notes)
        self.jobs = Jobs()
        self.folders: dict[Path, Folder] = {}
        self.source: str | None = None  # where the folders come from, once known: CLIENT or COMMAND_LINE
        self.notes: list[str] = []  # about the roots (a root that is not a local folder, ...)
        self._known = threading.Event()  # the folders are known (the first decision made)
        self._lock = anyio.Lock()  # one decision at a time

    @property
    def several(self) -> bool:
        return len(self.folders) > 1

    @property
    def settings(self) -> config.Settings:
        """The first folder's settings (the search defaults), the command line's before."""
        first = next(iter(self.folders.values()), None)
        return first.settings if first is not None else self.command_line_settings

    def all(self) -> list[Folder]:
        return list(self.folders.values())

    def tagged(self, folder: Folder, item: dict[str, Any]) -> dict[str, Any]:
        """``item`` with its folder's ``root`` when there are several folders (a path alone
        is ambiguous then)."""
        if self.several:
            item["root"] = str(folder.root)
        return item

    # the roots -------------------------------------------------------------------
    def middleware(self) -> Callable[[Any, Callable[[Any], Awaitable[Any]]], Awaitable[Any]]:
        """Server middleware: once the client is initialized (its ``initialized``
        notification, or any request first), learn the folders before anything else is
        answered; on ``notifications/roots/list_changed``, serve the new roots."""
        async def follow_roots(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
            session = ctx.session
            if ctx.method == ROOTS_CHANGED:
                result = await call_next(ctx)
                await self.roots_changed(session)
                return result
            if self._known.is_set() or ctx.method in BEFORE_ROOTS or (
                    session.client_params is None and session.client_capabilities is None):
                return await call_next(ctx)
            if ctx.request_id is None:  # notifications/initialized: the client is ready for requests after it
                result = await call_next(ctx)
                await self.start(session)
                return result
            await self.start(session)
            return await call_next(ctx)
        return follow_roots

    async def start(self, session: Any) -> None:
        """Decide the folders, once: the client's roots, else the command line's folder."""
        async with self._lock:
            if self._known.is_set():
                return
            self._serve(await self._client_roots(session))
            self._known.set()

    async def roots_changed(self, session: Any) -> None:
        """The client's roots changed: serve the new ones (new folders are indexed, removed
        ones closed); the folders stay as they are when the client cannot say."""
        async with self._lock:
            roots = await self._client_roots(session)
            if roots is not None or not self._known.is_set():
                self._serve(roots)
            self._known.set()

    async def _client_roots(self, session: Any) -> list[Path] | None:
        """The local folders among the client's roots ([] when it names none); None when it
        does not declare the roots capability or cannot answer."""
        caps = session.client_capabilities
        if caps is None or caps.roots is None:
            return None
        try:
            with anyio.fail_after(ROOTS_WAIT_S):
                # (ServerSession.list_roots, without its deprecation warning: the roots
                # capability is current in every protocol version a handshake negotiates)
                answer = await session.send_request(types.ListRootsRequest(), types.ListRootsResult)
        except Exception as exc:  # noqa: BLE001 - a client that fails here still gets served
            self._note(f"the client's roots could not be read ({exc or type(exc).__name__})")
            return None
        roots: list[Path] = []
        for root in answer.roots:
            path = path_of_uri(str(root.uri))
            if path is None:
                self._note(f"root {root.uri} is not a local folder: not served")
            elif not path.is_dir():
                self._note(f"root {path} is not a folder: not served")
            elif path.resolve() not in roots:
                roots.append(path.resolve())
        if not roots:
            self._note(f"the client announced no local folder: serving {self.command_line}")
        return roots

    def _note(self, text: str) -> None:
        log.warning("%s", text)
        if text not in self.notes:
            self.notes.append(text)

    def _serve(self, roots: list[Path] | None) -> None:
        """Serve ``roots`` (the command line's folder when None or empty): close the folders
        not among them, open and index the new ones."""
        self.source = CLIENT if roots else COMMAND_LINE
        wanted = roots or [self.command_line]
        for root in [r for r in self.folders if r not in wanted]:
            folder = self.folders.pop(root)
            log.info("%s: no longer a root: closing its index", root)
            folder.service.stop()
            self.jobs.submit(f"closing {folder.name}", folder.service.close_engine)
        folders: dict[Path, Folder] = {}
        for root in wanted:
            folder = self.folders.get(root)
            if folder is None:
                folder = self._open(root)
                folder.service.start_indexing()
            folders[root] = folder
        self.folders = folders

    def _open(self, root: Path) -> Folder:
        if root == self.command_line:
            return Folder(root, self.command_line_settings, self.jobs, self.command_line_notes)
        resolved = settings_sources.resolve(root)
        for note in resolved.notices:
            log.warning("%s", note)
        return Folder(root, resolved.settings, self.jobs, settings_sources.notes(resolved))

    async def known(self) -> list[Folder]:
        """The folders, once known (the command line's folder if the client never says)."""
        if not self._known.is_set():
            await anyio.to_thread.run_sync(self._known.wait, ROOTS_WAIT_S + 1)
            if not self._known.is_set():
                async with self._lock:
                    if not self._known.is_set():
                        self._serve(None)
                        self._known.set()
        return self.all()

    async def engines(self) -> list[tuple[Folder, Workspace]]:
        """Every folder with its open index; waits (briefly) while they open. ToolError when
        none is open."""
        folders = await self.known()
        deadline = time.monotonic() + OPEN_WAIT_S
        for folder in folders:
            opened = folder.service.opened
            if not opened.is_set():
                await anyio.to_thread.run_sync(opened.wait, max(0.0, deadline - time.monotonic()))
        found = [(f, f.engine) for f in folders if f.engine is not None]
        if not found:
            errors = [f"{f.root}: {f.service.open_error}" if self.several else f.service.open_error
                      for f in folders if f.service.open_error]
            raise ToolError("; ".join(errors) or "the index is still opening; try again in a few seconds")
        return found  # type: ignore[return-value]

    def status(self, skipped_limit: int | None = SKIPPED_EXAMPLES) -> dict[str, Any]:
        """``get_status`` and ``sylk://status`` over the folders (status.py, mcp/wire.py);
        blocking: on a worker thread."""
        each = self.all()
        rollup = Rollup([folder_status(f.service, skipped_limit) for f in each])
        return wire.workspace_status_json(rollup, [f.notes for f in each], self.source, self.notes)

    def indexing_note(self) -> dict[str, Any]:
        if not any(f.service.indexing for f in self.folders.values()):
            return {"indexing": False}
        return {"indexing": True, "note": "the index is being updated: results may miss files not indexed yet "
                                          "(get_status shows the progress)"}

    # paths -----------------------------------------------------------------------
    def locate(self, path: str, argument: str) -> tuple[Folder, str]:
        """The folder holding ``path`` (absolute, or relative to a folder's root: with
        several folders, the first where it exists) and the path relative to it ("" for
        the root itself). ToolError naming ``argument`` when it is in no folder."""
        folders = self.all()
        if not path.strip():
            raise ToolError(f"invalid argument {argument}: empty")
        given = Path(path).expanduser()
        if given.is_absolute():
            found = over_folders.holding(folders, given)
            if found is None:
                raise ToolError(f"invalid argument {argument}: {path} is not inside "
                                + ("a workspace folder (" + ", ".join(str(f.root) for f in folders) + ")"
                                   if self.several else f"the workspace folder {folders[0].root}"))
            return found
        rel = os.path.normpath(PurePosixPath(path.replace(os.sep, "/")).as_posix())
        if rel == ".." or rel.startswith("../"):
            raise ToolError(f"invalid argument {argument}: {path} is outside the workspace folder")
        rel = "" if rel == "." else rel
        folder = next((f for f in folders if (f.root / rel).exists()), folders[0])
        return folder, rel

    def close(self) -> None:
        """Stop every folder, wait for the jobs, close the indexes."""
        for folder in self.folders.values():
            folder.service.stop()
        self.jobs.shutdown()
        for folder in self.folders.values():
            folder.service.close_engine()
