"""What ``Workspace.status()`` tells about an index, as records; the front ends' wire
modules turn them into JSON (``sylk/status``, ``sylk status --format json``, MCP's
``get_status``)."""

from __future__ import annotations

import attrs


@attrs.frozen
class LanguageCount:
    """The files of one language and the symbols found in them."""

    language: str
    files: int
    symbols: int


@attrs.frozen
class SkippedFile:
    """A file the index run left out, and why (binary, too-large, ...)."""

    path: str
    reason: str


@attrs.frozen
class IndexStatus:
    """One workspace's index: what it holds, how big it is, and how complete the semantic side is."""

    root: str
    index_dir: str
    files: int
    symbols: int
    languages: tuple[LanguageCount, ...]  # most files first
    index_bytes: int
    last_indexed: float | None  # seconds since the epoch; None: never
    skipped: tuple[SkippedFile, ...]
    read_only: bool
    merkle_root: str
    chunks: int
    embedded: int
    pending: int  # chunks not embedded yet
