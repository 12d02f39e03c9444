"""The lines of files for snippets, kept between requests within a budget.

The files recent pages showed snippets from are read again by the next page or a
refined query, so their lines stay while the file's (mtime, size) hold, bounded by what
they weigh (about a character each, and a string object per line), not by their count:
a few large files must not pin tens of megabytes of text between requests.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

BUDGET = 4 << 20  # bytes, as _weight counts them
_LINE_OVERHEAD = 56  # bytes of a short str object beyond its characters
_lines: OrderedDict[Path, tuple[int, int, list[str]]] = OrderedDict()
_lock = threading.Lock()
_held = 0


def _weight(lines: list[str]) -> int:
    return sum(map(len, lines)) + _LINE_OVERHEAD * len(lines)


def held() -> int:
    """What the kept lines weigh now."""
    return _held


def file_lines(path: Path) -> list[str] | None:
    """``path``'s lines (decoding errors replaced), from the cache while (mtime, size)
    hold; None when it cannot be read."""
    global _held
    try:
        st = path.stat()
    except OSError:
        return None
    with _lock:
        hit = _lines.get(path)
        if hit is not None and hit[0] == st.st_mtime_ns and hit[1] == st.st_size:
            _lines.move_to_end(path)
            return hit[2]
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    except OSError:
        return None
    with _lock:
        old = _lines.pop(path, None)
        if old is not None:
            _held -= _weight(old[2])
        _lines[path] = (st.st_mtime_ns, st.st_size, lines)
        _held += _weight(lines)
        while _held > BUDGET and len(_lines) > 1:
            _path, (_mtime, _size, dropped) = _lines.popitem(last=False)
            _held -= _weight(dropped)
    return lines


def file_text(root: Path, rel: str) -> str | None:
    """The text of the file ``rel`` of the folder ``root`` through ``file_lines``; None
    when it is outside the folder or cannot be read."""
    base = root.resolve()
    path = (base / rel).resolve()
    if not path.is_relative_to(base):
        return None
    lines = file_lines(path)
    return "\n".join(lines) if lines is not None else None
