"""Search over chunks: Tantivy BM25 (lexical) and FAISS k-NN (semantic), fused by
score (or by rank; fusion.py), then ranked (ranking.py).

A search is a pipeline (``HybridSearch._search_chunks``), each step a method or a
function of its own:

1. **context**: the query's terms and the filters' lookups;
2. **sides**: each side over-fetches candidates (a pool several times the page) and
   applies the filters;
3. **fuse**: hybrid fuses the sides; lexical and semantic take their one side's list
   (BM25 over the best BM25, cosine similarity);
4. **floor**: the relevance floor (``min_score``) takes out the candidates only the
   semantic side found whose similarity is below it (the rest keep their order);
5. **rank**: the ranking stack's stages (ranking.py), each one switchable;
6. **page**, then **hits** (snippets from the files on disk: the lines of the chunk
   around the first line that holds a query word, the words highlighted in UTF-16
   columns), facets over every candidate, and the messages.
"""

from __future__ import annotations

import functools
import re
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs

from ..model import doc_id, is_virtual
from ..store.annotations import GitFile
from ..store.lexical import ChunkHit, LexicalIndex
from ..store.manifest import ChunkRecord, Manifest
from ..text.positions import utf16_len
from ..text.query_terms import QueryTerms, analyze, typed_words
from ..text.query_tree import QueryWords, Regex, Term, all_of
from .file_lines import file_lines
from .commits import with_commits
from .fusion import CONVEX, DEPTH, Fused, Scored, alpha_for, fuse
from .nearest import VectorSpace, nearest
from .filters import INDEX_FILTERS, Admit, Lookups, TreeTest, compiled_regex, index_applies
from .query import SearchRequest
from .ranking import RankQuery, rank, stages_for
from .relocate import Relocator
from .results import Explanation, Hit, IndexState, SearchResult

# Each side fetches POOL_MIN candidates (at least 3x the page) for facets and totals;
# hybrid fuses the first fusion.DEPTH (at least 3x the page) of each.
POOL_MIN = 100
POOL_FACTOR = 3
FACET_TOP = 20
# A hybrid search runs its semantic side here (the query's embedding, then the FAISS
# scan) while the caller's thread runs the lexical side: onnxruntime, FAISS and Tantivy
# all release the GIL, so the sides overlap instead of adding up
# (bench/search_latency.py).
_SEMANTIC_SIDE = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sylk-semantic-side")


@attrs.frozen
class _Context:
    """What every stage of one search reads: the query's words and terms, the filters' lookups."""

    words: QueryWords  # what to look for, and what every hit must hold (or not)
    terms: QueryTerms  # the words to look for, analysed (with the agent's extra terms)
    pool: int  # candidates each side fetches
    packages: dict[str, str]  # path -> package
    admit: Admit  # every filter (the semantic side's candidates)
    after: Admit  # the filters the lexical index does not apply (its candidates, after it)
    tree: TreeTest | None  # the query's tree, where it holds a filter the lexical index does not apply
    all_git: dict[str, GitFile]  # for the hits' author and date
    all_tags: dict[str, tuple[str, ...]]
    semantic_ready: bool
    # the lines of the files read for this search (a regex of the tree, the snippets): once each
    texts: dict[str, list[str] | None] = attrs.Factory(dict)

    @property
    def post_filtered(self) -> bool:
        """A filter Tantivy does not apply drops candidates after it."""
        return bool(self.after) or self.tree is not None

    @property
    def text(self) -> str:
        """The words looked for, as typed (``-mock`` and ``OR`` left out)."""
        return self.words.text


@attrs.define
class _Sides:
    """Each side's candidates, best first, after the filters, and their records."""

    lexical: list[Scored] = attrs.Factory(list)
    semantic: list[Scored] = attrs.Factory(list)
    lexical_total: int = 0  # Tantivy's count of lexical matches
    records: dict[int, ChunkRecord] = attrs.Factory(dict)
    message: str | None = None  # why the semantic side is empty


class HybridSearch:
    def __init__(self, root: Path, lexical: LexicalIndex, manifest: Manifest,
                 main: VectorSpace | None = None, quick: VectorSpace | None = None,
                 semantic_note: str | None = None, relocator: Relocator | None = None,
                 git_note: str | None = None) -> None:
        """``main``: the model's vectors; ``quick``: the quick pass's, of the chunks the model
        has not reached (search.nearest); ``relocator``: finds the page's hits again in files
        changed since they were indexed; ``git_note``: why no file has git metadata, if none has."""
        self.root = root
        self.lexical = lexical
        self.manifest = manifest
        self.main = main
        self.quick = quick
        self.semantic_note = semantic_note  # why semantic search is unavailable, if it is
        self.relocator = relocator
        self.git_note = git_note or "no git metadata (not a git repository, or git is missing)"

    def search(self, req: SearchRequest, index_state: IndexState) -> SearchResult:
        """Chunks, and commit messages when the ``git_commit`` type is asked for (commits.py)."""
        if not req.filters.asks_commits:
            return self._search_chunks(req, index_state)
        return with_commits(self.manifest, req, index_state, lambda r: self._search_chunks(r, index_state))

    def _search_chunks(self, req: SearchRequest, index_state: IndexState) -> SearchResult:
        """The pipeline: candidates from each side (filtered), fusion, the relevance floor,
        the ranking stack (ranking.py), the page, then hits, facets and messages."""
        t0 = time.perf_counter()
        ctx = self._context(req)
        sides = self._sides(req, ctx)
        fused, depth = self._fuse(req, ctx, sides)
        fused, below, floor_note = _floor(req, fused, sides)
        ranked_by = RankQuery.of(ctx.terms, " ".join((ctx.text, *req.extra_terms)))
        fused = rank(fused, sides.records, ranked_by, req.ranking_off)
        page = fused[req.offset:req.offset + req.limit]
        out = self._hits(req, ctx, page, sides.records)
        # every candidate of both sides
        candidates = list(dict.fromkeys([c.id for c in sides.lexical] + [c.id for c in sides.semantic]))
        facets = _facets([sides.records[c] for c in candidates], ctx.packages, ctx.all_git) if req.facets else {}
        message = _join(sides.message, floor_note, *self._notes(req, ctx, bool(out)))
        # Tantivy's count holds only for the filters it applies itself; after a path, role,
        # tag or git filter the total is the candidates that passed (what the pages hold).
        # Hybrid pages the fused list, which holds the first ``depth`` of each side only.
        total = sides.lexical_total if req.mode == "lexical" and not ctx.post_filtered else len(fused)
        explanation = None
        if req.explain:
            hybrid = req.mode == "hybrid"
            terms = ctx.terms
            explanation = Explanation(
                terms.style, tuple(i.text for i in terms.identifiers), terms.words, terms.dropped,
                req.fusion if hybrid else req.mode, alpha_for(terms.style, req.alpha) if hybrid and req.fusion == CONVEX
                else None, depth if hybrid else 0, _floor_of(req), below,
                stages_for(ranked_by, req.ranking_off))
        ran = req.mode != "lexical" and ctx.semantic_ready and bool(ctx.text.strip())
        return SearchResult(req.query, req.mode, round((time.perf_counter() - t0) * 1000, 2), total, out, facets,
                            index_state, message, explanation,
                            index_state.embedded + index_state.quick if ran else None,
                            index_state.quick if ran else 0)

    # stages -------------------------------------------------------------
    def _context(self, req: SearchRequest) -> _Context:
        f = req.filters
        git, tags = self.manifest.git_lookup(), self.manifest.tag_lookup()
        lookups = Lookups(self.manifest.file_packages(), git, tags)
        return _Context(
            words=req.words, terms=analyze(" ".join((req.words.text, *req.extra_terms))),
            pool=max(POOL_MIN, (req.offset + req.limit) * POOL_FACTOR),
            packages=lookups.packages, admit=Admit(f, lookups), after=Admit(f, lookups, INDEX_FILTERS),
            tree=TreeTest(req.words.match, lookups) if not index_applies(req.words.match) else None,
            all_git=git, all_tags=tags,
            semantic_ready=any(s is not None and len(s) > 0 for s in (self.main, self.quick)))

    def _sides(self, req: SearchRequest, ctx: _Context) -> _Sides:
        """Each side's candidates, best first, that pass the filters."""
        sides = _Sides()
        # semantic candidates before the filters and the words a hit must hold
        k = ctx.pool * (4 if not req.filters.empty or ctx.words.match is not None else 1)
        text = ctx.text
        nearest = _SEMANTIC_SIDE.submit(self._nearest, text, k) \
            if req.mode == "hybrid" and ctx.semantic_ready and text.strip() else None
        if req.mode in ("hybrid", "lexical"):
            hits, sides.lexical_total = self._lexical(req, ctx)
            sides.records.update(self.manifest.chunks_by_id([h.id for h in hits]))
            after = ctx.after
            kept = self._tree_holds(ctx, [h.id for h in hits], sides.records) if ctx.tree else None
            for h in hits:
                rec = sides.records.get(h.id)
                if rec is not None and after(rec) and (kept is None or h.id in kept):
                    sides.lexical.append(Scored(h.id, h.score))
        if req.mode in ("hybrid", "semantic") and text.strip():
            if not ctx.semantic_ready:
                sides.message = self.semantic_note or "semantic search is not ready yet: no chunk is embedded"
            else:
                found = nearest.result() if nearest else self._nearest(text, k)
                if ctx.words.match is not None:  # the words a hit must hold, or must not
                    held = self.lexical.holding(ctx.words.match, [cid for cid, _ in found])
                    found = [(cid, score) for cid, score in found if cid in held]
                if ctx.tree is not None:  # and the filters of the tree the index could not apply
                    ids = [cid for cid, _ in found]
                    sides.records.update(self.manifest.chunks_by_id([i for i in ids if i not in sides.records]))
                    held = self._tree_holds(ctx, ids, sides.records)
                    found = [(cid, score) for cid, score in found if cid in held]
                sides.semantic = self._semantic(ctx.pool, ctx.admit, sides.records, found)
        return sides

    def _fuse(self, req: SearchRequest, ctx: _Context, sides: _Sides) -> tuple[list[Fused], int]:
        """One scored list: the two sides fused (hybrid), or the one side's (its scores
        brought to [0, 1] in mode lexical: BM25 over the best, so the stages scale alike)."""
        depth = req.fuse_depth or max(DEPTH[req.fusion], (req.offset + req.limit) * POOL_FACTOR)
        if req.mode == "lexical":
            top = max((c.score for c in sides.lexical), default=0.0) or 1.0
            return [Fused(c.id, c.score / top, lexical_rank=r, lexical_score=c.score)
                    for r, c in enumerate(sides.lexical, 1)], depth
        if req.mode == "semantic":
            return [Fused(c.id, c.score, semantic_rank=r, semantic_score=c.score)
                    for r, c in enumerate(sides.semantic, 1)], depth
        return fuse(req.fusion, sides.lexical, sides.semantic, depth=depth, style=ctx.terms.style,
                    weights=(req.weights.lexical, req.weights.semantic), k=req.rrf_k, alpha=req.alpha), depth

    def _hits(self, req: SearchRequest, ctx: _Context, page: Sequence[Fused],
              records: dict[int, ChunkRecord]) -> list[Hit]:
        """The page's hits: where their chunks are now, with snippets, git and tags."""
        all_git, all_tags = ctx.all_git, ctx.all_tags
        pattern = _words_regex(typed_words(" ".join((ctx.text, *req.extra_terms))))
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
                snippet, first, marks = self._snippet(rec, pattern, req.context_lines, ctx.texts)
            meta = all_git.get(rec.path)
            out.append(Hit(id=f.id, path=rec.path, language=rec.language or "text", type=rec.type, kind=rec.kind,
                           symbol=rec.symbol, container=rec.container, start_line=rec.start_line,
                           end_line=rec.end_line, score=round(f.score, 6), lexical_rank=f.lexical_rank,
                           semantic_rank=f.semantic_rank, snippet=snippet, snippet_line=first, highlights=marks,
                           author=meta.author if meta else "", modified=meta.time if meta else 0,
                           tags=all_tags.get(rec.path, ()), package=ctx.packages.get(rec.path, ""),
                           explained=req.explain, lexical_score=f.lexical_score if req.explain else None,
                           semantic_score=f.semantic_score if req.explain else None,
                           stale=where is not None and where.stale, exported=rec.exported))
        return out

    def _notes(self, req: SearchRequest, ctx: _Context, found: bool) -> list[str | None]:
        """What the user should know of the filters: a package nothing is in, no git metadata."""
        notes: list[str | None] = []
        if not found:
            notes += req.filters.notes(ctx.admit.lookups)
        if req.needs_git and not ctx.all_git:
            notes.append(f"{self.git_note}: the author and date filters match nothing")
        return notes

    # sides --------------------------------------------------------------
    def _lexical(self, req: SearchRequest, ctx: _Context) -> tuple[list[ChunkHit], int]:
        # the filters the index applies, and the query's tree (where it holds a filter the
        # index does not apply, its candidates are checked after: ctx.tree)
        match = all_of([req.filters.tree(INDEX_FILTERS), ctx.words.match])
        query = self.lexical.build_query(ctx.terms, fuzzy=req.fuzzy, match=match)
        # the other filters are applied afterwards: fetch more when they may drop candidates
        return self.lexical.search_chunks(query, ctx.pool * (4 if ctx.post_filtered else 1))

    def _tree_holds(self, ctx: _Context, ids: list[int], records: dict[int, ChunkRecord]) -> set[int]:
        """The chunks of ``ids`` (their records in ``records``) that satisfy the query's
        tree: its words as the lexical index holds them, its regexes on the chunks' lines,
        its filters on the records."""
        tree = ctx.tree
        assert tree is not None
        held = {t: self.lexical.holding(t, ids) for t in tree.words if isinstance(t, Term)}

        def holds(i: int, rec: ChunkRecord, atom: Term | Regex) -> bool:
            if isinstance(atom, Term):
                return i in held[atom]
            lines = self._lines(rec.path, ctx.texts) or []
            regex = compiled_regex(atom)
            return any(regex.search(line) for line in lines[rec.start_line:rec.end_line + 1])
        return {i for i in ids if (r := records.get(i)) is not None and tree(r, functools.partial(holds, i, r))}

    def _lines(self, path: str, cache: dict[str, list[str] | None]) -> list[str] | None:
        """The lines of a file, or of a virtual document (its text is in the manifest),
        read once per ``cache``; None when unreadable."""
        if path not in cache:
            if is_virtual(path):
                row = self.manifest.document(doc_id(path))
                cache[path] = row.text.split("\n") if row else None
            else:
                cache[path] = file_lines(self.root / path)
        return cache[path]

    def _nearest(self, query: str, k: int) -> list[tuple[int, float]]:
        """The ``k`` chunks nearest the query's embedding, with their cosine similarity."""
        return nearest(query, k, self.main, self.quick)

    def _semantic(self, pool: int, admit: Admit, records: dict[int, ChunkRecord],
                  found: list[tuple[int, float]]) -> list[Scored]:
        """The first ``pool`` of ``found`` (the nearest chunks) that pass the filters."""
        missing = [cid for cid, _ in found if cid not in records]
        records.update(self.manifest.chunks_by_id(missing))
        out: list[Scored] = []
        for cid, score in found:
            rec = records.get(cid)
            if rec is None or not admit(rec):
                continue
            out.append(Scored(cid, score))
            if len(out) >= pool:
                break
        return out

    # snippets -----------------------------------------------------------
    def _snippet(self, rec: ChunkRecord, pattern: re.Pattern[str] | None, context: int,
                 cache: dict[str, list[str] | None]) -> tuple[str, int, tuple[tuple[int, int, int], ...]]:
        lines = self._lines(rec.path, cache)
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


def _floor_of(req: SearchRequest) -> float | None:
    return req.min_score if req.mode != "lexical" else None


def _floor(req: SearchRequest, fused: list[Fused], sides: _Sides) -> tuple[list[Fused], int, str | None]:
    """The relevance floor (modes hybrid and semantic): the candidates only the semantic
    side found whose similarity is below it leave the list (the rest keep their order);
    the list, how many left, and a message when none is left."""
    floor = _floor_of(req)
    if not floor or not sides.semantic:
        return fused, 0, None
    kept = [f for f in fused if f.lexical_rank is not None or (f.semantic_score or 0.0) >= floor]
    below = len(fused) - len(kept)
    note = None
    if below and not kept:
        best = max(c.score for c in sides.semantic)
        note = (f"nothing is close enough in meaning: the nearest chunk's similarity {best:.2f} is below "
                f"the relevance floor {floor:g} (minScore; 0 turns it off)")
    found = {c.id for c in sides.lexical}
    sides.semantic = [c for c in sides.semantic if c.score >= floor or c.id in found]
    return kept, below, note


def _join(*notes: str | None) -> str | None:
    kept = [n for n in notes if n]
    return "; ".join(kept) if kept else None


def _words_regex(words: Sequence[str]) -> re.Pattern[str] | None:
    if not words:
        return None
    return re.compile("|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True)), re.IGNORECASE)


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
