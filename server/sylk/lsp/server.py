"""The Sylk language server (pygls 2): lifecycle, settings, background indexing.

Features live in their own modules (``lsp/symbols.py``) with a ``setup``
function; this module owns the server object and the one core ``Workspace``.
Long work (opening the index, indexing) runs on one indexing thread;
notifications from that thread are handed to the event loop, which owns stdout.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from .. import __version__, config
from ..indexer import IndexError_, IndexReport, Progress, Workspace
from ..watch import Watcher

log = logging.getLogger("sylk")

STATUS = "sylk/status"
CMD_REINDEX = "sylk.reindex"
CMD_STATUS = "sylk.status"
CMD_CLEAR = "sylk.clearIndex"
PROGRESS_INTERVAL_S = 0.2
PROGRESS_MIN_CHANGES = 20  # disk changes below this are indexed without a progress report


class SylkProtocol(LanguageServerProtocol):
    """Positions are stored as UTF-16 columns, so UTF-16 is the only encoding we offer."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        if params.capabilities.general is not None:
            params.capabilities.general.position_encodings = None
        return (yield from super().lsp_initialize(params))


class SylkServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("sylk", __version__, protocol_cls=SylkProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.root: Path | None = None
        self.settings = config.Settings()
        self.client_options: dict[str, Any] | None = None
        self.engine: Workspace | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.indexing = False
        self.embedding = False
        self.last_report: IndexReport | None = None
        self.cancel = threading.Event()
        self._worker = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="sylk-index")
        # embedding takes minutes on a big workspace: its own thread, so saves and disk
        # changes are indexed at once while it runs
        self._embed_worker = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="sylk-embed")
        self._futures: set[cf.Future] = set()
        self._progress_tokens = 0
        # disk changes: the watcher queues paths, one job on the indexing thread drains them
        self.watcher: Watcher | None = None
        self._changes: set[str] = set()
        self._changes_lock = threading.Lock()
        self._sync_scheduled = False
        self.changes_applied = 0  # batches of disk changes indexed so far

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

    def submit(self, name: str, fn: Callable[..., Any], *args: Any, embed: bool = False) -> cf.Future:
        """Run ``fn`` on the indexing thread (or the embedding thread); failures are logged by
        name and never kill the server."""
        fut = (self._embed_worker if embed else self._worker).submit(fn, *args)
        self._futures.add(fut)

        def done(f: cf.Future) -> None:
            self._futures.discard(f)
            if not f.cancelled() and f.exception() is not None:
                exc = f.exception()
                log.error("%s failed", name, exc_info=exc)
                self.message(f"{name} failed: {exc}", types.MessageType.Error)

        fut.add_done_callback(done)
        return fut

    # settings -----------------------------------------------------------
    def apply_settings(self, options: Any) -> bool:
        """Resolve settings; report problems; True if the index must be refreshed."""
        if self.root is None:
            return False
        self.client_options = options
        new, problems = config.resolve(self.root, options)
        if problems:
            self.message("invalid settings, using defaults for them: " + "; ".join(problems),
                         types.MessageType.Warning)
        old, self.settings = self.settings, new
        if self.engine is not None:
            self.engine.settings = new
        return (old.exclude, old.max_file_size, old.languages) != (new.exclude, new.max_file_size, new.languages)

    # indexing -----------------------------------------------------------
    def supports_progress(self) -> bool:
        window = self.client_capabilities.window
        return bool(window and window.work_done_progress)

    async def start_indexing(self, title: str = "Indexing workspace") -> None:
        """Open the index if needed and bring it up to date, reporting progress."""
        if self.root is None or self.indexing:
            return
        self.indexing = True
        self.cancel.clear()
        token: str | None = None
        if self.supports_progress():
            self._progress_tokens += 1
            token = f"sylk-index-{self._progress_tokens}"
            try:
                await self.work_done_progress.create_async(token)
            except Exception as exc:  # the client refused: index without progress
                log.warning("progress token refused: %s", exc)
                token = None
        if token is not None:
            self.work_done_progress.begin(token, types.WorkDoneProgressBegin(
                title=f"Sylk: {title}", message="scanning files", percentage=0, cancellable=False))
        self.submit("indexing", self._index, token)

    def _index(self, token: str | None) -> None:
        last = 0.0
        report: IndexReport | None = None

        def progress(p: Progress) -> None:
            nonlocal last
            if token is None or p.phase == "done":
                return
            now = time.monotonic()
            if now - last < PROGRESS_INTERVAL_S:
                return
            last = now
            pct = int(100 * p.done / p.total) if p.total else 0
            msg = f"{p.done}/{p.total} files" if p.total else p.message
            self.in_loop(self.work_done_progress.report, token,
                         types.WorkDoneProgressReport(message=msg, percentage=pct))

        try:
            if self.engine is None:
                self.engine = self._open_engine()
            if self.engine is not None and self.engine.writable:
                report = self.engine.index(progress=progress, cancel=self.cancel)
                self.last_report = report
                self.log(f"Sylk: {report.summary()}", types.MessageType.Info)
        except IndexError_ as exc:
            self.message(str(exc), types.MessageType.Error)
        finally:
            self.indexing = False
            if token is not None:
                end_msg = report.summary() if report else "index not updated"
                self.in_loop(self.work_done_progress.end, token, types.WorkDoneProgressEnd(message=end_msg))
        if self.engine is not None and not self.cancel.is_set():
            self.start_watching()
            self.submit("embedding", self._embed, embed=True)

    # disk changes ---------------------------------------------------------
    def start_watching(self) -> None:
        """Follow changes on disk (once; not for a read-only index or with ``watch`` off)."""
        engine = self.engine
        if self.watcher is not None or engine is None or not engine.writable or not self.settings.watch:
            return
        self.watcher = Watcher(engine.root, self.queue_changes, lambda rel, is_dir: engine.scan_ignored(rel, is_dir),
                               on_error=lambda msg: self.message(
                                   f"{msg}; changes on disk are picked up at the next start or by "
                                   "'Sylk: Reindex Workspace'", types.MessageType.Warning)).start()

    def stop_watching(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None

    def queue_changes(self, rels: list[str]) -> None:
        """Paths changed on disk (watcher thread): indexed by one job, together with whatever
        else arrives before it starts."""
        with self._changes_lock:
            self._changes.update(rels)
            if self._sync_scheduled:
                return
            self._sync_scheduled = True
        self.submit("indexing changes on disk", self._apply_changes)

    def _apply_changes(self) -> None:
        with self._changes_lock:
            rels, self._changes, self._sync_scheduled = sorted(self._changes), set(), False
        engine = self.engine
        if not rels or engine is None or not engine.writable or self.cancel.is_set():
            return
        token = None
        if len(rels) >= PROGRESS_MIN_CHANGES:
            token = self._begin_progress_from_thread("Sylk: Indexing changes", f"{len(rels)} paths changed")
        last = 0.0

        def progress(p: Progress) -> None:
            nonlocal last
            now = time.monotonic()
            if token is None or p.phase == "done" or now - last < PROGRESS_INTERVAL_S:
                return
            last = now
            self.in_loop(self.work_done_progress.report, token, types.WorkDoneProgressReport(
                message=f"{p.done}/{p.total} files", percentage=int(100 * p.done / p.total) if p.total else 0))

        report: IndexReport | None = None
        try:
            self.indexing = True
            report = engine.index(paths=rels, progress=progress, cancel=self.cancel)
            self.last_report = report
            self.log(f"Sylk: changes on disk: {report.summary()}")
        finally:
            self.indexing = False
            self.changes_applied += 1
            if token is not None:
                self.in_loop(self.work_done_progress.end, token, types.WorkDoneProgressEnd(
                    message=report.summary() if report else "index not updated"))
        if report is not None and (report.added or report.changed) and engine.semantic_ready:
            self.submit("embedding changes", lambda: engine.embed_pending(cancel=self.cancel), embed=True)

    def _embed(self) -> None:
        """Load the model (once; say so once if it cannot load) and embed pending chunks,
        files open in the editor first, with their own progress."""
        engine = self.engine
        assert engine is not None
        note = engine.load_semantic()
        if note:
            kind = types.MessageType.Warning if not engine.semantic_ready else types.MessageType.Info
            self.message(note, kind)
        if not engine.semantic_ready or not engine.writable:
            return
        pending = engine.manifest.chunk_counts()["pending"]
        if not pending:
            return
        self.embedding = True
        token = self._begin_progress_from_thread("Sylk: Embedding", f"0/{pending} chunks")
        last = 0.0

        def progress(done: int, total: int) -> None:
            nonlocal last
            now = time.monotonic()
            if token is None or now - last < PROGRESS_INTERVAL_S:
                return
            last = now
            self.in_loop(self.work_done_progress.report, token, types.WorkDoneProgressReport(
                message=f"{done}/{total} chunks", percentage=int(100 * done / total) if total else 100))

        done = 0
        t0 = time.perf_counter()
        try:
            done = engine.embed_pending(progress=progress, cancel=self.cancel, first_paths=self._open_paths())
        finally:
            self.embedding = False
            took = time.perf_counter() - t0
            if token is not None:
                self.in_loop(self.work_done_progress.end, token, types.WorkDoneProgressEnd(
                    message=f"{done} chunks embedded in {took:.1f}s"))
            self.log(f"Sylk: {done} chunks embedded in {took:.1f}s", types.MessageType.Info)

    def _open_paths(self) -> list[str]:
        from .convert import uri_to_rel

        if self.root is None:
            return []
        rels = (uri_to_rel(self.root, uri) for uri in list(self.workspace.text_documents))
        return [r for r in rels if r is not None]

    def _begin_progress_from_thread(self, title: str, message: str) -> str | None:
        """Create and begin a work-done progress from a worker thread (None if unsupported)."""
        if not self.supports_progress() or self.loop is None:
            return None
        self._progress_tokens += 1
        token = f"sylk-{self._progress_tokens}"
        try:
            asyncio.run_coroutine_threadsafe(self.work_done_progress.create_async(token), self.loop).result(10)
        except Exception as exc:
            log.warning("progress token refused: %s", exc)
            return None
        self.in_loop(self.work_done_progress.begin, token, types.WorkDoneProgressBegin(
            title=title, message=message, percentage=0, cancellable=False))
        return token

    def _open_engine(self) -> Workspace | None:
        assert self.root is not None
        try:
            ws = Workspace(self.root, self.settings, load_symbols=True)
        except IndexError_ as exc:
            self.message(f"{exc}; workspace symbols are unavailable", types.MessageType.Error)
            return None
        if ws.rebuilt_reason:
            self.message(f"rebuilding the index ({ws.rebuilt_reason})", types.MessageType.Info)
        if ws.read_only_reason:
            self.message(ws.read_only_reason, types.MessageType.Warning)
        return ws

    def status(self) -> dict[str, Any]:
        engine = self.engine
        with self._changes_lock:
            queued = len(self._changes) + (1 if self._sync_scheduled and not self._changes else 0)
        out: dict[str, Any] = {"ready": engine is not None and not self.indexing, "indexing": self.indexing,
                               "embedding": self.embedding,
                               "watch": {"active": self.watcher is not None and self.watcher.active
                                         and self.watcher.ready.is_set(),
                                         "error": self.watcher.error if self.watcher else None,
                                         "pendingChanges": queued, "changesApplied": self.changes_applied}}
        if engine is not None:
            out.update(engine.status())
            out["semantic"] = {"ready": engine.semantic_ready, "model": engine.embedder.model_id if engine.embedder
                               else None, "message": engine.semantic_message}
        if self.last_report is not None:
            out["lastRun"] = self.last_report.summary()
        return out

    def shutdown_work(self) -> None:
        self.cancel.set()
        for fut in list(self._futures):
            fut.cancel()
        self.stop_watching()
        self._worker.shutdown(wait=True, cancel_futures=True)
        self._embed_worker.shutdown(wait=True, cancel_futures=True)
        if self.engine is not None:
            self.engine.close()
            self.engine = None


def _root_of(params: types.InitializeParams) -> Path | None:
    for candidate in ([f.uri for f in params.workspace_folders or []] + [params.root_uri or ""]):
        if candidate:
            fs = to_fs_path(candidate)
            if fs:
                return Path(fs).resolve()
    if params.root_path:
        return Path(params.root_path).resolve()
    return None


def create_server() -> SylkServer:
    server = SylkServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: SylkServer, params: types.InitializeParams) -> None:
        ls.root = _root_of(params)
        options = params.initialization_options
        ls.client_options = options if options is not None else None
        if ls.root is not None:
            ls.settings, ls._init_problems = config.resolve(ls.root, options)  # type: ignore[attr-defined]

    @server.feature(types.INITIALIZED)
    async def initialized(ls: SylkServer, params: types.InitializedParams) -> None:
        ls.loop = asyncio.get_running_loop()
        problems = getattr(ls, "_init_problems", [])
        if problems:
            ls.message("invalid settings, using defaults for them: " + "; ".join(problems),
                       types.MessageType.Warning)
        if ls.root is None:
            ls.message("no workspace folder: open a folder to index it", types.MessageType.Warning)
            return
        await ls.start_indexing()

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
        if ls.apply_settings(options):
            await ls.start_indexing("Re-indexing after a settings change")

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
        await ls.start_indexing("Re-indexing workspace")
        return {"started": True}

    from . import search, symbols

    symbols.setup(server)
    search.setup(server)
    return server


def serve(tcp: str | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    server = create_server()
    if tcp:
        host, _, port = tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
