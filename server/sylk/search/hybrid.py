"""Hybrid search over chunks: Tantivy BM25 (lexical) and FAISS k-NN (semantic),
fused by score (or by rank; fusion.py).

Each side over-fetches candidates (a pool several times the page) and applies the
filters. The relevance floor (``min_score``) takes out of the fused list the candidates
only the semantic side found whose cosine similarity is below it (the rest keep their
order), and the list is paged. Facets count the fused candidates.
Snippets come from the files on disk: the lines of the chunk around the first
line that holds a query word, with the query words highlighted (UTF-16 columns).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

import attrs
import numpy as np

from ..ingest.chunks import CONTAINER_KINDS
from ..model import doc_id, is_virtual
from ..store.annotations import GitFile
from ..store.lexical import ChunkHit, LexicalIndex
from ..store.manifest import ChunkRecord, Manifest
from ..text.positions import utf16_len
from ..text.query_terms import IDENTIFIER, QueryTerms, analyze
from .file_lines import file_lines
from .fusion import CONVEX, DEPTH, Fused, Scored, alpha_for, fuse
from .query import Filters, SearchRequest, package_matcher, path_matcher, unknown_packages
from .relocate import Relocator
from .results import Explanation, Hit, IndexState, SearchResult
from .roles import roles_of

# Each side fetches POOL_MIN candidates (at least 3x the page) for facets and totals;
# hybrid fuses the first fusion.DEPTH (at least 3x the page) of each.
POOL_MIN = 100
# A class (struct, interface ...) chunk is its header and its members' signatures, so it
# repeats the words of its members: when one of its members is a candidate too, the
# class's score is multiplied by this and the member, the more precise answer, goes
# first (bench/relevance.py, Python sentences: MRR@10 0.516 -> 0.533). Not for
# identifier queries, where a class name also matches each member's container.
CONTAINER_YIELD = 0.6
POOL_FACTOR = 3
FACET_TOP = 20
# A hybrid search runs its semantic side here (the query's embedding, then the FAISS
# scan) while the caller's thread runs the lexical side: onnxruntime, FAISS and Tantivy
# all release the GIL, so the sides overlap instead of adding up
# (bench/search_latency.py).
_SEMANTIC_SIDE = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sylk-semantic-side")


class Embeds(Protocol):
    model_id: str

    def embed_query(self, text: str) -> np.ndarray: ...


class Vectors(Protocol):
    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]: ...

    def __len__(self) -> int: ...


class HybridSearch:
    def __init__(self, root: Path, lexical: LexicalIndex, manifest: Manifest,
                 vectors: Vectors | None = None, embedder: Embeds | None = None,
                 semantic_note: str | None = None, relocator: Relocator | None = None) -> None:
        """``relocator``: finds the page's hits again in files changed since they were indexed."""
        self.root = root
        self.lexical = lexical
        self.manifest = manifest
        self.vectors = vectors
        self.embedder = embedder
        self.semantic_note = semantic_note  # why semantic search is unavailable, if it is
        self.relocator = relocator

    def search(self, req: SearchRequest, index_state: IndexState) -> SearchResult:
        """Chunks, and commit messages when the ``git_commit`` type is asked for."""
        if "git_commit" not in req.filters.types:
            return self._search_chunks(req, index_state)
        t0 = time.perf_counter()
        others = tuple(t for t in req.filters.types if t != "git_commit")
        f = req.filters
        rows = self.manifest.search_commits(_query_words(" ".join((req.query, *req.extra_terms))),
                                            req.offset + req.limit, f.authors, f.modified_after, f.modified_before)
        style = analyze(req.query).style
        commits = [Hit(-1 - i, c_files[0] if c_files else "", "git", "git_commit", "commit", sha, author,
                       0, 0, round(_lexical_only_score(req, style, i + 1), 6), i + 1, None, _commit_snippet(message),
                       0, (), author, int(t), c_files)
                   for i, (sha, author, t, message, c_files) in enumerate(
                       (r.sha, r.author, r.time, r.message, tuple(x for x in r.files.split("\n") if x)) for r in rows)]
        if not others:
            message = None if self.manifest.commit_count() else \
                "no commits indexed (not a git repository, git is missing, or the history is not read yet)"
            return SearchResult(req.query, req.mode, round((time.perf_counter() - t0) * 1000, 2), len(commits),
                                commits[req.offset:req.offset + req.limit], {}, index_state, message)
        code = self._search_chunks(attrs.evolve(req, offset=0, limit=req.offset + req.limit,
                                                filters=attrs.evolve(f, types=others)), index_state)
        merged = sorted(code.hits + commits, key=lambda h: -h.score)
        return attrs.evolve(code, hits=merged[req.offset:req.offset + req.limit],
                            total_hits=code.total_hits + len(commits),
                            took_ms=round((time.perf_counter() - t0) * 1000, 2))

    def _search_chunks(self, req: SearchRequest, index_state: IndexState) -> SearchResult:
        t0 = time.perf_counter()
        pool = max(POOL_MIN, (req.offset + req.limit) * POOL_FACTOR)
        paths = path_matcher(req.filters.paths)
        packages = self.manifest.file_packages()
        records: dict[int, ChunkRecord] = {}
        git = self.manifest.git_lookup() if req.filters.needs_git else None
        tagged = self.manifest.tag_lookup() if req.filters.tags else None
        lexical: list[Scored] = []
        semantic: list[Scored] = []
        lexical_total = 0
        message = None
        terms = analyze(" ".join((req.query, *req.extra_terms)))
        semantic_ready = self.vectors is not None and self.embedder is not None and len(self.vectors) > 0
        k = pool * (4 if not req.filters.empty else 1)  # semantic candidates before the filters
        nearest = _SEMANTIC_SIDE.submit(self._nearest, req.query, k) \
            if req.mode == "hybrid" and semantic_ready and req.query.strip() else None
        if req.mode in ("hybrid", "lexical"):
            hits, lexical_total = self._lexical(req, terms, pool)
            records.update(self.manifest.chunks_by_id([h.id for h in hits]))
            for h in hits:
                rec = records.get(h.id)
                if rec is not None and (paths is None or paths(rec.path)) and \
                        (not req.filters.roles or _has_role(rec, req.filters.roles)) and \
                        (req.filters.exported is None or rec.exported == req.filters.exported) and \
                        (git is None or _git_ok(rec, req.filters, git)) and \
                        (tagged is None or _tags_ok(rec, req.filters, tagged)):
                    lexical.append(Scored(h.id, h.score))
        if req.mode in ("hybrid", "semantic") and req.query.strip():
            if not semantic_ready:
                message = self.semantic_note or "semantic search is not ready yet: no chunk is embedded"
            else:
                semantic = self._semantic(req, pool, _both(paths, package_matcher(packages, req.filters.packages)),
                                          records, git, tagged,
                                          nearest.result() if nearest else self._nearest(req.query, k))
        if req.mode == "lexical":
            fused = [Fused(c.id, 1.0 / (req.rrf_k + r), lexical_rank=r, lexical_score=c.score)
                     for r, c in enumerate(lexical, 1)]
        elif req.mode == "semantic":
            fused = [Fused(c.id, c.score, semantic_rank=r, semantic_score=c.score) for r, c in enumerate(semantic, 1)]
        depth = req.fuse_depth or max(DEPTH[req.fusion], (req.offset + req.limit) * POOL_FACTOR)
        if req.mode == "hybrid":
            fused = fuse(req.fusion, lexical, semantic, depth=depth, style=terms.style,
                         weights=(req.weights.lexical, req.weights.semantic), k=req.rrf_k, alpha=req.alpha)
            if terms.style != IDENTIFIER:
                fused = _members_first(fused, records)
        floor = req.min_score if req.mode != "lexical" else None
        below = 0
        if floor and semantic:  # after the fusion, so the hits that stay keep their order
            kept = [f for f in fused if f.lexical_rank is not None or (f.semantic_score or 0.0) >= floor]
            below = len(fused) - len(kept)
            if below and not kept:
                best = max(c.score for c in semantic)
                message = ((message + "; ") if message else "") + (
                    f"nothing is close enough in meaning: the nearest chunk's similarity {best:.2f} is below "
                    f"the relevance floor {floor:g} (minScore; 0 turns it off)")
            fused = kept
            found = {c.id for c in lexical}
            semantic = [c for c in semantic if c.score >= floor or c.id in found]
        page = fused[req.offset:req.offset + req.limit]
        all_git = git if git is not None else self.manifest.git_lookup()
        all_tags = tagged if tagged is not None else self.manifest.tag_lookup()
        pattern = _words_regex(_query_words(" ".join((req.query, *req.extra_terms))))
        texts: dict[str, list[str] | None] = {}
        out: list[Hit] = []
        # a file changed since it was indexed: its hits where their chunks are now, or stale
        moved = self.relocator.locate([records[f.id] for f in page]) if self.relocator is not None else {}
        for f in page:
            rec = records[f.id]
            where = moved.get(f.id)
            if where is not None:
                rec = rec._replace(start_line=where.start_line, end_line=where.end_line)
            if where is not None and where.stale:  # the file's text now is not what matched
                snippet, first, marks = "", rec.start_line, ()
            else:
                snippet, first, marks = self._snippet(rec, pattern, req.context_lines, texts)
            meta = all_git.get(rec.path)
            out.append(Hit(f.id, rec.path, rec.language or "text", rec.type, rec.kind, rec.symbol, rec.container,
                           rec.start_line, rec.end_line, round(f.score, 6), f.lexical_rank, f.semantic_rank,
                           snippet, first, marks, meta.author if meta else "", meta.time if meta else 0, (),
                           all_tags.get(rec.path, ()), packages.get(rec.path, ""), req.explain,
                           f.lexical_score if req.explain else None,
                           f.semantic_score if req.explain else None, stale=where is not None and where.stale,
                           exported=rec.exported))
        # every candidate of both sides
        candidates = list(dict.fromkeys([c.id for c in lexical] + [c.id for c in semantic]))
        facets = _facets([records[c] for c in candidates], packages, all_git) if req.facets else {}
        missing = unknown_packages(packages, req.filters.packages) if req.filters.packages and not out else []
        if missing:
            message = ((message + "; ") if message else "") + \
                f"no indexed file is in the package {missing[0]!r} or below it (see the package facet)"
        if req.filters.needs_git and not all_git:
            message = ((message + "; ") if message else "") + \
                "no git metadata (not a git repository, or git is missing): the author and date filters match nothing"
        # Tantivy's count holds only for the filters it applies itself; after a path, role,
        # tag or git filter the total is the candidates that passed (what the pages hold).
        # Hybrid pages the fused list, which holds the first ``depth`` of each side only.
        post_filtered = paths is not None or bool(req.filters.roles) or git is not None or tagged is not None or \
            req.filters.exported is not None
        if req.mode == "lexical" and not post_filtered:
            total = lexical_total
        else:
            total = len(fused)
        explanation = None
        if req.explain:
            hybrid = req.mode == "hybrid"
            explanation = Explanation(
                terms.style, tuple(i.text for i in terms.identifiers), terms.words, terms.dropped,
                req.fusion if hybrid else req.mode, alpha_for(terms.style, req.alpha) if hybrid and req.fusion == CONVEX
                else None, depth if hybrid else 0, floor, below)
        return SearchResult(req.query, req.mode, round((time.perf_counter() - t0) * 1000, 2), total, out, facets,
                            index_state, message, explanation)

    # sides --------------------------------------------------------------
    def _lexical(self, req: SearchRequest, terms: QueryTerms, pool: int) -> tuple[list[ChunkHit], int]:
        f = req.filters
        query = self.lexical.build_query(terms, fuzzy=req.fuzzy, languages=f.languages, types=f.types,
                                         kinds=f.kinds, packages=f.packages, min_lines=f.min_lines,
                                         max_lines=f.max_lines)
        # path globs (roles, tags, git, exported) are applied afterwards: fetch more when they may drop candidates
        after = f.paths or f.roles or f.tags or f.needs_git or f.exported is not None
        return self.lexical.search_chunks(query, pool * (4 if after else 1))

    def _nearest(self, query: str, k: int) -> list[tuple[int, float]]:
        """The ``k`` chunks nearest the query's embedding, with their cosine similarity."""
        assert self.vectors is not None and self.embedder is not None
        return self.vectors.search(self.embedder.embed_query(query), k)

    def _semantic(self, req: SearchRequest, pool: int, paths: Callable[[str], bool] | None,
                  records: dict[int, ChunkRecord], git: dict[str, GitFile] | None,
                  tagged: dict[str, tuple[str, ...]] | None, found: list[tuple[int, float]]) -> list[Scored]:
        """The first ``pool`` of ``found`` (the nearest chunks) that pass the filters."""
        missing = [cid for cid, _ in found if cid not in records]
        records.update(self.manifest.chunks_by_id(missing))
        out: list[Scored] = []
        for cid, score in found:
            rec = records.get(cid)
            if rec is None or not _passes(rec, req.filters, paths) or (git is not None and not _git_ok(
                    rec, req.filters, git)) or (tagged is not None and not _tags_ok(rec, req.filters, tagged)):
                continue
            out.append(Scored(cid, score))
            if len(out) >= pool:
                break
        return out

    # snippets -----------------------------------------------------------
    def _snippet(self, rec: ChunkRecord, pattern: re.Pattern[str] | None, context: int,
                 cache: dict[str, list[str] | None]) -> tuple[str, int, tuple[tuple[int, int, int], ...]]:
        lines = cache.get(rec.path, ())
        if lines == ():
            if is_virtual(rec.path):  # a virtual document: its text is in the manifest
                row = self.manifest.document(doc_id(rec.path))
                lines = row.text.split("\n") if row else None
            else:
                lines = file_lines(self.root / rec.path)
            cache[rec.path] = lines
        if not lines:
            return "", rec.start_line, ()
        end = min(rec.end_line, len(lines) - 1)
        best = rec.start_line
        if pattern is not None:
            for i in range(rec.start_line, end + 1):
                if pattern.search(lines[i]):
                    best = i
                    break
        first = max(rec.start_line, best - context)
        last = min(end, best + context)
        if best == rec.start_line:
            last = min(end, rec.start_line + 2 * context)
        shown = lines[first:last + 1]
        marks: list[tuple[int, int, int]] = []
        if pattern is not None:
            for n, line in enumerate(shown, first):
                for m in pattern.finditer(line):
                    marks.append((n, utf16_len(line[:m.start()]), utf16_len(line[:m.end()])))
        return "\n".join(shown), first, tuple(marks)


def _members_first(fused: list[Fused], records: dict[int, ChunkRecord]) -> list[Fused]:
    """The fused list with each container chunk whose member is also in it scaled by
    CONTAINER_YIELD (stable: equal scores keep their order)."""
    owners = {(r.path, r.container.rsplit(".", 1)[-1]) for r in (records[f.id] for f in fused) if r.container}
    if not owners:
        return fused
    out = [attrs.evolve(f, score=f.score * CONTAINER_YIELD)
           if records[f.id].kind in CONTAINER_KINDS and (records[f.id].path, records[f.id].symbol) in owners else f
           for f in fused]
    return sorted(out, key=lambda f: -f.score)


def _lexical_only_score(req: SearchRequest, style: str, rank: int) -> float:
    """A score for a hit that only the lexical side ranks (a commit message), on the
    scale of the fused chunks' so that both sort together."""
    if req.mode == "hybrid" and req.fusion == CONVEX:
        return alpha_for(style, req.alpha) / rank
    return 1.0 / (req.rrf_k + rank)


def _query_words(query: str) -> list[str]:
    """The words of a query as typed (identifiers whole), for snippets and highlights."""
    return [w for w in re.findall(r"\w+", query) if len(w) > 1 or w.isdigit()]


def _words_regex(words: Sequence[str]) -> re.Pattern[str] | None:
    if not words:
        return None
    return re.compile("|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True)), re.IGNORECASE)


def _both(a: Callable[[str], bool] | None, b: Callable[[str], bool] | None) -> Callable[[str], bool] | None:
    if a is None or b is None:
        return a or b
    return lambda path: a(path) and b(path)


def _passes(rec: ChunkRecord, f: Filters, paths: Callable[[str], bool] | None) -> bool:
    if f.languages and (rec.language or "text") not in f.languages:
        return False
    if f.types and rec.type not in f.types:
        return False
    if f.kinds and rec.kind not in f.kinds:
        return False
    n = rec.end_line - rec.start_line + 1
    if f.min_lines is not None and n < f.min_lines:
        return False
    if f.max_lines is not None and n > f.max_lines:
        return False
    if f.roles and not _has_role(rec, f.roles):
        return False
    if f.exported is not None and rec.exported != f.exported:
        return False
    return paths is None or paths(rec.path)


def _has_role(rec: ChunkRecord, roles: Sequence[str]) -> bool:
    return any(r in roles for r in roles_of(rec.kind, rec.symbol, rec.container, rec.path))


def _commit_snippet(message: str, lines: int = 6) -> str:
    return "\n".join(message.strip().splitlines()[:lines])


def _tags_ok(rec: ChunkRecord, f: Filters, tagged: dict[str, tuple[str, ...]]) -> bool:
    have = tagged.get(rec.path, ())
    return any(t in have for t in f.tags)


def _git_ok(rec: ChunkRecord, f: Filters, git: dict[str, GitFile]) -> bool:
    """The git filters: a file without metadata (untracked, or no git) never passes them."""
    meta = git.get(rec.path)
    if meta is None:
        return False
    if f.authors and meta.author not in f.authors:
        return False
    if f.modified_after is not None and meta.time < f.modified_after:
        return False
    return f.modified_before is None or meta.time < f.modified_before


def _facets(records: Sequence[ChunkRecord], packages: dict[str, str],
            git: dict[str, GitFile] | None = None) -> dict[str, list[tuple[str, int]]]:
    counters = {"language": Counter(), "type": Counter(), "kind": Counter(), "folder": Counter(),
                "package": Counter(p for r in records if (p := packages.get(r.path)))}
    if git:
        counters["author"] = Counter(git[r.path].author for r in records if r.path in git)
    for r in records:
        counters["language"][r.language or "text"] += 1
        counters["type"][r.type] += 1
        counters["kind"][r.kind] += 1
        counters["folder"][r.path.split("/", 1)[0] if "/" in r.path else "."] += 1
    return {k: c.most_common(FACET_TOP) for k, c in counters.items()}
