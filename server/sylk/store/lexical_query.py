"""From an analysed query (text/query_terms.py) to one Tantivy query over the chunk
fields (lexical.py's schema). Every clause is optional (BM25 sums what matches):

identifier ``get_user``
    its name whole (``name``, separators out, so ``getUser`` meets it too), boosted
    most; its words as a phrase in the name words and in the content; with five
    letters or more, also names one edit away (``get_usre``), at a constant score
    that an exact match always beats.
word ``retry``
    the name (a one-word query is often a name), the name words, the content as
    written, and the stemmed content (``prose``: ``retries`` meets ``retry``).
neighbouring words ``parse url``
    one identifier written apart: the joined name (``parseurl``) and the phrase in
    the name words and the content.
``"quoted text"``
    a phrase in the content.
prefix ``Export*``
    names (whole, separators out) and words of the content that start with it, at a
    constant score (a prefix says nothing of how well a word matches).

``fuzzy: true`` lets every word of five letters or more match one edit away in the
name words and the content too.
"""

from __future__ import annotations

import re
from typing import Any

import attrs
import tantivy

from ..text.query_terms import IDENTIFIER, QueryTerms
from ..text.query_tree import All, Filter, Node, Not, Regex, Term
from ..text.words import index_words, name_key

FUZZY_MIN = 5  # letters a word needs before a typo is allowed in it


@attrs.frozen
class FieldWeights:
    """Boosts per field (bench/relevance.py chose them; see the README's "How search works")."""

    name: float = 5.0  # the whole name, exactly
    name_words: float = 4.0
    content: float = 1.0
    prose: float = 3.0
    joined: float = 3.0  # neighbouring words as one identifier
    typo: float = 2.0  # a name one edit away (constant, not BM25)


WEIGHTS = FieldWeights()
Q = tantivy.Query
# the search filters (search/filters.py) this index applies itself: filter -> its field
# (a package's field holds the packages above it too: asyncio holds asyncio.tasks);
# the bounds of a chunk's lines are a range over ``lines`` (filter_clause)
INDEX_FIELDS = {"languages": "language", "types": "type", "kinds": "kind", "packages": "package"}
LINE_BOUNDS = ("min_lines", "max_lines")


def _words_query(schema: tantivy.Schema, field: str, words: list[str]) -> tantivy.Query | None:
    if not words:
        return None
    if len(words) == 1:
        return Q.term_query(schema, field, words[0])
    return Q.phrase_query(schema, field, words)


def _boost(query: tantivy.Query | None, weight: float) -> tantivy.Query | None:
    if query is None or weight <= 0:
        return None
    return query if weight == 1.0 else Q.boost_query(query, weight)


def _any(queries: list[tantivy.Query | None]) -> tantivy.Query | None:
    kept = [q for q in queries if q is not None]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else Q.boolean_query([(tantivy.Occur.Should, q) for q in kept])


def compile_terms(index: tantivy.Index, schema: tantivy.Schema, terms: QueryTerms, *, fuzzy: bool = False,
                  weights: FieldWeights | None = None) -> tantivy.Query:
    """The scoring part of a chunk query (lexical.py adds the filters); an empty query
    (nothing to search for) matches nothing."""
    w = WEIGHTS if weights is None else weights
    clauses: list[tantivy.Query | None] = []

    def typo(key: str, field: str, weight: float) -> tantivy.Query | None:
        if sum(ch.isalpha() for ch in key) < FUZZY_MIN:
            return None
        return _boost(Q.fuzzy_term_query(schema, field, key, 1, True, False), weight)

    for ident in terms.identifiers:
        words = index_words(ident.text)
        key = name_key(ident.parts[-1])  # foo.bar: the name defined is bar
        clauses.append(_any([
            _boost(Q.term_query(schema, "name", key), w.name),
            _boost(_words_query(schema, "name_words", words), w.name_words),
            _boost(_words_query(schema, "content", words), w.content),
            typo(key, "name", w.typo) if ident.typo_tolerant else None,
        ]))
    def stem(word: str) -> tantivy.Query | None:
        try:  # the field's analyzer stems the word (and drops it if it is a stop word)
            return index.parse_query(word, ["prose"])
        except ValueError:
            return None

    for word in terms.words:
        clauses.append(_any([
            _boost(Q.term_query(schema, "name", word), w.name),
            _boost(Q.term_query(schema, "name_words", word), w.name_words),
            _boost(Q.term_query(schema, "content", word), w.content),
            _boost(stem(word), w.prose),
            typo(word, "name", w.typo) if terms.style == IDENTIFIER else None,
            typo(word, "content", w.content) if fuzzy else None,
            typo(word, "name_words", w.name_words) if fuzzy else None,
        ]))
    for a, b in terms.runs:
        clauses.append(_any([
            _boost(Q.term_query(schema, "name", a + b), w.joined),
            _boost(Q.phrase_query(schema, "name_words", [a, b]), w.joined),
            _boost(Q.phrase_query(schema, "content", [a, b]), w.content),
        ]))
    for phrase in terms.phrases:
        clauses.append(_words_query(schema, "content", index_words(phrase)))
    for prefix in terms.prefixes:
        clauses.append(_prefix(schema, prefix, w))
    return _any(clauses) or Q.empty_query()


def _prefix(schema: tantivy.Schema, prefix: str, w: FieldWeights) -> tantivy.Query | None:
    """``prefix*``: names starting with it (their key: ``get_us*`` meets ``getUser``), and
    content words starting with its last word (``parse_u*``: words starting with ``u``
    after ``parse``, as a phrase prefix)."""
    key, words = name_key(prefix), index_words(prefix)
    if not key:
        return None
    name = Q.const_score_query(Q.regex_query(schema, "name", re.escape(key) + ".*"), w.name)
    if not words:
        return name
    content = (Q.regex_query(schema, "content", re.escape(words[0]) + ".*") if len(words) == 1
               else Q.phrase_prefix_query(schema, "content", words))
    return _any([name, Q.const_score_query(content, w.content)])


def filter_clause(schema: tantivy.Schema, name: str, value: Any) -> tantivy.Query | None:
    """A search filter this index applies itself as a clause: any of the values of an
    INDEX_FIELDS filter, or a bound of the lines (LINE_BOUNDS); None for the others
    (search/filters.py applies them to the candidates)."""
    if name in INDEX_FIELDS:
        return Q.boolean_query([(tantivy.Occur.Should, Q.term_query(schema, INDEX_FIELDS[name], v)) for v in value])
    if name in LINE_BOUNDS:
        low, high = (value, None) if name == "min_lines" else (None, value)
        return Q.range_query(schema, "lines", tantivy.FieldType.Integer, low, high)
    return None


def compile_match(schema: tantivy.Schema, node: Node, positive: bool = True) -> tantivy.Query:
    """What every hit must satisfy (text/query_tree.py: ``-mock``, ``a OR b``,
    ``lang:go OR path:cmd/**``) as a filter that scores nothing: a term is held when the
    chunk's name is it (separators out), or its words are in a row in the name words or
    the content (a ``"phrase"``: in the content; a ``prefix*``: as ``Export*`` ranks). No
    stemming and no typos: what ``-retry`` leaves out is what holds retry as written. A
    filter the index does not apply (filter_clause), and a ``/regex/``, is let through,
    ``positive`` or under a NOT: the query matches every chunk the tree does, and more,
    which the caller checks (search/filters.TreeTest)."""
    Occur = tantivy.Occur
    if isinstance(node, Term):
        return _held(schema, node)
    if isinstance(node, (Filter, Regex)):  # a regex: the caller reads the chunk's lines
        clause = filter_clause(schema, node.name, node.value) if isinstance(node, Filter) else None
        return clause if clause is not None else Q.all_query() if positive else Q.empty_query()
    if isinstance(node, Not):
        return Q.boolean_query([(Occur.Must, Q.all_query()),
                                (Occur.MustNot, compile_match(schema, node.node, not positive))])
    occur = Occur.Must if isinstance(node, All) else Occur.Should
    return Q.boolean_query([(occur, compile_match(schema, n, positive)) for n in node.nodes])


def _held(schema: tantivy.Schema, term: Term) -> tantivy.Query:
    phrase = term.phrase
    if phrase is not None:
        return _words_query(schema, "content", index_words(phrase)) or Q.empty_query()
    if term.text.endswith("*"):
        return _prefix(schema, term.text[:-1], WEIGHTS) or Q.empty_query()
    words = index_words(term.text)
    return _any([Q.term_query(schema, "name", name_key(term.text)), _words_query(schema, "name_words", words),
                 _words_query(schema, "content", words)]) or Q.empty_query()
