"""Changes on disk, from any source (git, generators, other editors, ``rm -r``), as
batches of root-relative paths: watchfiles (inotify on Linux) on a thread.

watchfiles groups events until none came for ``step_ms`` (or ``debounce_ms`` passed
since the first), so a single save arrives within about 0.1 s and a branch switch
of thousands of files as a few large batches; a ``ChangeQueue`` coalesces batches
that arrive while the previous one is still being indexed. Paths the workspace ignores are
dropped here, except ignore files themselves (their change re-decides everything).

Inside the git folder only HEAD, the refs and packed-refs matter: they move when a
commit, checkout, pull or rebase moves HEAD, which the watcher reports as one
``on_git`` call per batch (after the batch's file changes, so a checkout's files are
queued first). A rebase moving HEAD many times arrives as a few batches.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from .ingest.ignore import GIT_INFO_EXCLUDE, IGNORE_FILES

log = logging.getLogger("sylk.watch")

# the files of a git folder that say where HEAD is; their ``.lock`` twins are git's own
GIT_REF_FILES = ("HEAD", "packed-refs")
GIT_REFS = "refs"


def is_ref_path(rel: str) -> bool:
    """Whether ``rel`` (relative to a git folder, posix) is HEAD, packed-refs or a ref."""
    if rel.endswith(".lock"):
        return False
    return rel in GIT_REF_FILES or rel.startswith(GIT_REFS + "/")


class ChangeQueue:
    """Changed paths (added from the watcher's thread) for one job: ``schedule`` is called
    once per job, and every path that arrives before the job ``take``s them goes with it."""

    def __init__(self, schedule: Callable[[], object]) -> None:
        self._schedule = schedule
        self._paths: set[str] = set()
        self._scheduled = False
        self._lock = threading.Lock()

    def add(self, rels: list[str]) -> None:
        with self._lock:
            self._paths.update(rels)
            if self._scheduled:
                return
            self._scheduled = True
        self._schedule()

    def take(self) -> list[str]:
        """The paths queued so far, sorted; the next ``add`` schedules a new job."""
        with self._lock:
            rels, self._paths, self._scheduled = sorted(self._paths), set(), False
        return rels

    @property
    def pending(self) -> int:
        """Paths waiting (1 while a job is scheduled for paths already taken)."""
        with self._lock:
            return len(self._paths) + (1 if self._scheduled and not self._paths else 0)


class Watcher:
    def __init__(self, root: Path, on_change: Callable[[list[str]], None],
                 ignored: Callable[[str, bool], bool], *, on_error: Callable[[str], None] | None = None,
                 on_git: Callable[[], None] | None = None, git_dirs: Callable[[], Sequence[str]] = tuple,
                 debounce_ms: int = 1000, step_ms: int = 100) -> None:
        """``on_git``: called when HEAD, a ref or packed-refs changes in one of the folders
        ``git_dirs()`` names (the repository's git folders, asked on the watcher's thread;
        those outside ``root`` are watched too)."""
        self.root = Path(root).resolve()
        self._root_s = str(self.root)
        self.on_change = on_change
        self.on_git = on_git
        self._find_git_dirs = git_dirs
        self.git_dirs: tuple[str, ...] = ()  # once the watcher runs
        self.ignored = ignored
        self.on_error = on_error
        self.debounce_ms, self.step_ms = debounce_ms, step_ms
        self.error: str | None = None
        self.ready = threading.Event()  # set once the watches are in place
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sylk-watch", daemon=True)

    def start(self) -> Watcher:
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    @property
    def active(self) -> bool:
        return self._thread.is_alive() and not self._stop.is_set()

    def relative(self, path: str) -> str | None:
        """The root-relative posix path of an event's path, or None when it is not ours to index."""
        if not path.startswith(self._root_s + os.sep):  # a git folder outside it, a sibling named alike
            return None
        rel = path[len(self._root_s):].lstrip(os.sep).replace(os.sep, "/")
        if not rel:
            return None
        if rel == ".git" or rel.startswith(".git/"):
            return GIT_INFO_EXCLUDE if rel == GIT_INFO_EXCLUDE else None
        if rel.rpartition("/")[2] in IGNORE_FILES:
            return rel
        try:
            if self.ignored(rel, os.path.isdir(path)):
                return None
        except Exception:  # a rule that cannot be evaluated: let the indexer decide
            log.debug("ignore check failed for %s", rel, exc_info=True)
        return rel

    def moves_head(self, path: str) -> bool:
        """Whether an event's path is HEAD, a ref or packed-refs of the repository."""
        for d in self.git_dirs:
            if path.startswith(d + os.sep) and is_ref_path(path[len(d) + 1:].replace(os.sep, "/")):
                return True
        return False

    def _filter(self, _change: object, path: str) -> bool:
        return self.relative(path) is not None or self.moves_head(path)

    def _watched(self) -> list[str]:
        """The root, and the git folders that are not inside it (a linked worktree's, a
        workspace below the repository's top)."""
        watched = [self._root_s]
        for d in sorted(self.git_dirs, key=len):  # a worktree's own folder is often inside the common one
            if os.path.isdir(d) and not any((d + os.sep).startswith(w + os.sep) for w in watched):
                watched.append(d)
        return watched

    def _run(self) -> None:
        import watchfiles

        try:
            if self.on_git is not None:
                self.git_dirs = tuple(dict.fromkeys(os.path.realpath(d) for d in self._find_git_dirs()))
            gen = watchfiles.watch(*self._watched(), watch_filter=self._filter, debounce=self.debounce_ms,
                                   step=self.step_ms, stop_event=self._stop, rust_timeout=500,
                                   yield_on_timeout=True, raise_interrupt=False, ignore_permission_denied=True)
            for changes in gen:
                self.ready.set()
                if self._stop.is_set():
                    break
                if not changes:
                    continue
                rels = sorted({r for _c, p in changes if (r := self.relative(p)) is not None})
                if rels:
                    self.on_change(rels)
                if self.on_git is not None and any(self.moves_head(p) for _c, p in changes):
                    self.on_git()
        except Exception as exc:  # e.g. the inotify watch limit
            self.error = f"file watching stopped: {exc}"
            log.warning(self.error)
            if self.on_error is not None:
                self.on_error(self.error)
        finally:
            self.ready.set()
