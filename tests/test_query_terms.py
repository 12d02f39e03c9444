"""How a typed query is read (text/query_terms.py) and how both rankings are fused
(search/fusion.py): pure functions, no index."""

from __future__ import annotations

import pytest
from sylk.search.fusion import CONVEX, RRF, Scored, fuse
from sylk.text.query_terms import IDENTIFIER, MIXED, NATURAL, analyze


@pytest.mark.parametrize(("query", "style", "identifiers", "words"), [
    pytest.param("HttpRetryPolicy", IDENTIFIER, ("HttpRetryPolicy",), (), id="pascal"),
    pytest.param("get_user", IDENTIFIER, ("get_user",), (), id="snake"),
    pytest.param("foo.bar", IDENTIFIER, ("foo.bar",), (), id="dotted"),
    pytest.param("retry", IDENTIFIER, (), ("retry",), id="one-word-may-be-a-name"),
    pytest.param("retry the failed request", NATURAL, (), ("retry", "failed", "request"), id="english"),
    pytest.param("where is parseUrl called", MIXED, ("parseUrl",), ("called",), id="mixed"),
    pytest.param("APIRouter", IDENTIFIER, ("APIRouter",), (), id="acronym-before-a-word"),
    pytest.param("how HTTPServer starts", MIXED, ("HTTPServer",), ("starts",), id="acronym-among-words"),
    pytest.param("the", IDENTIFIER, (), ("the",), id="only-a-stop-word-stays"),
    pytest.param("is_not_a_number of", MIXED, ("is_not_a_number",), (), id="stop-words-stay-in-identifiers"),
])
def test_queries_are_read_as_people_type_them(query, style, identifiers, words):
    terms = analyze(query)
    assert terms.style == style
    assert tuple(i.text for i in terms.identifiers) == identifiers
    assert terms.words == words


def test_stop_words_are_dropped_and_reported():
    terms = analyze("Return the value of a header")
    assert terms.words == ("return", "value", "header")
    assert set(terms.dropped) == {"the", "of", "a"}


def test_neighbouring_words_may_be_one_identifier():
    assert analyze("parse url quickly").runs == (("parse", "url"), ("url", "quickly"))


def test_quoted_phrases_are_kept_whole():
    terms = analyze('"connection reset" retry')
    assert terms.phrases == ("connection reset",) and terms.words == ("retry",)


def test_typo_tolerance_needs_five_letters():
    assert analyze("get_usre").identifiers[0].typo_tolerant
    assert not analyze("a_b1").identifiers[0].typo_tolerant


def test_convex_fusion_prefers_agreement_and_keeps_each_sides_word():
    lexical = [Scored(1, 12.0), Scored(2, 6.0), Scored(3, 1.0)]
    semantic = [Scored(4, 0.70), Scored(2, 0.65), Scored(5, 0.30)]
    fused = fuse(CONVEX, lexical, semantic, depth=10, style=NATURAL, weights=(1.0, 1.0), k=60, alpha=0.5)
    assert fused[0].id == 2  # second on both sides beats first on one
    top = fused[0]
    assert (top.lexical_rank, top.lexical_score, top.semantic_rank, top.semantic_score) == (2, 6.0, 2, 0.65)
    only_semantic = next(f for f in fused if f.id == 4)
    assert only_semantic.lexical_rank is None and only_semantic.lexical_score is None


def test_convex_alpha_moves_the_balance():
    lexical = [Scored(1, 10.0), Scored(2, 1.0)]
    semantic = [Scored(2, 0.9), Scored(1, 0.1)]
    lean_lexical = fuse(CONVEX, lexical, semantic, depth=10, style=NATURAL, weights=(1.0, 1.0), k=60, alpha=0.9)
    lean_semantic = fuse(CONVEX, lexical, semantic, depth=10, style=NATURAL, weights=(1.0, 1.0), k=60, alpha=0.1)
    assert [f.id for f in lean_lexical] == [1, 2] and [f.id for f in lean_semantic] == [2, 1]


def test_fusion_only_fuses_its_depth_but_reports_whole_ranks():
    lexical = [Scored(i, 10.0 - i) for i in range(1, 8)]
    fused = fuse(RRF, lexical, [Scored(7, 0.9)], depth=3, style=NATURAL, weights=(1.0, 1.0), k=60)
    assert [f.id for f in fused] == [1, 7, 2, 3]  # 7 enters from the semantic side only
    assert next(f for f in fused if f.id == 7).lexical_rank == 7  # explain still says where lexical had it


def test_unknown_fusion_is_refused():
    with pytest.raises(ValueError, match="fusion"):
        fuse("borda", [], [], depth=3, style=NATURAL, weights=(1.0, 1.0), k=60)
