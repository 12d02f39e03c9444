"""The values of a search request, checked: filters by their shape, numbers by their
range, names against Sylk's lists. A typo is an error naming the field as the front end
calls it, never an empty result. Pure; shared by every front end.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import FieldError
from ..languages import BY_NAME
from ..model import (
    BOUND,
    CHUNK_KINDS,
    FILE_TYPES,
    FILTERS,
    OPTIONS,
    ROLES,
    SEARCH_MODES,
    TIME,
    VALUES,
    FilterSpec,
    OptionSpec,
)
from .filters import BY_FIELD, LINE_FILTERS, Filters

MODES = SEARCH_MODES
TYPES = FILE_TYPES
LANGUAGES = (*BY_NAME, "text")  # a file without a grammar (config, plain text) is "text"
KINDS = CHUNK_KINDS
_DOC_TYPE = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")  # virtual documents' own types (documents.py)


class QueryError(FieldError):
    """A malformed search request; ``field`` names the offending parameter."""


def read_options(given: Mapping[str, Any], field_of: Callable[[OptionSpec], str] = lambda s: s.name) -> dict[str, Any]:
    """The options of a ranked search (model.OPTIONS) a front end was given, by name
    (None: not given), each checked: true or false, or one of its choices; QueryError
    names the field as the front end calls it (``groupBy``, ``group_by``). The one
    reader of options for the LSP's params, MCP's arguments and the command line."""
    out: dict[str, Any] = {}
    for spec in OPTIONS:
        value = given.get(spec.name)
        if value is None:
            continue
        if spec.choices and value not in spec.choices:
            raise QueryError(field_of(spec), f"one of {', '.join(spec.choices)}, got {value!r}")
        if not spec.choices and not isinstance(value, bool):
            raise QueryError(field_of(spec), "expected true or false")
        out[spec.name] = value
    return out


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
