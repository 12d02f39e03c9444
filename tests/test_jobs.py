"""The background threads of the long-running front ends yield the CPU to requests."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from conftest import TIMEOUT
from sylk.jobs import BACKGROUND_NICE, Jobs

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values are Linux's")


def _nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@linux_only
def test_indexing_and_embedding_run_below_the_request_threads_and_so_do_the_processes_they_start():
    jobs = Jobs()
    try:
        mine = _nice()
        expected = min(19, mine + BACKGROUND_NICE)
        child = [sys.executable, "-c", "import os; print(os.getpriority(os.PRIO_PROCESS, 0))"]
        for embed in (False, True):
            fut = jobs.submit("probe", lambda: (_nice(), subprocess.run(child, capture_output=True, text=True,
                                                                         check=True).stdout.strip()), embed=embed)
            assert fut is not None
            thread_nice, child_nice = fut.result(timeout=TIMEOUT)
            assert thread_nice == expected
            assert int(child_nice) == expected  # a parser process started from it
        assert _nice() == mine  # the caller (a request thread) keeps its priority
    finally:
        jobs.shutdown()


PROBE = r"""
from sylk.jobs import Jobs

def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) // 1024 for l in f if l.startswith("VmRSS:"))

def job():
    blocks = [bytes(4096) for _ in range(50_000)]  # 200 MB through malloc, in this thread's arena
    keep = blocks[::64]  # a few stay alive: the freed memory between them cannot shrink the heap
    del blocks
    return rss(), keep

jobs = Jobs()
before, keep = jobs.submit("probe", job).result()
print(before, rss())
jobs.shutdown()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
                    reason="glibc's malloc_trim")
def test_memory_a_background_job_freed_goes_back_to_the_system():
    r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=TIMEOUT)
    before, after = map(int, r.stdout.split())
    assert before - after > 100, (before, after)  # MB


def test_background_work_waits_while_a_request_is_answered():
    """wait_quiet blocks while a request is in flight, returns once none has been for
    the grace period, and never blocks longer than MAX_WAIT_S under a steady stream.
    Nothing is timed: the test sees the background thread blocked on the gate's event."""
    from sylk.jobs import Foreground

    blocked = threading.Event()

    class Quiet(threading.Event):
        """The gate's "no request in flight" event, saying when a thread waits on it."""

        def wait(self, timeout: float | None = None) -> bool:
            if not self.is_set():
                blocked.set()
            return super().wait(timeout)

    gate = Foreground()
    gate._quiet = Quiet()
    gate._quiet.set()  # (as made: no request yet)
    gate.MAX_WAIT_S = 3600.0  # (the bound under a steady stream: far out of the way here; the test ends it)
    assert not gate.busy
    gate.wait_quiet()  # no request since it was made: no wait
    assert not blocked.is_set()
    returned = threading.Event()
    with gate.request():
        assert gate.busy
        waiter = threading.Thread(target=lambda: (gate.wait_quiet(), returned.set()), daemon=True)
        waiter.start()
        deadline = time.monotonic() + TIMEOUT  # until it waits on the request in flight, or returns
        while not blocked.wait(0.02) and not returned.is_set():
            assert time.monotonic() < deadline, "wait_quiet neither waited nor returned"
        assert blocked.is_set() and not returned.is_set(), "wait_quiet returned while a request was in flight"
        with gate.request():  # nested: still busy when the inner one ends
            pass
        assert gate.busy and not returned.is_set()
    assert returned.wait(TIMEOUT), "wait_quiet did not return once the request ended"
    waiter.join(TIMEOUT)
    # a steady stream of requests: it goes on after MAX_WAIT_S all the same
    gate.MAX_WAIT_S = 0.2
    went_on = threading.Event()
    with gate.request():
        threading.Thread(target=lambda: (gate.wait_quiet(), went_on.set()), daemon=True).start()
        assert went_on.wait(TIMEOUT), "wait_quiet blocked past MAX_WAIT_S while a request stayed in flight"
        assert gate.busy


def test_a_request_handler_marks_itself_unless_it_is_a_status_poll():
    """Every language-server request handler holds the background back while it runs,
    except those registered as not worth waiting for (``sylk/status``, which clients poll);
    a notification never does."""
    import asyncio

    from sylk.jobs import FOREGROUND
    from sylk.lsp.handlers import contained

    def seen() -> bool:
        return FOREGROUND.busy

    async def seen_async() -> bool:
        return FOREGROUND.busy

    assert contained("symbols", "workspace/symbol", seen)() is True
    assert asyncio.run(contained("search", "sylk/search", seen_async)()) is True
    assert contained("status", "sylk/status", seen, foreground=False)() is False
    assert contained("symbols", "textDocument/didSave", seen)() is False
    assert not FOREGROUND.busy
