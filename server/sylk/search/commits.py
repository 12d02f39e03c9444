"""Commit messages searched beside the chunks: a search asking for the type
``git_commit`` (``type:git_commit when did we change the retry logic``) finds commit
messages by their words (the manifest's full-text table), filtered by the git filters
(Filters.of_git); with other types too, they are ranked among the chunks on the chunks'
scale (``_lexical_only_score``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs

from ..store.manifest import Manifest
from ..text.query_terms import analyze, typed_words
from .fusion import CONVEX, alpha_for
from .query import SearchRequest
from .results import Commit, Hit, IndexState, SearchResult

NOT_READ = "no commits indexed (not a git repository, git is missing, or the history is not read yet)"


def with_commits(manifest: Manifest, req: SearchRequest, index_state: IndexState,
                 chunks: Callable[[SearchRequest], SearchResult]) -> SearchResult:
    """The commit messages ``req`` finds, merged by score with the chunks of its other
    types (``chunks`` searches them), then paged."""
    t0 = time.perf_counter()
    code_filters = req.filters.without_commits()
    text = req.words.text
    keep, leave = req.filters.of_git()
    rows = manifest.search_commits(typed_words(" ".join((text, *req.extra_terms))), req.offset + req.limit,
                                   keep, leave, leave_out=req.words.left_out)
    style = analyze(text).style
    commits = [_commit_hit(i, r.sha, r.author, int(r.time), r.message, tuple(x for x in r.files.split("\n") if x),
                           round(_lexical_only_score(req, style, i + 1), 6))
               for i, r in enumerate(rows)]
    if not code_filters.types:
        message = None if manifest.commit_count() else NOT_READ
        return SearchResult(req.query, req.mode, round((time.perf_counter() - t0) * 1000, 2), len(commits),
                            commits[req.offset:req.offset + req.limit], {}, index_state, message)
    code = chunks(attrs.evolve(req, offset=0, limit=req.offset + req.limit, filters=code_filters))
    merged = sorted(code.hits + commits, key=lambda h: -h.score)
    return attrs.evolve(code, hits=merged[req.offset:req.offset + req.limit],
                        total_hits=code.total_hits + len(commits),
                        took_ms=round((time.perf_counter() - t0) * 1000, 2))


def _lexical_only_score(req: SearchRequest, style: str, rank: int) -> float:
    """A score for a hit that only the lexical side ranks (a commit message), on the
    scale of the fused chunks' so that both sort together."""
    if req.mode == "hybrid" and req.fusion == CONVEX:
        return alpha_for(style, req.alpha) / rank
    if req.mode == "lexical":  # chunks score BM25 over the best BM25 (hybrid.HybridSearch._fuse)
        return 1.0 / rank
    return 1.0 / (req.rrf_k + rank)


def _commit_hit(i: int, sha: str, author: str, when: int, message: str, files: tuple[str, ...],
                score: float) -> Hit:
    """The ``i``-th commit message found (ids below 0: no chunk's); its path is its first file's."""
    return Hit(id=-1 - i, path=files[0] if files else "", language="git", type="git_commit", kind="commit",
               symbol="", container="", start_line=0, end_line=0, score=score, lexical_rank=i + 1,
               semantic_rank=None, snippet=_commit_snippet(message), author=author, modified=when,
               commit=Commit(sha, files))


def _commit_snippet(message: str, lines: int = 6) -> str:
    return "\n".join(message.strip().splitlines()[:lines])
