"""What an index folder holds, by name (one place for every file name and the schema),
whether a folder can be used as one, and the one way Sylk removes anything from it.

An index folder is the user's choice (``indexDir``) and may be any folder: Sylk uses it
only when it is missing, empty or stamped by Sylk (``META_FILE``), and it removes only
the names of its own layout (``is_layout_name``), never a whole tree it did not create
and never through a symbolic link (``remove_entry``).
"""

from __future__ import annotations

import contextlib
import enum
import fnmatch
import json
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs

SCHEMA_VERSION = 8  # a folder stamped with another is rebuilt
META_FILE = "sylk-index.json"  # the schema stamp
META_TMP = "sylk-index.tmp"  # the stamp being written
LOCK_FILE = "sylk.lock"
WRITE_PROBE = ".write-test"  # .write-test.<pid>, written and removed at open: is the folder writable
MANIFEST_FILE = "manifest.sqlite3"
TANTIVY_DIR = "tantivy"
GRAMS_DIR = "grams"  # the files' trigrams (store.lexical), a Tantivy index of its own
TEXT_INDEX_DIRS = (TANTIVY_DIR, GRAMS_DIR)
VECTORS_DIR = "vectors"
QUICK_VECTORS_DIR = "vectors-quick"  # the quick pass's (engine.embedding), of chunks the model has not reached
VECTOR_DIRS = (VECTORS_DIR, QUICK_VECTORS_DIR)
SYMBOLS_FILE = "symbols.bin"  # the symbol table as arrays (search.frozen_symbols), rebuilt when missing
EMBEDDING_CACHE_FILE = "embeddings.sqlite"  # store.embedding_cache: kept when the stores start over
CORRUPT_SUFFIX = ".corrupt-"  # <index folder>.corrupt-<time>: damaged stores set aside (store.damage)

_SQLITE_SIDES = ("", "-wal", "-shm", "-journal")
# every name Sylk writes at the top of an index folder, and the patterns of its temporary files
_NAMES = frozenset({META_FILE, META_TMP, LOCK_FILE, TANTIVY_DIR, GRAMS_DIR, *VECTOR_DIRS, SYMBOLS_FILE}
                   | {MANIFEST_FILE + s for s in _SQLITE_SIDES}
                   | {EMBEDDING_CACHE_FILE + s for s in _SQLITE_SIDES}
                   | {f"{EMBEDDING_CACHE_FILE}.corrupt{s}" for s in _SQLITE_SIDES})
# the temporary files: store.array_file's, the write probe (and the schema stamp's, META_TMP)
_TEMP_PATTERNS = (f".{SYMBOLS_FILE}.*.tmp", WRITE_PROBE, f"{WRITE_PROBE}.*")


def is_layout_name(name: str) -> bool:
    """Whether Sylk writes a file or folder of this name at the top of an index folder."""
    return name in _NAMES or any(fnmatch.fnmatchcase(name, p) for p in _TEMP_PATTERNS)


def is_temp_name(name: str) -> bool:
    """A temporary file of a write a kill may have interrupted (removed at open)."""
    return name == META_TMP or any(fnmatch.fnmatchcase(name, p) for p in _TEMP_PATTERNS)


def is_cache_name(name: str) -> bool:
    """The embedding cache's files: they survive a rebuild (vectors are keyed by model and
    chunk text, whatever the schema)."""
    return name.startswith(EMBEDDING_CACHE_FILE) and name in _NAMES


class FolderState(enum.Enum):
    """What a would-be index folder is (see ``folder_state``); the caller decides."""

    MISSING = "missing"  # nothing there: created
    EMPTY = "empty"  # empty, or holding only what an interrupted first open wrote: stamped
    CURRENT = "current"  # Sylk's index of this schema: opened
    VERSION = "version"  # stamped by Sylk, another schema or an unreadable stamp: rebuilt
    LINKED = "linked"  # stamped by Sylk, but a name of its layout is a symbolic link: rebuilt
    FOREIGN = "foreign"  # holds files without Sylk's stamp: refused, nothing touched
    NOT_A_FOLDER = "not a folder"  # a file, or unreadable: refused


@attrs.frozen
class FolderCheck:
    """``folder_state``'s answer: the state and, unless the folder is usable as it is,
    why (one line for the user)."""

    state: FolderState
    why: str | None = None

    @property
    def refused(self) -> bool:
        """Sylk must not use (or touch) the folder."""
        return self.state in (FolderState.FOREIGN, FolderState.NOT_A_FOLDER)

    @property
    def stale(self) -> bool:
        """Sylk's folder, to be emptied of its layout and stamped again by a writer."""
        return self.state in (FolderState.VERSION, FolderState.LINKED)


def folder_state(folder: Path) -> FolderCheck:
    """Is ``folder`` usable as an index folder, and why not. Reads only."""
    try:
        if not folder.exists() and not folder.is_symlink():
            return FolderCheck(FolderState.MISSING)
        if not folder.is_dir():
            return FolderCheck(FolderState.NOT_A_FOLDER, f"cannot use the index folder {folder}: it is not a folder")
        names = sorted(os.listdir(folder))
    except OSError as exc:
        return FolderCheck(FolderState.NOT_A_FOLDER,
                           f"cannot read the index folder {folder}: {exc.strerror or exc}")
    if META_FILE not in names:
        # what a folder may hold before its stamp is written (the first open was killed early)
        foreign = [n for n in names if n != LOCK_FILE and not is_temp_name(n)]
        if not foreign:
            return FolderCheck(FolderState.EMPTY)
        shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
        return FolderCheck(FolderState.FOREIGN,
                           f"the index folder {folder} holds files Sylk did not create ({shown}); "
                           "choose an empty folder or remove indexDir")
    linked = [n for n in names if is_layout_name(n) and (folder / n).is_symlink()]
    if linked:
        return FolderCheck(FolderState.LINKED, f"{linked[0]} in the index folder is a symbolic link")
    meta_path = folder / META_FILE
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return FolderCheck(FolderState.VERSION, f"unreadable {META_FILE}: {exc}")
    if not isinstance(meta, dict) or meta.get("schema") != SCHEMA_VERSION:
        found = meta.get("schema") if isinstance(meta, dict) else meta
        return FolderCheck(FolderState.VERSION, f"index schema {found!r} != {SCHEMA_VERSION}")
    return FolderCheck(FolderState.CURRENT)


def is_sylk_folder(folder: Path) -> bool:
    """A real folder (not a link) that carries Sylk's stamp, or holds nothing but names of
    Sylk's layout (a folder of damaged stores set aside by an older Sylk)."""
    try:
        if folder.is_symlink() or not folder.is_dir():
            return False
        names = os.listdir(folder)
    except OSError:
        return False
    return META_FILE in names or bool(names) and all(is_layout_name(n) for n in names)


def remove_entry(path: Path) -> None:
    """Remove one entry of Sylk's layout: a link or a file is unlinked (never what a link
    points at), a real folder removed with what it holds (shutil.rmtree does not follow
    the links inside). Errors are the caller's."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def remove_layout(folder: Path, keep: Callable[[str], bool] = lambda name: False) -> list[str]:
    """Remove the names of Sylk's layout from ``folder`` (unless ``keep(name)``), the schema
    stamp last (a kill midway leaves a folder that is still Sylk's); anything else in it
    stays. Returns the names that could not be removed."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    ours = sorted((n for n in names if is_layout_name(n) and not keep(n)), key=lambda n: (n == META_FILE, n))
    failed = []
    for name in ours:
        try:
            remove_entry(folder / name)
        except OSError:
            failed.append(name)
    return failed


def remove_named(folder: Path, names: Iterable[str]) -> None:
    """Remove the entries ``names`` (of Sylk's layout, inside a folder of it) of
    ``folder``, unless ``folder`` is itself a link; missing ones and errors are ignored."""
    if folder.is_symlink():
        return
    for name in names:
        with contextlib.suppress(OSError):
            remove_entry(folder / name)


def write_stamp(folder: Path, content: dict) -> None:
    """Write the schema stamp atomically (through ``META_TMP``, created afresh: never
    written through a link)."""
    tmp = folder / META_TMP
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(content))
    os.replace(tmp, folder / META_FILE)
