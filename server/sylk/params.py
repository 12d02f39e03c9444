"""``sylk/search`` params (JSON, camelCase) read into requests: ``request_from_params``
(a ranked search) and ``line_request_from_params`` (exact and regex search), with one
QueryError naming the field for anything malformed. The values are checked by
search/values.py's rules, the same the inline syntax, the CLI and MCP use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from .config import SearchSettings
from .model import FILTERS, LINE_MODES, OPTIONS
from .search.query import CASE_CHOICES, Filters, GrepRequest, SearchRequest, Weights, line_request, search_request
from .search.values import (
    MODES,
    QueryError,
    check_min_score,
    check_number,
    line_filter_keys,
    read_filters,
    read_options,
)
from .search.filters import line_filters
from .search.inline import parse_inline

_SLASHED = re.compile(r"^/(.+)/$", re.DOTALL)
_DEFAULTS = SearchSettings()  # the defaults are the settings' (config.py)


def wants_lines(params: Mapping[str, Any]) -> bool:
    """``sylk/search`` params that ask for a line search: mode ``exact`` or ``regex``, or
    a query (its inline filters aside) written ``/like this/``."""
    if params.get("mode") in LINE_MODES:
        return True
    query = params.get("query")
    if not isinstance(query, str) or "/" not in query:
        return False
    try:
        return bool(_SLASHED.match(parse_inline(query)[0]))
    except QueryError:  # (a bad inline filter: the request as it is says so)
        return False


def line_request_from_params(params: Mapping[str, Any], settings: SearchSettings = _DEFAULTS) -> GrepRequest:
    """A GrepRequest from ``sylk/search`` params (``wants_lines``): ``query`` is the
    pattern as it is in modes exact and regex; a ``/regex/`` query of another mode may
    carry inline filters. QueryError names a bad field."""
    if not isinstance(params, Mapping):
        raise QueryError("params", "expected an object")
    query = params.get("query")
    if not isinstance(query, str) or not query:
        raise QueryError("query", "required, a non-empty string")
    mode = params.get("mode", settings.mode)
    inline = Filters()
    if mode not in LINE_MODES:
        text, inline = parse_inline(query)
        query, mode = _SLASHED.match(text).group(1), "regex"  # type: ignore[union-attr]
        if inline != line_filters(inline):
            raise QueryError("query", f"a /regex/ query filters by {line_filter_keys()} only")
    filters = filters_from_params(params.get("filters"), line=True, mode=mode).merged(inline)
    case = params.get("caseSensitive", "smart")
    if not any(case is c or (isinstance(c, str) and case == c) for c in CASE_CHOICES):
        raise QueryError("caseSensitive", f"true, false or \"smart\", got {case!r}")
    whole = params.get("wholeWord", False)
    if not isinstance(whole, bool):
        raise QueryError("wholeWord", "expected true or false")
    return line_request(
        settings, query, mode, filters=filters, case=case, whole_word=whole,
        limit=_int("limit", "limit", params.get("limit"), settings.limit),
        offset=_int("offset", "offset", params.get("offset"), 0),
    )


def request_from_params(params: Mapping[str, Any] | None, settings: SearchSettings = _DEFAULTS) -> SearchRequest:
    """A SearchRequest from ``sylk/search`` params (camelCase), what they leave out from
    the settings; QueryError names a bad field."""
    if not isinstance(params, Mapping):
        raise QueryError("params", "expected an object")
    query = params.get("query")
    if not isinstance(query, str):
        raise QueryError("query", "required, a string")
    mode = params.get("mode", settings.mode)
    if mode not in MODES:
        raise QueryError("mode", f"one of {', '.join(MODES)}, got {mode!r}")
    filters = filters_from_params(params.get("filters"))
    w = params.get("weights")
    w = {} if w is None else w
    if not isinstance(w, Mapping):
        raise QueryError("weights", "expected an object")
    weights = Weights(
        lexical=_float("weights.lexical", w.get("lexical"), settings.weights.lexical),
        semantic=_float("weights.semantic", w.get("semantic"), settings.weights.semantic),
    )
    options = read_options({s.name: params.get(s.wire) for s in OPTIONS}, lambda s: s.wire)
    floor = {"min_score": check_min_score("minScore", params["minScore"])} if "minScore" in params else {}
    return search_request(
        settings,
        query,
        mode=mode,
        limit=_int("limit", "limit", params.get("limit"), settings.limit),
        offset=_int("offset", "offset", params.get("offset"), 0),
        filters=filters,
        context_lines=_int("contextLines", "context_lines", params.get("contextLines"), 2),
        weights=weights,
        **options,
        **floor,
    )


def filters_from_params(raw: Any, *, line: bool = False, mode: str = "", field: str = "filters") -> Filters:
    """The ``filters`` object of sylk/search read through the filter table (filters.py),
    its ``exclude`` object too (filters of values only); ``line``: a line search's."""
    raw = {} if raw is None else raw
    if not isinstance(raw, Mapping):
        raise QueryError(field, "expected an object")
    specs = [s for s in FILTERS if s.line or not line]
    known = {s.wire: s for s in specs}
    unknown = sorted(set(raw) - set(known) - ({"exclude"} if field == "filters" else set()))
    if unknown:
        supported = ", ".join(sorted(known))
        if line:
            raise QueryError(f"{field}.{unknown[0]}", f"not supported in mode {mode} (supported: {supported})")
        raise QueryError(f"{field}.{unknown[0]}", f"not supported (supported: {supported})")
    given = {spec.name: raw[wire] for wire, spec in known.items() if wire in raw}
    filters = read_filters(given, lambda s: f"{field}.{s.wire}", specs)
    if field == "filters" and raw.get("exclude") is not None:
        ex = raw["exclude"]
        if isinstance(ex, Mapping):
            bad = sorted(k for k in ex if k in known and not known[k].negatable)
            if bad:
                raise QueryError(f"filters.exclude.{bad[0]}", "only filters of values can leave out what matches: "
                                 + ", ".join(s.wire for s in specs if s.negatable))
        return attrs.evolve(filters, exclude=filters_from_params(ex, line=line, mode=mode, field="filters.exclude"))
    return filters


def _float(field: str, value: Any, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise QueryError(field, f"expected a number >= 0, got {value!r}")
    return float(value)


def _int(field: str, name: str, value: Any, default: int) -> int:
    """A number of the params (query.RANGES ``name``), or ``default`` when not given."""
    return default if value is None else check_number(field, name, value)
