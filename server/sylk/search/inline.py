"""The inline filter syntax: ``lang:go path:src/** -role:test`` in a query, and the
query read once into its words, its filters and the tree every hit must satisfy.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

import attrs

from ..model import FILTERS, VALUES
from ..text.query_tree import (
    MARK,
    OR,
    All,
    Either,
    Filter,
    Node,
    Not,
    QuerySyntaxError,
    QueryWords,
    Regex,
    Term,
    all_of,
    atoms,
    read,
)
from .filters import BY_FIELD, BY_INLINE, FILE_FILTERS, Filters, compiled_regex, line_filters
from .pattern import PatternError
from .values import QueryError, check_values, line_filter_keys, read_value

_INLINE = re.compile(r'(?<![^\s(])(-?)(' + "|".join(sorted(BY_INLINE, key=len, reverse=True)) + r'|is):("[^"]*"|\S+)')


@attrs.frozen
class _Found:
    """One inline filter of a query: left out (``-``) or kept, as an atom of the tree."""

    negated: bool
    atom: Filter


@attrs.frozen
class ParsedQuery:
    """A query read once. ``filters``: those side by side (every hit passes each);
    ``words``: the words to look for and the tree every hit must satisfy, which holds
    the filters joined by ``OR`` or grouped (``(lang:go OR path:cmd/**) retry``);
    ``text``: the query as shown, its filters out unless the tree holds one."""

    text: str
    filters: Filters
    words: QueryWords


@functools.lru_cache(maxsize=256)
def parse_query(query: str) -> ParsedQuery:
    """``query`` read into its filters and its words (text/query_tree.py): a filter in
    the tree is an atom as a word is, so ``lang:go OR path:cmd/**`` and
    ``-(role:test OR path:vendor/**)`` say what they say; the filters every hit must
    pass side by side are taken out of the tree (the index applies them first). Words
    side by side must all be held when an OR joins words (``(http OR grpc) client``);
    when it joins filters only, the words rank as in a query without one.
    QueryError names the field of a bad filter, or ``query`` when a boolean query
    cannot be read. Read once for every folder a request goes to (the answer is a
    record, immutable)."""
    marked, found = _marked(query)
    words = read_words(marked, [f.atom for f in found])
    for atom in atoms(words.match):
        if isinstance(atom, Regex):
            try:  # (a regex that is not one: the error now, naming the query)
                compiled_regex(atom)
            except PatternError as exc:
                raise QueryError("query", f"/{atom.source}/: {str(exc).split(': ', 1)[-1]}") from None
    match = _simplified(words.match) if words.match is not None else None
    side = match.nodes if isinstance(match, All) else (match,) if match is not None else ()
    taken: list[_Found] = []
    rest: list[Node] = []
    for n in side:
        if isinstance(n, Filter):
            taken.append(_Found(False, n))
        elif isinstance(n, Not) and isinstance(n.node, Filter) and BY_FIELD[n.node.name].negatable:
            taken.append(_Found(True, n.node))
        else:
            rest.append(n)
    if not any(_words_either(n) for n in rest):  # OR joins filters only: the words rank as without an OR
        rest = [n for n in rest if not isinstance(n, Term)]
    # a boolean query with filters is shown as typed (its operators read with its filters)
    shown = query if found and OR in marked.split() else _unmarked(marked)
    return ParsedQuery(" ".join(shown.split()), _side_by_side(taken), QueryWords(words.text, all_of(rest)))


@functools.lru_cache(maxsize=256)
def parse_inline(query: str) -> tuple[str, Filters]:
    """``lang:python path:src/** kind:function -role:test retry backoff`` -> ("retry
    backoff", filters): every inline filter, side by side (``OR`` is not read here: a
    line search's filters, an exclusion). Values may be quoted (``path:"my dir/**"``)
    or comma-separated (``lang:go,rust``: any of them); a leading ``-`` leaves out what
    matches (filters of values only); ``exported:true`` / ``exported:false`` (or
    ``is:exported``) filter by exported; ``after:2024-05-31`` and ``before:`` by the date
    of the file's last commit."""
    marked, found = _marked(query)
    return _unmarked(marked), _side_by_side(found)


def _side_by_side(found: Sequence[_Found]) -> Filters:
    """Filters every hit must pass, each of ``found``: a filter of values given twice
    takes either value (``lang:go lang:rust``), another the last."""
    fields: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
    for f in found:
        into, a = fields[f.negated], f.atom
        into[a.name] = into.get(a.name, ()) + a.value if BY_FIELD[a.name].shape == VALUES else a.value
    return Filters(**fields[0], exclude=Filters(**fields[1]) if fields[1] else None)


def read_words(query: str, filters: Sequence[Filter] = ()) -> QueryWords:
    """The words of ``query`` as text/query_tree.py reads them (``filters``: those its
    marks stand for); QueryError names ``query`` when a boolean query cannot be read."""
    try:
        return read(query, filters)
    except QuerySyntaxError as exc:
        raise QueryError("query", str(exc)) from None


def _marked(query: str) -> tuple[str, list[_Found]]:
    """``query`` with a mark (query_tree.MARK and a number) where each inline filter was,
    and the filters, read and checked. A ``)`` that closes a group is not part of an
    unquoted value (``(lang:go OR path:cmd/**)``)."""
    found: list[_Found] = []
    query = query.replace(MARK, " ")  # (the user's: a mark is this function's to place)

    def take(m: re.Match[str]) -> str:
        neg, key, raw = m.group(1), m.group(2), m.group(3)
        closing = ""
        if not raw.startswith('"'):
            while raw.endswith(")") and raw.count("(") < raw.count(")"):
                raw, closing = raw[:-1], closing + ")"
        value = raw.strip('"')
        if key == "is":
            if value != "exported":
                raise QueryError("is", f"only is:exported is known, got is:{value}")
            key, value = "exported", "true"
        spec = BY_INLINE[key]
        if neg and not spec.negatable:
            raise QueryError(f"-{key}", "only filters of values can leave out what matches: "
                                        + ", ".join(f"-{s.inline[0]}:" for s in FILTERS if s.negatable))
        read: Any = check_values(key, spec.name, [v for v in value.split(",") if v]) if spec.shape == VALUES \
            else read_value(key, spec.shape, value)
        found.append(_Found(bool(neg), Filter(spec.name, read)))
        return f" {neg}{MARK}{len(found) - 1} {closing}"
    return _INLINE.sub(take, query), found


_MARKS = re.compile("-?" + MARK + r"\d+")
_EMPTY_GROUP = re.compile(r"-?\(\s+\)")  # what a group of filters leaves: ( lang:go )


def _unmarked(marked: str) -> str:
    """The query without its filters (nor the parentheses only they were in)."""
    if MARK not in marked:
        return " ".join(marked.split())
    return " ".join(_EMPTY_GROUP.sub(" ", _MARKS.sub(" ", marked)).split())


def _words_either(node: Node) -> bool:
    """``node`` holds an OR with a word or a regex on a side (a boolean query of words)."""
    if isinstance(node, Either) and any(not isinstance(a, Filter) for a in atoms(node)):
        return True
    if isinstance(node, Not):
        return _words_either(node.node)
    return isinstance(node, (All, Either)) and any(_words_either(n) for n in node.nodes)


def _simplified(node: Node) -> Node:
    """The tree with each ``OR`` of one filter's values made one filter of them all
    (``lang:go OR lang:rust``: ``lang:go,rust``), which the index applies itself."""
    if isinstance(node, Not):
        return Not(_simplified(node.node))
    if isinstance(node, All):
        return All(tuple(_simplified(n) for n in node.nodes))
    if isinstance(node, Either):
        nodes = tuple(_simplified(n) for n in node.nodes)
        names = {n.name for n in nodes if isinstance(n, Filter)}
        if len(names) == 1 and all(isinstance(n, Filter) for n in nodes) and BY_FIELD[next(iter(names))].negatable:
            return Filter(next(iter(names)), tuple(v for n in nodes for v in n.value))  # type: ignore[union-attr]
        return Either(nodes)
    return node


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
