"""The ranking stack (search/ranking.py) and the file classes it reads (search/file_class.py):
each stage alone on hand-made candidates, then the stack in a real search."""

from __future__ import annotations

import pytest
from sylk.model import RANKING_STAGES
from sylk.search import ranking
from sylk.search.file_class import BENCH, BUILD, CODE, DOCS, EXAMPLE, GENERATED, TEST, asked_classes, file_class
from sylk.search.fusion import Fused
from sylk.search.ranking import RankQuery, path_words, rank, stem
from sylk.store.manifest import ChunkRecord
from sylk.text.query_terms import analyze


def rec(id: int, path: str, start: int = 0, end: int = 9, kind: str = "function", symbol: str = "",
        container: str = "") -> ChunkRecord:
    return ChunkRecord(id, path, start, end, "python", "code", kind, symbol, container, "h")


def ranked(stage: str, chunks: list[ChunkRecord], query: str, scores: list[float] | None = None) -> list[int]:
    """The ids in the order ``stage`` leaves them, from candidates scored as given
    (default: 1.0, 0.9, 0.8 ... in the order of ``chunks``)."""
    scores = scores or [1.0 - 0.1 * i for i in range(len(chunks))]
    fused = [Fused(c.id, s) for c, s in zip(chunks, scores)]
    out = ranking.STAGES[stage](fused, {c.id: c for c in chunks}, RankQuery.of(analyze(query), query))
    assert sorted(f.score for f in out) == sorted((f.score for f in out)) and \
        [f.score for f in out] == sorted((f.score for f in out), reverse=True), "a stage leaves the list sorted"
    return [f.id for f in out]


def test_the_stages_are_the_models_list_in_order():
    assert tuple(ranking.STAGES) == RANKING_STAGES


@pytest.mark.parametrize(("path", "cls"), [
    ("src/server/routing.py", CODE),
    ("fastapi/dependencies/utils.py", CODE),
    ("tests/test_routing.py", TEST),
    ("lib/router_test.go", TEST),
    ("examples/basic/main.go", EXAMPLE),
    ("docs_src/tutorial/app.py", EXAMPLE),
    ("docs/guide.md", DOCS),
    ("README.md", DOCS),
    ("CHANGELOG", DOCS),
    (".agents/skills/fastapi/SKILL.md", DOCS),
    ("benchmarks/bench_parse.py", BENCH),
    (".github/workflows/ci.yml", BUILD),
    ("Makefile", BUILD),
    ("vendor/github.com/x/y.go", GENERATED),
    ("static/app.min.js", GENERATED),
    ("proto/service_pb2.py", GENERATED),
    ("examples/tests/test_demo.py", TEST),  # a test under examples/ is a test
])
def test_file_class(path: str, cls: str):
    assert file_class(path) == cls


def test_a_query_asks_for_a_class_by_its_words():
    assert asked_classes(["retry", "tests"]) == {TEST}
    assert asked_classes(["usage", "example", "docs"]) == {EXAMPLE, DOCS}
    assert asked_classes(["retry", "policy"]) == frozenset()


def test_stem_meets_a_file_name():
    assert stem("dependencies") == stem("dependency")
    assert stem("routes") == stem("routing") == stem("route")
    assert stem("websockets") == stem("websocket")
    assert stem("is") == "is"  # short words stay


def test_path_words_weigh_the_file_name_over_its_folders():
    w = path_words("fastapi/security/oauth2.py")
    assert w["oauth"] == 1.0 and w[stem("security")] == 0.5 and "py" not in w


def test_members_first_puts_a_member_before_its_class_for_words_only():
    chunks = [rec(1, "a.py", 0, 50, "class", "Policy"), rec(2, "a.py", 10, 20, "method", "delay", "Policy"),
              rec(3, "b.py", 0, 9, "function", "other")]
    assert ranked("members", chunks, "delay before retry") == [2, 3, 1]
    assert ranked("members", chunks, "the policies") == [1, 2, 3]  # words all in its name ask for the class


def test_members_first_keeps_the_files_place():
    # the member takes its class's place; the class falls back, the other file stays below
    chunks = [rec(1, "lib/endpoint.ex", 0, 300, "module", "Endpoint", "Phoenix"),
              rec(2, "lib/pipeline.ex", 0, 20, "function", "plug"),
              rec(3, "lib/endpoint.ex", 40, 60, "function", "config", "Phoenix.Endpoint"),
              rec(4, "lib/endpoint.ex", 70, 90, "function", "url", "Phoenix.Endpoint")]
    assert ranked("members", chunks, "endpoint pipeline configuration", [1.0, 0.9, 0.5, 0.4]) == [3, 2, 1, 4]
    # a member already above its class keeps its score
    assert ranked("members", chunks, "endpoint pipeline configuration", [0.8, 0.7, 0.9, 0.4]) == [3, 2, 1, 4]


def test_definition_first_for_a_name_typed_alone():
    chunks = [rec(1, "use.py", symbol="call_site"), rec(2, "def.py", symbol="APIRouter", kind="class")]
    assert ranked("definition", chunks, "APIRouter") == [2, 1]
    assert ranked("definition", chunks, "api_router") == [2, 1]  # every spelling of the name
    assert ranked("definition", chunks, "how the APIRouter works") == [2, 1]  # a name among words
    assert ranked("definition", chunks, "how the api router works") == [1, 2]  # words: no name typed
    # a definition in the file named after it before one of the same name elsewhere
    chunks = [rec(1, "mix/tasks/phx.routes.ex", symbol="router"), rec(2, "phoenix/router.ex", kind="module",
                                                                      symbol="Router")]
    assert ranked("definition", chunks, "Router") == [2, 1]
    # a file named after the name: one class a file, or a language without symbols
    chunks = [rec(1, "io/circe/Decoder.scala"), rec(2, "io/circe/KeyEncoder.scala")]
    assert ranked("definition", chunks, "KeyEncoder for Map keys") == [2, 1]


def test_path_match_lifts_the_file_a_query_word_names():
    chunks = [rec(1, "fastapi/applications.py"), rec(2, "fastapi/routing.py"), rec(3, "fastapi/websockets.py")]
    assert ranked("path", chunks, "websocket endpoint implementation") == [3, 1, 2]
    # a folder counts half: it lifts, but less than a file name
    chunks = [rec(1, "app/models.py"), rec(2, "app/dependencies/utils.py"), rec(3, "app/dependency.py")]
    assert ranked("path", chunks, "dependency injection", [1.0, 0.9, 0.8]) == [3, 2, 1]
    # a word meets a file name it begins or that begins it, from four letters on
    chunks = [rec(1, "pydantic/main.py"), rec(2, "pydantic/config.py"), rec(3, "pydantic/aliases.py")]
    assert ranked("path", chunks, "model configuration and settings") == [2, 1, 3]
    assert ranked("path", chunks, "alias handling for field names") == [3, 1, 2]
    assert ranked("path", chunks, "con") == [1, 2, 3]  # too short to begin a name


def test_code_first_for_words_unless_the_query_asks():
    chunks = [rec(1, "tests/test_retry.py"), rec(2, "docs/retry.md"), rec(3, "src/retry.py")]
    assert ranked("code", chunks, "how are requests retried") == [3, 1, 2]
    assert ranked("code", chunks, "retry tests") == [1, 3, 2]  # asked for: the test stays first


def stages(query: str) -> tuple[str, ...]:
    return ranking.stages_for(RankQuery.of(analyze(query), query))


@pytest.mark.parametrize(("query", "expected"), [
    # a name typed alone: its definition, and the files it names; not members (a class name
    # also matches each member's container) nor code (a name is wherever it is)
    pytest.param("APIRouter", ("definition", "path"), id="a-name-alone"),
    pytest.param("retry_policy", ("definition", "path"), id="a-snake-name-alone"),
    # a question: every stage
    pytest.param("how does APIRouter include routes", RANKING_STAGES, id="a-question-with-a-name"),
    pytest.param("where are sessions stored", ("members", "path", "code", "coherence", "spread"),
                 id="a-question-in-words"),
    pytest.param("What handles retries", ("members", "path", "code", "coherence", "spread"), id="any-case"),
    # a description in words, with or without a name: its text and meaning, members and code
    pytest.param("retry policy", ("members", "code"), id="words"),
    pytest.param("Send a complete request to the server.", ("members", "code"), id="a-sentence"),
    pytest.param("Do the inverse of split_header_words.", ("members", "code"), id="a-sentence-naming-a-name"),
    pytest.param("however the parser fails", ("members", "code"), id="not-a-question-word"),
])
def test_each_stage_serves_the_queries_it_was_measured_on(query: str, expected: tuple[str, ...]):
    assert stages(query) == expected


def test_stages_switched_off_do_not_run_whatever_the_query():
    q = RankQuery.of(analyze("how are requests retried"), "how are requests retried")
    assert ranking.stages_for(q, ("path", "spread")) == ("members", "code", "coherence")
    assert ranking.stages_for(q, RANKING_STAGES) == ()


def test_coherence_lifts_a_file_several_chunks_of_which_match():
    chunks = [rec(1, "one.py"), rec(2, "many.py", 0, 9), rec(3, "many.py", 20, 29), rec(4, "many.py", 40, 49),
              rec(5, "other.py")]
    # many.py's best (0.9) gains COHERENCE x ((0.8 - 0.1) + (0.7 - 0.1)): above 1.0 from COHERENCE 0.08 on
    assert ranked("coherence", chunks, "anything", [1.0, 0.9, 0.8, 0.7, 0.1]) == [2, 1, 3, 4, 5]
    # scores crowded in a narrow band (cosine similarity) lift by what they have above the lowest
    assert ranked("coherence", chunks, "anything", [0.50, 0.45, 0.42, 0.41, 0.40]) == [1, 2, 3, 4, 5]


def test_spread_keeps_one_file_from_filling_the_page():
    a1, a2, b = rec(1, "a.py", 0, 20), rec(2, "a.py", 30, 40), rec(3, "b.py", 0, 9)
    # a.py's second chunk pays FILE_DECAY: below b.py's best when that is close enough
    assert ranked("spread", [a1, a2, b], "anything", [1.0, 0.95, 0.95 * ranking.FILE_DECAY + 0.01]) == [1, 3, 2]
    assert ranked("spread", [a1, a2, b], "anything", [1.0, 0.95, 0.95 * ranking.FILE_DECAY - 0.01]) == [1, 2, 3]
    # a chunk overlapping one ranked before it (the same lines twice) pays OVERLAP on top
    dup = rec(2, "a.py", 5, 20)
    just_below = 0.95 * ranking.FILE_DECAY - 0.01
    assert ranked("spread", [a1, dup, b], "anything", [1.0, 0.95, just_below]) == [1, 3, 2]
    assert 0.95 * ranking.FILE_DECAY * ranking.OVERLAP < just_below


def test_rank_skips_the_stages_switched_off():
    chunks = [rec(1, "tests/test_x.py"), rec(2, "src/x.py")]
    fused = [Fused(1, 1.0), Fused(2, 0.9)]
    records = {c.id: c for c in chunks}
    q = RankQuery.of(analyze("how is x parsed"))
    assert [f.id for f in rank(fused, records, q)] == [2, 1]
    assert [f.id for f in rank(fused, records, q, off=("code",))] == [1, 2]
    assert rank([], records, q) == []
