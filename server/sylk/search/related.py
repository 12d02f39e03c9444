"""Definitions of a name and code related by meaning: what hover and ``sylk/similar`` show.

Related code is computed from stored vectors only (the chunk's own vector is the
query), so it costs a FAISS lookup, never a model call.
"""

from __future__ import annotations

import re
from typing import Protocol

import attrs

from ..store.manifest import ChunkRecord, Manifest
from ..store.vectors import VectorIndex
from ..text.positions import utf16_to_index
from .symbol_search import SymbolHit


class Sources(Protocol):
    """What related code reads (a workspace's stores and symbol table)."""

    manifest: Manifest
    vectors: VectorIndex | None

    def search_symbols(self, query: str, limit: int | None = None) -> list[SymbolHit]: ...

# chunks of the same file this similar to the query chunk are copies of it (overloads,
# generated variants), not news
SAME_FILE_DUPLICATE = 0.92
# neighbours in the same file are the least surprising: at most this many of them
SAME_FILE_MAX = 2
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")


@attrs.frozen
class Related:
    chunk: ChunkRecord
    score: float  # cosine similarity to the query chunk


def identifier_at(line: str, utf16_col: int) -> str | None:
    """The identifier under (or just before) a UTF-16 column of ``line``."""
    col = utf16_to_index(line, utf16_col)
    for m in _IDENT.finditer(line):
        if m.start() <= col <= m.end():
            return m.group(0)
    return None


def definitions(ws: Sources, name: str, limit: int = 5) -> list[SymbolHit]:
    """Definitions named exactly ``name`` (same case first), best first."""
    hits = [h for h in ws.search_symbols(name, limit=max(limit * 4, 20)) if h.symbol.name.lower() == name.lower()]
    hits.sort(key=lambda h: h.symbol.name != name)  # stable: keeps the table's order otherwise
    return hits[:limit]


def chunk_of(ws: Sources, path: str, line: int, symbol: str = "") -> ChunkRecord | None:
    """The chunk of ``path`` that best stands for what is on ``line``: the smallest chunk
    holding the line, preferring one named ``symbol``."""
    records = ws.manifest.chunks_by_id(ws.manifest.chunk_ids([path])).values()
    holding = [c for c in records if c.start_line <= line <= c.end_line]
    if not holding:
        return None
    return min(holding, key=lambda c: (symbol != "" and c.symbol != symbol, c.end_line - c.start_line))


def similar(ws: Sources, chunk: ChunkRecord, limit: int = 5) -> list[Related] | None:
    """Chunks nearest by meaning to ``chunk``, without itself, chunks overlapping it in its
    own file, and near-copies of it in its own file. None when the chunk has no vector
    (semantic search unavailable, or the chunk is not embedded yet)."""
    vectors = ws.vectors
    if vectors is None:
        return None
    try:
        query = vectors.vectors_for([chunk.id])
    except KeyError:
        return None
    found = vectors.search(query[0], limit * 4 + 8)
    records = ws.manifest.chunks_by_id([i for i, _s in found])
    out: list[Related] = []
    same_file = 0
    for cid, score in found:
        rec = records.get(cid)
        if rec is None or cid == chunk.id:
            continue
        if rec.path == chunk.path:
            if score >= SAME_FILE_DUPLICATE or same_file >= SAME_FILE_MAX or (
                    rec.start_line <= chunk.end_line and chunk.start_line <= rec.end_line):
                continue
            same_file += 1
        out.append(Related(rec, score))
        if len(out) >= limit:
            break
    return out


@attrs.frozen
class Similar:
    """The code at a place and the code nearest it by meaning (``sylk/similar``, MCP's
    find_similar_code)."""

    indexed: bool  # the file is indexed
    chunk: ChunkRecord | None  # the chunk standing for the place; None: no indexed code there
    near: list[Related] | None  # None: the chunk has no vector (not embedded yet, semantic search off)
    embedded: int  # chunks of the index embedded, of
    chunks: int


def similar_at(ws: Sources, path: str, line: int, limit: int, symbol: str = "") -> Similar:
    """The chunk of ``path`` at ``line`` (0-based; chunk_of, preferring one named ``symbol``)
    and the ``limit`` chunks nearest it."""
    if not path or not ws.manifest.file_records([path]):
        return Similar(False, None, None, 0, 0)
    chunk = chunk_of(ws, path, line, symbol)
    near = similar(ws, chunk, limit) if chunk is not None else None
    counts = ws.manifest.chunk_counts()
    return Similar(True, chunk, near, counts["embedded"], counts["chunks"])


def qualified(rec: ChunkRecord) -> str:
    """A chunk's name: ``Container.symbol``, else its kind (``header``, ``section``, ``window``)."""
    if rec.symbol:
        return f"{rec.container}.{rec.symbol}" if rec.container else rec.symbol
    return rec.kind
