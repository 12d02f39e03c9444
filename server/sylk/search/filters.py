"""Search filters, each written once.

``model.FILTERS`` is the table: one entry per filter, naming it on every front end (the
field of ``Filters``, the key in ``sylk/search``'s ``filters`` object, the inline keys)
and saying what its values are (a list of which any may match, a bound, a date, a flag),
whether the lexical index applies it itself (``index``) and whether a line search filters
by it (``line``); values.check_values checks the values of languages, types, kinds and
roles against Sylk's lists. A filter of values can also leave out what matches:
``-path:vendor/**``, ``-role:test`` (``Filters.exclude``).

The evaluators are tables too, one per place a filter is applied, and
tests/test_filters.py fails when one lacks a filter of the table:
- ``CANDIDATE_TESTS`` here: a chunk (its ``ChunkRecord``) or a file of a line search
  against one filter's values (every candidate of the semantic side; the lexical side's
  for the filters the index does not apply; the files of a line search);
- ``INDEX_FIELDS`` in store/lexical.py: the Tantivy field of each ``index`` filter;
- a line search applies the file filters to its files (engine/line_search.py) and the
  others of LINE_FILTERS (LINE_LEVEL_FILTERS: kinds) to the symbol enclosing each line (grep.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import attrs

from ..ingest.packages import within
from ..model import FILTERS, VALUES, FilterSpec
from ..store.annotations import GitFile
from ..text.query_tree import All, Either, Filter, Node, Not, Regex, Term, all_of, atoms
from .pattern import compile_pattern
from .roles import roles_of

BY_FIELD: dict[str, FilterSpec] = {s.name: s for s in FILTERS}
BY_INLINE: dict[str, FilterSpec] = {k: s for s in FILTERS for k in s.inline}
COMMITS = "git_commit"  # the type of commit messages (model.FILE_TYPES)
LINE_FILTERS: tuple[str, ...] = tuple(s.name for s in FILTERS if s.line)
INDEX_FILTERS: tuple[str, ...] = tuple(s.name for s in FILTERS if s.index)
FILE_FILTERS: tuple[str, ...] = tuple(s.name for s in FILTERS if s.file)
# a line search's filters of a line, not of its file: the symbol enclosing the line is the candidate
LINE_LEVEL_FILTERS: tuple[str, ...] = tuple(n for n in LINE_FILTERS if n not in FILE_FILTERS)


@attrs.frozen
class Filters:
    """What a search is limited to. A filter of values keeps what matches any of them;
    ``exclude`` (its filters of values only) leaves out what matches any of its."""

    languages: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()  # gitignore-style globs, relative to the root
    kinds: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()  # ingest.packages: each with the packages it holds
    min_lines: int | None = None
    max_lines: int | None = None
    roles: tuple[str, ...] = ()  # model.ROLES
    tags: tuple[str, ...] = ()  # user tags (documents.tag): any of them
    # git metadata (gitmeta.py): files whose last commit is by one of these authors / in this window
    authors: tuple[str, ...] = ()
    modified_after: int | None = None  # seconds since the epoch
    modified_before: int | None = None
    # chunks holding an exported definition (True), or not (False: private definitions,
    # and chunks holding none); None: either
    exported: bool | None = None
    exclude: Filters | None = None

    @property
    def needs_git(self) -> bool:
        return any(getattr(self, s.name) not in ((), None) for s in FILTERS if s.git) or \
            (self.exclude is not None and self.exclude.needs_git)

    def merged(self, other: Filters) -> Filters:
        """Both: the values of a list joined, a single value ``other``'s where it has one."""
        out: dict[str, Any] = {}
        for s in FILTERS:
            mine, theirs = getattr(self, s.name), getattr(other, s.name)
            out[s.name] = mine + theirs if s.shape == VALUES else theirs if theirs is not None else mine
        ex = [e for e in (self.exclude, other.exclude) if e is not None]
        out["exclude"] = ex[0].merged(ex[1]) if len(ex) == 2 else ex[0] if ex else None
        return Filters(**out)

    def only(self, names: Sequence[str]) -> Filters:
        """These filters alone (an exclusion of others dropped too)."""
        kept = {n: getattr(self, n) for n in names}
        ex = self.exclude.only(names) if self.exclude is not None else None
        return Filters(**kept, exclude=ex if ex is not None and not ex.empty else None)

    @property
    def empty(self) -> bool:
        return self == Filters()

    def given(self) -> list[tuple[FilterSpec, Any]]:
        """The filters given, with their values."""
        return [(s, getattr(self, s.name)) for s in FILTERS if getattr(self, s.name) not in ((), None)]

    @property
    def asks_commits(self) -> bool:
        """The search is of commit messages too (the type git_commit)."""
        return COMMITS in self.types

    def without_commits(self) -> Filters:
        """The filters of the files' chunks alone (a search of commit messages and code)."""
        return attrs.evolve(self, types=tuple(t for t in self.types if t != COMMITS))

    def of_git(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The filters of git metadata given, to keep and to leave out: what a commit
        message is filtered by (store/annotations.COMMIT_CLAUSES)."""
        ex = self.exclude.given() if self.exclude is not None else []
        return {s.name: v for s, v in self.given() if s.git}, {s.name: v for s, v in ex if s.git}

    def notes(self, lookups: Lookups) -> list[str]:
        """What the user should know when nothing was found: a package no indexed file is in."""
        if not self.packages:
            return []
        held = set(lookups.packages.values())
        missing = [w for w in self.packages if not any(within(p, w) for p in held)]
        return [f"no indexed file is in the package {missing[0]!r} or below it (see the package facet)"] \
            if missing else []

    def tree(self, names: Sequence[str]) -> Node | None:
        """These filters as a tree every hit must satisfy (text/query_tree.py): each
        given, and NOT each left out; None for none."""
        kept: list[Node] = [Filter(s.name, v) for s, v in self.given() if s.name in names]
        left = self.exclude.given() if self.exclude is not None else []
        return all_of(kept + [Not(Filter(s.name, v)) for s, v in left if s.name in names])


def line_filters(f: Filters) -> Filters:
    """``f`` with only what a line search filters by (LINE_FILTERS)."""
    return f.only(LINE_FILTERS)


class Candidate(Protocol):
    """What the filters read of a chunk (a ChunkRecord) or of a file (grep.GrepFile)."""

    path: str
    language: str | None
    type: str


@attrs.frozen
class Lookups:
    """What some filters need beyond the candidate: path -> package, git metadata, tags."""

    packages: Mapping[str, str] = {}
    git: Mapping[str, GitFile] | None = None
    tags: Mapping[str, tuple[str, ...]] | None = None


Test = Callable[[Any, Any, Lookups, Callable[[str], bool] | None], bool]


def _git(c: Candidate, lookups: Lookups) -> GitFile | None:
    return lookups.git.get(c.path) if lookups.git is not None else None


def _lines(c: Any) -> int:
    return c.end_line - c.start_line + 1


# Each filter on one candidate: (candidate, the filter's value, lookups, the compiled path
# matcher) -> whether the candidate matches. For a filter of values: matches any of them
# (the same test keeps it, or, as an exclusion, leaves it out).
CANDIDATE_TESTS: dict[str, Test] = {
    "languages": lambda c, v, lk, pm: (c.language or "text") in v,
    "types": lambda c, v, lk, pm: c.type in v,
    "paths": lambda c, v, lk, pm: pm is not None and pm(c.path),
    "kinds": lambda c, v, lk, pm: getattr(c, "kind", None) in v,
    "packages": lambda c, v, lk, pm: any(within(lk.packages.get(c.path, ""), w) for w in v),
    "min_lines": lambda c, v, lk, pm: _lines(c) >= v,
    "max_lines": lambda c, v, lk, pm: _lines(c) <= v,
    "roles": lambda c, v, lk, pm: any(r in v for r in roles_of(c.kind, c.symbol, c.container, c.path)),
    "tags": lambda c, v, lk, pm: any(t in (lk.tags or {}).get(c.path, ()) for t in v),
    "authors": lambda c, v, lk, pm: (m := _git(c, lk)) is not None and m.author in v,
    "modified_after": lambda c, v, lk, pm: (m := _git(c, lk)) is not None and m.time >= v,
    "modified_before": lambda c, v, lk, pm: (m := _git(c, lk)) is not None and m.time < v,
    "exported": lambda c, v, lk, pm: c.exported == v,
}


@functools.lru_cache(maxsize=64)
def _compiled_globs(globs: tuple[str, ...]) -> Callable[[str], bool]:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(globs).match_file


def path_matcher(globs: Sequence[str]) -> Callable[[str], bool] | None:
    """Whether a root-relative path matches one of ``globs`` (gitignore syntax, as every
    ``paths`` filter reads them); None when there are none."""
    return _compiled_globs(tuple(globs)) if globs else None


def tree_needs_git(node: Node | None) -> bool:
    """The query's tree holds a filter that reads git metadata."""
    return any(isinstance(a, Filter) and BY_FIELD[a.name].git for a in atoms(node))


def index_applies(node: Node | None) -> bool:
    """The lexical index applies the query's tree itself: every filter of it is one of
    INDEX_FILTERS and it holds no regex; no candidate needs the tree checked after it
    (TreeTest)."""
    return all(a.name in INDEX_FILTERS if isinstance(a, Filter) else not isinstance(a, Regex) for a in atoms(node))


@functools.lru_cache(maxsize=64)
def compiled_regex(regex: Regex) -> re.Pattern[str]:
    """A ``/regex/`` of the query as a line search compiles it (search/pattern.py, smart
    case); PatternError names the query when it is not one."""
    return compile_pattern(regex.source).line_regex


class TreeTest:
    """The query's tree (text/query_tree.py) on a candidate: its filters by
    CANDIDATE_TESTS, its words and regexes by ``held`` (whether the candidate holds the
    word: the lexical index knows; whether a line of it matches the regex: its text
    does). For the trees the index cannot apply alone (index_applies)."""

    def __init__(self, tree: Node, lookups: Lookups = Lookups()) -> None:
        self.tree = tree
        self.lookups = lookups
        self._test = self._compiled(tree)  # once: a search asks it of hundreds of candidates

    @property
    def words(self) -> list[Term | Regex]:
        return list(dict.fromkeys(a for a in atoms(self.tree) if not isinstance(a, Filter)))

    def __call__(self, c: Any, held: Callable[[Term | Regex], bool]) -> bool:
        return self._test(c, held)

    def _compiled(self, node: Node) -> Callable[[Any, Callable[[Term | Regex], bool]], bool]:
        if isinstance(node, (Term, Regex)):
            return lambda c, held: held(node)
        if isinstance(node, Filter):
            test, value, lk = CANDIDATE_TESTS[node.name], node.value, self.lookups
            matcher = path_matcher(value) if node.name == "paths" else None
            if not BY_FIELD[node.name].file:
                return lambda c, held: test(c, value, lk, matcher)
            by_path: dict[str, bool] = {}  # a filter of the file: once for its chunks

            def of_file(c: Any, held: Callable[[Term | Regex], bool]) -> bool:
                known = by_path.get(c.path)
                if known is None:
                    known = by_path[c.path] = test(c, value, lk, matcher)
                return known
            return of_file
        if isinstance(node, Not):
            inner = self._compiled(node.node)
            return lambda c, held: not inner(c, held)
        assert isinstance(node, (All, Either))
        parts = [self._compiled(n) for n in node.nodes]
        if isinstance(node, All):
            return lambda c, held: all(p(c, held) for p in parts)
        return lambda c, held: any(p(c, held) for p in parts)


class Admit:
    """The filters of one request side by side, compiled (as the tree they are:
    Filters.tree, TreeTest): ``admit(candidate)`` says whether it passes. ``skip`` names
    filters applied elsewhere already (the lexical index's)."""

    def __init__(self, filters: Filters, lookups: Lookups = Lookups(), skip: Sequence[str] = ()):
        self.lookups = lookups
        tree = filters.tree([s.name for s in FILTERS if s.name not in skip])
        self._test = TreeTest(tree, lookups) if tree is not None else None

    def __bool__(self) -> bool:
        return self._test is not None

    def __call__(self, c: Any) -> bool:
        return self._test is None or self._test(c, _no_words)


def _no_words(atom: Term | Regex) -> bool:
    raise AssertionError(f"a tree of filters holds no word: {atom}")
