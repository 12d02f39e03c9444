"""Reading one file for parsing: ``load_source``, and ``FileEntry``, the file as the scan
found it. Parser worker processes import this, not ``scan`` (whose ignore rules pull
in pathspec): a spawned worker starts faster."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Final

import attrs

BINARY_SNIFF: Final = 8192  # bytes read to tell a binary file (a NUL byte among them)


@attrs.frozen(slots=True)
class FileEntry:
    rel: str  # posix path relative to the root, e.g. "src/app.py"
    size: int
    mtime_ns: int


@attrs.frozen(slots=True)
class SourceFile:
    data: bytes  # UTF-8 bytes to parse (no BOM; invalid sequences -> U+FFFD)
    text: str  # the decoded text
    content_hash: str  # content_hash() of the original raw bytes
    replaced: bool  # invalid UTF-8 had to be replaced


class SkipFile(Exception):
    """A file that should not be indexed. ``reason``: "binary" | "unreadable" |
    "too-large" | "special-file" (the path is a FIFO, socket or device now)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def content_hash(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


_BOM = b"\xef\xbb\xbf"
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def load_source(path: Path, max_file_size: int = 1 << 20) -> SourceFile:
    """Read one file for parsing. Raises SkipFile. Opens non-blocking and checks
    the file type before reading, so a FIFO swapped in after the scan never hangs."""
    raw = read_bytes(path, max_file_size)
    body = raw[3:] if raw.startswith(_BOM) else raw
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = body.decode("utf-8", "replace")
        return SourceFile(text.encode("utf-8"), text, content_hash(raw), True)
    return SourceFile(body, text, content_hash(raw), False)


def read_text(path: Path, max_file_size: int = 1 << 20) -> str:
    """``load_source(path).text`` without the hash and the bytes: a file's text as it was
    indexed (no BOM, invalid UTF-8 as U+FFFD), for a search that reads many. Raises SkipFile."""
    return decoded(read_bytes(path, max_file_size))


def decoded(raw: bytes) -> str:
    """``read_text`` of a file's bytes (``read_bytes``)."""
    return (raw[3:] if raw.startswith(_BOM) else raw).decode("utf-8", "replace")


def read_bytes(path: Path, max_file_size: int) -> bytes:
    """The bytes of a regular, not binary file of at most ``max_file_size`` bytes; SkipFile."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        raise SkipFile("unreadable") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SkipFile("unreadable" if stat.S_ISDIR(st.st_mode) else "special-file")
        if st.st_size > max_file_size:
            raise SkipFile("too-large")
        with open(fd, "rb", closefd=False) as f:
            raw = f.read(max_file_size + 1)  # the file may have grown since fstat
    except OSError:
        raise SkipFile("unreadable") from None
    finally:
        os.close(fd)
    if len(raw) > max_file_size:
        raise SkipFile("too-large")
    if raw.find(b"\0", 0, BINARY_SNIFF) != -1:
        raise SkipFile("binary")
    return raw
