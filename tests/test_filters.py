"""The filter table (server/sylk/search/filters.py): every filter has its evaluators and
its names on the wire, and what a filter leaves out (``-role:test``, ``filters.exclude``,
``--exclude``, MCP's ``exclude``) is left out on every side and every front end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from conftest import TIMEOUT
from sylk.config import SearchSettings, Settings
from sylk.engine.workspace import Workspace
from sylk.model import BOUND, FILTERS, FLAG, TIME, VALUES
from sylk.search.filters import (
    BY_FIELD,
    CANDIDATE_TESTS,
    INDEX_FILTERS,
    Admit,
    Filters,
    Lookups,
    TreeTest,
    index_applies,
)
from sylk.text.query_tree import Filter, Term
from sylk.params import line_request_from_params, request_from_params
from sylk.search.query import GrepRequest, SearchRequest, default_exclusions, from_settings
from sylk.search.values import QueryError
from sylk.search.inline import parse_exclusions, parse_inline, parse_query
from sylk.store.annotations import COMMIT_CLAUSES
from sylk.store.lexical import build_schema
from sylk.store.lexical_query import INDEX_FIELDS, filter_clause
from sylk.store.manifest import ChunkRecord

REPO = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((REPO / "server" / "sylk" / "lsp" / "protocol.schema.json").read_text(encoding="utf-8"))


# the table -------------------------------------------------------------------
def test_every_filter_is_a_field_of_filters_and_has_its_evaluators():
    names = {s.name for s in FILTERS}
    assert names == set(attrs.fields_dict(Filters)) - {"exclude"}
    assert set(CANDIDATE_TESTS) == names, "each filter's test of one candidate (the semantic side's)"
    # the lexical index applies its filters itself: a field for each filter of values, a range for the bounds
    assert {n for n in INDEX_FILTERS if BY_FIELD[n].shape == VALUES} == set(INDEX_FIELDS)
    assert {n for n in INDEX_FILTERS if BY_FIELD[n].shape != VALUES} == {"min_lines", "max_lines"}
    assert {s.name for s in FILTERS if s.git} == set(COMMIT_CLAUSES), "each git filter on a commit message"
    # and its clause is what applies each (the side-by-side filters and those of the query's tree alike)
    schema = build_schema()
    sample = {VALUES: ("x",), BOUND: 3, TIME: 0, FLAG: True}
    assert {s.name for s in FILTERS if filter_clause(schema, s.name, sample[s.shape]) is not None} == \
        set(INDEX_FILTERS)


def test_the_protocol_schema_names_the_tables_filters():
    filters = SCHEMA["$defs"]["SearchParams"]["properties"]["filters"]
    assert set(filters["properties"]) == {s.wire for s in FILTERS} | {"exclude"}
    assert set(filters["properties"]["exclude"]["properties"]) == {s.wire for s in FILTERS if s.negatable}
    described = SCHEMA["$defs"]["SearchParams"]["description"]
    for s in FILTERS:
        assert f"{s.inline[0]}:" in described, s.name


def test_the_command_line_has_a_flag_for_each_filter_of_the_table():
    from sylk.cli import build_parser

    value = {VALUES: "x", BOUND: "3", TIME: "2024-05-31"}
    for command, takes in (("search", lambda s: True), ("grep", lambda s: s.line), ("refs", lambda s: s.file)):
        for s in FILTERS:
            for flag in s.flags:
                given = [flag] if s.shape == FLAG else [flag, s.choices[0] if s.choices else value[s.shape]]
                if not takes(s):
                    with pytest.raises(SystemExit):  # argparse: unrecognized arguments
                        build_parser().parse_args([command, "q", *given])
                    continue
                args = build_parser().parse_args([command, "q", *given])
                assert getattr(args, s.name) not in (None, []), (command, flag)
                assert s.name in args.filter_names


# parsing ---------------------------------------------------------------------
def test_inline_exclusions():
    text, f = parse_inline("retry -role:test lang:go -path:vendor/** -lang:markdown backoff")
    assert text == "retry backoff"
    assert f.languages == ("go",) and f.exclude is not None
    assert (f.exclude.roles, f.exclude.paths, f.exclude.languages) == (("test",), ("vendor/**",), ("markdown",))
    # a word with a dash is a word, a filter needs its key
    assert parse_inline("re-try -x")[0] == "re-try -x"


def test_inline_dates_and_bounds():
    _text, f = parse_inline("after:2024-05-31 before:2024-06-01 minlines:3 retry")
    assert (f.modified_after, f.modified_before, f.min_lines) == (1717113600, 1717200000, 3)


@pytest.mark.parametrize(("query", "field"), [
    ("retry -minlines:3", "-minlines"),
    ("retry -exported:true", "-exported"),
    ("retry -lang:klingon", "lang"),
    ("retry -role:tests", "role"),
])
def test_an_exclusion_that_cannot_be_is_an_error_naming_it(query: str, field: str):
    with pytest.raises(QueryError) as exc:
        parse_inline(query)
    assert exc.value.field == field


def test_params_read_exclude_through_the_table():
    req = request_from_params({"query": "retry", "filters": {"languages": ["python"],
                                                              "exclude": {"roles": ["test"], "paths": ["vendor/**"]}}})
    assert req.filters.languages == ("python",)
    assert req.filters.exclude == Filters(roles=("test",), paths=("vendor/**",))
    with pytest.raises(QueryError) as exc:
        request_from_params({"query": "retry", "filters": {"exclude": {"minLines": 3}}})
    assert exc.value.field == "filters.exclude.minLines"
    with pytest.raises(QueryError) as exc:
        request_from_params({"query": "retry", "filters": {"exclude": {"roles": ["tests"]}}})
    assert exc.value.field == "filters.exclude.roles"
    with pytest.raises(QueryError) as exc:  # a line search leaves out by its own filters only
        line_request_from_params({"query": "retry", "mode": "exact", "filters": {"exclude": {"roles": ["test"]}}})
    assert exc.value.field == "filters.exclude.roles"
    line = line_request_from_params({"query": "retry", "mode": "exact", "filters": {"exclude": {"paths": ["v/**"]}}})
    assert line.filters.exclude == Filters(paths=("v/**",))


def test_parse_exclusions_for_the_command_line_and_mcp():
    assert parse_exclusions("--exclude", ["role:test", "path:vendor/**"]) == Filters(roles=("test",),
                                                                                     paths=("vendor/**",))
    assert parse_exclusions("--exclude", []) is None
    with pytest.raises(QueryError) as exc:
        parse_exclusions("--exclude", ["vendor"])
    assert exc.value.field == "--exclude"
    with pytest.raises(QueryError):
        parse_exclusions("--exclude", ["role:test"], line=True)


def test_search_exclude_is_left_out_unless_the_search_names_that_filter():
    settings = SearchSettings(exclude=["role:test", "path:vendor/**", "lang:markdown"])
    req = from_settings(settings, "retry")
    assert req.filters.exclude == Filters(languages=("markdown",), paths=("vendor/**",), roles=("test",))
    # role:test asks for tests: that default goes, the others stay; so does -path: given
    _text, f = parse_inline("retry role:test -path:build/**")
    req = from_settings(settings, "retry", filters=f)
    assert req.filters.roles == ("test",)
    assert req.filters.exclude == Filters(languages=("markdown",), paths=("build/**",))
    # a line search: the filters it applies only
    assert default_exclusions(Filters(), settings, line=True) == Filters(
        exclude=Filters(languages=("markdown",), paths=("vendor/**",)))
    # a value Sylk does not know is an error naming the setting
    with pytest.raises(QueryError) as exc:
        from_settings(SearchSettings(exclude=["role:tests"]), "retry")
    assert exc.value.field == "search.exclude"
    assert request_from_params({"query": "retry"}, settings).filters.exclude is not None


# evaluation ------------------------------------------------------------------
def rec(path: str, kind: str = "function", symbol: str = "f", language: str = "python") -> ChunkRecord:
    return ChunkRecord(1, path, 0, 9, language, "source_code", kind, symbol, "", "h")


def test_admit_keeps_what_matches_and_leaves_out_what_an_exclusion_matches():
    code, test, vendored = rec("app/retry.py"), rec("tests/test_retry.py"), rec("vendor/x/retry.py")
    admit = Admit(Filters(languages=("python",), exclude=Filters(roles=("test",), paths=("vendor/**",))))
    assert [admit(c) for c in (code, test, vendored)] == [True, False, False]
    # packages: a package and the ones below it
    lookups = Lookups(packages={"app/retry.py": "app", "app/sub/x.py": "app.sub", "lib/y.py": "lib"})
    admit = Admit(Filters(exclude=Filters(packages=("app",))), lookups)
    assert [admit(rec(p)) for p in ("app/retry.py", "app/sub/x.py", "lib/y.py")] == [False, False, True]
    # skip: what the lexical index applied already is not checked again
    assert Admit(Filters(languages=("go",)), skip=INDEX_FILTERS)(code)
    assert not Admit(Filters())


def test_the_tree_test_reads_filters_from_the_candidate_and_words_from_the_index():
    code, test, vendored = rec("app/retry.py"), rec("tests/test_retry.py"), rec("vendor/x/retry.py")
    query = parse_query("retry (role:test OR path:vendor/**) -mock")
    tree = TreeTest(query.words.match)
    assert tree.words == [Term("mock")]  # (retry ranks: the OR joins filters only)
    # (what the lexical index says each chunk holds)
    holds = {code.path: {"retry"}, test.path: {"retry"}, vendored.path: {"retry", "mock"}}
    assert [tree(c, lambda t, c=c: t.text in holds[c.path]) for c in (code, test, vendored)] == [False, True, False]
    assert not index_applies(query.words.match) and index_applies(parse_query("x OR kind:class").words.match)
    assert Filters(languages=("go",), exclude=Filters(paths=("v/**",))).tree(INDEX_FILTERS) == \
        Filter("languages", ("go",))


# every side and front end, on a real index --------------------------------------
LIB = '''"""Retries with backoff."""


def retry_request(attempts):
    """Retry a request with exponential backoff."""
    return attempts * 2
'''
TEST = '''"""Retry with exponential backoff, tested."""
from lib.retry import retry_request


def test_retry_request():
    """Retry a request with exponential backoff, tested."""
    assert retry_request(2) == 4
'''
VENDORED = '''def retry_request(attempts):
    """Retry a request with exponential backoff (vendored copy)."""
    return attempts
'''
DOC = "# Retry\n\nRetry a request with exponential backoff: see retry_request.\n"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("excl") / "ws"
    for rel, text in (("lib/retry.py", LIB), ("tests/test_retry.py", TEST), ("vendor/pkg/retry.py", VENDORED),
                      ("docs/retry.md", DOC)):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def ws(tree: Path):
    w = Workspace(tree, Settings())
    w.index()
    assert w.load_semantic() is None
    w.embed_pending()
    yield w
    w.close()


EVERYTHING = {"lib/retry.py", "tests/test_retry.py", "vendor/pkg/retry.py", "docs/retry.md"}
EXCLUSIONS = [
    pytest.param("-role:test", "tests/test_retry.py", id="role"),
    pytest.param("-path:vendor/**", "vendor/pkg/retry.py", id="path"),
    pytest.param("-lang:markdown", "docs/retry.md", id="lang"),
    pytest.param("-type:markdown", "docs/retry.md", id="type"),
]


@pytest.mark.parametrize("mode", ["lexical", "semantic", "hybrid"])
def test_every_mode_leaves_out_what_is_excluded(ws: Workspace, mode: str):
    query = "retry a request with exponential backoff"
    found = {h.path for h in ws.search(SearchRequest(query, mode, limit=50, min_score=None)).hits}
    assert found == EVERYTHING, "the fixture: every file answers the query"
    for p in EXCLUSIONS:
        exclusion, left_out = p.values
        text, f = parse_inline(f"{query} {exclusion}")
        hits = ws.search(SearchRequest(text, mode, limit=50, min_score=None, filters=f)).hits
        assert {h.path for h in hits} == EVERYTHING - {left_out}, (mode, exclusion)
    # a kind: the test function, the vendored function and the module chunks stay; no function is left
    text, f = parse_inline(f"{query} -kind:function")
    assert all(h.kind != "function" for h in ws.search(SearchRequest(text, mode, limit=50, min_score=None,
                                                                     filters=f)).hits)


def test_a_line_search_leaves_out_what_is_excluded(ws: Workspace):
    every = {h.path for h in ws.grep(GrepRequest("retry_request", "exact")).hits}
    assert every == EVERYTHING
    kept = ws.grep(GrepRequest("retry_request", "exact", filters=Filters(exclude=Filters(paths=("vendor/**",),
                                                                                        languages=("markdown",)))))
    assert {h.path for h in kept.hits} == EVERYTHING - {"vendor/pkg/retry.py", "docs/retry.md"}
    # the kind of the symbol enclosing a line: the lines inside functions go, the import stays
    kept = ws.grep(GrepRequest("retry_request", "exact", filters=Filters(exclude=Filters(kinds=("function",)))))
    assert {(h.path, h.kind) for h in kept.hits} == {("tests/test_retry.py", ""), ("docs/retry.md", "heading")}


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sylk.cli", *args], capture_output=True, text=True,
                          timeout=TIMEOUT)


def test_the_command_line_leaves_out_what_is_excluded(tree: Path):
    # (the command indexes the tree itself: each test has its own cache folder)
    search = _cli("search", "retry request backoff -role:test", str(tree), "--mode", "lexical", "--format",
                  "paths", "--exclude", "path:vendor/**")
    assert search.returncode == 0, search.stderr
    assert set(search.stdout.split()) == {"lib/retry.py", "docs/retry.md"}
    grep = _cli("grep", "retry_request", str(tree), "--exclude", "lang:markdown", "--exclude",
                "path:tests/**")
    assert grep.returncode == 0, grep.stderr
    assert {line.split(":", 1)[0] for line in grep.stdout.splitlines()} == {"lib/retry.py", "vendor/pkg/retry.py"}
    bad = _cli("grep", "retry_request", str(tree), "--no-refresh", "--exclude", "role:test")
    assert bad.returncode == 2 and "--exclude" in bad.stderr
    # Find References: the files' filters and what to leave out
    refs = _cli("refs", "retry_request", str(tree), "--no-refresh", "--exclude", "path:vendor/**", "--exclude",
                "lang:markdown")
    assert refs.returncode == 0, refs.stderr
    assert {line.split(":", 1)[0] for line in refs.stdout.splitlines()} == {"lib/retry.py", "tests/test_retry.py"}
    refs = _cli("refs", "retry_request", str(tree), "--no-refresh", "-g", "tests/**")
    assert {line.split(":", 1)[0] for line in refs.stdout.splitlines()} == {"tests/test_retry.py"}, refs.stderr
    bad = _cli("refs", "retry_request", str(tree), "--no-refresh", "--exclude", "kind:function")
    assert bad.returncode == 2 and "references leave out files by lang:, type:, path:, package: only" in bad.stderr


def test_the_command_line_filters_by_every_flag_of_the_table(tree: Path):
    """The flags are made from the filter table: sylk grep takes --type and --kind (a line
    search's filters), sylk search --maxlines, beside the flags it had."""
    grep = _cli("grep", "retry_request", str(tree), "--type", "markdown")
    assert grep.returncode == 0, grep.stderr
    assert {line.split(":", 1)[0] for line in grep.stdout.splitlines()} == {"docs/retry.md"}
    inside = _cli("grep", "attempts", str(tree), "--no-refresh", "--kind", "function", "-g", "lib/**")
    assert inside.returncode == 0, inside.stderr
    assert [line.split(":")[1] for line in inside.stdout.splitlines()] == ["4", "6"]  # not line 1's docstring
    short = _cli("search", "retry request backoff", str(tree), "--no-refresh", "--mode", "lexical", "--format",
                 "json", "--maxlines", "2")
    assert short.returncode == 0, short.stderr
    hits = json.loads(short.stdout)["hits"]  # (the functions and the section are 3 lines long)
    assert {(h["path"], h["kind"]) for h in hits} == {("lib/retry.py", "file_header"),
                                                      ("tests/test_retry.py", "file_header")}
    bad = _cli("search", "retry", str(tree), "--no-refresh", "--lang", "golang")
    assert bad.returncode == 2 and "--lang" in bad.stderr and "unknown language 'golang'" in bad.stderr
    bad = _cli("grep", "retry", str(tree), "--no-refresh", "--minlines", "3")
    assert bad.returncode == 2 and "unrecognized arguments: --minlines" in bad.stderr


def test_search_exclude_from_the_workspace_settings(tree: Path, tmp_path: Path):
    import shutil

    root = tmp_path / "ws"
    shutil.copytree(tree, root)
    (root / ".sylk.toml").write_text('[search]\nexclude = ["role:test", "path:vendor/**"]\n', encoding="utf-8")
    search = _cli("search", "retry request backoff", str(root), "--mode", "lexical", "--format", "paths")
    assert search.returncode == 0, search.stderr
    assert set(search.stdout.split()) == {"lib/retry.py", "docs/retry.md"}
    asked = _cli("search", "retry request backoff role:test", str(root), "--mode", "lexical", "--format", "paths")
    assert set(asked.stdout.split()) == {"tests/test_retry.py"}, asked.stderr
    grep = _cli("grep", "retry_request", str(root), "--no-refresh")
    assert grep.returncode == 0, grep.stderr
    assert {line.split(":", 1)[0] for line in grep.stdout.splitlines()} == {"lib/retry.py", "tests/test_retry.py",
                                                                            "docs/retry.md"}
