"""What ``Workspace.status()`` tells about an index, as records read from its stores
(``read_status``); the front ends' wire modules turn them into JSON (``sylk/status``,
``sylk status --format json``, MCP's ``get_status``)."""

from __future__ import annotations

import time
from pathlib import Path

import attrs

from ..store.stores import Stores

INDEX_SIZE_TTL_S = 5.0  # clients poll the status: the index folder is walked at most this often


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


class FolderSize:
    """The bytes of a folder, walked at most every INDEX_SIZE_TTL_S."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._cached: tuple[float, int] | None = None  # (when, bytes)

    def __call__(self) -> int:
        now = time.monotonic()
        if self._cached is None or now - self._cached[0] > INDEX_SIZE_TTL_S:
            total = 0
            for p in self.folder.rglob("*"):
                try:
                    if p.is_file():
                        total += p.stat().st_size
                except OSError:  # a file replaced while walking (a commit, a save)
                    continue
            self._cached = (now, total)
        return self._cached[1]


def skipped_files(stores: Stores, limit: int | None = SKIPPED_EXAMPLES) -> SkippedFiles:
    """The files the index left out: counts per reason, and the first ``limit`` files of
    each reason (every one when ``limit`` is None)."""
    counts = stores.manifest.skipped_counts()
    paths = stores.manifest.skipped_paths(limit)
    by_reason = tuple(SkippedReason(reason, n, tuple(paths.get(reason, ()))) for reason, n in counts.items())
    return SkippedFiles(total=sum(counts.values()), by_reason=by_reason,
                        complete=all(r.count == len(r.files) for r in by_reason))


def read_status(stores: Stores, size: FolderSize, skipped_limit: int | None = SKIPPED_EXAMPLES) -> IndexStatus:
    """The index's counts; ``skipped_limit``: how many skipped files of each reason to name
    (None: all)."""
    manifest, writable = stores.manifest, stores.writable
    counts = manifest.counts()
    last = manifest.get_meta("last_indexed")
    chunks = manifest.chunk_counts()
    return IndexStatus(
        root=str(stores.root), index_dir=str(stores.index_dir), files=counts["files"], symbols=counts["symbols"],
        languages=tuple(LanguageCount(lang, f, s or 0) for lang, f, s in manifest.languages()),
        index_bytes=size(), last_indexed=float(last) if last else None,
        skipped=skipped_files(stores, skipped_limit), read_only=not writable,
        merkle_root=manifest.merkle_root(store=writable),
        chunks=chunks["chunks"], embedded=chunks["embedded"], pending=chunks["pending"],
        embed_failures=chunks["failed"], quick=len(stores.quick) if stores.quick is not None else 0)
