"""Damage at the level of files: one writer per index folder, damaged stores found and
set aside. (The drift between intact stores is store.integrity's.)

* ``WriterLock``: an advisory lock on ``sylk.lock``, taken before anything is read,
  moved or repaired; the file also records whether the last writer closed cleanly.
* ``set_aside``: damaged stores move to ``<index dir>.corrupt-<time>``, keeping the
  embedding cache (nothing is embedded twice), the lock and the schema stamp.
* ``check_segments`` / ``tantivy_damage``: the checksums of Tantivy's segment files
  (Tantivy itself reads only their footers).
* ``remove_leftovers``: temporary files of writes a kill interrupted.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import struct
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import IndexError_, first_line
from .layout import (
    CORRUPT_SUFFIX,
    LOCK_FILE,
    MANIFEST_FILE,
    META_FILE,
    SCHEMA_VERSION,
    VECTOR_DIRS,
    is_cache_name,
    is_layout_name,
    is_sylk_folder,
    is_temp_name,
    remove_entry,
    remove_layout,
    remove_named,
    write_stamp,
)
from .manifest import Manifest
from .vectors import INDEX_FILE as VECTORS_FILE
from .vectors import META_FILE as VECTORS_META

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: Tantivy's own writer lock is the guard
    fcntl = None  # type: ignore[assignment]

_TANTIVY_MAGIC = 1337
_SEGMENT_PARTS = ("idx", "pos", "term", "store", "fast", "fieldnorm")


class WriterLock:
    """The index folder's writer lock: ``flock`` on ``sylk.lock``, held for the life of a
    writing Workspace and dropped by the OS when its process dies. The file says ``open``
    while a writer holds it and ``closed`` after a clean close, so the next writer knows
    whether the last one was killed (``unclean``)."""

    def __init__(self, file: Any, unclean: bool) -> None:
        self._file = file
        self.unclean = unclean

    @classmethod
    def acquire(cls, folder: Path) -> WriterLock | None:
        """The lock, or None when another process (or another Workspace) holds it."""
        path = folder / LOCK_FILE
        if path.is_symlink():  # never write through a link (to a file of the user's)
            path.unlink()
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        f = os.fdopen(fd, "r+b")
        if fcntl is not None:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.close()
                return None
            except OSError:  # a file system without locks: Tantivy's writer lock still guards
                pass
        unclean = f.read(16).startswith(b"open")
        f.seek(0)
        f.truncate()
        f.write(f"open {os.getpid()}\n".encode())
        f.flush()
        return cls(f, unclean)

    def release(self, *, clean: bool = True) -> None:
        if self._file is None:
            return
        with contextlib.suppress(OSError):
            if clean:
                self._file.seek(0)
                self._file.truncate()
                self._file.write(b"closed\n")
                self._file.flush()
        self._file.close()  # closing the file drops the lock
        self._file = None


def writer_active(folder: Path) -> bool:
    """Whether a writer holds the index folder's lock now (another process, or another
    Workspace of this one)."""
    if fcntl is None or not (folder / LOCK_FILE).exists():
        return False
    try:
        with open(folder / LOCK_FILE, "rb") as f:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    except OSError:
        return False
    return False


# SQLite errors that say nothing about the file's content: never a reason to set it aside
_NOT_DAMAGE = ("locked", "busy", "unable to open", "readonly", "disk i/o", "full")


def sqlite_damage(exc: sqlite3.DatabaseError) -> str:
    """The damage an SQLite error reports, or IndexError_ for a passing or access problem."""
    text = first_line(exc)
    if any(word in text.lower() for word in _NOT_DAMAGE):
        raise IndexError_(f"cannot open {MANIFEST_FILE}: {text}") from exc
    return f"{MANIFEST_FILE} is damaged: {text}"


def set_aside(folder: Path) -> Path | None:
    """Move the stores of an index folder to ``<folder>.corrupt-<time>`` (older such
    folders of Sylk's are emptied of its layout and removed: one is kept for a bug
    report), keeping the lock file, the schema stamp and the embedding cache. Only names
    of Sylk's layout move (links as links); the new folder gets a stamp of its own, so a
    later set_aside knows it for Sylk's. Returns where they went; None when they were
    deleted (the parent folder is not writable)."""
    prefix = folder.name + CORRUPT_SUFFIX
    with contextlib.suppress(OSError):
        for old in folder.parent.iterdir():
            if old.name.startswith(prefix) and is_sylk_folder(old):
                remove_layout(old)
                with contextlib.suppress(OSError):
                    old.rmdir()  # only when nothing of the user's was in it
    dest: Path | None = folder.with_name(f"{prefix}{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        dest.mkdir()  # type: ignore[union-attr]
        write_stamp(dest, {"schema": SCHEMA_VERSION, "set_aside": True})  # type: ignore[arg-type]
    except OSError:
        if dest is not None and dest.is_dir() and not dest.is_symlink():
            with contextlib.suppress(OSError):
                remove_layout(dest)
                dest.rmdir()
        dest = None
    for name in sorted(os.listdir(folder)):
        if not is_layout_name(name) or name in (LOCK_FILE, META_FILE) or is_cache_name(name):
            continue
        child = folder / name
        if dest is not None:
            try:
                os.replace(child, dest / name)
                continue
            except OSError:
                pass
        with contextlib.suppress(OSError):
            remove_entry(child)
    return dest


def remove_leftovers(folder: Path) -> None:
    """Temporary files of writes a kill interrupted (FAISS saves, the schema stamp, the
    symbol table); only names Sylk writes."""
    remove_layout(folder, keep=lambda name: not is_temp_name(name))
    for name in VECTOR_DIRS:
        vectors = folder / name
        if not vectors.is_symlink() and vectors.is_dir():
            remove_named(vectors, [p.name for pattern in (f".{VECTORS_FILE}.*.tmp", f".{VECTORS_META}.*.tmp")
                                   for p in vectors.glob(pattern)])


CHECKED_META = "tantivy_checked"  # manifest meta: segment files whose checksum was right


def check_segments(manifest: Manifest, folders: Sequence[Path], writable: bool) -> list[str]:
    """tantivy_damage for the segment files of the Tantivy indexes in ``folders`` (those
    holding a meta.json) not checked before: Tantivy's segment files never change once
    committed, so each is read once (the checked ones are remembered by folder, name,
    size and mtime in the manifest); a garbled one would make searches fail, or panic,
    later."""
    try:
        checked = json.loads(manifest.get_meta(CHECKED_META) or "{}")
        if not isinstance(checked, dict):
            checked = {}
    except ValueError:
        checked = {}
    seen: dict[str, list[int]] = {}
    problems = [p for folder in folders if (folder / "meta.json").exists() for p in tantivy_damage(folder, checked, seen)]
    if writable and not problems and seen != checked:
        manifest.set_meta(**{CHECKED_META: json.dumps(seen, separators=(",", ":"))})
    return problems


def tantivy_damage(folder: Path, checked: dict | None = None, seen: dict | None = None) -> list[str]:
    """Checksum every file of the committed segments (Tantivy itself checks only the
    footers, when it opens them). Files in ``checked`` with the same [size, mtime_ns]
    are skipped; ``seen`` receives the [size, mtime_ns] of every file found sound. Files
    are named ``<folder's name>/<file>`` in both and in the problems."""
    where = folder.name
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        segments = meta["segments"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"{where}/meta.json: {first_line(exc)}"]
    problems = []
    for seg in segments:
        sid = str(seg.get("segment_id", "")).replace("-", "")
        names = [f"{sid}.{part}" for part in _SEGMENT_PARTS]
        deletes = seg.get("deletes")
        if deletes:
            names.append(f"{sid}.{deletes.get('opstamp')}.del")
        for name in names:
            path = folder / name
            key = f"{where}/{name}"
            try:
                st = path.stat()
            except OSError:
                if name.endswith(".del"):
                    problems.append(f"{key}: missing")
                continue
            stamp = [st.st_size, st.st_mtime_ns]
            if checked is not None and checked.get(key) == stamp:
                problem = None
            else:
                problem = footer_problem(path)
            if problem:
                problems.append(f"{key}: {problem}")
            elif seen is not None:
                seen[key] = stamp
    return problems


def footer_problem(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < 8:
                return "truncated"
            f.seek(size - 8)
            length, magic = struct.unpack("<II", f.read(8))
            if magic != _TANTIVY_MAGIC or length + 8 > size:
                return "no valid footer"
            f.seek(size - 8 - length)
            footer = json.loads(f.read(length))
            f.seek(0)
            crc, left = 0, size - 8 - length
            while left:
                block = f.read(min(left, 1 << 20))
                if not block:
                    return "truncated"
                crc = zlib.crc32(block, crc)
                left -= len(block)
    except FileNotFoundError:
        return "missing"
    except (OSError, ValueError, struct.error) as exc:
        return first_line(exc)
    if not isinstance(footer, dict) or footer.get("crc") != crc:
        return "checksum mismatch"
    return None
