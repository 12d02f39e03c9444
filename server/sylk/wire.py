"""The JSON every front end shares, made from the core's records: camelCase keys, the
shapes ``sylk/search``, ``sylk/status``, ``sylk ... --format json`` and the MCP tools
answer with. The core returns records and never builds these.

One module in the front-end tier, below ``lsp/``, ``mcp/`` and ``cli/``: the language
server and the CLI show the same index status, and the CLI's JSON and MCP's tools the
same hits and symbols, so each shape is written here once. What only one front end
shows lives in its own wire module (``lsp/wire.py``: URIs and ranges; ``mcp/wire.py``;
``cli/render.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .config import camel
from .settings_sources import UNTRUSTED
from .engine.status import SKIPPED_EXAMPLES, IndexStatus
from .search import agent
from .search.agent import FollowUp, Group, RelatedFile, Summary
from .search.calls import Caller
from .search.grep import GrepResult, LineHit
from .search.query import SearchRequest
from .search.references import Shown
from .search.results import Hit, IndexState, SearchResult
from .search.roles import roles_of
from .search.symbol_search import SymbolHit


def camel_dict(record: Any) -> dict[str, Any]:
    """A record's fields as JSON, in their order, names camelCase; nested records become
    objects, and tuples lists."""
    return {camel(f.name): _plain(getattr(record, f.name)) for f in attrs.fields(type(record))}


def _plain(value: Any) -> Any:
    if attrs.has(type(value)):
        return camel_dict(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def index_json(state: IndexState) -> dict[str, Any]:
    """The ``index`` block of a search result."""
    return camel_dict(state)


def facets_json(facets: Mapping[str, Sequence[tuple[str, int]]]) -> dict[str, list[dict[str, Any]]]:
    return {name: [{"value": v, "count": c} for v, c in values] for name, values in facets.items()}


def result_json(result: SearchResult, hits: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A SearchResult as JSON; its hits as ``hit_json`` makes them unless ``hits`` are
    given (the language server's, with URIs and ranges)."""
    out: dict[str, Any] = {
        "query": result.query, "mode": result.mode, "tookMs": result.took_ms, "totalHits": result.total_hits,
        "hits": [hit_json(h) for h in result.hits] if hits is None else hits,
        "facets": facets_json(result.facets),
        "index": index_json(result.index),
    }
    if result.notes:
        out["message"] = result.notes
    if result.explanation is not None:
        out["explain"] = camel_dict(result.explanation)
    return out


def line_result_json(result: GrepResult, hits: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An exact or regex search's result as JSON; its hits as ``line_hit_json`` makes them
    unless ``hits`` are given (the language server's, with URIs and ranges)."""
    out: dict[str, Any] = {
        "query": result.query, "mode": result.mode, "tookMs": result.took_ms, "totalHits": result.total_hits,
        "totalHitsLowerBound": result.lower_bound, "scanned": result.scanned, "partial": result.partial,
        "filesSearched": result.files_searched,
        "hits": [line_hit_json(h) for h in result.hits] if hits is None else hits,
        "index": index_json(result.index),
    }
    if result.message:
        out["message"] = result.message
    return out


def line_hit_json(h: LineHit) -> dict[str, Any]:
    """A matching line for people and agents (``sylk grep --json``, the MCP ``grep``
    tool): 1-based line and UTF-16 columns (``matches``: [start, end) of each match)."""
    return {"path": h.path, "language": h.language, "line": h.line + 1, "text": h.text,
            "matches": [{"start": a + 1, "end": b + 1} for a, b in h.matches],
            "symbol": h.symbol, "containerName": h.container, "kind": h.kind or None}


def explain_json(h: Hit) -> dict[str, Any]:
    """A hit's ``explain`` block: each side's rank and raw score, and the fused score."""
    return {"lexicalRank": h.lexical_rank, "lexicalScore": h.lexical_score, "semanticRank": h.semantic_rank,
            "semanticScore": h.semantic_score, "fusedScore": h.score}


def hit_json(h: Hit) -> dict[str, Any]:
    """A hit for people and agents (``sylk search --format json``, the MCP ``search_code``
    tool): 1-based lines (the LSP form, with ranges, is lsp/wire.py's). ``stale: true``
    only on a hit whose file changed since it was indexed and whose chunk was not found
    in it again (its lines may be wrong, and it has no snippet)."""
    commit = h.commit  # a commit message's: its sha as the symbol, its author as the container
    return {
        "path": h.path, "language": h.language, "type": h.type, "kind": h.kind,
        "symbol": commit.sha if commit else h.symbol, "containerName": h.author if commit else h.container,
        "package": h.package or None, "exported": h.exported,
        "roles": list(roles_of(h.kind, h.symbol, h.container, h.path)),
        "startLine": h.start_line + 1, "endLine": h.end_line + 1,
        "score": h.score, "lexicalRank": h.lexical_rank, "semanticRank": h.semantic_rank,
        "snippet": h.snippet, "snippetLine": h.snippet_line + 1,
        **({"author": h.author, "modified": h.modified} if h.author else {}),
        **({"tags": list(h.tags)} if h.tags else {}),
        **({"files": list(commit.files)} if commit else {}),
        **({"explain": explain_json(h)} if h.explained else {}),
        **({"stale": True} if h.stale else {}),
    }


def group_json(g: Group) -> dict[str, Any]:
    return {"value": g.value, "count": g.count, "hits": list(g.hits)}


def follow_up_json(f: FollowUp) -> dict[str, str]:
    return {"query": f.query, "options": f.options, "reason": f.reason}


def summary_json(s: Summary) -> dict[str, Any]:
    return {"totalHits": s.total_hits, "returned": s.returned, "files": s.files,
            "topFiles": [{"path": p, "hits": n} for p, n in s.top_files.items()],
            "languages": dict(s.languages), "kinds": dict(s.kinds)}


def related_file_json(f: RelatedFile) -> dict[str, Any]:
    """A file the hits' files import (``relatedFiles``): a workspace path, or None for a library."""
    return {"path": f.path, "module": f.module, "importedBy": list(f.imported_by)}


def agent_json(req: SearchRequest, result: SearchResult, semantic_ready: bool) -> dict[str, Any]:
    """The result fields of a request's agent options (``sylk/search`` and the MCP
    ``search_code``): expandedTerms, groups (indexes into ``result.hits``), followUps
    (read from the facets) and summary; ``relatedFiles`` reads files, so the front ends
    add it."""
    out: dict[str, Any] = {}
    if req.expand:
        out["expandedTerms"] = list(req.extra_terms)
    if req.group_by:
        out["groups"] = [group_json(g) for g in agent.group(result.hits, req.group_by)]
    if req.follow_ups:
        out["followUps"] = [follow_up_json(f) for f in agent.follow_ups(
            result.query, req.mode, result.facets, result.total_hits, semantic_ready, req.expand)]
    if req.summary:
        out["summary"] = summary_json(agent.summary(result.hits, result.total_hits))
    return out


def symbol_json(hit: SymbolHit) -> dict[str, Any]:
    """A symbol hit (``sylk symbols --format json``, the MCP ``search_symbol`` tool):
    1-based line and column of the name, the definition's last line, whether it is exported."""
    s = hit.symbol
    return {"name": s.name, "kind": s.kind, "container": s.container, "path": hit.path,
            "line": s.selection[0] + 1, "column": s.selection[1] + 1, "endLine": s.range[2] + 1,
            "signature": s.signature, "exported": s.exported}


def reference_json(s: Shown) -> dict[str, Any]:
    """An occurrence of a name (``sylk refs --format json``, the MCP ``find_references``
    tool): 1-based line and UTF-16 column, the enclosing symbol and the line's text."""
    r = s.reference
    return {"path": r.path, "line": r.line + 1, "column": r.column + 1, "endColumn": r.end + 1,
            "symbol": s.symbol, "text": s.text, "declaration": s.declaration,
            "in": "comment" if r.in_comment else "string" if r.in_string else "code", "call": r.call}


def caller_json(c: Caller, lines: Sequence[str]) -> dict[str, Any]:
    """Calls of a name from one function (the MCP ``get_callers`` tool): the caller (None at
    a file's top level) and each call's 1-based line and column with its text (from
    ``lines``, the file's)."""
    s = c.symbol
    caller = None if s is None else {"name": s.name, "kind": s.kind, "container": s.container, "path": c.path,
                                     "line": s.selection[0] + 1}
    return {"path": c.path, "caller": caller,
            "calls": [{"line": r.line + 1, "column": r.column + 1,
                       "text": lines[r.line].strip() if r.line < len(lines) else ""} for r in c.calls]}


# status's ``skipped`` option: name the first SKIPPED_EXAMPLES skipped files of each
# reason ("sample", the default), or every one ("all")
SKIPPED_CHOICES = ("sample", "all")


def skipped_limit(choice: str) -> int | None:
    """How many skipped files of each reason a status names for a ``skipped`` choice."""
    return None if choice == "all" else SKIPPED_EXAMPLES


def trust_json(trusted: bool) -> dict[str, Any]:
    """Whether the workspace is trusted (``trusted``), and when not, what that means
    (``trustMessage``): every front end's status says it."""
    return {"trusted": True} if trusted else {"trusted": False, "trustMessage": UNTRUSTED}


def status_json(status: IndexStatus) -> dict[str, Any]:
    """One workspace's index (``sylk/status``, ``sylk status --format json``; MCP's
    ``get_status`` picks from it). ``skipped``: {``total``, ``complete``, ``byReason``:
    [{``reason``, ``count``, ``files``}]}, most files first."""
    return camel_dict(status)
