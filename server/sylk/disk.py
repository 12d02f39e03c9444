"""A served workspace's side of the disk (for ``service.WorkspaceService``): the watcher
and its queue of changes, index runs over some paths (an ``index`` of part of a tree),
and the periodic reconcile that catches what the watcher missed. Each runs on the
service's indexing thread and counts as an index run (``RunCount``).
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
from collections.abc import Sequence
from typing import Any, Protocol

from . import config
from .engine import gitmeta
from .engine.indexer import IndexReport
from .engine.workspace import Workspace
from .errors import IndexError_
from .jobs import FOREGROUND, Jobs, Periodic, RunCount
from .steps import INDEXING_CHANGES, INDEXING_PATHS, Reporter, Severity
from .watch import ChangeQueue, Watcher

PROGRESS_MIN_CHANGES = 20  # disk changes below this are indexed without a progress report
RECONCILE_RETRY_S = 5.0  # a reconcile due while the service is busy is tried again this much later


class Served(Protocol):
    """What the disk side reads and calls of its service."""

    settings: config.Settings
    reporter: Reporter
    jobs: Jobs
    runs: RunCount
    cancel: threading.Event  # set when the service stops

    @property
    def name(self) -> str: ...

    @property
    def engine(self) -> Workspace | None: ...

    def head_moved(self) -> None: ...

    def change_applied(self) -> None: ...

    def index_run(self, handle: Any, what: str | None, severity: Severity = Severity.LOG, *,
                  paths: Sequence[str] | None = None, reconciling: bool = False) -> IndexReport | None: ...

    def embed_soon(self, paths: Sequence[str] = (), *, announce: bool = False) -> None: ...


class DiskSync:
    """The watcher (``watch`` on, a writable index), the changes it queues, runs over
    given paths, and the reconcile every ``reconcileMinutes`` when idle."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.watcher: Watcher | None = None
        self.changes = ChangeQueue(lambda: served.jobs.submit("indexing changes on disk", self._apply_changes))
        self._reconciler = Periodic("sylk-reconcile", lambda: served.settings.reconcile_minutes * 60,
                                    self.reconcile_now, retry_s=RECONCILE_RETRY_S)

    # the watcher --------------------------------------------------------------------
    def start_watching(self) -> None:
        """Follow changes on disk (once; not for a read-only index or with ``watch`` off),
        and reconcile every ``reconcileMinutes``."""
        s = self.served
        engine = s.engine
        if engine is None or not engine.writable or s.cancel.is_set():
            return
        self._reconciler.start()
        if self.watcher is not None or not s.settings.watch:
            return
        self.watcher = Watcher(engine.root, self.changes.add, engine.scan_ignored, on_error=self._watch_failed,
                               on_git=s.head_moved,
                               git_dirs=lambda: gitmeta.folders(engine.root, engine.settings.trusted)).start()

    def _watch_failed(self, msg: str) -> None:
        s = self.served
        s.reporter.message(f"{s.name}: {msg}; changes on disk are picked up at the next start or by "
                           f"{s.reporter.reindex_hint}", Severity.WARNING)

    def stop_watching(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None

    @property
    def watching(self) -> bool:
        w = self.watcher
        return w is not None and w.active and w.ready.is_set()

    def settings_changed(self, old: config.Settings) -> None:
        new = self.served.settings
        if not new.watch:
            self.stop_watching()
        elif not self.served.runs.active:  # else the run starts it when it ends
            self.start_watching()
        if old.reconcile_minutes != new.reconcile_minutes:
            self._reconciler.wake()

    def stop(self) -> None:
        self._reconciler.stop()
        self.stop_watching()

    # runs over some paths -----------------------------------------------------------
    def index_paths(self, rels: Sequence[str], title: str = INDEXING_PATHS) -> Any:
        """Queue a run over ``rels`` (root-relative files or folders, added, changed or
        deleted: ``Workspace.index(paths=...)``), then git metadata and embedding, their
        chunks first. Returns the run's future (its result: the IndexReport; None when the
        index is not open, or read-only); None once stopped."""
        s = self.served
        if s.cancel.is_set():
            return None
        s.runs.add()
        fut = s.jobs.submit("indexing paths", self._run_paths, list(rels), title)
        if fut is None:
            s.runs.done()
        return fut

    def _run_paths(self, rels: list[str], title: str) -> IndexReport | None:
        s = self.served
        handle = s.reporter.begin(title, f"{len(rels)} paths")
        report = None
        try:
            report = s.index_run(handle, f"{len(rels)} paths: ", Severity.INFO, paths=rels)
        except IndexError_ as exc:
            s.reporter.message(str(exc), Severity.ERROR)
        finally:
            s.runs.done()
            s.reporter.end(handle, report.summary() if report else "index not updated")
        if report is not None:
            s.embed_soon(rels)
        return report

    def _apply_changes(self) -> None:
        rels = self.changes.take()
        s = self.served
        engine = s.engine
        if not rels or engine is None or not engine.writable or s.cancel.is_set():
            return
        handle = s.reporter.begin(INDEXING_CHANGES, f"{len(rels)} paths changed") \
            if len(rels) >= PROGRESS_MIN_CHANGES else None
        report = None
        s.runs.add()
        try:
            report = s.index_run(handle, "changes on disk: ", paths=rels)
        finally:
            s.runs.done()
            s.reporter.end(handle, report.summary() if report else "index not updated")
            s.change_applied()  # after the end: a client that sees the count has seen the end
        s.embed_soon()

    # reconcile ----------------------------------------------------------------------
    def reconcile_now(self) -> bool:
        """Run a reconcile (``steps.reconcile``) on the indexing thread and wait for it, if the
        service is idle: no index run queued or running, no disk change waiting, no request
        being answered. False when busy (the caller tries again soon)."""
        s = self.served
        if s.runs.active or self.changes.pending or FOREGROUND.busy:
            return False
        fut = s.jobs.submit("reconciling with the disk", self._reconcile)
        if fut is not None:
            cf.wait([fut])  # (a failure is logged by the job)
        return True

    def _reconcile(self) -> None:
        s = self.served
        if not s.runs.add_if_none():  # a full run was queued meanwhile: it checks the same
            return
        try:
            report = s.index_run(None, None, reconciling=True)  # (it logs what it found itself)
        finally:
            s.runs.done()
        if report is not None and report.added + report.changed + report.deleted:
            s.change_applied()
            s.embed_soon()
