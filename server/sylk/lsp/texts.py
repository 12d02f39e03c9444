"""The text of a document the editor asks about: the open buffer's (unsaved edits
included), else the file's on disk (``file_lines``: read once while it is unchanged)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pygls.uris import to_fs_path

from ..search.file_lines import file_lines

if TYPE_CHECKING:
    from .server import SylkServer


def _disk_lines(uri: str) -> list[str] | None:
    fs = to_fs_path(uri)
    return file_lines(Path(fs)) if fs is not None else None


def text_of(ls: SylkServer, uri: str) -> str | None:
    """The whole text of ``uri``; None when it is neither open nor a readable file."""
    doc = ls.workspace.text_documents.get(uri)
    if doc is not None:
        return doc.source
    lines = _disk_lines(uri)
    return "\n".join(lines) if lines is not None else None


def line_of(ls: SylkServer, uri: str, line: int) -> str | None:
    """Line ``line`` (0-based) of ``uri`` without its end; None past the end."""
    doc = ls.workspace.text_documents.get(uri)
    lines = doc.lines if doc is not None else _disk_lines(uri)
    if lines is None or line >= len(lines):
        return None
    return lines[line].rstrip("\r\n")
