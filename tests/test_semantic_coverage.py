"""Honest state while embedding runs (issue 31 item 4): an answer whose semantic side saw
only part of the index says how much, in every front end's message, and what became of
the rest (hybrid: ranked by their words alone; semantic: not searched). Here the quick
pass is off, so the chunks the model has not reached have no vector at all;
tests/test_quick_pass.py has the default."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import attrs
import pytest
from conftest import TIMEOUT, WORKSPACE
from sylk.config import Settings
from sylk.engine.workspace import Workspace
from sylk.search.merge import merge_results
from sylk.search.query import SearchRequest
from sylk.search.results import IndexState, SearchResult, coverage_note

FIRST = 16  # chunks embedded before the pass is stopped
NO_QUICK = attrs.evolve(Settings(), embedding=attrs.evolve(Settings().embedding, quick_pass=False))


@pytest.fixture(scope="module")
def part_embedded(tmp_path_factory: pytest.TempPathFactory):
    """The fixture workspace with its text indexed and only its first batch of chunks embedded."""
    root = tmp_path_factory.mktemp("coverage") / "workspace"
    shutil.copytree(WORKSPACE, root)
    cache = root.parent / "cache"  # the index where the command line looks for it (tests/conftest.py)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(cache))
        w = Workspace(root, NO_QUICK)
    w.index()
    assert w.load_semantic() is None
    stop = threading.Event()
    done = w.embed_pending(progress=lambda done, _total: done and stop.set(), cancel=stop, batch=FIRST)
    counts = w.manifest.chunk_counts()
    assert done == counts["embedded"] == FIRST < counts["chunks"], counts
    yield w
    w.close()


def test_a_hybrid_answer_says_how_much_its_semantic_side_covered(part_embedded: Workspace):
    result = part_embedded.search(SearchRequest("exponential backoff for failed requests", "hybrid", limit=5))
    chunks = result.index.chunks
    assert result.hits and result.semantic_covered == FIRST and result.index.pending == chunks - FIRST
    assert result.notes == (f"semantic side: {FIRST} of {chunks} chunks embedded ({100 * FIRST // chunks}%); "
                            "the others were ranked by their words alone")


def test_a_semantic_answer_says_the_rest_was_not_searched(part_embedded: Workspace):
    result = part_embedded.search(SearchRequest("exponential backoff for failed requests", "semantic", limit=5))
    assert result.notes is not None and result.notes.endswith("the others were not searched")
    assert f"semantic side: {FIRST} of " in result.notes


def test_a_lexical_answer_says_nothing_of_the_semantic_side(part_embedded: Workspace):
    result = part_embedded.search(SearchRequest("backoff", "lexical", limit=5))
    assert result.hits and result.semantic_covered is None and result.notes is None


def test_the_command_line_says_it_in_json_and_in_its_footer(part_embedded: Workspace):
    base = [sys.executable, "-m", "sylk.cli", "search", "exponential backoff", str(part_embedded.root), "--no-refresh"]
    env = {**os.environ, "XDG_CACHE_HOME": str(part_embedded.root.parent / "cache")}
    out = subprocess.run([*base, "--format", "json"], capture_output=True, text=True, env=env, timeout=TIMEOUT,
                         check=True)
    data = json.loads(out.stdout)
    assert data["message"].startswith(f"semantic side: {FIRST} of {data['index']['chunks']} chunks embedded")
    human = subprocess.run(base, capture_output=True, text=True, env=env, timeout=TIMEOUT, check=True)
    footer = human.stderr.strip().splitlines()[-1]
    assert "mode hybrid (semantic side:" in footer and footer.endswith("'sylk index' embeds the rest"), footer


def test_merged_folders_say_the_coverage_over_all_of_them():
    def part(covered: int | None, chunks: int) -> SearchResult:
        return SearchResult("q", "hybrid", 1.0, 0, [], {}, IndexState(1, chunks, covered or 0, chunks - (covered or 0),
                                                                      False), semantic_covered=covered)

    merged = merge_results([part(10, 10), part(5, 30), part(None, 60)], 0, 10, asked=3).result
    assert merged.semantic_covered == 15 and merged.index.chunks == 100
    assert merged.notes == "semantic side: 15 of 100 chunks embedded (15%); the others were ranked by their words alone"
    assert merge_results([part(None, 5), part(None, 5)], 0, 10, asked=2).result.notes is None


@pytest.mark.parametrize(("mode", "covered", "chunks"), [
    ("hybrid", 10, 10), ("hybrid", None, 10), ("lexical", 3, 10), ("semantic", 0, 0),
])
def test_no_coverage_note_when_the_semantic_side_saw_everything_or_did_not_run(mode: str, covered: int | None,
                                                                                  chunks: int):
    assert coverage_note(mode, covered, chunks) is None


def test_big_counts_are_grouped_and_the_percentage_never_rounds_up_to_all():
    assert coverage_note("semantic", 79_999, 80_000) == (
        "semantic side: 79,999 of 80,000 chunks embedded (99%); the others were not searched")


def test_an_index_with_no_vector_yet_says_so_once(tmp_path: Path):
    root = tmp_path / "workspace"
    shutil.copytree(WORKSPACE, root)
    w = Workspace(root, attrs.evolve(NO_QUICK, index_dir=str(tmp_path / "index")))
    try:
        w.index()
        result = w.search(SearchRequest("backoff", "hybrid", limit=5))
        assert result.semantic_covered is None
        assert result.notes == "semantic search is not ready yet: no chunk is embedded"
    finally:
        w.close()
