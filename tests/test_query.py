"""Search request parsing, inline filters and reciprocal rank fusion (pure logic)."""

from __future__ import annotations

import pytest
from sylk.search.fusion import rrf
from sylk.params import request_from_params
from sylk.search.query import Filters, Weights
from sylk.search.values import QueryError
from sylk.search.inline import parse_inline


@pytest.mark.parametrize(("query", "text", "filters"), [
    pytest.param("retry backoff", "retry backoff", Filters(), id="plain"),
    pytest.param("lang:python path:src/** kind:function retry backoff", "retry backoff",
                 Filters(languages=("python",), paths=("src/**",), kinds=("function",)), id="three"),
    pytest.param('path:"my dir/**" needle', "needle", Filters(paths=("my dir/**",)), id="quoted"),
    pytest.param("lang:go,rust parse", "parse", Filters(languages=("go", "rust")), id="comma"),
    pytest.param("type:markdown minlines:3 maxlines:40 install", "install",
                 Filters(types=("markdown",), min_lines=3, max_lines=40), id="types-and-bounds"),
    pytest.param("http://example.com:80 x", "http://example.com:80 x", Filters(), id="not-a-filter"),
])
def test_parse_inline(query: str, text: str, filters: Filters):
    assert parse_inline(query) == (text, filters)


def test_inline_bad_number_names_the_field():
    with pytest.raises(QueryError) as err:
        parse_inline("minlines:lots x")
    assert err.value.field == "minlines"


def test_unknown_filter_values_list_the_allowed_ones():
    with pytest.raises(QueryError, match=r"unknown language 'golang'; one of python, .*\bgo\b.*, text$"):
        request_from_params({"query": "x", "filters": {"languages": ["golang"]}})
    with pytest.raises(QueryError, match=r"unknown type 'go' \(go is a language: lang:go\); one of source_code"):
        parse_inline("type:go x")
    with pytest.raises(QueryError, match=r"unknown kind 'func'; one of class, .*function.*window"):
        parse_inline("kind:func x")
    # what Sylk produces is accepted: every language, "text", file and document types, chunk kinds
    req = request_from_params({"query": "x lang:text", "filters": {
        "languages": ["tsx", "csharp"], "types": ["config", "git_commit", "note", "web_page"],
        "kinds": ["function", "section", "window", "key", "file_header", "commit"]}})
    assert req.filters.languages == ("tsx", "csharp", "text") and "web_page" in req.filters.types


def test_rrf_rewards_agreement():
    fused = rrf([[1, 2, 3], [3, 4, 1]], [1.0, 1.0], k=60)
    order = [d for d, _ in fused]
    assert order[:2] == [1, 3]  # on both lists
    assert set(order) == {1, 2, 3, 4}
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 63)


def test_rrf_weights_and_ties():
    assert [d for d, _ in rrf([[1], [2]], [1.0, 1.0])] == [1, 2]  # tie: lexical first
    assert [d for d, _ in rrf([[1], [2]], [1.0, 2.0])] == [2, 1]
    assert rrf([[1, 2]], [0.0]) == [(1, 0.0), (2, 0.0)]


def test_request_from_params_defaults_and_camel_case():
    req = request_from_params({"query": "lang:python retry", "limit": 5, "offset": 10,
                               "filters": {"kinds": ["function"], "minLines": 2},
                               "weights": {"semantic": 2}})
    assert req.query == "retry" and req.mode == "hybrid" and (req.limit, req.offset) == (5, 10)
    assert req.filters == Filters(languages=("python",), kinds=("function",), min_lines=2)
    assert req.weights == Weights(lexical=1.0, semantic=2.0)


@pytest.mark.parametrize(("params", "field"), [
    pytest.param(None, "params", id="not-an-object"),
    pytest.param({}, "query", id="missing-query"),
    pytest.param({"query": 3}, "query", id="query-type"),
    pytest.param({"query": "x", "mode": "psychic"}, "mode", id="mode"),
    pytest.param({"query": "x", "limit": 0}, "limit", id="limit-range"),
    pytest.param({"query": "x", "limit": "ten"}, "limit", id="limit-type"),
    pytest.param({"query": "x", "offset": -1}, "offset", id="offset"),
    pytest.param({"query": "x", "filters": []}, "filters", id="filters-type"),
    pytest.param({"query": "x", "filters": {"colour": "red"}}, "filters.colour", id="filters-unknown"),
    pytest.param({"query": "x", "filters": {"types": ["Video files!"]}}, "filters.types", id="types-value"),
    pytest.param({"query": "x", "filters": {"languages": [1]}}, "filters.languages", id="languages-type"),
    pytest.param({"query": "x", "filters": {"languages": ["golang"]}}, "filters.languages", id="languages-value"),
    pytest.param({"query": "x", "filters": {"types": ["go"]}}, "filters.types", id="type-is-a-language"),
    pytest.param({"query": "x", "filters": {"kinds": ["func"]}}, "filters.kinds", id="kinds-value"),
    pytest.param({"query": "lang:golang x"}, "lang", id="inline-lang"),
    pytest.param({"query": "type:go x"}, "type", id="inline-type"),
    pytest.param({"query": "kind:func x"}, "kind", id="inline-kind"),
    pytest.param({"query": "x", "weights": {"lexical": -1}}, "weights.lexical", id="weights"),
    pytest.param({"query": "x", "fuzzy": "yes"}, "fuzzy", id="fuzzy"),
])
def test_malformed_params_name_the_field(params, field: str):
    with pytest.raises(QueryError) as err:
        request_from_params(params)
    assert err.value.field == field
    assert str(err.value).startswith(field)
