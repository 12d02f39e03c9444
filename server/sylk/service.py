"""The long-running service over one workspace, for every front end: open the index,
index, refresh git metadata, embed; follow the disk (a watcher and a queue of changes)
or, when another process writes the index, that writer.

``WorkspaceService`` decides the threads, once: index runs (the open, full runs, disk
changes) run one at a time on the indexing thread of its ``Jobs``; git metadata and
embedding on the embedding thread, so a long embedding pass never holds up a save,
except the git metadata refresh after HEAD moved (a commit, checkout, rebase), which
runs on the indexing thread after the disk changes queued before it, so a commit is
searchable within a second even while embedding runs; a read-only index is followed on
a thread of its own. Every ``reconcileMinutes``, when idle, the start-up check runs
again on the indexing thread (``steps.reconcile``), so what the watcher missed is
indexed. The steps (``open_workspace``, ``index_files``, ``update_git``, ``embed``)
are plain functions, which ``sylk index`` runs in order. The service speaks to the
user only through a ``Reporter``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import config
from .engine.indexer import IndexReport, Progress
from .engine.workspace import Workspace, clear_index, semantic_state
from .errors import IndexError_
from .disk import DiskSync
from .jobs import FOREGROUND, Jobs, RunCount
from .steps import (
    INDEXING,
    EmbedRun,
    Reporter,
    Severity,
    Tally,
    embed,
    index_files,
    open_workspace,
    reconcile,
    update_git,
)
from .text import rg_classes

log = logging.getLogger("sylk")

FOLLOW_INTERVAL_S = 1.0  # how often a read-only index looks for the writer's runs


class WorkspaceService:
    """One workspace, served for as long as a front end runs: its index (a core
    ``Workspace``, ``engine`` once open), its side of the disk (``disk``: the watcher,
    the queue of disk changes, runs over some paths, the periodic reconcile), and the
    state a status request reads.

    About 300 lines: the lifecycle (open, full runs, follow, embed, settings, close)
    shares one set of flags and locks; the steps themselves live in steps.py."""

    def __init__(self, root: Path, settings: config.Settings, reporter: Reporter, *, jobs: Jobs | None = None,
                 first_paths: Callable[[], list[str]] = list) -> None:
        """``jobs``: the threads to share (several folders of one language server), else the
        service's own. ``first_paths``: files to embed before the rest (open in an editor)."""
        self.root = root
        self.settings = settings
        self.reporter = reporter
        self.first_paths = first_paths
        self.engine: Workspace | None = None
        self.opened = threading.Event()  # the open was tried: engine set, or open_error
        self.open_error: str | None = None
        self.cancel = threading.Event()  # set when the service stops
        self._pass_cancel = threading.Event()  # stops the running embedding pass (a settings change)
        self.embedding = False
        self.index_progress = Tally(0, 0)  # files of the running run
        self.embed_progress = Tally(0, 0)  # chunks of the running pass
        self.last_report: IndexReport | None = None
        self.last_run_at: float | None = None
        self.last_embed: EmbedRun | None = None
        self.changes_applied = 0  # batches of disk changes (or of the writer's runs) taken in
        self._own_jobs = jobs is None
        self.jobs = jobs if jobs is not None else Jobs()
        self._lock = threading.Lock()  # the flags below
        self.runs = RunCount()
        self._run_queued = False  # a full run is queued and has not started
        self._queued_run: Any = None  # its future
        self._embed_scheduled = False
        self._announce_embed = False
        self._git_scheduled = False  # a refresh after HEAD moved is queued and has not started
        self._git_lock = threading.Lock()  # one git metadata update at a time (two threads run them)
        self._follower: threading.Thread | None = None
        self.disk = DiskSync(self)
        # what front ends and tests read of the disk side
        self.changes = self.disk.changes
        self.index_paths = self.disk.index_paths
        self.start_watching, self.stop_watching = self.disk.start_watching, self.disk.stop_watching

    @property
    def name(self) -> str:
        return self.root.name or str(self.root)

    @property
    def indexing(self) -> bool:
        """An index run is queued or running: results may miss files."""
        return self.runs.active

    @property
    def watcher(self) -> Any:
        return self.disk.watcher

    @property
    def watching(self) -> bool:
        return self.disk.watching

    # settings -----------------------------------------------------------------------
    def apply_settings(self, settings: config.Settings) -> bool:
        """Take new settings while running, at once: ``watch`` stops or starts the watcher;
        a change under ``embedding`` stops the running pass and drops the model, then loads
        it again (and embeds what is pending) if embedding is on, or says quietly that
        semantic search is off (searches answer lexically). True when what is indexed
        changed (exclude, maxFileSize, languages): the caller re-indexes."""
        old, self.settings = self.settings, settings
        engine = self.engine
        if engine is not None:
            engine.settings = settings
        self.disk.settings_changed(old)
        if engine is not None and old.embedding != settings.embedding:
            self._pass_cancel.set()
            self.jobs.submit("changing the embedding settings", self._reload_model, engine, embed=True)
        return (old.exclude, old.max_file_size, old.languages) != (
            settings.exclude, settings.max_file_size, settings.languages)

    def _reload_model(self, engine: Workspace) -> None:
        engine.semantic.unload()
        self.embed_soon(announce=True)

    # index runs ---------------------------------------------------------------------
    def start_indexing(self, title: str = INDEXING) -> Any:
        """Queue a run over every file (opening the index first if needed), then git
        metadata and embedding. A run queued and not started yet is not queued twice.
        Returns the run's future (its result: the IndexReport, None when nothing ran);
        None once stopped."""
        if self.cancel.is_set():
            return None
        with self._lock:
            if self._run_queued and self._queued_run is not None:
                return self._queued_run
            self._run_queued = True
            self.runs.add()
        fut = self.jobs.submit("indexing", self._run, title)
        with self._lock:
            if fut is None:
                self.runs.done()
                self._run_queued = False
            elif self._run_queued:  # not started yet: a second call joins it
                self._queued_run = fut
        return fut

    def _run(self, title: str) -> IndexReport | None:
        with self._lock:
            self._run_queued, self._queued_run = False, None
        handle = self.reporter.begin(title, "scanning files")
        report: IndexReport | None = None
        try:
            if self.cancel.is_set():
                return None
            if self.engine is None:
                self._open()
            report = self.index_run(handle, "", Severity.INFO)
        except IndexError_ as exc:
            self.reporter.message(str(exc), Severity.ERROR)
        finally:
            self.runs.done()
            self.reporter.end(handle, report.summary() if report else "index not updated")
        if self.engine is not None and not self.cancel.is_set():
            self.start_watching()  # (and the reconciles)
            self.engine.references.warm()  # (the first Find References then answers at once)
            rg_classes.warm()  # (half a second, once a process: the first regex search does not wait)
            self.embed_soon(announce=True)
        return report

    def clear(self, title: str = INDEXING) -> Any:
        """Delete the index and build it again: on the indexing thread (after the job that
        is running), stop the watcher and the embedding pass, close the index, remove its
        folder, then queue a full run. Returns the future of the clearing (its result: the
        index folder removed, or None when there was none); None once stopped. Refused
        (IndexError_) for an index another process writes."""
        if self.cancel.is_set():
            return None
        return self.jobs.submit("clearing the index", self._clear, title)

    def _clear(self, title: str) -> Path | None:
        engine = self.engine
        if engine is not None and not engine.writable:
            raise IndexError_(f"{self.name}: the index is written by another process; not cleared")
        self.stop_watching()
        self._pass_cancel.set()
        with self._lock:
            self.engine = None  # searches answer "still opening", queued jobs skip it
        if engine is not None:
            engine.close()  # waits for the embedding batch that is running
        removed = clear_index(self.root, self.settings)
        self.open_error, self.last_report, self.last_run_at, self.last_embed = None, None, None, None
        self.opened.clear()
        self.start_indexing(title)
        return removed

    def _open(self) -> None:
        try:
            ws = open_workspace(self.root, self.settings, self.reporter, load_symbols=True)
        except IndexError_ as exc:
            self.open_error = str(exc)
        except Exception as exc:  # a damaged store the checks at open did not catch, ...
            log.exception("opening the index failed")
            self.open_error = f"cannot open the index: {exc}; 'sylk index --repair {self.root}' rebuilds it"
        else:
            self.engine = ws
            if ws.read_only_reason:
                self.reporter.message(ws.read_only_reason, Severity.WARNING)
            if not ws.writable:
                self._follower = threading.Thread(target=self._follow_writer, args=(ws,), name="sylk-follow",
                                                  daemon=True)
                self._follower.start()
        finally:
            if self.open_error:
                self.reporter.message(f"{self.open_error}; workspace symbols are unavailable", Severity.ERROR)
            self.opened.set()

    def _follow_writer(self, ws: Workspace) -> None:
        """A read-only index: pick up the writing process's runs (its saves and disk
        changes), off the request path, until the service stops."""
        while not self.cancel.wait(FOLLOW_INTERVAL_S):
            try:
                if ws.follow_writer():
                    self.change_applied()
            except Exception as exc:  # the writer may be mid-commit: try again next time
                log.debug("following the writer failed: %s", exc)

    def index_run(self, handle: Any, what: str | None, severity: Severity = Severity.LOG, *,
                  paths: Sequence[str] | None = None, reconciling: bool = False) -> IndexReport | None:
        """One index run, on the indexing thread, its bookkeeping written once for the full
        runs, the runs over some paths, the disk's changes and the reconciles: over every
        file, ``paths``, or what a reconcile finds (``reconciling``: steps.reconcile); the
        files counted as it goes (the status), the report kept when the run changed
        anything or is not a reconcile, and logged as ``what`` + its summary (None: not
        logged). None when the index is not open, not writable, or the service stops."""
        engine = self.engine
        if engine is None or not engine.writable or self.cancel.is_set():
            return None
        self.index_progress = Tally(0, 0)

        def track(p: Progress) -> None:
            if p.phase == "index":
                self.index_progress = Tally(p.done, p.total)
        if reconciling:
            report = reconcile(engine, self.reporter, watching=self.watching, cancel=self.cancel, track=track)
            if not report.added + report.changed + report.deleted:
                return report
        else:
            report = index_files(engine, self.reporter, handle, paths=paths, cancel=self.cancel, track=track)
        self.last_report, self.last_run_at = report, time.time()
        if what is not None:
            self.reporter.log(what + report.summary(), severity)
        return report

    def change_applied(self) -> None:
        """A batch of disk changes (or a run of the writer's) is in the index: the count
        clients wait on. Two threads take batches in (the indexing thread, the follower)."""
        with self._lock:
            self.changes_applied += 1

    # git metadata and embedding -----------------------------------------------------
    def head_moved(self) -> None:
        """HEAD, a ref or packed-refs changed (a commit, checkout, pull, rebase): refresh the
        git metadata and commit messages on the indexing thread, after the disk changes
        queued before it, and nothing else (the files a checkout changed arrive as disk
        changes). One refresh is queued at most: a burst of moves joins it."""
        with self._lock:
            if self._git_scheduled or self.cancel.is_set():
                return
            self._git_scheduled = True
        if self.jobs.submit("refreshing git metadata", self._refresh_git) is None:
            with self._lock:
                self._git_scheduled = False

    def _refresh_git(self) -> None:
        if self.changes.pending and not self.cancel.is_set():  # a checkout's files first: they get metadata too
            if self.jobs.submit("refreshing git metadata", self._refresh_git) is not None:
                return
        with self._lock:
            self._git_scheduled = False
        engine = self.engine
        if engine is None or not engine.writable or self.cancel.is_set():
            return
        with self._git_lock:
            update_git(engine)

    def embed_soon(self, paths: Sequence[str] = (), *, announce: bool = False) -> None:
        """Refresh git metadata and embed what is pending, ``paths`` next (joining a running
        pass); one pass queued at most. ``announce``: with a progress report."""
        engine = self.engine
        if engine is None or self.cancel.is_set():
            return
        engine.prioritize(paths)
        with self._lock:
            self._announce_embed |= announce
            if self._embed_scheduled:
                return
            self._embed_scheduled = True
        self.jobs.submit("embedding", self._refresh_and_embed, embed=True)

    def _refresh_and_embed(self) -> None:
        with self._lock:
            announce, self._announce_embed, self._embed_scheduled = self._announce_embed, False, False
        self._pass_cancel = cancel = threading.Event()  # before the check: stop() sets it too
        engine = self.engine
        if engine is None or self.cancel.is_set():
            return
        with self._git_lock:
            update_git(engine)
        self.embed_progress = Tally(0, 0)
        try:
            run = embed(engine, self.reporter, cancel=cancel, first_paths=self.first_paths(), announce=announce,
                        track=self._track_chunks, pause=FOREGROUND.wait_quiet)
        finally:
            self.embedding = False
        if run is not None and run.chunks:
            self.last_embed = run

    def _track_chunks(self, done: int, total: int) -> None:
        self.embedding, self.embed_progress = True, Tally(done, total)

    def semantic_state(self) -> str:
        return semantic_state(self.settings, self.engine)

    # stopping -----------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the watcher, the follower, the reconciles and every job of this service that has
        not started."""
        self.cancel.set()
        self._pass_cancel.set()
        self.disk.stop()

    def close_engine(self) -> None:
        """Close the index (it stays consistent); after the jobs that use it are over."""
        if self._follower is not None:
            self._follower.join(FOLLOW_INTERVAL_S * 5)
            self._follower = None
        if self.engine is not None:
            self.engine.close()
            self.engine = None

    def close(self) -> None:
        """Stop, wait for the service's own jobs, close the index."""
        self.stop()
        if self._own_jobs:
            self.jobs.shutdown()
        self.close_engine()


class ServedFolder(Reporter):
    """A front end's workspace folder: the Reporter of its ``service`` (a WorkspaceService
    the subclass makes), with what every front end reads of it."""

    service: WorkspaceService

    @property
    def root(self) -> Path:
        return self.service.root

    @property
    def name(self) -> str:
        return self.service.name

    @property
    def settings(self) -> config.Settings:
        return self.service.settings

    @property
    def engine(self) -> Workspace | None:
        return self.service.engine
