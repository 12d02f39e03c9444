"""Search requests (ranked and line searches) as every front end builds them: the
query read once (inline.py), the values checked (values.py), the settings' defaults.

Pure functions and values, shared by the CLI, MCP and the ``sylk/search`` request
(whose params params.py reads into these requests).
"""

from __future__ import annotations

from typing import Any

import attrs

from ..config import SearchSettings
from ..model import FILTERS
from ..text.query_tree import Filter, Node, QueryWords, atoms
from .agent import expand_terms
from .filters import Filters, tree_needs_git
from .fusion import RRF_K
from .inline import parse_exclusions, parse_query, read_words

_DEFAULTS = SearchSettings()  # the defaults are the settings' (config.py)


@attrs.frozen
class Weights:
    lexical: float = _DEFAULTS.weights.lexical
    semantic: float = _DEFAULTS.weights.semantic


@attrs.frozen
class SearchRequest:
    query: str
    mode: str = _DEFAULTS.mode
    limit: int = _DEFAULTS.limit
    offset: int = 0
    filters: Filters = Filters()
    fuzzy: bool = False
    facets: bool = False
    context_lines: int = 2
    weights: Weights = Weights()
    rrf_k: int = RRF_K
    # fusion (fusion.py): the method, a fixed lexical share for convex (None: by query
    # style), how many candidates of each side are fused (None: 3x the page, at least 30)
    fusion: str = _DEFAULTS.fusion
    alpha: float | None = None
    fuse_depth: int | None = None
    explain: bool = False  # each side's rank and raw score on every hit
    # the relevance floor (search.minScore): modes semantic and hybrid leave out the hits
    # only the semantic side found whose cosine similarity is below it; None: no floor
    min_score: float | None = _DEFAULTS.min_score or None
    ranking_off: tuple[str, ...] = tuple(_DEFAULTS.ranking_off)  # stages skipped (ranking.py; search.rankingOff)
    # agent options (see agent.py): words added to the lexical side, and what to add to the result
    extra_terms: tuple[str, ...] = ()
    expand: bool = False
    group_by: str | None = None
    related_files: bool = False
    follow_ups: bool = False
    summary: bool = False
    # the query's words, read once: what to look for, and what every hit must satisfy
    # (``-mock``, ``a OR b``, ``lang:go OR path:cmd/**``; inline.parse_query); None: read
    # from ``query`` (its words alone); QueryError names ``query`` when it cannot be read
    words: QueryWords = attrs.field(default=None, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.words is None:
            object.__setattr__(self, "words", read_words(self.query))

    @property
    def needs_git(self) -> bool:
        """A filter of the request reads git metadata (filters.py)."""
        return self.filters.needs_git or tree_needs_git(self.words.match)


@attrs.frozen
class GrepRequest:
    """A line search. ``mode``: ``exact`` (``pattern`` is a literal string) or ``regex``
    (Python ``re`` syntax, the subset README.md names). ``case``: True (sensitive),
    False, or ``"smart"`` (sensitive when the pattern holds an upper-case letter, as
    ``rg -S``). ``filters``: languages, types, paths and kinds (of the enclosing symbol)."""

    pattern: str
    mode: str = "regex"
    case: bool | str = "smart"
    whole_word: bool = False
    filters: Filters = Filters()
    limit: int | None = 20  # None: every matching line
    offset: int = 0
    time_limit_s: float | None = 2.0  # then the answer is partial (and says so); None: no limit


CASE_CHOICES = (True, False, "smart")


def from_settings(settings: SearchSettings, query: str, **fields: Any) -> SearchRequest:
    """A request whose mode, limit, weights, fusion, relevance floor and ranking stages are
    the settings' unless ``fields`` say otherwise; its filters leave out what
    ``search.exclude`` does unless they name that filter (default_exclusions)."""
    defaults: dict[str, Any] = {
        "mode": settings.mode, "limit": settings.limit, "rrf_k": settings.rrf_k, "fusion": settings.fusion,
        "weights": Weights(settings.weights.lexical, settings.weights.semantic),
        "min_score": settings.min_score or None, "ranking_off": tuple(settings.ranking_off)}
    given = {**defaults, **fields}
    words = given.get("words")
    given["filters"] = default_exclusions(given.get("filters", Filters()), settings,
                                          tree=words.match if words is not None else None)
    return SearchRequest(query=query, **given)


def search_request(settings: SearchSettings, query: str, *, filters: Filters = Filters(), expand: bool = False,
                   **fields: Any) -> SearchRequest:
    """A ranked search as every front end asks for one: ``query`` with its inline filters
    (joined to ``filters``), ``expand``'s added words (agent.expand_terms: not the words left
    out), the rest of ``fields`` or the settings' (from_settings)."""
    parsed = parse_query(query)
    extra = expand_terms(parsed.words.text) if expand else ()
    return from_settings(settings, parsed.text, filters=filters.merged(parsed.filters), words=parsed.words,
                         expand=expand, extra_terms=extra, **fields)


def line_request(settings: SearchSettings, pattern: str, mode: str, *, filters: Filters = Filters(),
                 **fields: Any) -> GrepRequest:
    """A line search as every front end asks for one: its filters leave out what
    ``search.exclude`` does (default_exclusions); ``fields`` as GrepRequest's."""
    return GrepRequest(pattern, mode, filters=default_exclusions(filters, settings, line=True), **fields)


def default_exclusions(filters: Filters, settings: SearchSettings, *, line: bool = False,
                       tree: Node | None = None) -> Filters:
    """``filters`` leaving out what ``search.exclude`` does, but for the filters they (or
    the query's ``tree``) name themselves, to keep or to leave out (``role:test`` asks for
    the tests a default ``role:test`` exclusion hides); ``line``: a line search's filters only."""
    if not settings.exclude:
        return filters
    default = parse_exclusions("search.exclude", settings.exclude)
    if default is None:
        return filters
    named = {s.name for s, _ in filters.given()} | ({s.name for s, _ in filters.exclude.given()}
                                                 if filters.exclude is not None else set())
    named |= {a.name for a in atoms(tree) if isinstance(a, Filter)}
    kept = [s.name for s in FILTERS if s.negatable and s.name not in named and (s.line or not line)]
    default = default.only(kept)
    return filters if default.empty else filters.merged(Filters(exclude=default))


