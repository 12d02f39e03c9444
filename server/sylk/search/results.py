"""What a search returns, as records: search makes them, the engine hands them on, and
the front ends' wire modules turn them into JSON. Imports nothing of Sylk's, so every
search module can use them (``agent`` too, which ``query`` imports).
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Commit:
    """What a commit message hit is of: the commit (its author and time are the hit's) and
    the files it touched."""

    sha: str
    files: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class Hit:
    """A chunk (or a commit message: ``commit``) that matched a search; lines 0-based.
    Built by name."""

    id: int
    path: str
    language: str
    type: str
    kind: str
    symbol: str
    container: str
    start_line: int
    end_line: int
    score: float
    lexical_rank: int | None
    semantic_rank: int | None
    snippet: str = ""
    snippet_line: int = 0  # first line of the snippet (0-based)
    highlights: tuple[tuple[int, int, int], ...] = ()  # (line, start, end), UTF-16 columns
    author: str = ""  # of the file's last commit (git metadata), "" when unknown
    modified: int = 0  # the file's last commit time, seconds since the epoch; 0 when unknown
    tags: tuple[str, ...] = ()  # user tags of the file or document
    package: str = ""  # of the file (ingest.packages); "" for a virtual document or a commit
    # asked for with ``explain``: what each side said of it, BM25 and cosine similarity
    # (None where that side did not find it; its rank is lexical_rank / semantic_rank)
    explained: bool = False
    lexical_score: float | None = None
    semantic_score: float | None = None
    # the file changed since it was indexed and the chunk could not be found in it again:
    # the lines are the indexed ones and may no longer hold it (no snippet then)
    stale: bool = False
    # the chunk holds an exported definition (Symbol.exported); False for a chunk holding none
    exported: bool = False
    commit: Commit | None = None  # a commit message's hit (type git_commit): its commit


@attrs.frozen
class IndexState:
    """The ``index`` block of a search result: how complete each side of the index is."""

    files: int
    chunks: int
    embedded: int
    pending: int  # chunks not embedded yet
    ready: bool  # nothing pending, and the semantic side is loaded
    indexing: bool = False  # an index run is under way
    files_pending: int = 0  # files of that run whose text is not searchable yet (symbols come sooner)
    quick: int = 0  # chunks not embedded yet that have a quick-pass vector (engine.embedding)


@attrs.frozen
class Explanation:
    """How a query was read and fused (``explain``)."""

    style: str  # identifier, natural or mixed (text/query_terms.py)
    identifiers: tuple[str, ...]
    words: tuple[str, ...]  # searched for; stop words left out
    dropped: tuple[str, ...]  # the stop words left out
    fusion: str  # convex or rrf (search/fusion.py); the mode's own ranking outside hybrid
    alpha: float | None  # convex: the lexical share
    depth: int  # candidates of each side fused
    min_score: float | None = None  # the relevance floor applied (None: none)
    below_min_score: int = 0  # hits only the semantic side found, left out for being below it
    ranking: tuple[str, ...] = ()  # the stages of the ranking stack that ran, in order (ranking.py)


@attrs.frozen
class SearchResult:
    """One page of hits, the facets of every candidate, and how complete the index is."""

    query: str
    mode: str
    took_ms: float
    total_hits: int
    hits: list[Hit]
    facets: dict[str, list[tuple[str, int]]]
    index: IndexState
    message: str | None = None
    explanation: Explanation | None = None
    # the chunks the semantic side searched (those with a vector when it ran, the quick
    # pass's included); None where it did not run (mode lexical, no vector yet, the model
    # unavailable)
    semantic_covered: int | None = None
    semantic_quick: int = 0  # of those, the chunks searched by their quick-pass vector

    @property
    def notes(self) -> str | None:
        """What every front end shows beside the hits: the message, and how much of the
        index the semantic side covered while some chunks are not embedded yet."""
        coverage = coverage_note(self.mode, self.semantic_covered, self.index.chunks, self.semantic_quick)
        return "; ".join(n for n in (self.message, coverage) if n) or None


def _share(part: int, whole: int) -> str:
    return f"{part:,} of {whole:,} chunks ({100 * part // max(whole, 1)}%)"


def coverage_note(mode: str, covered: int | None, chunks: int, quick: int = 0) -> str | None:
    """``semantic side: 1,200 of 4,000 chunks embedded (30%)``, and what became of the
    others: in hybrid mode they were ranked by their words alone; in semantic mode they
    were not searched. While the quick pass stands in for the model (``quick`` of the
    covered chunks), it says how many the quick model covered. None when the semantic side
    did not run, or when the model covered every chunk."""
    if covered is None or mode not in ("hybrid", "semantic") or (covered >= chunks and not quick):
        return None
    by_quick = (f"{_share(quick, chunks)} by the quick model until the embedding model reaches them"
                if quick else "")
    if covered >= chunks:
        return f"semantic side: {by_quick}"
    rest = "the others were ranked by their words alone" if mode == "hybrid" else "the others were not searched"
    return (f"semantic side: {covered:,} of {chunks:,} chunks embedded ({100 * covered // max(chunks, 1)}%)"
            f"{', ' + by_quick if quick else ''}; {rest}")
