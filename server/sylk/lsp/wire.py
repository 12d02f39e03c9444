"""The language server's JSON for ``sylk/search``: hits with URIs and LSP ranges (0-based
lines, UTF-16 columns); the envelope, the ``index`` block and the agent options' records
are the shared ones (sylk/wire.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import wire as shared
from ..model import doc_id, is_virtual
from ..search.agent import RelatedFile
from ..engine import documents
from ..engine.workspace import Workspace
from ..search.grep import GrepResult, LineHit
from ..search.query import GrepRequest, SearchRequest
from ..search.results import Commit, Hit, IndexState, SearchResult
from ..search.roles import roles_of
from ..status import FolderStatus, Rollup, Watch
from . import convert, uris

_NONE = IndexState(0, 0, 0, 0, False)  # no index answered
# a virtual document's id -> its id, type, title, tags and metadata (None: not found)
DocumentInfo = Callable[[str], dict[str, Any] | None]


def documents_of(engine: Workspace | None) -> DocumentInfo:
    """The virtual documents of ``engine``, for the hits in them."""
    def info(id_: str) -> dict[str, Any] | None:
        doc = documents.get(engine, id_) if engine is not None else None
        return doc.summary() if doc else None
    return info


def no_answer_to_wire(req: SearchRequest | GrepRequest, query: str, message: str) -> dict[str, Any]:
    """The answer of a search no folder could answer (``message`` says why); ``query``: as
    the params gave it."""
    if isinstance(req, GrepRequest):
        return shared.line_result_json(GrepResult(req.pattern, req.mode, 0, 0, [], _NONE, message=message))
    return shared.result_json(SearchResult(query, req.mode, 0, 0, [], {}, _NONE, message))


def _range(first: int, end: int) -> dict[str, Any]:
    return convert.range_json(first, 0, end, 0)


def hit_to_wire(root: Path, h: Hit, document: DocumentInfo | None = None) -> dict[str, Any]:
    """A hit of the folder ``root`` as the protocol describes it."""
    if h.commit is not None:
        return _commit_to_wire(h, h.commit)
    virtual = is_virtual(h.path)
    out = {
        "uri": uris.path_uri(root, h.path),
        "path": h.path,
        "range": _range(h.start_line, h.end_line + 1),
        "language": h.language,
        "type": h.type,
        "kind": h.kind,
        "symbol": h.symbol,
        "containerName": h.container,
        "package": h.package or None,
        "exported": h.exported,
        "roles": list(roles_of(h.kind, h.symbol, h.container, h.path)),
        "author": h.author or None,
        "modified": h.modified or None,
        "tags": list(h.tags),
        "score": h.score,
        "lexicalRank": h.lexical_rank,
        "semanticRank": h.semantic_rank,
        "snippet": h.snippet,
        "snippetRange": _range(h.snippet_line, h.snippet_line + h.snippet.count("\n") + 1),
        "highlights": [convert.range_json(ln, a, ln, b) for ln, a, b in h.highlights],
        "stale": h.stale,
    }
    if h.explained:
        out["explain"] = shared.explain_json(h)
    if virtual:
        id_ = doc_id(h.path)
        out["document"] = (document(id_) if document else None) or {"id": id_}
    return out


def line_hit_to_wire(root: Path, h: LineHit) -> dict[str, Any]:
    """A matching line of the folder ``root`` (``LineHit`` in the protocol): its first
    match as ``range`` (an empty range at column 0 when it has only empty matches)."""
    ln = h.line
    matches = [convert.range_json(ln, a, ln, b) for a, b in h.matches]
    return {"uri": uris.path_uri(root, h.path), "path": h.path, "language": h.language, "type": h.type,
            "line": ln, "range": matches[0] if matches else convert.range_json(ln, 0, ln, 0), "matches": matches,
            "text": h.text, "symbol": h.symbol, "containerName": h.container, "kind": h.kind or None}


def _commit_to_wire(h: Hit, commit: Commit) -> dict[str, Any]:
    """A ``git_commit`` hit: no range of its own; ``uri`` is the commit's (sylk://commit/<sha>,
    which opens its message and files, whether or not it touched a file that still exists);
    ``path`` is its first file's; the short sha as ``symbol`` and the author as
    ``containerName``, for pickers that show those."""
    return {"uri": uris.commit_uri(commit.sha), "path": h.path or None,
            "range": None, "language": None, "type": "git_commit", "kind": "commit", "symbol": commit.sha[:12],
            "containerName": h.author, "roles": [], "author": h.author, "modified": h.modified,
            "score": h.score, "lexicalRank": h.lexical_rank, "semanticRank": None, "snippet": h.snippet,
            "snippetRange": None, "highlights": [], "exported": False, "stale": False,
            "commit": {"sha": commit.sha, "files": list(commit.files)}}


def related_file_to_wire(f: RelatedFile, root: Path | None = None) -> dict[str, Any]:
    """``root``: say the file's URI too (several folders: the path alone is ambiguous)."""
    out = shared.related_file_json(f)
    if root is not None and f.path is not None:
        out["uri"] = convert.path_to_uri(root, f.path)
    return out


def status_to_wire(st: FolderStatus) -> dict[str, Any]:
    """One folder's ``sylk/status``: its state, watcher, trust, index and semantic side, and
    the last run's summary (or why the index could not be opened)."""
    out: dict[str, Any] = {"root": str(st.root), "ready": st.ready, "indexing": st.indexing,
                           "embedding": st.embedding, "watch": _watch(st.watch), **shared.trust_json(st.trusted)}
    if st.index is not None and st.semantic is not None:
        out.update(shared.status_json(st.index))
        out["semantic"] = {"ready": st.semantic.ready, "state": st.semantic.state, "model": st.semantic.model,
                           "message": st.semantic.message}
    if st.last_report is not None:
        out["lastRun"] = st.last_report.summary()
    elif st.index is None and st.open_error:  # the index could not be opened (a folder not Sylk's, ...)
        out["lastRun"] = f"not indexed: {st.open_error}"
    return out


def workspace_status_to_wire(r: Rollup) -> dict[str, Any]:
    """``sylk/status``: the first folder's at the top level (the common one-folder case),
    every folder's under ``folders``; ready, indexing, embedding, trust and the watch
    counters over them all."""
    per = [status_to_wire(f) for f in r.folders]
    out = dict(per[0]) if per else {}
    out.update({"ready": r.ready, "indexing": r.indexing, "embedding": r.embedding, "watch": _watch(r.watch),
                "folders": per})
    if not r.trusted:  # one untrusted folder: the status says so at the top
        out.update(shared.trust_json(False))
    return out


def _watch(w: Watch) -> dict[str, Any]:
    return {"active": w.active, "error": w.error, "pendingChanges": w.pending, "changesApplied": w.applied}
