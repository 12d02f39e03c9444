"""The text of a document the editor asks about: the open buffer's (unsaved edits
included), else the file's on disk."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pygls.uris import to_fs_path

if TYPE_CHECKING:
    from .server import SylkServer


def text_of(ls: SylkServer, uri: str) -> str | None:
    """The whole text of ``uri``; None when it is neither open nor a readable file."""
    doc = ls.workspace.text_documents.get(uri)
    if doc is not None:
        return doc.source
    fs = to_fs_path(uri)
    if fs is None:
        return None
    try:
        return Path(fs).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def line_of(ls: SylkServer, uri: str, line: int) -> str | None:
    """Line ``line`` (0-based) of ``uri`` without its end; None past the end."""
    doc = ls.workspace.text_documents.get(uri)
    if doc is not None:
        lines = doc.lines
        return lines[line].rstrip("\r\n") if line < len(lines) else None
    text = text_of(ls, uri)
    if text is None:
        return None
    lines = text.split("\n")
    return lines[line].rstrip("\r") if line < len(lines) else None
