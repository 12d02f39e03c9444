"""The steps of serving a workspace, as plain functions: ``open_workspace``,
``index_files``, ``update_git``, ``embed``, which ``sylk index`` runs in order, and
``reconcile``. The ``WorkspaceService`` (service.py) runs them on its threads. Each
reports through a ``Reporter``, the only way the service speaks to the user.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from . import config
from .engine import gitmeta
from .engine.indexer import IndexReport, Progress
from .engine.workspace import Workspace

log = logging.getLogger("sylk")

INDEXING = "Indexing workspace"  # the titles of the progress reports
INDEXING_CHANGES = "Indexing changes"
INDEXING_PATHS = "Indexing files"
EMBEDDING = "Embedding"


class Severity(enum.IntEnum):
    ERROR = 1
    WARNING = 2
    INFO = 3
    LOG = 4  # worth knowing, but the user's own choice (embedding turned off): no pop-up


class Reporter:
    """How the service talks to the user. The defaults say nothing; a front end overrides
    what it can show. A progress handle is whatever ``begin`` returns; None (refused, or
    nothing to show) is passed back to ``report`` and ``end``, which then do nothing."""

    reindex_hint = "a reindex"  # how the user asks this front end to index again

    def message(self, text: str, severity: Severity) -> None:
        """Something the user should know (a rebuilt index, a model that cannot load)."""

    def log(self, text: str, severity: Severity = Severity.LOG) -> None:
        """A line for the log (what an index run did)."""

    def begin(self, title: str, message: str) -> Any:
        """Start a progress report; returns its handle."""

    def report(self, handle: Any, progress: Progress) -> None:
        """A running step's progress (phase scan, index, commit, embed; done at the end)."""

    def end(self, handle: Any, message: str) -> None:
        """The step is over; ``message`` says what it did."""


def progress_text(p: Progress) -> tuple[str, int]:
    """A progress record as a short message and a percentage ("12/40 files", 30). An
    index run says what is searchable so far: symbols from every parsed file, text
    from the files committed ("12/40 files, text searchable in 8")."""
    if not p.total:
        return p.message, 0
    unit = "chunks" if p.phase == "embed" else "files"
    searchable = f", text searchable in {p.committed}" if p.phase in ("index", "commit") and p.done < p.total else ""
    return f"{p.done}/{p.total} {unit}{searchable}", int(100 * p.done / p.total)


class Tally(NamedTuple):
    done: int
    total: int


class EmbedRun(NamedTuple):
    chunks: int
    seconds: float
    model: str
    at: float  # when it ended, seconds since the epoch
    failed: int = 0  # chunks the model failed on (left out, counted in the status)
    quick: int = 0  # chunks the quick pass gave a vector first (engine.embedding)
    quick_seconds: float = 0.0


# the steps ---------------------------------------------------------------------------

def open_workspace(root: Path, settings: config.Settings, reporter: Reporter, *, writable: bool = True,
                   load_symbols: bool = False) -> Workspace:
    """Open the index of ``root`` and say what the open had to rebuild or repair. Raises
    ``IndexError_`` (worded for the user) when the index folder cannot be used."""
    ws = Workspace(root, settings, writable=writable, load_symbols=load_symbols)
    if ws.rebuilt_reason:
        reporter.message(f"rebuilding the index ({ws.rebuilt_reason})", Severity.INFO)
    if ws.repair_note:  # drift found at open (a kill left orphan documents, ...) and repaired
        reporter.message(ws.repair_note, Severity.INFO)
    return ws


def index_files(ws: Workspace, reporter: Reporter, handle: Any, *, paths: Sequence[str] | None = None,
                cancel: threading.Event | None = None, workers: int | None = None,
                track: Callable[[Progress], None] | None = None) -> IndexReport:
    """An index run (every file, or ``paths``) reporting its progress under ``handle``."""
    def progress(p: Progress) -> None:
        if track is not None:
            track(p)
        reporter.report(handle, p)

    return ws.index(progress=progress, cancel=cancel, workers=workers, paths=paths)


def reconcile(ws: Workspace, reporter: Reporter, *, watching: bool, cancel: threading.Event | None = None,
              track: Callable[[Progress], None] | None = None) -> IndexReport:
    """The start-up check again, applied: the files git says may differ since the last
    complete run (or, outside git, a stat() of every file) compared with the index, and
    what changed indexed. For the changes on disk no watcher reported (inotify limits,
    network file systems, a machine asleep, ``watch`` off). Without a progress report;
    one log line when it found any (``drift_line``)."""
    report = index_files(ws, reporter, None, cancel=cancel, track=track)
    line = drift_line(report, watching=watching)
    if line:
        reporter.log(line, Severity.INFO)
    return report


def drift_line(report: IndexReport, *, watching: bool) -> str | None:
    """What a reconcile found, in one line ("reconcile: 3 files changed on disk that the
    watcher missed (2 changed, 1 deleted)"); None when it found nothing."""
    counts = [(n, what) for n, what in ((report.added, "added"), (report.changed, "changed"),
                                        (report.deleted, "deleted")) if n]
    if not counts or report.cancelled:
        return None
    total = sum(n for n, _what in counts)
    files = "1 file" if total == 1 else f"{total} files"
    how = "that the watcher missed" if watching else "while file watching was off"
    return f"reconcile: {files} changed on disk {how} ({', '.join(f'{n} {what}' for n, what in counts)})"


def update_git(ws: Workspace) -> int:
    """Git metadata (authors, dates, commit messages) up to date with HEAD; cheap when HEAD
    did not move. Metadata is optional: a failure is logged, never raised."""
    try:
        return gitmeta.update(ws)
    except Exception as exc:
        log.warning("git metadata not updated: %s", exc)
        return 0


def embed(ws: Workspace, reporter: Reporter, *, cancel: threading.Event | None = None,
          first_paths: Sequence[str] = (), announce: bool = True,
          track: Callable[[int, int], None] | None = None,
          pause: Callable[[], None] | None = None) -> EmbedRun | None:
    """Load the model (once; say so once if it cannot load) and embed the pending chunks,
    ``first_paths`` first; with a progress report when ``announce``; ``pause`` before each
    batch of the model. None when there is no model or the index is read-only."""
    note = ws.load_semantic()
    if note and not ws.settings.embedding.enabled:  # the user's choice: said quietly
        reporter.message(note, Severity.LOG)
    elif note:
        reporter.message(note, Severity.WARNING if not ws.semantic_ready else Severity.INFO)
    if not ws.semantic_ready or not ws.writable:
        return None
    assert ws.embedder is not None
    model = ws.embedder.model_id
    pending = ws.manifest.chunk_counts()["pending"]
    if not pending:
        return EmbedRun(0, 0.0, model, time.time())
    t_quick = time.perf_counter()
    quick = ws.quick_pass(cancel)
    quick_took = time.perf_counter() - t_quick
    if quick:  # search by meaning covers them now
        reporter.log(f"quick pass: {quick} chunks searchable by meaning in {quick_took:.1f}s (static model); "
                     f"{model} follows", Severity.INFO)
    handle = reporter.begin(EMBEDDING, f"0/{pending} chunks") if announce else None

    def progress(done: int, total: int) -> None:
        if track is not None:
            track(done, total)
        reporter.report(handle, Progress("embed", done, total))

    done = 0
    failed_before = ws.manifest.chunk_counts()["failed"]
    t0 = time.perf_counter()
    try:
        done = ws.embed_pending(progress=progress, cancel=cancel, first_paths=first_paths, pause=pause)
    finally:
        took = time.perf_counter() - t0
        reporter.report(handle, Progress("done", done, done))
        reporter.end(handle, f"{done} chunks embedded in {took:.1f}s")
    # (the model failed on these even alone: the log names them; the status counts them)
    failed = max(0, ws.manifest.chunk_counts()["failed"] - failed_before)
    if failed:
        reporter.log(f"{done} chunks embedded in {took:.1f}s; {failed} could not be embedded", Severity.WARNING)
    elif announce or done:
        reporter.log(f"{done} chunks embedded in {took:.1f}s", Severity.INFO)
    return EmbedRun(done, took, model, time.time(), failed, quick, quick_took)
