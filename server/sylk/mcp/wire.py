"""The MCP tools' JSON: search answers, status, index runs, similar code, a file's
symbols, pages, and how complete the semantic side of a search is. Hits and symbols are
the shapes shared with the CLI (sylk/wire.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from .. import wire
from ..engine.indexer import IndexReport
from ..over_folders import Answered
from ..search.merge import MergedLines, MergedResult
from ..search.query import SearchRequest
from ..ingest.symbols import Symbol
from ..search.results import IndexState
from ..search.symbol_search import SymbolHit
from ..status import FolderStatus, Rollup
from ..store.manifest import ChunkRecord


def iso(t: float | None) -> str | None:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(t)) if t else None


def next_offset(offset: int, shown: int, more: bool) -> int | None:
    """A page's ``nextOffset``: where the next page starts, None when there is none."""
    return offset + shown if more and shown else None


Tag = Callable[[Any, dict[str, Any]], dict[str, Any]]  # a hit's JSON with its folder's root (Folders.tagged)


def search_answer_json(answered: Answered[MergedResult], req: SearchRequest, tag: Tag, *,
                       facets: bool) -> dict[str, Any]:
    """search_code's answer to ``req`` (as answered: over_folders.prepared): the page's hits
    (each tagged with its folder), the counts and pages, how complete the semantic side
    is, and what the agent options asked for; the facets if ``facets`` asked for them."""
    result = answered.merged.result
    out = wire.result_json(result, [tag(f, wire.hit_json(h))
                                    for h, f in zip(result.hits, answered.folder_of_hits(), strict=True)])
    if not facets:  # (asked for by the follow-ups only)
        out.pop("facets")
    out.pop("tookMs")
    out.pop("index")
    out["offset"] = req.offset
    out["nextOffset"] = next_offset(req.offset, len(result.hits), req.offset + len(result.hits) < result.total_hits)
    if req.mode != "lexical":
        state, message = answered.semantic_state()
        out["semantic"] = semantic_json(result.index, state, message)
    out["index"] = {"files": result.index.files, "chunks": result.index.chunks}
    out.update(wire.agent_json(req, result, semantic_ready=answered.semantic_ready))
    if req.related_files:
        out["relatedFiles"] = [tag(f, wire.related_file_json(r)) for f, r in answered.related]
    return out


def line_answer_json(answered: Answered[MergedLines], offset: int, tag: Tag) -> dict[str, Any]:
    """grep's answer: the page's lines (each tagged with its folder), the counts and pages."""
    result = answered.merged.result
    out = wire.line_result_json(result, [tag(f, wire.line_hit_json(h))
                                         for h, f in zip(result.hits, answered.folder_of_hits(), strict=True)])
    out.pop("index")
    out.pop("tookMs")
    out["nextOffset"] = next_offset(offset, len(result.hits), offset + len(result.hits) < result.total_hits)
    return out


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


def status_json(st: FolderStatus, notes: Sequence[str]) -> dict[str, Any]:
    """``get_status`` of one folder: its phase (``state``), its index (the skipped files
    status.folder_status named), its runs, and ``notes``."""
    out: dict[str, Any] = {"root": str(st.root), "state": st.phase, **wire.trust_json(st.trusted)}
    if st.index is None or st.semantic is None:
        if st.open_error:
            out["error"] = st.open_error
        return out
    ix = wire.status_json(st.index)
    out.update({k: ix[k] for k in ("files", "symbols", "chunks", "embedded", "pending", "embedFailures", "quick",
                                   "languages")})
    out.update({"lastIndexed": iso(ix["lastIndexed"]), "indexDir": ix["indexDir"], "indexBytes": ix["indexBytes"],
                "readOnly": ix["readOnly"]})
    if st.read_only_reason:
        out["readOnlyReason"] = st.read_only_reason
    out["skipped"] = ix["skipped"]
    out["indexing"] = {"active": st.indexing, "filesDone": st.index_progress.done,
                       "filesTotal": st.index_progress.total}
    out["embedding"] = {"active": st.embedding, "chunksDone": st.embed_progress.done,
                        "chunksTotal": st.embed_progress.total, "state": st.semantic.state,
                        "model": st.semantic.model}
    if st.semantic.message:
        out["embedding"]["message"] = st.semantic.message
    if st.last_embed:
        out["embedding"]["lastRun"] = {"chunks": st.last_embed.chunks, "seconds": round(st.last_embed.seconds, 2),
                                       "at": iso(st.last_embed.at)}
    if st.last_report is not None:
        out["lastRun"] = {**report_json(st.last_report), "at": iso(st.last_run_at)}
    out["watch"] = {"active": st.watch.active, **({"error": st.watch.error} if st.watch.error else {})}
    if notes:
        out["notes"] = list(notes)
    return out


def workspace_status_json(r: Rollup, notes_of: Sequence[Sequence[str]], source: str | None,
                          notes: Sequence[str]) -> dict[str, Any]:
    """``get_status`` (and ``sylk://status``) over the folders served (``notes_of``: each
    one's notes, in order): the first folder's status at the top level (the common
    one-folder case), every folder's under ``folders`` when there are several, where
    they come from (``roots``: the client's or the command line's), and ``notes``."""
    per = [status_json(f, n) for f, n in zip(r.folders, notes_of, strict=True)]
    if not per:
        return {"state": "opening", "roots": {"from": source, "folders": []}, **({"notes": list(notes)} if notes
                                                                                 else {})}
    out = dict(per[0])
    if len(per) > 1:
        out["state"] = r.phase
        out["folders"] = list(per)
    out["roots"] = {"from": source, "folders": [p["root"] for p in per]}
    if notes:
        out["notes"] = [*out.get("notes", []), *notes]
    return out
