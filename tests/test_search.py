"""sylk/search and `sylk search` on the fixture workspace (real index on disk)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sylk.config import Settings
from sylk.indexer import Workspace
from sylk.query import Filters, SearchRequest


@pytest.fixture
def ws(workspace: Path):
    w = Workspace(workspace, Settings())
    w.index()
    yield w
    w.close()


def lexical(ws: Workspace, query: str, **kw) -> list:
    return ws.search(SearchRequest(query, "lexical", **kw)).hits


def test_exact_identifier_ranks_first(ws: Workspace):
    hits = lexical(ws, "get_user_by_id")
    assert (hits[0].path, hits[0].symbol, hits[0].kind) == ("app/repository.py", "get_user_by_id", "method")
    assert hits[0].container == "UserRepository"
    assert hits[0].lexical_rank == 1 and hits[0].semantic_rank is None


def test_camel_identifier_matches_as_a_phrase(ws: Workspace):
    hits = lexical(ws, "HttpRetryPolicy")
    assert hits[0].symbol == "HttpRetryPolicy"
    assert {h.path for h in hits} == {"app/http.py"}


@pytest.mark.parametrize(("filters", "check"), [
    pytest.param(Filters(languages=("go",)), lambda h: h.language == "go", id="language"),
    pytest.param(Filters(kinds=("method",)), lambda h: h.kind == "method", id="kind"),
    pytest.param(Filters(paths=("app/**",)), lambda h: h.path.startswith("app/"), id="path-glob"),
    pytest.param(Filters(types=("markdown",)), lambda h: h.type == "markdown", id="type"),
    pytest.param(Filters(max_lines=3), lambda h: h.end_line - h.start_line + 1 <= 3, id="max-lines"),
])
def test_filters_hold(ws: Workspace, filters: Filters, check):
    hits = lexical(ws, "the a return user point retry store", filters=filters, limit=50)
    assert hits, "the filter left nothing: the fixture should have matches"
    assert all(check(h) for h in hits)


def test_inline_filters_in_the_query(ws: Workspace):
    from sylk.query import parse_inline

    text, filters = parse_inline("lang:go kind:method distance")
    hits = lexical(ws, text, filters=filters)
    assert [(h.symbol, h.container) for h in hits] == [("Distance", "Point")]


def test_pagination_is_consistent(ws: Workspace):
    every = lexical(ws, "user retry point store session", limit=12)
    page1 = lexical(ws, "user retry point store session", limit=6)
    page2 = lexical(ws, "user retry point store session", limit=6, offset=6)
    assert len(every) == 12
    assert [h.id for h in page1 + page2] == [h.id for h in every]


def test_snippet_and_highlights_are_on_the_match(ws: Workspace, workspace: Path):
    hit = lexical(ws, "\"exponential backoff\"")[0]
    assert hit.symbol == "HttpRetryPolicy"
    lines = (workspace / hit.path).read_text().splitlines()
    assert hit.snippet.split("\n") == lines[hit.snippet_line:hit.snippet_line + hit.snippet.count("\n") + 1]
    marked = {lines[ln][a:b].lower() for ln, a, b in hit.highlights}
    assert marked >= {"exponential", "backoff"}


def test_facets_count_the_candidates(ws: Workspace):
    result = ws.search(SearchRequest("user", "lexical", facets=True, limit=5))
    langs = dict(result.facets["language"])
    assert sum(langs.values()) == result.total_hits
    assert langs["python"] >= 1


def test_semantic_mode_says_when_it_cannot_answer(ws: Workspace):
    result = ws.search(SearchRequest("anything", "semantic"))
    assert result.hits == [] and "semantic" in (result.message or "")
    assert result.index["chunks"] > 50 and result.index["ready"] is False


def test_cli_search_json_and_paths(workspace: Path):
    env = os.environ.copy()
    r = subprocess.run([sys.executable, "-m", "sylk.cli", "search", "get_user_by_id", str(workspace),
                        "--mode", "lexical", "--format", "json"], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["hits"][0]["path"] == "app/repository.py" and data["hits"][0]["symbol"] == "get_user_by_id"
    assert data["mode"] == "lexical" and data["index"]["files"] == 16
    r = subprocess.run([sys.executable, "-m", "sylk.cli", "search", "lang:go point", str(workspace),
                        "--mode", "lexical", "--format", "paths", "--no-refresh"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.stdout.split() == ["services/geo/point.go"]


def test_cli_search_default_format(workspace: Path):
    r = subprocess.run([sys.executable, "-m", "sylk.cli", "search", "\"exponential backoff\"", str(workspace),
                        "--mode", "lexical", "--limit", "1"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith("  1. app/http.py:") and "HttpRetryPolicy" in first
    assert "exponential backoff" in r.stdout
    assert "1 of" in r.stderr and "mode lexical" in r.stderr
