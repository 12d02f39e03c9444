"""The words of a query as a tree (text/query_tree.py): ``-word``, ``OR``, parentheses,
and the search that honours them in every mode, on a real index (Tantivy, FAISS, the
packaged model), from the command line too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TIMEOUT
from sylk.engine.workspace import Workspace
from sylk.config import SearchSettings
from sylk.search.filters import Filters
from sylk.search.inline import parse_inline, parse_query
from sylk.search.query import SearchRequest, search_request
from sylk.search.values import QueryError
from sylk.text.query_tree import All, Either, Filter, Not, QuerySyntaxError, QueryWords, Regex, Term, read
# the fixture of tests/test_filters.py: four files, each answering "retry a request with exponential backoff"
from test_filters import EVERYTHING, tree, ws  # noqa: F401  (fixtures)


@pytest.mark.parametrize(("query", "expected"), [
    # without an OR: the words rank as ever, parentheses are text, -word leaves out
    ("retry backoff", QueryWords("retry backoff")),
    ("retry backoff -test", QueryWords("retry backoff", Not(Term("test")))),
    ("retry -test -mock", QueryWords("retry", All((Not(Term("test")), Not(Term("mock")))))),
    ('retry -"exponential backoff"', QueryWords("retry", Not(Term('"exponential backoff"')))),
    ("JSON Pointer (RFC 6901) for values", QueryWords("JSON Pointer (RFC 6901) for values")),
    ("how use() mounts", QueryWords("how use() mounts")),
    # a - before a digit, a single letter or another - is text
    ("returns -1 on -v --verbose", QueryWords("returns -1 on -v --verbose")),
    # with an OR: boolean
    ("retry OR backoff", QueryWords("retry backoff", Either((Term("retry"), Term("backoff"))))),
    ("(http OR grpc) client -mock", QueryWords("http grpc client", All((
        Either((Term("http"), Term("grpc"))), Term("client"), Not(Term("mock")))))),
    ("a b OR c", QueryWords("a b c", Either((All((Term("a"), Term("b"))), Term("c"))))),
    ("-(a OR b) c OR d", QueryWords("c d", Either((All((Not(Either((Term("a"), Term("b")))), Term("c"))),
                                                    Term("d"))))),
    ("foo() OR get_us*", QueryWords("foo() get_us*", Either((Term("foo()"), Term("get_us*"))))),
    # /a regex/ among the words: an atom (no spaces inside), left out with -
    ("retry /attempts\\s*\\*/", QueryWords("retry", Regex("attempts\\s*\\*"))),
    ("retry -/mock.*/ -x", QueryWords("retry -x", Not(Regex("mock.*")))),
    ("(/a+/ OR b) c", QueryWords("b c", All((Either((Regex("a+"), Term("b"))), Term("c"))))),
    ("cd -/tmp then", QueryWords("cd -/tmp then")),  # not a regex: text, as before
    # "or" in lower case is a word; a quoted "OR" too
    ("retry or backoff", QueryWords("retry or backoff")),
    ('"a OR b"', QueryWords('"a OR b"')),
])
def test_read(query: str, expected: QueryWords):
    assert read(query) == expected


@pytest.mark.parametrize(("query", "message"), [
    ("retry OR", "OR needs words on both sides"),
    ("OR retry", "OR needs words on both sides"),
    ("a OR OR b", "OR needs words on both sides"),
    ("(a OR b", "'(' without its ')'"),
    ("a OR b)", "')' without its '('"),
    ("() OR a", "nothing inside ( )"),
    ("a OR b -", None),  # a lone - is punctuation, not an operator
])
def test_a_malformed_boolean_query_is_an_error(query: str, message: str | None):
    if message is None:
        assert read(query).text == "a b"
        return
    with pytest.raises(QuerySyntaxError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read(query)
    # a search request names the query
    with pytest.raises(QueryError, match="^query: "):
        SearchRequest(query)


GO, VENDOR, TEST_ROLE = Filter("languages", ("go",)), Filter("paths", ("vendor/**",)), Filter("roles", ("test",))


@pytest.mark.parametrize(("query", "filters", "match"), [
    # side by side, a filter is taken out of the tree (the index applies it first), as ever
    ("retry lang:go -role:test", Filters(languages=("go",), exclude=Filters(roles=("test",))), None),
    ("retry lang:go -mock", Filters(languages=("go",)), Not(Term("mock"))),
    ("(lang:go) retry", Filters(languages=("go",)), None),  # parentheses are text without an OR
    # joined by OR or grouped: an atom of the tree, as a word is
    ("retry (lang:go OR path:vendor/**)", Filters(), Either((GO, VENDOR))),
    ("(lang:go OR path:vendor/**)", Filters(), Either((GO, VENDOR))),  # the ) closes the group
    ('retry -(role:test OR path:"vendor/**")', Filters(), Not(Either((TEST_ROLE, VENDOR)))),
    # an OR of filters only: the words rank as without one (retry need not be held), unless
    # an OR joins words too
    ("retry -mock (role:test OR lang:go)", Filters(), All((Not(Term("mock")), Either((TEST_ROLE, GO))))),
    ("retry (tested OR lang:go)", Filters(), All((Term("retry"), Either((Term("tested"), GO))))),
    ("tested OR lang:go", Filters(), Either((Term("tested"), GO))),
    ("a OR b lang:go", Filters(), Either((Term("a"), All((Term("b"), GO))))),  # side by side binds first
    # simplified once: one filter's values joined by OR are that filter of them all, taken out
    ("retry (lang:go OR lang:rust)", Filters(languages=("go", "rust")), None),
    ("retry -(lang:go OR lang:rust) OR x", Filters(),
     Either((All((Term("retry"), Not(Filter("languages", ("go", "rust"))))), Term("x")))),
    ("x OR y -(lang:go OR lang:rust)", Filters(exclude=None),
     Either((Term("x"), All((Term("y"), Not(Filter("languages", ("go", "rust")))))))),
])
def test_parse_query_reads_filters_as_atoms_of_the_tree(query: str, filters: Filters, match):
    parsed = parse_query(query)
    assert (parsed.filters, parsed.words.match) == (filters, match)
    req = search_request(SearchSettings(), query)
    assert (req.filters, req.words.match) == (filters, match), "every front end's request reads it so"


def test_a_query_holding_the_mark_of_a_filter_is_text():
    """The tree marks where each filter stood with a private-use character; one typed by
    the user is not a filter (before the fix: IndexError, no answer)."""
    assert parse_query("\ue0000 retry").words == QueryWords("0 retry")
    assert parse_query("x \ue0001 lang:go").filters == Filters(languages=("go",))
    assert read("\ue0000 OR y").match == Either((Term("\ue0000"), Term("y")))


def test_a_filter_in_the_tree_is_checked_and_shown_as_typed():
    with pytest.raises(QueryError) as exc:
        parse_query("retry (lang:klingon OR path:x/**)")
    assert exc.value.field == "lang"
    with pytest.raises(QueryError, match="^query: "):
        parse_query("retry (lang:go OR path:x/**")
    # what the answer shows: the query as typed when its filters are read with its operators
    assert parse_query("retry (lang:go OR path:x/**)").text == "retry (lang:go OR path:x/**)"
    assert parse_query("retry lang:go -role:test").text == "retry"
    assert parse_query("retry (lang:go) -x").text == "retry -x"
    # search.exclude: a filter the tree names is the query's to decide
    settings = SearchSettings(exclude=["role:test", "path:vendor/**"])
    req = search_request(settings, "retry (role:test OR lang:markdown)")
    assert req.filters.exclude == Filters(paths=("vendor/**",))


def _paths(ws: Workspace, query: str, mode: str) -> set[str]:
    text, f = parse_inline(query)
    return {h.path for h in ws.search(SearchRequest(text, mode, limit=50, min_score=None, filters=f)).hits}


@pytest.mark.parametrize("mode", ["lexical", "semantic", "hybrid"])
def test_every_mode_honours_the_words_left_out_and_or(ws: Workspace, mode: str):
    query = "retry a request with exponential backoff"
    assert _paths(ws, query, mode) == EVERYTHING, "the fixture: every file answers the query"
    # a word left out: before, "-vendored" was read as "vendored" and ranked the copy up
    assert _paths(ws, f"{query} -vendored", mode) == EVERYTHING - {"vendor/pkg/retry.py"}
    assert _paths(ws, f"{query} -vendored -tested", mode) == {"lib/retry.py", "docs/retry.md"}
    # a phrase left out: its words in a row ("backoff (vendored" is not "backoff, tested")
    assert _paths(ws, f'{query} -"backoff tested"', mode) == EVERYTHING - {"tests/test_retry.py"}
    # with the inline filters, in any order
    assert _paths(ws, f"-tested {query} -path:vendor/**", mode) == {"lib/retry.py", "docs/retry.md"}
    # OR: a hit holds one side or the other, in the semantic side's candidates too
    assert _paths(ws, "tested OR vendored", mode) == {"tests/test_retry.py", "vendor/pkg/retry.py"}
    assert _paths(ws, "retry (tested OR see) -vendored", mode) == {"tests/test_retry.py", "docs/retry.md"}
    assert _paths(ws, "retry_request (tested OR see) OR copy", mode) == {
        "tests/test_retry.py", "docs/retry.md", "vendor/pkg/retry.py"}
    assert _paths(ws, "request (tested OR see OR copy) -(see OR copy)", mode) == {"tests/test_retry.py"}


@pytest.mark.parametrize("mode", ["lexical", "semantic", "hybrid"])
def test_every_mode_honours_filters_joined_by_or(ws: Workspace, mode: str):
    """Before, every inline filter was read side by side: ``(lang:markdown OR
    path:vendor/**)`` was markdown files under vendor/, which is nothing."""
    def found(query: str) -> set[str]:
        req = search_request(SearchSettings(), query, mode=mode, limit=50, min_score=None)
        return {h.path for h in ws.search(req).hits}

    query = "retry a request with exponential backoff"
    # a filter the index applies (lang) or the candidates' check (path, role), on each side
    assert found(f"{query} (lang:markdown OR path:vendor/**)") == {"docs/retry.md", "vendor/pkg/retry.py"}
    assert found(f"{query} (role:test OR lang:markdown)") == {"tests/test_retry.py", "docs/retry.md"}
    assert found(f"{query} -(role:test OR path:vendor/**)") == {"lib/retry.py", "docs/retry.md"}
    # words and filters in one tree
    assert found("retry (tested OR path:vendor/**)") == {"tests/test_retry.py", "vendor/pkg/retry.py"}
    assert found("retry (see OR path:vendor/**) -lang:markdown") == {"vendor/pkg/retry.py"}
    assert found(f"{query} (lang:go OR lang:rust)") == set()


@pytest.mark.parametrize("mode", ["lexical", "semantic", "hybrid"])
def test_every_mode_honours_a_regex_among_the_words(ws: Workspace, mode: str):
    def found(query: str) -> set[tuple[str, str]]:
        req = search_request(SearchSettings(), query, mode=mode, limit=50, min_score=None)
        return {(h.path, h.kind) for h in ws.search(req).hits}

    query = "retry a request with exponential backoff"
    # a line of the chunk matches it: lib's `return attempts * 2`, not the vendored `return attempts`
    assert found(f"{query} /attempts\\s*\\*\\s*2/") == {("lib/retry.py", "function")}
    left = found(f"{query} -/attempts/")  # the chunks holding a line with "attempts" go
    assert left and ("vendor/pkg/retry.py", "function") not in left and ("lib/retry.py", "function") not in left
    assert {p for p, _k in left} >= {"tests/test_retry.py", "docs/retry.md"}
    assert {p for p, _k in found(f"{query} (/vendored/ OR lang:markdown)")} == {"vendor/pkg/retry.py",
                                                                             "docs/retry.md"}
    with pytest.raises(QueryError) as exc:
        search_request(SearchSettings(), f"{query} /attempts(/")
    assert exc.value.field == "query" and "/attempts(/" in str(exc.value)


def test_the_words_left_out_are_not_highlighted(ws: Workspace):
    hits = ws.search(SearchRequest("exponential backoff -tested", "lexical", limit=50)).hits
    assert hits
    for h in hits:
        marked = {h.snippet.split("\n")[line - h.snippet_line][a:b].lower() for line, a, b in h.highlights}
        assert marked and marked <= {"exponential", "backoff"}, (h.path, marked)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sylk.cli", *args], capture_output=True, text=True,
                          timeout=TIMEOUT)


def test_the_command_line_reads_the_words_left_out_and_or(tree: Path):
    found = _cli("search", "retry request backoff -tested -vendored", str(tree), "--mode", "lexical",
                 "--format", "paths")
    assert found.returncode == 0, found.stderr
    assert set(found.stdout.split()) == {"lib/retry.py", "docs/retry.md"}
    either = _cli("search", "tested OR vendored", str(tree), "--no-refresh", "--format", "paths")
    assert either.returncode == 0, either.stderr
    assert set(either.stdout.split()) == {"tests/test_retry.py", "vendor/pkg/retry.py"}
    grouped = _cli("search", "retry request backoff -(role:test OR path:vendor/**)", str(tree), "--no-refresh",
                   "--format", "paths")
    assert grouped.returncode == 0, grouped.stderr
    assert set(grouped.stdout.split()) == {"lib/retry.py", "docs/retry.md"}
    bad = _cli("search", "(tested OR vendored", str(tree), "--no-refresh")
    assert bad.returncode == 2 and "query: a '(' without its ')'" in bad.stderr
