"""Hits on files that changed since they were indexed (no watcher, ``--no-refresh``, a
change the watcher has not applied yet): where the chunk is now, or that it cannot be
found, so that a hit never points at the wrong lines.

Cheap by design: only the files of the returned page are looked at, one stat() each,
compared with the size and mtime the manifest recorded. A file that differs is read
and chunked again (the indexer's own parse, in this thread); each hit's chunk is then
the chunk of the same kind, name and container nearest its old first line (the same
text when there is one), or for a chunk without a name (file header, top-level code,
window) the chunk with the same text. When none fits, or the file is gone, the hit is
stale: the caller says so rather than guess. The chunks of a changed file are kept
for the next searches while its (size, mtime) hold (a server with ``watch`` off).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import attrs

from ..ingest import scan
from ..ingest.parsing import ChunkRow, parse_file
from ..model import is_virtual
from ..store.manifest import ChunkRecord, Manifest


@attrs.frozen
class Located:
    """Where a chunk of a changed file is now (0-based lines); ``stale`` when it cannot be
    found (its lines are then the indexed ones, which may no longer hold it)."""

    start_line: int
    end_line: int
    stale: bool = False


class Relocator:
    """Finds the chunks of changed files again; ``max_size`` and ``languages`` as the
    indexer reads files (settings.max_file_size, settings.languages)."""

    def __init__(self, root: Path, manifest: Manifest, max_size: int, languages: Sequence[str] = ()) -> None:
        self.root = root
        self.manifest = manifest
        self.max_size = max_size
        self.languages = frozenset(languages)

    def locate(self, records: Sequence[ChunkRecord]) -> dict[int, Located]:
        """The chunk ids among ``records`` whose file changed since it was indexed, with
        where each chunk is now; chunks of unchanged files (and virtual documents) are
        left out."""
        by_path: dict[str, list[ChunkRecord]] = {}
        for rec in records:
            if not is_virtual(rec.path):
                by_path.setdefault(rec.path, []).append(rec)
        if not by_path:
            return {}
        indexed = self.manifest.file_records(by_path)
        out: dict[int, Located] = {}
        for path, chunks in by_path.items():
            known = indexed.get(path)
            try:
                st = os.stat(self.root / path)
            except OSError:  # deleted or unreadable since
                out.update((c.id, _stale(c)) for c in chunks)
                continue
            if known is None or (st.st_size, st.st_mtime_ns) == (known.size, known.mtime_ns):
                continue
            rows = self._chunks_now(scan.FileEntry(path, st.st_size, st.st_mtime_ns), known.hash)
            if rows is None:  # touched, same bytes
                continue
            out.update((c.id, _find(c, rows)) for c in chunks)
        return out

    def _chunks_now(self, entry: scan.FileEntry, indexed_hash: str) -> tuple[ChunkRow, ...] | None:
        """The chunks of a file as it is on disk (none when it cannot be read as text now);
        None when its bytes are still the indexed ones."""
        key = _Key(str(self.root), entry, indexed_hash, self.max_size, self.languages)
        with _PARSED_LOCK:
            if key in _PARSED:
                _PARSED.move_to_end(key)
                return _PARSED[key]
        parsed = parse_file(str(self.root), entry, indexed_hash, self.max_size, self.languages)
        rows = None if parsed.unchanged else () if parsed.skip else parsed.chunks
        with _PARSED_LOCK:
            _PARSED[key] = rows
            while len(_PARSED) > _PARSED_MAX:
                _PARSED.popitem(last=False)
        return rows


@attrs.frozen
class _Key:
    root: str
    entry: scan.FileEntry  # path, size and mtime now
    indexed_hash: str
    max_size: int
    languages: frozenset[str]


# a file as it is now -> its chunks (None: the same bytes as indexed)
_PARSED: OrderedDict[_Key, tuple[ChunkRow, ...] | None] = OrderedDict()
_PARSED_MAX = 64
_PARSED_LOCK = threading.Lock()


def _stale(rec: ChunkRecord) -> Located:
    return Located(rec.start_line, rec.end_line, stale=True)


def _find(rec: ChunkRecord, rows: Sequence[ChunkRow]) -> Located:
    """Where ``rec`` is among the current chunks ``rows`` of its file."""
    named = [r for r in rows if (r.kind, r.symbol, r.container) == (rec.kind, rec.symbol, rec.container)]
    same_text = [r for r in named if r.text_hash == rec.text_hash] or \
        [r for r in rows if r.text_hash == rec.text_hash]
    pool = same_text or (named if rec.symbol else [])
    if not pool:
        return _stale(rec)
    best = min(pool, key=lambda r: abs(r.start_line - rec.start_line))
    return Located(best.start_line, best.end_line)
