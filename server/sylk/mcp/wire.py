"""The MCP tools' JSON: status, index runs, similar code, a file's symbols, pages, and
how complete the semantic side of a search is. Hits and symbols are the shapes shared
with the CLI (sylk/wire.py)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from .. import wire
from ..engine.indexer import IndexReport
from ..engine.status import SKIPPED_EXAMPLES
from ..ingest.symbols import Symbol
from ..search.results import IndexState
from ..search.symbol_search import SymbolHit
from ..service import WorkspaceService
from ..store.manifest import ChunkRecord


def iso(t: float | None) -> str | None:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(t)) if t else None


def next_offset(offset: int, shown: int, more: bool) -> int | None:
    """A page's ``nextOffset``: where the next page starts, None when there is none."""
    return offset + shown if more and shown else None


def chunk_json(c: ChunkRecord, score: float | None = None, lines: Sequence[str] = ()) -> dict[str, Any]:
    """A chunk (``find_similar_code``): 1-based lines, its symbol, and the first
    ``SNIPPET_LINES`` of ``lines`` (the file's) as its snippet; ``score``: the cosine
    similarity to the code asked about."""
    out: dict[str, Any] = {"path": c.path, "language": c.language, "type": c.type, "kind": c.kind,
                           "symbol": c.symbol, "containerName": c.container,
                           "startLine": c.start_line + 1, "endLine": c.end_line + 1}
    if score is not None:
        out["score"] = round(score, 6)
    out["snippet"] = "\n".join(lines[c.start_line:min(c.end_line + 1, c.start_line + SNIPPET_LINES)])
    return out


SNIPPET_LINES = 3


def file_symbols_json(path: str, language: str | None, symbols: Sequence[Symbol]) -> dict[str, Any]:
    """An indexed file's symbols (the ``sylk://symbols/<path>`` resource), in file order,
    each as ``search_symbol`` shows one."""
    return {"path": path, "language": language,
            "symbols": [wire.symbol_json(SymbolHit(path, s, 0)) for s in symbols]}


def report_json(r: IndexReport) -> dict[str, Any]:
    return {"added": r.added, "changed": r.changed, "deleted": r.deleted, "unchanged": r.unchanged,
            "files": r.files, "symbols": r.symbols, "seconds": round(r.seconds, 3),
            "cancelled": r.cancelled, "summary": r.summary()}


def semantic_json(index: IndexState, state: str, message: str | None) -> dict[str, Any]:
    """How complete the semantic side of a search is, in one object; ``state`` as
    ``WorkspaceService.semantic_state()`` tells it, ``message`` why it is unavailable."""
    chunks, embedded = index.chunks, index.embedded
    out: dict[str, Any] = {"state": state, "embeddedChunks": embedded, "totalChunks": chunks,
                           "complete": state == "ready" and index.pending == 0}
    if index.quick:
        out["quickChunks"] = index.quick
    if state in ("off", "unavailable"):
        out["note"] = "semantic search is unavailable; results are lexical only" + (
            f" ({message})" if message else "")
    elif not out["complete"] and embedded + index.quick >= chunks:
        out["note"] = (f"{embedded} of {chunks} chunks embedded; the other {chunks - embedded} are searched by the "
                       "quick pass's static model (less precise) until embedding, which continues in the "
                       "background, reaches them")
    elif not out["complete"]:
        out["note"] = (f"{embedded} of {chunks} chunks embedded; embedding continues in the background, "
                       "so semantic and hybrid results may miss the rest")
    return out


def status_json(ws: WorkspaceService, state: str, notes: Sequence[str],
                skipped_limit: int | None = SKIPPED_EXAMPLES) -> dict[str, Any]:
    """``get_status``: the service's state (``state``), its index (``skipped_limit``
    skipped files of each reason named; None: all), its runs, and ``notes``."""
    engine = ws.engine
    out: dict[str, Any] = {"root": str(ws.root), "state": state, **wire.trust_json(ws.settings)}
    if engine is None:
        if ws.open_error:
            out["error"] = ws.open_error
        return out
    st = wire.status_json(engine.status(skipped_limit))
    out.update({
        "files": st["files"], "symbols": st["symbols"],
        "chunks": st["chunks"], "embedded": st["embedded"], "pending": st["pending"],
        "embedFailures": st["embedFailures"], "quick": st["quick"],
        "languages": st["languages"],
        "lastIndexed": iso(st["lastIndexed"]),
        "indexDir": st["indexDir"], "indexBytes": st["indexBytes"],
        "readOnly": st["readOnly"],
    })
    if engine.read_only_reason:
        out["readOnlyReason"] = engine.read_only_reason
    out["skipped"] = st["skipped"]
    out["indexing"] = {"active": ws.indexing, "filesDone": ws.index_progress.done,
                       "filesTotal": ws.index_progress.total}
    out["embedding"] = {"active": ws.embedding, "chunksDone": ws.embed_progress.done,
                        "chunksTotal": ws.embed_progress.total, "state": ws.semantic_state(),
                        "model": engine.embedder.model_id if engine.embedder else None}
    if engine.semantic_message:
        out["embedding"]["message"] = engine.semantic_message
    if ws.last_embed:
        out["embedding"]["lastRun"] = {"chunks": ws.last_embed.chunks, "seconds": round(ws.last_embed.seconds, 2),
                                       "at": iso(ws.last_embed.at)}
    if ws.last_report is not None:
        out["lastRun"] = {**report_json(ws.last_report), "at": iso(ws.last_run_at)}
    out["watch"] = {"active": ws.watching, **({"error": ws.watcher.error} if ws.watcher and ws.watcher.error
                                              else {})}
    if notes:
        out["notes"] = list(notes)
    return out


# a status's state over several folders: the first of these any folder is in
STATES = ("opening", "indexing", "embedding", "unavailable", "ready")


def workspace_status_json(per: Sequence[dict[str, Any]], source: str | None, notes: Sequence[str]) -> dict[str, Any]:
    """``get_status`` (and ``sylk://status``) over the folders served (``per``: each one's
    ``status_json``, in order): the first folder's status at the top level (the common
    one-folder case), every folder's under ``folders`` when there are several, where
    they come from (``roots``: the client's or the command line's), and ``notes``."""
    if not per:
        return {"state": "opening", "roots": {"from": source, "folders": []}, **({"notes": list(notes)} if notes
                                                                                 else {})}
    out = dict(per[0])
    if len(per) > 1:
        out["state"] = next(s for s in STATES if any(p["state"] == s for p in per) or s == "ready")
        out["folders"] = list(per)
    out["roots"] = {"from": source, "folders": [p["root"] for p in per]}
    if notes:
        out["notes"] = [*out.get("notes", []), *notes]
    return out
