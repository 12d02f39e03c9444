"""The ``sylk/search`` request (and ``workspace/executeCommand sylk.search``)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from pygls.exceptions import JsonRpcInvalidParams

from ..engine import documents
from ..model import doc_id, is_virtual
from ..search import agent
from ..search.hybrid import SearchResult
from ..search.query import QueryError, SearchRequest, Weights, request_from_params
from ..search.roles import roles_of
from . import convert
from .handlers import command, feature

if TYPE_CHECKING:
    from ..engine.workspace import Workspace
    from .folders import Folder
    from .server import SylkServer

SEARCH = "sylk/search"
CMD_SEARCH = "sylk.search"


def result_to_wire(root: Path, result: SearchResult,
                   document: Callable[[str], dict[str, Any] | None] | None = None) -> dict[str, Any]:
    """A SearchResult of the folder ``root`` as the camelCase JSON the protocol describes;
    ``document`` tells a virtual document's id, type, title, tags and metadata."""
    hits = []
    for h in result.hits:
        if h.type == "git_commit":
            hits.append(_commit_to_wire(root, h))
            continue
        virtual = is_virtual(h.path)
        hits.append({
            "uri": None if virtual else convert.path_to_uri(root, h.path),
            "path": h.path,
            "range": {"start": {"line": h.start_line, "character": 0},
                      "end": {"line": h.end_line + 1, "character": 0}},
            "language": h.language,
            "type": h.type,
            "kind": h.kind,
            "symbol": h.symbol,
            "containerName": h.container,
            "roles": list(roles_of(h.kind, h.symbol, h.container, h.path)),
            "author": h.author or None,
            "modified": h.modified or None,
            "tags": list(h.tags),
            "score": h.score,
            "lexicalRank": h.lexical_rank,
            "semanticRank": h.semantic_rank,
            "snippet": h.snippet,
            "snippetRange": {"start": {"line": h.snippet_line, "character": 0},
                             "end": {"line": h.snippet_line + h.snippet.count("\n") + 1, "character": 0}},
            "highlights": [{"start": {"line": ln, "character": a}, "end": {"line": ln, "character": b}}
                           for ln, a, b in h.highlights],
        })
        if virtual:
            id_ = doc_id(h.path)
            hits[-1]["document"] = (document(id_) if document else None) or {"id": id_}
    out: dict[str, Any] = {
        "query": result.query, "mode": result.mode, "tookMs": result.took_ms, "totalHits": result.total_hits,
        "hits": hits,
        "facets": {k: [{"value": v, "count": c} for v, c in vs] for k, vs in result.facets.items()},
        "index": result.index,
    }
    if result.message:
        out["message"] = result.message
    return out


def _documents(engine: Workspace) -> Callable[[str], dict[str, Any] | None]:
    def info(id_: str) -> dict[str, Any] | None:
        doc = documents.get(engine, id_)
        return doc.summary() if doc else None
    return info


def _commit_to_wire(root: Path, h: Any) -> dict[str, Any]:
    """A ``git_commit`` hit: no range of its own; ``uri`` is its first file's."""
    return {"uri": convert.path_to_uri(root, h.path) if h.path else None, "path": h.path or None,
            "range": None, "language": None, "type": "git_commit", "kind": "commit", "symbol": h.symbol[:12],
            "containerName": h.container, "roles": [], "author": h.author, "modified": h.modified,
            "score": h.score, "lexicalRank": h.lexical_rank, "semanticRank": None, "snippet": h.snippet,
            "snippetRange": None, "highlights": [], "commit": {"sha": h.symbol, "files": list(h.files)}}


def merge_wire(parts: list[dict[str, Any]], offset: int, limit: int) -> dict[str, Any]:
    """The results of several folders as one: hits by score, counts and facets summed."""
    hits = sorted((h for p in parts for h in p["hits"]), key=lambda h: -h["score"])
    facets: dict[str, Counter] = {}
    for p in parts:
        for name, values in p["facets"].items():
            c = facets.setdefault(name, Counter())
            for v in values:
                c[v["value"]] += v["count"]
    index: dict[str, Any] = {}
    for p in parts:
        for k, v in p["index"].items():
            index[k] = (index.get(k, True) and v) if isinstance(v, bool) else index.get(k, 0) + v
    out = {"query": parts[0]["query"], "mode": parts[0]["mode"], "tookMs": max(p["tookMs"] for p in parts),
           "totalHits": sum(p["totalHits"] for p in parts), "hits": hits[offset:offset + limit],
           "facets": {k: [{"value": v, "count": n} for v, n in c.most_common()] for k, c in facets.items()},
           "index": index}
    messages = sorted({p["message"] for p in parts if p.get("message")})
    if messages:
        out["message"] = "; ".join(messages)
    return out


def add_agent_fields(out: dict[str, Any], req: SearchRequest, semantic_ready: bool) -> None:
    """The agent options of a request (expand, groupBy, followUps, summary) on a wire result."""
    if req.expand:
        out["expandedTerms"] = list(req.extra_terms)
    if req.group_by:
        out["groups"] = agent.group(out["hits"], req.group_by)
    if req.follow_ups:
        out["followUps"] = agent.follow_ups(out["query"], req.mode, out["facets"], out["totalHits"],
                                            semantic_ready, req.expand)
    if req.summary:
        out["summary"] = agent.summary(out["hits"], out["totalHits"])


def related_files_of(engines: list[tuple[Folder, Workspace]], hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The files the hits' files import, per folder (a hit's folder is told by its URI)."""
    out: list[dict[str, Any]] = []
    for folder, engine in engines:
        prefix = convert.path_to_uri(folder.root, "").rstrip("/") + "/"
        mine = [h for h in hits if h["uri"].startswith(prefix)]
        if not mine:
            continue

        def read(path: str, root: Path = folder.root) -> str | None:
            try:
                return (root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                return None
        found = agent.related_files(mine, read, engine.manifest.files())
        if len(engines) > 1:
            for f in found:
                if f["path"] is not None:
                    f["uri"] = convert.path_to_uri(folder.root, f["path"])
        out.extend(found)
    return out


def setup(server: SylkServer) -> None:
    async def run(ls: SylkServer, params: Any) -> dict[str, Any]:
        raw = params if isinstance(params, dict) else _to_dict(params)
        s = ls.settings
        try:
            req = request_from_params(raw, default_mode=s.search.mode, default_limit=s.search.limit,
                                      rrf_k=s.search.rrf_k,
                                      default_weights=Weights(s.search.weights.lexical, s.search.weights.semantic))
        except QueryError as exc:
            raise JsonRpcInvalidParams(str(exc)) from exc
        engines = ls.engines()
        if not engines:
            return {"query": raw.get("query", ""), "mode": req.mode, "tookMs": 0, "totalHits": 0, "hits": [],
                    "facets": {}, "index": {"files": 0, "chunks": 0, "embedded": 0, "pending": 0, "ready": False},
                    "message": "the index is still opening"}
        loop = asyncio.get_running_loop()
        if req.follow_ups and not req.facets:  # refinements are read from the facets
            req = attrs.evolve(req, facets=True)
        if len(engines) == 1:
            folder, engine = engines[0]
            out = result_to_wire(folder.root, await loop.run_in_executor(ls.thread_pool, engine.search, req),
                                 _documents(engine))
        else:
            # several folders: each one's first offset+limit hits, merged by score, then the page
            each = attrs.evolve(req, offset=0, limit=req.offset + req.limit)
            results = await asyncio.gather(*(loop.run_in_executor(ls.thread_pool, engine.search, each)
                                             for _f, engine in engines))
            out = merge_wire([result_to_wire(f.root, r, _documents(e)) for (f, e), r in zip(engines, results)],
                             req.offset, req.limit)
        if req.related_files:
            out["relatedFiles"] = await loop.run_in_executor(ls.thread_pool, related_files_of, engines, out["hits"])
        add_agent_fields(out, req, semantic_ready=any(e.semantic_ready for _f, e in engines))
        return out

    # pygls resolves the annotations of custom handlers at run time: keep them to builtins
    @feature(server, "search", SEARCH)
    async def sylk_search(ls: Any, params: Any) -> Any:
        return await run(ls, params)

    @command(server, "search", CMD_SEARCH)
    async def cmd_search(ls: Any, *args: Any) -> Any:
        params = args[0] if len(args) == 1 else (args[0][0] if args and isinstance(args[0], list) and args[0] else {})
        return await run(ls, params)


def _to_dict(params: Any) -> Any:
    """pygls hands custom-request params over as a namespace object; turn it back into plain data."""
    if isinstance(params, (str, int, float, bool)) or params is None:
        return params
    if hasattr(params, "_asdict"):  # a namedtuple: before the tuple case
        return {k: _to_dict(v) for k, v in params._asdict().items()}
    if isinstance(params, (list, tuple)):
        return [_to_dict(p) for p in params]
    if isinstance(params, dict):
        return {k: _to_dict(v) for k, v in params.items()}
    if hasattr(params, "__dict__"):
        return {k: _to_dict(v) for k, v in vars(params).items()}
    return params
