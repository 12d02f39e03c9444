"""The words of a search query as a tree: what a hit must hold, and what it must not.

- ``-word``, ``-"a phrase"``: a hit holding it is left out, in any query;
- ``a OR b`` (upper case): a query holding an ``OR`` is boolean: words side by side must
  all be held, ``OR`` takes either side, parentheses group and ``-(...)`` leaves a group
  out (``(http OR grpc) client -mock``: client, and http or grpc, and not mock);
- without an ``OR``, the other words rank as they always have (a hit need not hold each
  of them) and parentheses are text (``JSON Pointer (RFC 6901)``).

A word is held when the chunk's name or text holds it as the index splits words
(``retry`` is in ``retryCount``; ``getUser`` is the words get, user in a row);
store/lexical_query.compile_match evaluates the tree over the lexical index, for every
mode. A ``-`` before a digit, a single letter or another ``-`` is text (``-1``, ``-v``,
``--verbose``); quote a word that starts with ``-`` to search for it (``"-Wall"``).

``/a regex/`` among the words is an atom: a hit has a line it matches
(``retry /attempts\\s*\\*/``, ``-/TODO|FIXME/``); a query that is only ``/a regex/`` is a
line search instead (params.wants_lines).

Filters are atoms of the tree too (``(lang:go OR path:cmd/**) retry``):
search/inline.parse_query reads them (the filter table's syntax) and puts a mark
(``MARK`` and its number) where each stood, and ``read`` makes each mark its ``Filter``.

Pure: ``read`` parses once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

import attrs

from .words import index_words

OR = "OR"
# A filter's place in a query (search/inline.parse_query): MARK, then its number in the
# filters given to ``read``; a private-use character, never in a word.
MARK = "\ue000"


class QuerySyntaxError(ValueError):
    """A boolean query that cannot be read (an ``OR`` with nothing on one side, a
    parenthesis without its pair)."""


@attrs.frozen
class Term:
    """A word, an identifier, a ``prefix*`` or a ``"phrase"``, as typed (quotes included)."""

    text: str

    @property
    def phrase(self) -> str | None:
        """The words of a quoted phrase, or None."""
        return self.text[1:].removesuffix('"') if self.text.startswith('"') else None


@attrs.frozen
class Filter:
    """A filter of the table (search/filters.py) as an atom: its field name and its
    value as the table reads it (a tuple of values, any of which matches; a bound; a
    time; a flag)."""

    name: str
    value: Any


@attrs.frozen
class Regex:
    """``/a regular expression/`` among the words: a hit has a line it matches (as a line
    search's would: search/pattern.py, smart case). No spaces inside (``\\s`` matches one)."""

    source: str


@attrs.frozen
class Not:
    node: Node


@attrs.frozen
class All:
    nodes: tuple[Node, ...]


@attrs.frozen
class Either:
    nodes: tuple[Node, ...]


Node = Term | Filter | Regex | Not | All | Either


@attrs.frozen
class QueryWords:
    """A query's words, read: ``text``, the words to look for (ranking, the embedding,
    highlights); ``match``, what every hit must satisfy (None: nothing beyond ranking)."""

    text: str
    match: Node | None = None

    @property
    def left_out(self) -> tuple[str, ...]:
        """The words (or phrases, unquoted) every hit must not hold, at the top of the tree."""
        m = self.match
        nots = [m] if isinstance(m, Not) else [n for n in m.nodes if isinstance(n, Not)] if isinstance(m, All) else []
        return tuple(n.node.phrase or n.node.text for n in nots if isinstance(n.node, Term))


# a quoted phrase (its closing quote optional), or a run of non-space characters
_TOKEN = re.compile(r'(-?)("[^"]*"?)|(\S+)')
# -word, -"a phrase", -(, -<a filter's mark>, -/a regex/; not -1, -v or --flag
_NEGATED = re.compile(r'-(?=[^\W\d]\w|\(|"|' + MARK + r"|/.+/$)")
_MARKED = re.compile(MARK + r"(\d+)")
_REGEX = re.compile(r"/(.+)/")


def read(query: str, filters: Sequence[Filter] = ()) -> QueryWords:
    """``query`` as the words to look for and the tree every hit must satisfy; a mark
    (``MARK`` and a number) stands for that filter of ``filters``. QuerySyntaxError when
    a boolean query is malformed."""
    tokens = list(_tokens(query, filters))
    boolean = any(t == OR for t in tokens)
    if not boolean:
        # parentheses are text: join each back to its word; each filter is kept
        terms: list[str] = []
        required: list[Node] = []
        for t in _plain(query):
            negated = t.startswith("-") and bool(_NEGATED.match(t))
            node: Node | None = _atom(t[1:] if negated else t, filters)
            if node is None and negated and _has_word(t[1:]):
                node = Term(t[1:])
            if node is not None:
                required.append(Not(node) if negated else node)
            elif _has_word(t):
                terms.append(t)
        match = None if not required else required[0] if len(required) == 1 else All(tuple(required))
        return QueryWords(" ".join(terms), match)
    parser = _Parser(tokens)
    tree = parser.expression()
    if parser.pos != len(tokens):
        raise QuerySyntaxError("a ')' without its '('")
    return QueryWords(" ".join(_positive(tree)), tree)


def _atom(token: str, filters: Sequence[Filter]) -> Filter | Regex | None:
    """The filter a mark stands for, or the regex a ``/.../`` token is; None for a word."""
    marked = _MARKED.fullmatch(token)
    if marked and int(marked.group(1)) < len(filters):  # (else the user typed the mark: text)
        return filters[int(marked.group(1))]
    regex = _REGEX.fullmatch(token)
    return Regex(regex.group(1)) if regex else None


def _has_word(text: str) -> bool:
    """Whether ``text`` holds a word the index splits out (punctuation alone does not)."""
    return bool(index_words(text))


def _plain(query: str) -> Iterator[str]:
    """The tokens of a query without operators: quoted phrases whole, else split on spaces."""
    for m in _TOKEN.finditer(query):
        yield (m.group(1) + m.group(2)) if m.group(2) is not None else m.group(3)


def _tokens(query: str, filters: Sequence[Filter] = ()) -> Iterator[str | Term | Filter | Regex]:
    """Operators (``(``, ``)``, ``-``, ``OR``), terms and filters. A parenthesis is an
    operator at the start or end of a token (``foo()``'s is text)."""
    for raw in _plain(query):
        if raw == OR:
            yield OR
            continue
        core = raw
        while True:
            if core.startswith("-") and _NEGATED.match(core):
                yield "-"
                core = core[1:]
            elif core.startswith("("):
                yield "("
                core = core[1:]
            else:
                break
        closing = 0
        while core.endswith(")") and "(" not in core[:-1]:
            closing += 1
            core = core[:-1]
        atom = _atom(core, filters)
        if atom is not None:
            yield atom
        elif _has_word(core):
            yield Term(core)
        yield from ")" * closing


class _Parser:
    """expression := all (OR all)* ; all := unary+ ; unary := '-' unary | '(' expression ')' | term"""

    def __init__(self, tokens: list[str | Term | Filter | Regex]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> str | Term | Filter | Regex | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def expression(self) -> Node:
        sides = [self.all()]
        while self.peek() == OR:
            self.pos += 1
            sides.append(self.all())
        return sides[0] if len(sides) == 1 else Either(tuple(sides))

    def all(self) -> Node:
        nodes: list[Node] = []
        while (t := self.peek()) is not None and t not in (OR, ")"):
            nodes.append(self.unary())
        if not nodes:
            empty = self.peek() not in (OR, None)  # "( )"
            raise QuerySyntaxError("nothing inside ( )" if empty
                                   else 'OR needs words on both sides (a OR b; "OR" searches for the word)')
        return nodes[0] if len(nodes) == 1 else All(tuple(nodes))

    def unary(self) -> Node:
        t = self.peek()
        self.pos += 1
        if t == "-":
            if self.peek() in (None, OR, ")"):
                raise QuerySyntaxError("'-' needs a word or a group after it")
            return Not(self.unary())
        if t == "(":
            inner = self.expression()
            if self.peek() != ")":
                raise QuerySyntaxError("a '(' without its ')'")
            self.pos += 1
            return inner
        assert isinstance(t, (Term, Filter, Regex))
        return t


def all_of(nodes: Sequence[Node | None]) -> Node | None:
    """Every one of ``nodes`` (None: nothing to satisfy): one node, or All of them."""
    kept = tuple(n for n in nodes if n is not None)
    return None if not kept else kept[0] if len(kept) == 1 else All(kept)


def atoms(node: Node | None) -> Iterator[Term | Filter | Regex]:
    """Every word, filter and regex of the tree."""
    if isinstance(node, (Term, Filter, Regex)):
        yield node
    elif isinstance(node, Not):
        yield from atoms(node.node)
    elif node is not None:
        for n in node.nodes:
            yield from atoms(n)


def _positive(node: Node) -> Iterator[str]:
    """The words of the tree that are not left out, in order."""
    if isinstance(node, Term):
        yield node.text
    elif isinstance(node, (All, Either)):
        for n in node.nodes:
            yield from _positive(n)
