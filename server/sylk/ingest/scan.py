"""Workspace discovery and safe file loading.

``scan_workspace`` walks a workspace root with ``os.scandir`` and returns the files
worth indexing plus what it skipped and why. ``IgnoreMatcher`` holds the ignore
rules of one root; ``load_source`` reads one file for parsing (it lives in
``source_files``, which parser workers import without the ignore machinery).

What is ignored is decided by ``ignore.IgnoreMatcher``.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from collections.abc import Sequence
from operator import attrgetter
from pathlib import Path

import attrs

from .ignore import ALWAYS_EXCLUDED, VENV_MARKER, IgnoreMatcher, decide
from .source_files import BINARY_SNIFF, FileEntry, SkipFile, SourceFile, content_hash, load_source

__all__ = [
    "BINARY_SNIFF",
    "FileEntry",
    "ScanResult",
    "SkipFile",
    "Skipped",
    "SourceFile",
    "content_hash",
    "load_source",
    "scan_workspace",
]



# ---------------------------------------------------------------------------
# results


@attrs.frozen(slots=True)
class Skipped:
    rel: str
    # scan_workspace: "too-large" | "unreadable" | "symlink-loop" | "symlink-outside"
    # | "special-file"; callers of load_source add "binary" (and "invalid-utf8" notes).
    # "symlink-loop" also covers a symlinked directory whose target was already
    # scanned under another path (it would only produce duplicates).
    reason: str


@attrs.define
class ScanResult:
    files: list[FileEntry]  # sorted by rel
    skipped: list[Skipped]  # sorted by rel


# ---------------------------------------------------------------------------
# the walk


def scan_workspace(
    root: Path, *, exclude: Sequence[str] = (), max_file_size: int = 1 << 20,
    start: str = "", matcher: IgnoreMatcher | None = None,
) -> ScanResult:
    """Every file under ``root`` that is not ignored and not larger than
    ``max_file_size``; never raises for what it meets on disk.

    ``start`` (a root-relative folder the caller knows is not ignored) limits the
    walk to that subtree, with the root's ignore rules; ``matcher`` reuses one.

    Symlinks: a symlinked file or directory is taken (under its link path) only
    if its target resolves inside the root; a symlinked directory is entered
    after the plain walk, and only if its real path was not scanned already.
    File contents are not read here: binary and encoding checks happen in
    ``load_source``, and files the scan cannot open show up there.
    """
    root_s = os.path.abspath(os.fspath(root))
    if matcher is None:
        matcher = IgnoreMatcher(Path(root_s), exclude)
    files: list[FileEntry] = []
    skipped: list[Skipped] = []
    if not os.path.isdir(root_s):
        return ScanResult(files, [Skipped(".", "unreadable")])

    real_root = os.path.realpath(root_s)
    inside = real_root.rstrip(os.sep) + os.sep
    start = start.strip("/")
    start_path = os.path.join(root_s, start) if start else root_s
    start_real = os.path.realpath(start_path)
    if start and not start_real.startswith(inside):
        return ScanResult(files, [Skipped(start, "symlink-outside")])
    visited = {start_real}
    pending: list[tuple[str, str, str]] = [(start_path, start, start_real)]  # (path, rel, real)
    linked: deque[tuple[str, str, str]] = deque()  # symlinked dirs, entered last
    add_file, skip = files.append, skipped.append

    while pending or linked:
        if not pending:
            path, rel, real = linked.popleft()
            if real in visited:
                skip(Skipped(rel, "symlink-loop"))
                continue
            visited.add(real)
            pending.append((path, rel, real))
            continue
        path, rel, real = pending.pop()
        try:
            with os.scandir(path) as it:
                entries = list(it)
        except OSError:
            skip(Skipped(rel or ".", "unreadable"))
            continue
        names = {e.name for e in entries}
        if rel:
            is_venv = VENV_MARKER in names
            matcher.note_venv(rel, is_venv)
            if is_venv:
                continue
        stack = matcher.rules(rel, names)
        prefix = rel + "/" if rel else ""

        for e in entries:
            if e.name in ALWAYS_EXCLUDED:
                continue
            erel = prefix + e.name
            try:
                if e.is_symlink():
                    try:
                        st = e.stat()  # follows the link
                    except OSError as exc:  # broken, or a cycle of links
                        if not decide(stack, erel, False):
                            loop = exc.errno == errno.ELOOP
                            skip(Skipped(erel, "symlink-loop" if loop else "unreadable"))
                        continue
                    if decide(stack, erel, stat.S_ISDIR(st.st_mode)):
                        continue
                    target = os.path.realpath(e.path)
                    if not target.startswith(inside) and target != real_root:
                        skip(Skipped(erel, "symlink-outside"))
                    elif stat.S_ISDIR(st.st_mode):
                        linked.append((e.path, erel, target))
                    elif stat.S_ISREG(st.st_mode):
                        if st.st_size > max_file_size:
                            skip(Skipped(erel, "too-large"))
                        else:
                            add_file(FileEntry(erel, st.st_size, st.st_mtime_ns))
                    else:
                        skip(Skipped(erel, "special-file"))
                elif e.is_dir():
                    if decide(stack, erel, True):
                        continue
                    sub_real = f"{real}{os.sep}{e.name}"
                    if sub_real in visited:  # reached through a link earlier
                        skip(Skipped(erel, "symlink-loop"))
                        continue
                    visited.add(sub_real)
                    pending.append((e.path, erel, sub_real))
                elif e.is_file():
                    if decide(stack, erel, False):
                        continue
                    st = e.stat(follow_symlinks=False)
                    if st.st_size > max_file_size:
                        skip(Skipped(erel, "too-large"))
                    else:
                        add_file(FileEntry(erel, st.st_size, st.st_mtime_ns))
                else:  # socket, FIFO, device (never opened)
                    if decide(stack, erel, False):
                        continue
                    e.stat(follow_symlinks=False)  # vanished -> unreadable
                    skip(Skipped(erel, "special-file"))
            except OSError:
                skip(Skipped(erel, "unreadable"))

    files.sort(key=attrgetter("rel"))
    skipped.sort(key=attrgetter("rel"))
    return ScanResult(files, skipped)
