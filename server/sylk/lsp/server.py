"""The Sylk language server (pygls 2): lifecycle, settings, background indexing.

Features live in their own modules (``lsp/symbols.py``) with a ``setup``
function; this module owns the server object, its workspace folders (``folders.py``:
one core ``Workspace`` each) and the threads.
Long work (opening the index, indexing) runs on one indexing thread;
notifications from that thread are handed to the event loop, which owns stdout.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from .. import __version__, config, over_folders, settings_sources
from ..engine.status import SKIPPED_EXAMPLES
from ..engine.workspace import Workspace
from ..jobs import Jobs
from ..status import Rollup
from ..steps import INDEXING
from . import edge, wire
from .folders import Folder

log = logging.getLogger("sylk")

STATUS = "sylk/status"
CMD_REINDEX = "sylk.reindex"
CMD_STATUS = "sylk.status"
CMD_CLEAR = "sylk.clearIndex"


class SylkProtocol(edge.EdgeProtocol):
    """Every body is checked at Sylk's edge first (``edge.py``: each request gets one
    response). Positions are stored as UTF-16 columns, so UTF-16 is the only encoding we offer.
    Sylk's own requests (``sylk/search``, ...) registered at initialize are listed under
    ``experimental.sylk.requests`` of the capabilities, as the standard features are."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        if params.capabilities.general is not None:
            params.capabilities.general.position_encodings = None
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"sylk": {"requests": sorted(own_requests(self.fm.features))}}
        return result


def own_requests(methods: Any) -> list[str]:
    """Sylk's own request methods among ``methods``."""
    return [m for m in methods if m.startswith("sylk/")]


class SylkServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("sylk", __version__, protocol_cls=SylkProtocol, converter_factory=edge.strict_converter,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.folders: dict[Path, Folder] = {}  # in the order the client gave them
        self.client_options: dict[str, Any] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.cancel = threading.Event()  # the server is stopping
        self.jobs = Jobs(lambda name, exc: self.message(f"{name} failed: {exc}", types.MessageType.Error))
        self._progress_tokens = 0
        self._problems: list[str] = []
        self._notices: list[str] = []
        self.notices_shown: set[str] = set()  # settings notices are shown once (settings.report)

    # transports: Sylk's edge reads the stream, not pygls' reader (see edge.py) ---------
    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """Serve stdin/stdout; ``exit`` ends the process with 0 after ``shutdown``, else 1."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        code: Any = None
        try:
            asyncio.run(edge.serve_stream(self.protocol, stdin or sys.stdin.buffer, self._stop_event))
        except BrokenPipeError:
            log.error("the client is gone (broken pipe): stopping")
        except KeyboardInterrupt:
            pass
        except SystemExit as exc:
            code = exc.code
        finally:
            # the client may be gone without a shutdown request (an editor killed or
            # crashed): stop the folders' jobs, or the process would wait at exit for an
            # embedding pass to finish (an hour on a large tree), holding the index
            self.shutdown_work()
            self.shutdown()
        if code:
            sys.exit(code)

    def start_tcp(self, host: str, port: int) -> None:
        self._stop_event = stop = threading.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.protocol.set_writer(writer)  # type: ignore[arg-type]
            await edge.serve(self.protocol, lambda: reader.read(65536), stop)
            self.shutdown_work()
            self.shutdown()

        async def listen() -> None:
            self._server = await asyncio.start_server(connection, host, port)
            log.info("serving on %s:%s", host, port)
            async with self._server:
                await self._server.serve_forever()

        try:
            asyncio.run(listen())
        except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            pass

    # folders --------------------------------------------------------------
    @property
    def root(self) -> Path | None:
        """The first folder's root (None before initialize or without a folder)."""
        first = next(iter(self.folders.values()), None)
        return first.root if first else None

    @property
    def engine(self) -> Workspace | None:
        first = next(iter(self.folders.values()), None)
        return first.engine if first else None

    @property
    def settings(self) -> config.Settings:
        first = next(iter(self.folders.values()), None)
        return first.settings if first else config.Settings()

    def folder_for(self, uri: str) -> tuple[Folder, str] | None:
        """The folder holding the document ``uri`` (over_folders.holding) and the document's
        path relative to it; None for a document of no folder, or not a file."""
        fs = to_fs_path(uri)
        return over_folders.holding(list(self.folders.values()), Path(fs)) if fs is not None else None

    def engines(self) -> list[tuple[Folder, Workspace]]:
        return [(f, f.engine) for f in self.folders.values() if f.engine is not None]

    def add_folder(self, root: Path, uri: str | None = None) -> Folder | None:
        """A new folder with the settings of ``client_options`` (its own settings from the
        client follow: see settings.configure); None if it is open already."""
        if root in self.folders:
            return None
        resolved = settings_sources.resolve(root, self.client_options)
        self._problems.extend(p for p in resolved.problems if p not in self._problems)
        self._notices.extend(n for n in resolved.notices if n not in self._notices)
        folder = self.folders[root] = Folder(self, root, resolved.settings, uri)
        return folder

    def remove_folder(self, root: Path) -> None:
        """Stop the folder's watcher and jobs, then close its index (on the indexing thread,
        after any job of it that is running)."""
        folder = self.folders.pop(root, None)
        if folder is not None:
            folder.close()
            self.submit(f"closing {folder.name}", folder.close_engine)

    def open_uris(self) -> list[str]:
        """The documents open in the editor."""
        return list(self.workspace.text_documents)

    def take_problems(self) -> list[str]:
        """The invalid settings met (by add_folder) since last asked."""
        problems, self._problems = self._problems, []
        return problems

    def take_notices(self) -> list[str]:
        """The settings notices met (by add_folder) since last asked: refused workspace
        settings, an untrusted workspace (settings_sources.Resolved)."""
        notices, self._notices = self._notices, []
        return notices

    # thread hand-off ----------------------------------------------------
    def in_loop(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn`` on the event loop (the only writer of stdout)."""
        if self.loop is None or self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(fn, *args)

    def message(self, text: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.in_loop(self.window_show_message, types.ShowMessageParams(type=kind, message=f"Sylk: {text}"))

    def log(self, text: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self.in_loop(self.window_log_message, types.LogMessageParams(type=kind, message=text))

    def submit(self, name: str, fn: Callable[..., Any], *args: Any, embed: bool = False) -> cf.Future | None:
        """Run ``fn`` on the indexing thread (or the embedding thread); see ``jobs.Jobs``."""
        return self.jobs.submit(name, fn, *args, embed=embed)

    # progress -----------------------------------------------------------
    def supports_progress(self) -> bool:
        window = self.client_capabilities.window
        return bool(window and window.work_done_progress)

    async def begin_progress(self, title: str, message: str) -> str | None:
        """Create and begin a work-done progress on the loop (None if unsupported or refused)."""
        if not self.supports_progress():
            return None
        self._progress_tokens += 1
        token = f"sylk-{self._progress_tokens}"
        try:
            await self.work_done_progress.create_async(token)
        except Exception as exc:  # the client refused: work without progress
            log.warning("progress token refused: %s", exc)
            return None
        self.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title=title, message=message, percentage=0, cancellable=False))
        return token

    def begin_progress_from_thread(self, title: str, message: str) -> str | None:
        """begin_progress from a worker thread."""
        if not self.supports_progress() or self.loop is None:
            return None
        try:
            return asyncio.run_coroutine_threadsafe(self.begin_progress(title, message), self.loop).result(10)
        except Exception as exc:
            log.warning("progress token refused: %s", exc)
            return None

    def report_progress(self, token: str | None, message: str, percentage: int) -> None:
        if token is not None:
            self.in_loop(self.work_done_progress.report, token,
                         types.WorkDoneProgressReport(message=message, percentage=percentage))

    def end_progress(self, token: str | None, message: str) -> None:
        if token is not None:
            self.in_loop(self.work_done_progress.end, token, types.WorkDoneProgressEnd(message=message))

    def start_indexing(self, title: str = INDEXING) -> None:
        self.cancel.clear()
        for folder in list(self.folders.values()):
            folder.start_indexing(title)

    def folder_named(self, arg: str) -> Folder | None:
        """The open folder ``arg`` names (its URI or its path)."""
        fs = to_fs_path(arg) if "://" in arg else arg
        try:
            root = Path(fs).resolve() if fs else None
        except (OSError, ValueError):
            return None
        return self.folders.get(root) if root is not None else None

    async def clear_indexes(self, folders: list[Folder]) -> dict[str, Any]:
        """Delete the index of each of ``folders`` and index it again from scratch; the answer
        once every index folder is gone (the new runs go on in the background)."""
        cleared: list[dict[str, Any]] = []
        for folder in folders:
            entry: dict[str, Any] = {"root": str(folder.root), "removed": None, "error": None}
            fut = folder.service.clear("Re-indexing workspace")
            if fut is None:
                entry["error"] = "the folder is closing"
            else:
                try:
                    removed = await asyncio.wrap_future(fut)
                except Exception as exc:
                    entry["error"] = str(exc)
                else:
                    entry["removed"] = str(removed) if removed else None
            cleared.append(entry)
        return {"cleared": cleared, "indexing": any(e["error"] is None for e in cleared)}

    # state ----------------------------------------------------------------
    @property
    def indexing(self) -> bool:
        return any(f.indexing for f in self.folders.values())

    def status(self, skipped_limit: int | None = SKIPPED_EXAMPLES) -> dict[str, Any]:
        """``sylk/status`` over the folders (lsp/wire.py); ``skipped_limit``: how many skipped
        files of each reason to name (None: all)."""
        return wire.workspace_status_to_wire(Rollup([f.status(skipped_limit) for f in self.folders.values()]))

    def shutdown_work(self) -> None:
        self.cancel.set()
        for folder in self.folders.values():
            folder.close()
        self.jobs.shutdown()
        for folder in self.folders.values():
            folder.close_engine()


def roots_of(params: types.InitializeParams) -> dict[Path, str | None]:
    """The workspace folders (root -> the URI the client gave), else the root URI (or
    path) of older clients."""
    roots: dict[Path, str | None] = {}
    candidates = [f.uri for f in params.workspace_folders or []] or [params.root_uri or ""]
    for candidate in candidates:
        fs = to_fs_path(candidate) if candidate else None
        if fs:
            roots.setdefault(Path(fs).resolve(), candidate)
    if not roots and params.root_path:
        roots[Path(params.root_path).resolve()] = None
    return roots
