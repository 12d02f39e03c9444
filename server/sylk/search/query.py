"""Search requests: filters, the inline filter syntax, and the checks of each value
(a typo is an error naming the field, never an empty result).

Pure functions and values, shared by the CLI, MCP and the ``sylk/search`` request
(whose params params.py reads into these requests).
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from ..config import SearchSettings
from ..errors import FieldError
from ..ingest.packages import within
from ..languages import BY_NAME
from ..model import BOUND, CHUNK_KINDS, FILE_TYPES, FILTERS, ROLES, SEARCH_MODES, TIME, VALUES, FilterSpec
from ..text.query_tree import QuerySyntaxError, QueryWords, read
from .agent import expand_terms
from .filters import BY_FIELD, BY_INLINE, FILE_FILTERS, LINE_FILTERS, Filters
from .fusion import RRF_K

MODES = SEARCH_MODES
TYPES = FILE_TYPES
LANGUAGES = (*BY_NAME, "text")  # a file without a grammar (config, plain text) is "text"
KINDS = CHUNK_KINDS
_DOC_TYPE = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")  # virtual documents' own types (documents.py)
_DEFAULTS = SearchSettings()  # the defaults are the settings' (config.py)


class QueryError(FieldError):
    """A malformed search request; ``field`` names the offending parameter."""


def unknown_packages(packages: Mapping[str, str], wanted: Sequence[str]) -> list[str]:
    """The ``wanted`` packages that hold no indexed file (a typo, most likely)."""
    held = set(packages.values())
    return [w for w in wanted if not any(within(p, w) for p in held)]


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
    # the query's words, read once: what to look for, and what every hit must hold or
    # must not (``-mock``, ``a OR b``); QueryError names ``query`` when it cannot be read
    words: QueryWords = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "words", read_words(self.query))


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


def read_words(query: str) -> QueryWords:
    """The words of ``query`` (its inline filters out) as text/query_tree.py reads them;
    QueryError names ``query`` when a boolean query cannot be read."""
    try:
        return read(query)
    except QuerySyntaxError as exc:
        raise QueryError("query", str(exc)) from None


def line_filters(f: Filters) -> Filters:
    """``f`` with only what a line search filters by (filters.LINE_FILTERS)."""
    return f.only(LINE_FILTERS)


_INLINE = re.compile(r'(?<![^\s(])(-?)(' + "|".join(sorted(BY_INLINE, key=len, reverse=True)) + r'|is):("[^"]*"|\S+)')


def parse_inline(query: str) -> tuple[str, Filters]:
    """``lang:python path:src/** kind:function -role:test retry backoff`` -> ("retry
    backoff", filters). Values may be quoted (``path:"my dir/**"``) or comma-separated
    (``lang:go,rust``); a leading ``-`` leaves out what matches (filters of values only);
    ``exported:true`` / ``exported:false`` (or ``is:exported``) filter by exported;
    ``after:2024-05-31`` and ``before:`` by the date of the file's last commit."""
    found: dict[str, dict[str, Any]] = {"": {}, "-": {}}

    def take(m: re.Match[str]) -> str:
        neg, key, value = m.group(1), m.group(2), m.group(3).strip('"')
        if key == "is":
            if value != "exported":
                raise QueryError("is", f"only is:exported is known, got is:{value}")
            key, value = "exported", "true"
        spec = BY_INLINE[key]
        if neg and not spec.negatable:
            raise QueryError(f"-{key}", "only filters of values can leave out what matches: "
                                        + ", ".join(f"-{s.inline[0]}:" for s in FILTERS if s.negatable))
        into = found[neg]
        if spec.shape == VALUES:
            values = [v for v in value.split(",") if v]
            into[spec.name] = into.get(spec.name, ()) + check_values(key, spec.name, values)
        else:
            into[spec.name] = read_value(key, spec.shape, value)
        return " "
    rest = _INLINE.sub(take, query)
    exclude = Filters(**found["-"]) if found["-"] else None
    return " ".join(rest.split()), Filters(**found[""], exclude=exclude)


def parse_exclusions(field: str, items: Sequence[str], *, line: bool = False,
                     files: bool = False) -> Filters | None:
    """What to leave out, written as inline filters without their ``-`` (``--exclude
    path:vendor/**``, MCP's ``exclude``): the filters, or None for none. ``line``: only the
    filters a line search applies; ``files``: only the filters of a file (Find
    References). QueryError names ``field``."""
    out = Filters()
    for item in items:
        try:
            rest, f = parse_inline("-" + item.removeprefix("-"))
        except QueryError as exc:
            raise QueryError(field, f"{item!r}: {str(exc).split(': ', 1)[-1]}") from None
        if rest or f.exclude is None:
            raise QueryError(field, f"expected a filter such as path:vendor/** or role:test, got {item!r}")
        out = out.merged(f.exclude)
    if line and out != line_filters(out):
        raise QueryError(field, f"a line search leaves out by {line_filter_keys()} only")
    if files and out != out.only(FILE_FILTERS):
        raise QueryError(field, f"references leave out files by {line_filter_keys(FILE_FILTERS)} only")
    return None if out.empty else out


def read_filters(given: Mapping[str, Any], field_of: Callable[[FilterSpec], str] = lambda s: s.name,
                 specs: Sequence[FilterSpec] = FILTERS, exclude: Filters | None = None) -> Filters:
    """The filters a front end was given, by the field of each (``Filters``' names; None or
    an empty list: not given), each value checked by its shape; QueryError names the field
    as the front end calls it (``field_of``: ``filters.languages``, ``--lang``, ``languages``).
    Those given that are not in ``specs`` are an error too. The one reader of filter values
    for the LSP's params, MCP's arguments and the command line's flags."""
    known = {s.name: s for s in specs}
    out: dict[str, Any] = {}
    for name, value in given.items():
        spec = known.get(name) or BY_FIELD[name]
        field = field_of(spec)
        if value is None or (spec.shape == VALUES and not value):
            continue
        if name not in known:
            raise QueryError(field, f"not supported here (supported: {', '.join(field_of(s) for s in specs)})")
        if spec.shape == VALUES:
            out[name] = check_values(field, name, _strings(field, value))
        elif spec.shape == BOUND:
            out[name] = check_bound(field, value)
        elif spec.shape == TIME:
            try:
                out[name] = parse_time(field, value)
            except ValueError as exc:
                raise QueryError(field, str(exc).split(": ", 1)[1]) from None
        else:
            out[name] = check_exported(field, value)
    return Filters(**out, exclude=exclude)


def _strings(field: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise QueryError(field, "expected a string or a list of strings")


def read_value(field: str, shape: str, value: str) -> Any:
    """A single-valued filter's value as written in a query or on the command line."""
    if shape == BOUND:
        try:
            return check_bound(field, int(value))
        except ValueError:
            raise QueryError(field, f"expected a number, got {value!r}") from None
    if shape == TIME:
        try:
            return parse_time(field, value)
        except ValueError as exc:
            raise QueryError(field, str(exc).split(": ", 1)[1]) from None
    return check_exported(field, _INLINE_BOOL.get(value.lower(), value))


def check_bound(field: str, value: Any) -> int:
    """A number of lines (``minLines``, ``maxlines:``); QueryError names ``field``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise QueryError(field, f"expected an integer, got {value!r}")
    if value < 0:
        raise QueryError(field, "must be >= 0")
    return value


def line_filter_keys(names: Sequence[str] = LINE_FILTERS) -> str:
    """The inline keys of these filters (those a line search applies): ``lang:, type:, ...``."""
    return ", ".join(f"{s.inline[0]}:" for s in FILTERS if s.name in names)


_INLINE_BOOL = {"true": True, "yes": True, "false": False, "no": False}


# The ranges of a request's numbers, written once; each front end names the field its way
# (limit, contextLines, --context, context_lines). None: no upper bound.
RANGES: dict[str, tuple[int, int | None]] = {"limit": (1, 1000), "offset": (0, None), "context_lines": (0, 50)}


def check_number(field: str, name: str, value: Any) -> int:
    """``value`` of the request's number ``name`` (RANGES) when it is in its range;
    QueryError names ``field``."""
    low, high = RANGES[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise QueryError(field, f"expected an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        raise QueryError(field, f"must be between {low} and {high}" if high is not None else f"must be >= {low}")
    return value


def check_exported(field: str, value: Any) -> bool | None:
    """The ``exported`` filter as the user gave it: true, false, or None (either);
    QueryError names ``field`` for anything else."""
    if value is not None and not isinstance(value, bool):
        raise QueryError(field, f"expected true or false (null: either), got {value!r}")
    return value


def is_document_type(value: str) -> bool:
    """``value`` can name a virtual document's type: a lower-case name that is neither a
    file type nor a language (documents.py refuses those)."""
    return bool(_DOC_TYPE.match(value)) and value not in TYPES and value not in BY_NAME


def check_values(field: str, name: str, values: Sequence[str]) -> tuple[str, ...]:
    """``values`` of the filter ``name`` (languages, types, kinds, roles) when Sylk knows
    each, so that a typo is an error rather than no hits; QueryError names ``field`` (as
    the user wrote it: ``filters.types``, ``lang``, ``--kind``) and lists the allowed values.
    The one place this rule is written, for the LSP, MCP and the CLI."""
    if name == "types":
        bad = [v for v in values if v not in TYPES and not is_document_type(v)]
        if bad:
            hint = f" ({bad[0]} is a language: lang:{bad[0]})" if bad[0] in BY_NAME else ""
            raise QueryError(field, f"unknown type {bad[0]!r}{hint}; one of {', '.join(TYPES)} "
                                    "or a document type (note, prompt, ...)")
        return tuple(values)
    allowed = {"languages": LANGUAGES, "kinds": KINDS, "roles": ROLES}.get(name)
    if allowed is None:
        return tuple(values)
    bad = [v for v in values if v not in allowed]
    if bad:
        what = {"languages": "language", "kinds": "kind", "roles": "role"}[name]
        raise QueryError(field, f"unknown {what} {bad[0]!r}; one of {', '.join(allowed)}")
    return tuple(values)


def check_min_score(field: str, value: Any) -> float | None:
    """A relevance floor as the user gave it (``minScore``, ``--min-score``): a number
    from 0 to 1, where 0 and None mean no floor (None); QueryError names ``field``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise QueryError(field, f"expected a number from 0 to 1 (0 or null: no floor), got {value!r}")
    return float(value) or None


def from_settings(settings: SearchSettings, query: str, **fields: Any) -> SearchRequest:
    """A request whose mode, limit, weights, fusion, relevance floor and ranking stages are
    the settings' unless ``fields`` say otherwise; its filters leave out what
    ``search.exclude`` does unless they name that filter (default_exclusions)."""
    defaults: dict[str, Any] = {
        "mode": settings.mode, "limit": settings.limit, "rrf_k": settings.rrf_k, "fusion": settings.fusion,
        "weights": Weights(settings.weights.lexical, settings.weights.semantic),
        "min_score": settings.min_score or None, "ranking_off": tuple(settings.ranking_off)}
    given = {**defaults, **fields}
    given["filters"] = default_exclusions(given.get("filters", Filters()), settings)
    return SearchRequest(query=query, **given)


def search_request(settings: SearchSettings, query: str, *, filters: Filters = Filters(), expand: bool = False,
                   **fields: Any) -> SearchRequest:
    """A ranked search as every front end asks for one: ``query`` with its inline filters
    (joined to ``filters``), ``expand``'s added words (agent.expand_terms: not the words left
    out), the rest of ``fields`` or the settings' (from_settings)."""
    text, inline = parse_inline(query)
    extra = expand_terms(read_words(text).text) if expand else ()
    return from_settings(settings, text, filters=filters.merged(inline), expand=expand, extra_terms=extra, **fields)


def line_request(settings: SearchSettings, pattern: str, mode: str, *, filters: Filters = Filters(),
                 **fields: Any) -> GrepRequest:
    """A line search as every front end asks for one: its filters leave out what
    ``search.exclude`` does (default_exclusions); ``fields`` as GrepRequest's."""
    return GrepRequest(pattern, mode, filters=default_exclusions(filters, settings, line=True), **fields)


def default_exclusions(filters: Filters, settings: SearchSettings, *, line: bool = False) -> Filters:
    """``filters`` leaving out what ``search.exclude`` does, but for the filters they name
    themselves, to keep or to leave out (``role:test`` asks for the tests a default
    ``role:test`` exclusion hides); ``line``: a line search's filters only."""
    if not settings.exclude:
        return filters
    default = parse_exclusions("search.exclude", settings.exclude)
    if default is None:
        return filters
    named = {s.name for s, _ in filters.given()} | ({s.name for s, _ in filters.exclude.given()}
                                                 if filters.exclude is not None else set())
    kept = [s.name for s in FILTERS if s.negatable and s.name not in named and (s.line or not line)]
    default = default.only(kept)
    return filters if default.empty else filters.merged(Filters(exclude=default))


def parse_time(field: str, value: object) -> int:
    """Seconds since the epoch from a number or an ISO date / date-time (UTC unless it
    says otherwise); ValueError names the field."""
    if isinstance(value, bool):
        raise ValueError(f"{field}: expected a date (2024-05-31) or seconds since the epoch, got {value!r}")
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str):
        try:
            when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            if when.tzinfo is None:
                return calendar.timegm(when.timetuple())
            return int(when.timestamp())
    raise ValueError(f"{field}: expected a date (2024-05-31) or seconds since the epoch, got {value!r}")
