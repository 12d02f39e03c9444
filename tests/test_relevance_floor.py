"""The relevance floor (``search.minScore``, issue 17): modes semantic and hybrid leave
out the hits only the semantic side found when they are not close enough in meaning, so
a query that names nothing in the code gets no hits and a message saying why, while a
real query keeps its answer. Over stdio with the real packaged model; one server and
one index for the whole module."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from conftest import EMBEDDING, WORKSPACE, start_lsp, wait_for_progress_end
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient
from sylk import config, settings_sources
from sylk.params import request_from_params
from sylk.search.values import QueryError

NONSENSE = "xyzzyplugh"  # names nothing in any code base
DISTANCE = "how far apart are two locations on a plane"  # services/geo/point.go's Distance, no shared word
MIXED = "exponential backoff for failed requests"  # real words: app/http.py's backoff
shared_loop = pytest.mark.asyncio(loop_scope="module")  # the tests that use the module's server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory):
    """The fixture workspace served with the default settings (embedding on, the default
    floor), every chunk embedded."""
    root = tmp_path_factory.mktemp("floor") / "workspace"
    shutil.copytree(WORKSPACE, root, symlinks=True)
    client = await start_lsp(root, tmp_path_factory.mktemp("cache"), "visual-studio-code")
    await wait_for_progress_end(client)
    await wait_for_progress_end(client, title=EMBEDDING)
    yield client
    await client.shutdown_session()
    await client.stop()


async def search(client: LanguageClient, query: str, **params: Any) -> Any:
    return await client.protocol.send_request_async("sylk/search", {"query": query, **params})


@shared_loop
@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
async def test_nonsense_gets_no_hits_and_a_message_while_a_real_query_keeps_its_answer(
        served: LanguageClient, mode: str):
    nonsense = await search(served, NONSENSE, mode=mode)
    assert list(nonsense.hits) == [] and nonsense.totalHits == 0
    assert "relevance floor" in nonsense.message and "minScore" in nonsense.message
    real = await search(served, DISTANCE, mode=mode, limit=3)
    found = {(h.symbol, h.path): h for h in real.hits}
    distance = found[("Distance", "services/geo/point.go")]  # first in mode semantic, after its Point in hybrid
    assert distance.lexicalRank is None and distance.semanticRank == 1  # by meaning alone, above the floor
    assert getattr(real, "message", None) is None


@shared_loop
@pytest.mark.parametrize("off", [0, None])
async def test_no_floor_answers_nonsense_with_the_nearest_chunks(served: LanguageClient, off: float | None):
    result = await search(served, NONSENSE, mode="semantic", limit=5, minScore=off)
    assert len(result.hits) == 5 and all(h.semanticRank for h in result.hits)
    assert getattr(result, "message", None) is None


@shared_loop
async def test_a_lexical_hit_survives_the_floor_in_hybrid(served: LanguageClient):
    # a floor no cosine similarity reaches: only what the lexical side found is left
    result = await search(served, "backoff_delay", minScore=0.99, explain=True, limit=20)
    assert result.hits[0].symbol == "backoff_delay"
    assert all(h.lexicalRank is not None for h in result.hits)
    assert result.explain.minScore == 0.99 and result.explain.belowMinScore > 0
    # the same floor in mode semantic leaves nothing, and says so
    semantic = await search(served, "backoff_delay", mode="semantic", minScore=0.99)
    assert list(semantic.hits) == [] and "relevance floor 0.99" in semantic.message
    # a sentence with real words keeps its answer at the default floor
    mixed = await search(served, MIXED, limit=5)
    assert mixed.hits[0].path == "app/http.py" and mixed.hits[0].lexicalRank is not None


@shared_loop
@pytest.mark.parametrize("bad", [1.5, -0.1, "high", True])
async def test_a_bad_min_score_is_refused_naming_the_field(served: LanguageClient, bad: Any):
    with pytest.raises(JsonRpcInvalidParams, match="minScore: expected a number from 0 to 1"):
        await search(served, "retry", minScore=bad)
    assert (await search(served, "retry", mode="lexical")).hits  # the server keeps serving


def test_the_floor_comes_from_the_settings_unless_the_request_says(tmp_path: Path):
    resolved = settings_sources.resolve(tmp_path, {"search": {"minScore": 0.5}}, environ={})
    settings, problems = resolved.settings, list(resolved.problems)
    assert problems == [] and settings.search.min_score == 0.5
    assert request_from_params({"query": "x"}, settings.search).min_score == 0.5
    assert request_from_params({"query": "x", "minScore": 0.2}, settings.search).min_score == 0.2
    assert request_from_params({"query": "x", "minScore": 0}, settings.search).min_score is None
    assert request_from_params({"query": "x", "minScore": None}, settings.search).min_score is None
    default = config.Settings().search.min_score
    assert 0 < default < 1 and request_from_params({"query": "x"}).min_score == default
    problems = settings_sources.resolve(tmp_path, {"search": {"minScore": 2}}, environ={}).problems
    assert any("search.minScore must be between 0 and 1" in p for p in problems), problems
    with pytest.raises(QueryError, match="minScore"):
        request_from_params({"query": "x", "minScore": "0.3"})


def sylk(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sylk.cli", *args], capture_output=True, text=True,
                          env=os.environ.copy(), timeout=300)


def test_cli_min_score(workspace: Path):
    assert sylk("index", str(workspace)).returncode == 0
    r = sylk("search", NONSENSE, str(workspace), "--mode", "semantic", "--no-refresh")
    assert r.returncode == 1 and r.stdout == "", r.stdout
    floor = config.Settings().search.min_score
    assert "0 of 0 hits" in r.stderr and f"below the relevance floor {floor:g}" in r.stderr, r.stderr
    r = sylk("search", NONSENSE, str(workspace), "--mode", "semantic", "--no-refresh", "--min-score", "0",
             "--limit", "3", "--format", "json")
    assert r.returncode == 0 and len(json.loads(r.stdout)["hits"]) == 3
    r = sylk("search", DISTANCE, str(workspace), "--mode", "semantic", "--no-refresh", "--limit", "1")
    assert r.returncode == 0 and "services/geo/point.go" in r.stdout and "Distance" in r.stdout
    r = sylk("search", "retry", str(workspace), "--min-score", "2", "--no-refresh")
    assert r.returncode == 2 and r.stderr.startswith("sylk: error: --min-score: expected a number from 0 to 1")


async def test_the_floor_through_mcp(tmp_path: Path, _isolated_index: Path):
    """search_code answers nonsense with no hits and the floor's message; min_score 0
    turns it off; a value outside 0..1 names the argument."""
    from conftest import mcp_call, mcp_call_error, mcp_session, mcp_wait_until

    root = tmp_path / "workspace"
    shutil.copytree(WORKSPACE, root, symlinks=True)
    async with mcp_session(root, _isolated_index) as s:
        await mcp_wait_until(s, lambda st: st.get("pending") == 0 and st.get("chunks", 0) > 0 and st.get("lastRun"),
                             "every chunk embedded")
        nonsense = await mcp_call(s, "search_code", query=NONSENSE, mode="semantic")
        assert nonsense["hits"] == [] and "relevance floor" in nonsense["message"]
        off = await mcp_call(s, "search_code", query=NONSENSE, mode="semantic", limit=5, min_score=0)
        assert len(off["hits"]) == 5 and "message" not in off
        real = await mcp_call(s, "search_code", query=DISTANCE, mode="semantic", limit=3)
        assert ("services/geo/point.go", "Distance") in {(h["path"], h["symbol"]) for h in real["hits"]}
        assert "min_score" in await mcp_call_error(s, "search_code", query="x", min_score=2)
