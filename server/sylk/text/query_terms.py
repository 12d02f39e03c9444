"""What a search query asks for, read before it reaches the lexical index.

People type two kinds of query into a search box: identifiers (``HttpRetryPolicy``,
``get_user``, ``foo.bar``) and a few English words (``retry failed request``), and
sometimes both. ``analyze`` tells them apart:

- an **identifier** token has an underscore, a lower-to-upper case change or an
  acronym before a word (``APIRouter``), letters
  and digits mixed, or a ``.``/``::``/``->`` joining names; it is matched whole (the
  name field) and as a phrase of its words, as the index splits them;
- a **word** is anything else; English stop words are dropped from the words of a
  query that has at least one other word (``the`` alone stays), never from an
  identifier;
- a ``"quoted phrase"`` is kept as typed;
- a token ending in ``*`` (``Export*``, ``get_us*``) is a prefix: names and words
  that start with it.

The query's ``style`` picks the fusion weights (search/fusion.py): ``identifier``
when every token is an identifier or the query is one token, ``natural`` when no
token is one, ``mixed`` otherwise.
"""

from __future__ import annotations

import re

import attrs

from .words import split_words

IDENTIFIER, NATURAL, MIXED = "identifier", "natural", "mixed"
STYLES = (IDENTIFIER, NATURAL, MIXED)
# Typo tolerance: an identifier (or a one-word query) this long or longer also matches
# names one edit away (store/lexical.py).
TYPO_MIN_LETTERS = 5

STOP_WORDS = frozenset("""
a an the and or but if then else of to in on at by for with from as is are was were be been being
this that these those it its into onto than not no nor so such can could should would will may
might must do does did done has have had having which who whom whose what when where why how all
any each every both either neither some other another same own only also just very too more most
there here their them they we you your our us he she his her i me my one ones via per whether
""".split())

_TOKEN = re.compile(r'"[^"]*"?|[\w$]+\*|[^\W_]?[\w$]*(?:(?:\.|::|->)[\w$]+)*')
# a lower-to-upper change (getUser), letters and digits (utf8Len), or an acronym before a
# word (APIRouter, HTTPServer; not URLs or IDs)
_CASE_CHANGE = re.compile(r"[a-z][A-Z]|[A-Za-z][0-9]|[0-9][A-Za-z]|[A-Z]{2}[a-z]{2}")
_JOINERS = re.compile(r"\.|::|->")


@attrs.frozen
class Identifier:
    text: str  # as typed, e.g. "HttpRetryPolicy", "get_user", "os.path"
    parts: tuple[str, ...]  # the names joined by . :: ->, e.g. ("os", "path"); one for most

    @property
    def typo_tolerant(self) -> bool:
        return sum(ch.isalpha() for ch in self.text) >= TYPO_MIN_LETTERS


@attrs.frozen
class QueryTerms:
    style: str  # IDENTIFIER, NATURAL or MIXED
    identifiers: tuple[Identifier, ...] = ()
    words: tuple[str, ...] = ()  # lower-cased, stop words dropped (see the module docstring)
    phrases: tuple[str, ...] = ()  # quoted by the user, without the quotes
    prefixes: tuple[str, ...] = ()  # ``name*``: without the star, as typed
    dropped: tuple[str, ...] = ()  # stop words left out

    @property
    def empty(self) -> bool:
        return not (self.identifiers or self.words or self.phrases or self.prefixes)

    @property
    def runs(self) -> tuple[tuple[str, str], ...]:
        """Neighbouring words of a natural query, which may be one identifier written
        apart: ("parse", "url") finds ``parse_url`` and ``parseUrl``."""
        return tuple(zip(self.words, self.words[1:]))


def is_identifier(token: str) -> bool:
    return "_" in token.strip("_") or "$" in token or bool(_CASE_CHANGE.search(token)) or \
        bool(_JOINERS.search(token)) or (token.startswith("_") and len(token) > 1)


def analyze(query: str) -> QueryTerms:
    identifiers: list[Identifier] = []
    words: list[str] = []
    phrases: list[str] = []
    prefixes: list[str] = []
    for m in _TOKEN.finditer(query):
        token = m.group(0)
        if not token:
            continue
        if token.endswith("*"):
            prefixes.append(token[:-1])
        elif token.startswith('"'):
            inner = token.strip('"').strip()
            if inner:
                phrases.append(inner)
        elif is_identifier(token):
            parts = tuple(p for p in _JOINERS.split(token) if p)
            identifiers.append(Identifier(token, parts))
        else:
            words.extend(w.lower() for w in split_words(token))
    tokens = len(identifiers) + len(words) + len(phrases) + len(prefixes)
    if tokens <= 1 or (identifiers and not words and not phrases):
        style = IDENTIFIER
    elif not identifiers:
        style = NATURAL
    else:
        style = MIXED
    kept = [w for w in words if w not in STOP_WORDS]
    if not kept and not identifiers and not phrases and not prefixes:
        kept = words  # "the", "is not": nothing else to search for
    dropped = tuple(w for w in words if w in STOP_WORDS and w not in kept)
    return QueryTerms(style, tuple(identifiers), tuple(dict.fromkeys(kept)), tuple(phrases),
                      prefixes=tuple(dict.fromkeys(prefixes)), dropped=dropped)


def typed_words(query: str) -> list[str]:
    """The words of a query as typed (identifiers whole), for snippets, highlights and
    commit messages."""
    return [w for w in re.findall(r"\w+", query) if len(w) > 1 or w.isdigit()]
