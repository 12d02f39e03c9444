"""The background threads of the long-running front ends yield the CPU to requests."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
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
            thread_nice, child_nice = fut.result(timeout=60)
            assert thread_nice == expected
            assert int(child_nice) == expected  # a parser process started from it
        assert _nice() == mine  # the caller (a request thread) keeps its priority
    finally:
        jobs.shutdown()
