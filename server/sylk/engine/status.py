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


# How many skipped files of each reason a status names unless asked for every one: a tree
# of thousands of binaries must not make every status answer list them all.
SKIPPED_EXAMPLES = 20


@attrs.frozen
class SkippedReason:
    """The files the index run left out for one reason (binary, too-large, ...)."""

    reason: str
    count: int
    files: tuple[str, ...]  # in path order: the first SKIPPED_EXAMPLES, or all when asked


@attrs.frozen
class SkippedFiles:
    """What the index run left out: how many files, per reason (most first), with examples."""

    total: int
    by_reason: tuple[SkippedReason, ...]
    complete: bool  # every skipped file is listed in by_reason's files


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
    skipped: SkippedFiles
    read_only: bool
    merkle_root: str
    chunks: int
    embedded: int
    pending: int  # chunks not embedded yet
    embed_failures: int = 0  # chunks the model failed on (left out of semantic search; engine.embedding)
    quick: int = 0  # chunks not embedded yet that have a quick-pass vector (0 while the models are not loaded)
