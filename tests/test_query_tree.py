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
from sylk.search.query import QueryError, SearchRequest, parse_inline
from sylk.text.query_tree import All, Either, Not, QuerySyntaxError, QueryWords, Term, read
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
    bad = _cli("search", "(tested OR vendored", str(tree), "--no-refresh")
    assert bad.returncode == 2 and "query: a '(' without its ')'" in bad.stderr
