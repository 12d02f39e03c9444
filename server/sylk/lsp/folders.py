"""One workspace folder of the language server: its settings, its index (a core
``Workspace``), its file watcher and its queue of disk changes.

A client may open several folders (``workspaceFolders``, and later
``workspace/didChangeWorkspaceFolders``): each gets its own ``Folder`` and its own
index; the server answers from all of them. Long work runs on the server's indexing
thread (opening, indexing, disk changes) and embedding thread, one job at a time
for all folders.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from .. import config
from ..engine import gitmeta
from ..engine.indexer import IndexReport, Progress
from ..engine.workspace import Workspace, semantic_state
from ..errors import IndexError_
from ..watch import Watcher

if TYPE_CHECKING:
    from .server import SylkServer

log = logging.getLogger("sylk")

PROGRESS_INTERVAL_S = 0.2
PROGRESS_MIN_CHANGES = 20  # disk changes below this are indexed without a progress report
FOLLOW_INTERVAL_S = 1.0  # how often a read-only folder looks for the writer's runs


class Folder:
    def __init__(self, server: SylkServer, root: Path, settings: config.Settings) -> None:
        self.server = server
        self.root = root
        self.settings = settings
        self.engine: Workspace | None = None
        self.indexing = False
        self.embedding = False
        self.last_report: IndexReport | None = None
        self.cancel = threading.Event()  # set when the folder is removed or the server stops
        self.watcher: Watcher | None = None
        self._changes: set[str] = set()
        self._changes_lock = threading.Lock()
        self._sync_scheduled = False
        self.changes_applied = 0  # batches of disk changes indexed so far

    @property
    def name(self) -> str:
        return self.root.name or str(self.root)

    def title(self, text: str) -> str:
        """A progress title; names the folder when several are open."""
        return f"Sylk: {text}" if len(self.server.folders) <= 1 else f"Sylk: {text} ({self.name})"

    # settings -------------------------------------------------------------
    def apply_settings(self, settings: config.Settings) -> bool:
        """Take new settings; True if the index must be refreshed."""
        old, self.settings = self.settings, settings
        if self.engine is not None:
            self.engine.settings = settings
        if not settings.watch:
            self.stop_watching()
        return (old.exclude, old.max_file_size, old.languages) != (
            settings.exclude, settings.max_file_size, settings.languages)

    # indexing -------------------------------------------------------------
    async def start_indexing(self, title: str = "Indexing workspace") -> None:
        """Open the index if needed and bring it up to date, reporting progress."""
        if self.indexing or self.cancel.is_set():
            return
        self.indexing = True
        token = await self.server.begin_progress(self.title(title), "scanning files")
        self.server.submit("indexing", self._index, token)

    def _index(self, token: str | None) -> None:
        server = self.server
        report: IndexReport | None = None
        try:
            if self.cancel.is_set():
                return
            if self.engine is None:
                self.engine = self._open_engine()
            if self.engine is not None and self.engine.writable:
                report = self.engine.index(progress=self._file_progress(token), cancel=self.cancel)
                self.last_report = report
                server.log(f"Sylk: {self.name}: {report.summary()}", types.MessageType.Info)
        except IndexError_ as exc:
            server.message(str(exc), types.MessageType.Error)
        finally:
            self.indexing = False
            server.end_progress(token, report.summary() if report else "index not updated")
        if self.engine is not None and not self.cancel.is_set():
            self.start_watching()
            server.submit("embedding", self._embed, embed=True)

    def _file_progress(self, token: str | None):
        last = 0.0

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
            self.server.report_progress(token, msg, pct)
        return progress

    def _open_engine(self) -> Workspace | None:
        server = self.server
        try:
            ws = Workspace(self.root, self.settings, load_symbols=True)
        except IndexError_ as exc:
            server.message(f"{exc}; workspace symbols are unavailable", types.MessageType.Error)
            return None
        if ws.rebuilt_reason:
            server.message(f"rebuilding the index ({ws.rebuilt_reason})", types.MessageType.Info)
        if ws.repair_note:  # drift found at open (a kill left orphan documents, ...) and repaired
            server.message(ws.repair_note, types.MessageType.Info)
        if ws.read_only_reason:
            server.message(ws.read_only_reason, types.MessageType.Warning)
        if not ws.writable:
            threading.Thread(target=self._follow_writer, args=(ws,), name="sylk-follow", daemon=True).start()
        return ws

    def _follow_writer(self, ws: Workspace) -> None:
        """A read-only index: pick up the writing process's runs (its saves and disk
        changes), off the request path, until the folder closes."""
        while not self.cancel.wait(FOLLOW_INTERVAL_S):
            try:
                if ws.follow_writer():
                    self.changes_applied += 1
            except Exception as exc:  # the writer may be mid-commit: try again next time
                log.debug("following the writer failed: %s", exc)

    # embedding ------------------------------------------------------------
    def _embed(self) -> None:
        """Load the model (once; say so once if it cannot load) and embed pending chunks,
        files open in the editor first, with their own progress."""
        server, engine = self.server, self.engine
        if engine is None or self.cancel.is_set():
            return
        try:  # cheap when HEAD did not move; here, off the indexing thread
            gitmeta.update(engine)
        except Exception as exc:  # metadata is optional: never stop embedding for it
            log.warning("git metadata not updated: %s", exc)
        note = engine.load_semantic()
        if note and not self.settings.embedding.enabled:  # the user's choice: no pop-up
            server.log(f"Sylk: {self.name}: {note}")
        elif note:
            kind = types.MessageType.Warning if not engine.semantic_ready else types.MessageType.Info
            server.message(note, kind)
        if not engine.semantic_ready or not engine.writable:
            return
        pending = engine.manifest.chunk_counts()["pending"]
        if not pending:
            return
        self.embedding = True
        token = server.begin_progress_from_thread(self.title("Embedding"), f"0/{pending} chunks")
        last = 0.0

        def progress(done: int, total: int) -> None:
            nonlocal last
            now = time.monotonic()
            if token is None or now - last < PROGRESS_INTERVAL_S:
                return
            last = now
            server.report_progress(token, f"{done}/{total} chunks", int(100 * done / total) if total else 100)

        done = 0
        t0 = time.perf_counter()
        try:
            done = engine.embed_pending(progress=progress, cancel=self.cancel, first_paths=self.open_paths())
        finally:
            self.embedding = False
            took = time.perf_counter() - t0
            server.end_progress(token, f"{done} chunks embedded in {took:.1f}s")
            server.log(f"Sylk: {self.name}: {done} chunks embedded in {took:.1f}s", types.MessageType.Info)

    def embed_soon(self, paths: list[str] = ()) -> None:  # type: ignore[assignment]
        """Embed the new chunks of ``paths`` next (joining a running pass) or start a pass."""
        engine = self.engine
        if engine is None or not engine.semantic_ready:
            return
        engine.prioritize(paths)
        self.server.submit("embedding changes", lambda: engine.embed_pending(cancel=self.cancel), embed=True)

    def open_paths(self) -> list[str]:
        from .convert import uri_to_rel

        rels = (uri_to_rel(self.root, uri) for uri in list(self.server.workspace.text_documents))
        return [r for r in rels if r is not None]

    # disk changes ---------------------------------------------------------
    def start_watching(self) -> None:
        """Follow changes on disk (once; not for a read-only index or with ``watch`` off)."""
        engine = self.engine
        if self.watcher is not None or engine is None or not engine.writable or not self.settings.watch:
            return
        self.watcher = Watcher(engine.root, self.queue_changes, lambda rel, is_dir: engine.scan_ignored(rel, is_dir),
                               on_error=lambda msg: self.server.message(
                                   f"{self.name}: {msg}; changes on disk are picked up at the next start or by "
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
        self.server.submit("indexing changes on disk", self._apply_changes)

    def _apply_changes(self) -> None:
        with self._changes_lock:
            rels, self._changes, self._sync_scheduled = sorted(self._changes), set(), False
        engine, server = self.engine, self.server
        if not rels or engine is None or not engine.writable or self.cancel.is_set():
            return
        token = None
        if len(rels) >= PROGRESS_MIN_CHANGES:
            token = server.begin_progress_from_thread(self.title("Indexing changes"), f"{len(rels)} paths changed")
        report: IndexReport | None = None
        try:
            self.indexing = True
            report = engine.index(paths=rels, progress=self._file_progress(token), cancel=self.cancel)
            self.last_report = report
            server.log(f"Sylk: {self.name}: changes on disk: {report.summary()}")
        finally:
            self.indexing = False
            self.changes_applied += 1
            server.end_progress(token, report.summary() if report else "index not updated")
        if report is not None and (report.added or report.changed):
            self.embed_soon()

    # state ----------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        engine = self.engine
        with self._changes_lock:
            queued = len(self._changes) + (1 if self._sync_scheduled and not self._changes else 0)
        out: dict[str, Any] = {
            "root": str(self.root),
            "ready": engine is not None and not self.indexing, "indexing": self.indexing,
            "embedding": self.embedding,
            "watch": {"active": self.watcher is not None and self.watcher.active and self.watcher.ready.is_set(),
                      "error": self.watcher.error if self.watcher else None,
                      "pendingChanges": queued, "changesApplied": self.changes_applied}}
        if engine is not None:
            out.update(engine.status())
            out["semantic"] = {"ready": engine.semantic_ready, "state": self.semantic_state(),
                               "model": engine.embedder.model_id if engine.embedder else None,
                               "message": engine.semantic_message}
        if self.last_report is not None:
            out["lastRun"] = self.last_report.summary()
        return out

    def semantic_state(self) -> str:
        return semantic_state(self.settings, self.engine)

    def close(self) -> None:
        """Stop everything of this folder (removed from the workspace, or shutdown)."""
        self.cancel.set()
        self.stop_watching()

    def close_engine(self) -> None:
        if self.engine is not None:
            self.engine.close()
            self.engine = None
