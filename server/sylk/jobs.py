"""The background threads of a long-running front end (the language server, the MCP
server): one for indexing and one for embedding, each running one job at a time, so
a minutes-long embedding pass never holds up the index runs of saves and disk changes.

Both run at a lower CPU priority than the threads that answer requests (issue 14).
On Linux a thread's nice value is its own, and the threads and processes it starts
inherit it: onnxruntime's workers (the model is loaded on the embedding thread),
Tantivy's writer threads and the parser processes of an index run all give the cores
to a request first, and take them back at once when no request wants them. A process
with these threads also hands the GIL over every 0.5 ms instead of 5, so a request
does not wait behind a background thread running Python.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from .memory import release_memory

log = logging.getLogger("sylk")

# Added to the nice value of the background threads: at +10 the scheduler gives a
# contended core to a request thread about nine times in ten.
BACKGROUND_NICE = 10
# How long a thread may hold the GIL while another waits for it. Python's 5 ms let the
# background threads (embedding batches, an index run's bookkeeping) hold a request
# back for up to 5 ms at each hand-over; requests are what the user waits for.
SWITCH_INTERVAL_S = 0.0005


def lower_priority() -> None:
    """Lower the calling thread's CPU priority by BACKGROUND_NICE (Linux only: elsewhere
    the call would reach the whole process, or another one)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + BACKGROUND_NICE))
    except OSError as exc:  # a sandbox that forbids it: the work runs, at the same priority
        log.debug("could not lower the priority of %s: %s", threading.current_thread().name, exc)


class Foreground:
    """The requests a front end is answering now. The embedding pass waits between model
    batches while there are any (``wait_quiet``): a batch keeps both cores busy for tens
    of milliseconds, and a lower priority alone still left a keystroke's workspace/symbol
    twice as slow while it ran (issue 14, item 2)."""

    # after the last request, the pass waits this long for the next keystroke's
    GRACE_S = 0.1
    # and never more than this per batch, so it goes on under a steady stream of requests
    MAX_WAIT_S = 1.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        self._last_end = 0.0  # time.monotonic() when the last request ended
        self._quiet = threading.Event()
        self._quiet.set()

    @property
    def busy(self) -> bool:
        return not self._quiet.is_set()

    @contextlib.contextmanager
    def request(self) -> Iterator[None]:
        """Marks a request as being answered for as long as the block runs."""
        with self._lock:
            self._count += 1
            self._quiet.clear()
        try:
            yield
        finally:
            with self._lock:
                self._count -= 1
                if not self._count:
                    self._last_end = time.monotonic()
                    self._quiet.set()

    def wait_quiet(self) -> None:
        """Block (a background thread) until no request has been in flight for GRACE_S, or
        MAX_WAIT_S passed."""
        deadline = time.monotonic() + self.MAX_WAIT_S
        while (left := deadline - time.monotonic()) > 0 and self._quiet.wait(left):
            since = time.monotonic() - self._last_end
            if since >= self.GRACE_S:
                return
            time.sleep(min(self.GRACE_S - since, max(left, 0.0)))  # the next keystroke's request?


# one per process: the front end's requests, seen by its background threads
FOREGROUND = Foreground()


class Jobs:
    def __init__(self, on_failure: Callable[[str, BaseException], None] | None = None) -> None:
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        self._index = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="sylk-index",
                                            initializer=lower_priority)
        self._embed = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="sylk-embed",
                                            initializer=lower_priority)
        self._futures: set[cf.Future] = set()
        self._on_failure = on_failure

    def submit(self, name: str, fn: Callable[..., Any], *args: Any, embed: bool = False) -> cf.Future | None:
        """Run ``fn`` on the indexing (or embedding) thread; a failure is logged by name (and
        passed to ``on_failure``), never raised. None once shut down."""
        def job() -> Any:
            try:
                return fn(*args)
            finally:
                release_memory()

        try:
            fut = (self._embed if embed else self._index).submit(job)
        except RuntimeError:  # shutting down
            return None
        self._futures.add(fut)

        def done(f: cf.Future) -> None:
            self._futures.discard(f)
            if not f.cancelled() and f.exception() is not None:
                exc = f.exception()
                log.error("%s failed", name, exc_info=exc)
                if self._on_failure is not None:
                    self._on_failure(name, exc)

        fut.add_done_callback(done)
        return fut

    def shutdown(self) -> None:
        """Drop queued jobs and wait for the running ones (they see their cancel events)."""
        for fut in list(self._futures):
            fut.cancel()
        self._index.shutdown(wait=True, cancel_futures=True)
        self._embed.shutdown(wait=True, cancel_futures=True)


class Periodic:
    """Calls ``fn`` on a thread of its own every ``interval()`` seconds until ``stop``.
    ``interval`` is asked again for each period, so a new value takes effect at once after
    ``wake`` (0 or less: paused until the next ``wake``). ``fn`` returns False when it
    could not run (the service was busy): it is tried again after ``retry_s``. A failure
    of ``fn`` is logged by ``name`` and the next period comes as usual."""

    def __init__(self, name: str, interval: Callable[[], float], fn: Callable[[], bool], *,
                 retry_s: float = 5.0) -> None:
        self.name = name
        self._interval = interval
        self._fn = fn
        self.retry_s = retry_s
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Periodic:
        """Start the thread (once; not after ``stop``)."""
        if self._thread is None and not self._stopped.is_set():
            self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
            self._thread.start()
        return self

    def wake(self) -> None:
        """The interval may have changed: the current period starts over with the new value."""
        self._wake.set()

    def stop(self) -> None:
        self._stopped.set()
        self._wake.set()

    def _loop(self) -> None:
        wait: float | None = None  # until the next call; None: a full period from now
        while not self._stopped.is_set():
            period = self._interval()
            if period <= 0:  # paused
                self._wake.wait()
                self._wake.clear()
                continue
            if self._wake.wait(period if wait is None else wait):
                self._wake.clear()
                wait = None
                continue
            if self._stopped.is_set():
                return
            try:
                ran = self._fn()
            except Exception:
                log.exception("%s failed", self.name)
                ran = True
            wait = None if ran else self.retry_s


class RunCount:
    """Index runs queued or running over one workspace (while any is, results may miss
    files): counted when queued, uncounted when they end, from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._n = 0

    @property
    def active(self) -> bool:
        return self._n > 0

    def add(self) -> None:
        with self._lock:
            self._n += 1

    def done(self) -> None:
        with self._lock:
            self._n -= 1

    def add_if_none(self) -> bool:
        """Count one more run only when none is queued or running; whether it did."""
        with self._lock:
            if self._n:
                return False
            self._n += 1
            return True
