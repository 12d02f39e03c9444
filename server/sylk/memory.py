"""Giving freed memory back to the system (a leaf: the engine and the service use it).

glibc keeps freed heap memory for reuse, in one arena per thread, and numpy arrays of a
few megabytes come from that heap: after a job that made and dropped large arrays the
process holds far more than it uses (an embedding pass: 100 MB more in
bench/search_latency.py's serving RSS; building the reference table of the stdlib:
140 MB more).
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable


def _malloc_trim() -> Callable[[], None] | None:
    """glibc's malloc_trim, or None (another C library, or none found)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    return lambda: trim(0)


_TRIM = _malloc_trim()


def release_memory() -> None:
    """Give the memory freed by a finished job back to the system."""
    if _TRIM is not None:
        _TRIM()


