"""sylk/search and `sylk search` on the fixture workspace (real index on disk)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TIMEOUT
from sylk.config import Settings
from sylk.engine.workspace import Workspace
from sylk.model import RANKING_STAGES
from sylk.search.query import Filters, SearchRequest


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
    hits = lexical(ws, "the a return user point retry store tests", filters=filters, limit=50)
    assert hits, "the filter left nothing: the fixture should have matches"
    assert all(check(h) for h in hits)


def test_inline_filters_in_the_query(ws: Workspace):
    from sylk.search.inline import parse_inline

    text, filters = parse_inline("lang:go kind:method distance")
    hits = lexical(ws, text, filters=filters)
    assert [(h.symbol, h.container) for h in hits] == [("Distance", "Point")]


def test_a_class_yields_to_its_own_members(ws: Workspace):
    """A class chunk repeats its members' signatures; when a member matches too, the
    member goes first (the ranking stack's ``members`` stage), in every mode. Without the
    stack, lexical mode keeps BM25's order, the class second."""
    query = "delay before the next retry attempt"
    bm25 = [h.symbol for h in lexical(ws, query, limit=5, ranking_off=RANKING_STAGES)]
    assert bm25[:2] == ["backoff_delay", "HttpRetryPolicy"]
    for mode in ("lexical", "hybrid"):
        ranked = [h.symbol for h in ws.search(SearchRequest(query, mode, limit=10)).hits]
        assert ranked[0] == "backoff_delay", mode
        members = [s for s in ("should_retry", "__init__") if s in ranked]
        assert members and all(ranked.index(m) < ranked.index("HttpRetryPolicy") for m in members), (mode, ranked)
    # an identifier query is about the class itself
    assert ws.search(SearchRequest("HttpRetryPolicy", "hybrid", limit=3)).hits[0].symbol == "HttpRetryPolicy"


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
    assert result.index.chunks > 50 and result.index.ready is False


def test_cli_search_json_and_paths(workspace: Path):
    env = os.environ.copy()
    r = subprocess.run([sys.executable, "-m", "sylk.cli", "search", "get_user_by_id", str(workspace),
                        "--mode", "lexical", "--format", "json"], capture_output=True, text=True, env=env,
                       timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["hits"][0]["path"] == "app/repository.py" and data["hits"][0]["symbol"] == "get_user_by_id"
    assert data["mode"] == "lexical" and data["index"]["files"] == 16
    r = subprocess.run([sys.executable, "-m", "sylk.cli", "search", "lang:go point", str(workspace),
                        "--mode", "lexical", "--format", "paths", "--no-refresh"], capture_output=True, text=True,
                       env=env, timeout=TIMEOUT)
    assert r.stdout.split() == ["services/geo/point.go"]


def test_cli_search_default_format(workspace: Path):
    r = subprocess.run([sys.executable, "-m", "sylk.cli", "search", "\"exponential backoff\"", str(workspace),
                        "--mode", "lexical", "--limit", "1"], capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith("  1. app/http.py:") and "HttpRetryPolicy" in first
    assert "exponential backoff" in r.stdout
    assert "1 of" in r.stderr and "mode lexical" in r.stderr


def test_cli_search_explain(workspace: Path):
    r = subprocess.run([sys.executable, "-m", "sylk.cli", "search", "the retry policy", str(workspace),
                        "--mode", "lexical", "--limit", "2", "--explain"], capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert re.match(r"lexical #\d+ bm25 ", lines[1].strip()) and "semantic -" in lines[1]
    assert "query read as natural; words retry policy; stop words left out the" in r.stderr
    # words, not a question: the stages that serve a description (search/ranking.py APPLIES)
    assert r.stderr.rstrip().endswith("; ranked by members, code"), r.stderr
    r = subprocess.run([sys.executable, "-m", "sylk.cli", "search", "how is the retry policy applied", str(workspace),
                        "--mode", "lexical", "--limit", "1", "--explain", "--no-refresh"], capture_output=True,
                       text=True, timeout=TIMEOUT)
    assert r.stderr.rstrip().endswith("; ranked by members, path, code, coherence, spread"), r.stderr  # a question
    r = subprocess.run([sys.executable, "-m", "sylk.cli", "search", "the retry policy", str(workspace),
                        "--mode", "lexical", "--limit", "1", "--explain", "--format", "json", "--no-refresh"],
                       capture_output=True, text=True, timeout=TIMEOUT)
    data = json.loads(r.stdout)
    assert data["explain"]["style"] == "natural" and data["explain"]["dropped"] == ["the"]
    hit = data["hits"][0]["explain"]
    assert hit["lexicalRank"] >= 1 and hit["lexicalScore"] > 0 and hit["semanticScore"] is None


# --- the semantic side, with the real packaged model -------------------------------

@pytest.fixture(scope="module")
def semantic_ws(tmp_path_factory: pytest.TempPathFactory):
    import shutil

    from conftest import WORKSPACE

    root = tmp_path_factory.mktemp("sem") / "workspace"
    shutil.copytree(WORKSPACE, root)
    w = Workspace(root, Settings(index_dir=str(root.parent / "index")))
    w.index()
    assert w.load_semantic() is None
    assert w.embed_pending() == w.manifest.chunk_counts()["chunks"]
    yield w
    w.close()


@pytest.mark.parametrize(("query", "path", "symbol"), [
    pytest.param("how far apart are two locations on a plane", "services/geo/point.go", "Distance", id="go"),
    pytest.param("fetch one account record from storage by its key", "app/repository.py", "get_user_by_id",
                 id="python"),
    pytest.param("throttle callers to a fixed number of operations per interval", "engine/src/lib.rs", "",
                 id="rust"),
])
def test_semantic_finds_code_sharing_no_words(semantic_ws: Workspace, query: str, path: str, symbol: str):
    # the semantic side's own ranking (no ranking stack), without the relevance floor:
    # get_user_by_id's similarity to its paraphrase (0.29) is below the default floor
    # (tests/test_relevance_floor.py)
    hits = semantic_ws.search(SearchRequest(query, "semantic", limit=3, min_score=None,
                                            ranking_off=RANKING_STAGES)).hits
    assert hits[0].path == path
    if symbol:
        assert symbol in {h.symbol for h in hits}
    assert hits[0].semantic_rank == 1 and hits[0].lexical_rank is None


def test_hybrid_fuses_both_sides(semantic_ws: Workspace):
    result = semantic_ws.search(SearchRequest("exponential backoff for failed requests", "hybrid", limit=5))
    top = result.hits[0]
    assert top.path == "app/http.py"
    assert top.lexical_rank is not None and top.semantic_rank is not None
    assert result.index.ready is True and result.index.pending == 0
    assert result.message is None


@pytest.mark.parametrize("fusion", ["convex", "rrf"])
def test_explain_reports_each_side_and_the_fusion(semantic_ws: Workspace, fusion: str):
    result = semantic_ws.search(SearchRequest("the exponential backoff for failed requests", "hybrid", limit=5,
                                              fusion=fusion, explain=True))
    e = result.explanation
    assert e is not None and e.style == "natural" and e.fusion == fusion
    assert "the" in e.dropped and "backoff" in e.words
    assert (e.alpha is not None) == (fusion == "convex")
    top = result.hits[0]
    assert top.path == "app/http.py" and top.explained
    assert top.lexical_score is not None and top.lexical_score > 0 and top.lexical_rank is not None
    assert top.semantic_score is not None and 0 < top.semantic_score <= 1 and top.semantic_rank is not None
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    plain = semantic_ws.search(SearchRequest("exponential backoff for failed requests", "hybrid", limit=5))
    assert plain.explanation is None and not plain.hits[0].explained and plain.hits[0].lexical_score is None


def test_a_misspelled_identifier_is_found_without_asking(semantic_ws: Workspace):
    for mode in ("lexical", "hybrid"):
        hits = semantic_ws.search(SearchRequest("HttpRetryPolcy", mode, limit=3)).hits
        assert hits[0].symbol == "HttpRetryPolicy", mode


def test_semantic_filters_hold(semantic_ws: Workspace):
    hits = semantic_ws.search(SearchRequest("a point in two dimensions", "semantic", limit=10, min_score=None,
                                            filters=Filters(languages=("python",)))).hits
    assert hits and all(h.language == "python" for h in hits)


def test_changed_file_replaces_its_vectors(workspace: Path, tmp_path: Path):
    w = Workspace(workspace, Settings(index_dir=str(tmp_path / "idx")))
    w.index()
    w.load_semantic()
    w.embed_pending()
    before = len(w.vectors)
    assert before == w.manifest.chunk_counts()["chunks"]
    (workspace / "app/http.py").write_text(
        'def count_vowels(word):\n    """How many of a, e, i, o, u a word holds."""\n'
        '    return sum(ch in "aeiou" for ch in word.lower())\n')
    w.reindex_paths(["app/http.py"])
    w.embed_pending()
    assert len(w.vectors) == w.manifest.chunk_counts()["chunks"] < before
    hit = w.search(SearchRequest("number of vowel letters in a string", "semantic", limit=1)).hits[0]
    assert hit.symbol == "count_vowels"
    assert not w.search(SearchRequest("retry backoff jitter", "lexical",
                                      filters=Filters(paths=("app/http.py",)))).hits
    w.close()


def test_other_model_vectors_are_rebuilt_from_the_cache(workspace: Path, tmp_path: Path, monkeypatch):
    import json as _json

    import sylk.embed.embedder as embed_mod
    from sylk.embed.static_encoder import PACKAGED_STATIC_NAME

    w = Workspace(workspace, Settings(index_dir=str(tmp_path / "idx")))
    w.index()
    w.load_semantic()
    n = w.embed_pending()
    w.close()
    meta = tmp_path / "idx" / "vectors" / "vectors.json"
    data = _json.loads(meta.read_text())
    data["model_id"] = "some/other-model"
    meta.write_text(_json.dumps(data))
    calls = []
    original = embed_mod.Embedder.iter_embed
    # the model's runs (the quick pass's static model gives the pending chunks theirs first)
    monkeypatch.setattr(embed_mod.Embedder, "iter_embed", lambda self, texts: (
        self.model_id.startswith(PACKAGED_STATIC_NAME) or calls.append(len(texts))) or original(self, texts))
    again = Workspace(workspace, Settings(index_dir=str(tmp_path / "idx")))
    note = again.load_semantic()
    assert note is not None and "other-model" in note and "rebuilding" in note
    assert again.manifest.chunk_counts()["pending"] == n
    assert again.embed_pending() == n
    assert sum(calls) == 0  # every vector came from the cache: the model never ran
    assert len(again.vectors) == n
    again.close()


def test_disabled_embedding_serves_lexical_and_says_why(workspace: Path, tmp_path: Path):
    from sylk.config import EmbeddingSettings

    w = Workspace(workspace, Settings(index_dir=str(tmp_path / "idx"), embedding=EmbeddingSettings(enabled=False)))
    w.index()
    note = w.load_semantic()
    assert note is not None and "disabled" in note and "lexical" in note
    result = w.search(SearchRequest("get_user_by_id"))
    assert result.hits[0].symbol == "get_user_by_id"
    assert result.message is not None and "disabled" in result.message
    assert result.index.ready is False
    w.close()


def test_cancelled_embedding_stops_and_resumes(workspace: Path, tmp_path: Path):
    import threading

    w = Workspace(workspace, Settings(index_dir=str(tmp_path / "idx")))
    w.index()
    w.load_semantic()
    cancel = threading.Event()
    cancel.set()
    assert w.embed_pending(cancel=cancel) == 0
    assert w.manifest.chunk_counts()["embedded"] == 0
    total = w.manifest.chunk_counts()["chunks"]
    assert w.embed_pending() == total
    w.close()
    again = Workspace(workspace, Settings(index_dir=str(tmp_path / "idx")))
    again.load_semantic()
    assert len(again.vectors) == total and again.manifest.chunk_counts()["pending"] == 0
    again.close()


def test_snippets_follow_edits(ws: Workspace, workspace: Path):
    """Snippet lines are kept between queries, but never after the file changed."""
    first = lexical(ws, "Point")[0]
    path = workspace / first.path
    assert first.snippet
    path.write_text("// edited\n" + path.read_text())
    ws.reindex_paths([first.path])
    again = lexical(ws, "Point")[0]
    lines = path.read_text().splitlines()
    assert again.snippet.split("\n")[0] == lines[again.snippet_line]


def _embedded_paths(w: Workspace) -> set[str]:
    return {c.path for c in w.manifest.chunks_by_id(sorted(w.manifest.embedded_ids())).values()}


def _stop_after(cancel, batches: int, also=None):
    seen = []

    def progress(done: int, total: int) -> None:
        if done:
            seen.append(done)
            if also is not None and len(seen) == 1:
                also()
            if len(seen) >= batches:
                cancel.set()
    return progress


def test_embedding_starts_with_the_most_recently_modified_file(workspace: Path, tmp_path: Path):
    import threading
    import time as _time

    newest = workspace / "app" / "http.py"
    future = _time.time() + 3600
    os.utime(newest, (future, future))
    w = Workspace(workspace, Settings(index_dir=str(tmp_path / "idx")))
    w.index()
    w.load_semantic()
    cancel = threading.Event()
    w.embed_pending(progress=_stop_after(cancel, 1), cancel=cancel, batch=1)
    assert _embedded_paths(w) == {"app/http.py"}
    w.close()


def test_a_file_saved_during_embedding_is_embedded_next(workspace: Path, tmp_path: Path):
    import threading

    w = Workspace(workspace, Settings(index_dir=str(tmp_path / "idx")))
    w.index()
    w.load_semantic()
    order = w.manifest.pending_order()
    first = w.manifest.chunks_by_id([order[0]])[order[0]].path
    saved = next(p for p in ("services/geo/point.go", "app/repository.py") if p != first)
    n_saved = len(w.manifest.pending_for_paths([saved]))
    assert n_saved > 1
    cancel = threading.Event()
    # While the pass runs (inside its first progress report), the editor saves a file:
    # that call cannot take the running pass's lock, so it queues the file and returns.
    queued = []
    w.embed_pending(progress=_stop_after(cancel, 2, also=lambda: queued.append(w.embed_pending(first_paths=[saved]))),
                    cancel=cancel, batch=1)
    assert queued == [0]
    assert saved in _embedded_paths(w)
    assert w.manifest.pending_for_paths([saved]) == []
    assert len(w.manifest.embedded_ids()) == 1 + n_saved
    w.close()


def test_a_file_reindexed_while_its_chunks_are_embedded_leaves_no_stale_vectors(workspace: Path, tmp_path: Path,
                                                                                 monkeypatch):
    import sylk.engine.embedding as embedding_mod

    w = Workspace(workspace, Settings(index_dir=str(tmp_path / "idx")))
    w.index()
    w.load_semantic()
    target = "app/repository.py"
    real = embedding_mod.embed_cached
    calls = []

    def embed_then_save(embedder, cache, texts, **kw):
        found = real(embedder, cache, texts, **kw)
        if not calls:  # the editor saves the file while the model runs on its chunks
            calls.append(1)
            (workspace / target).write_text("def saved_mid_embedding():\n    return 1\n")
            w.reindex_paths([target])
        return found
    monkeypatch.setattr(embedding_mod, "embed_cached", embed_then_save)
    w.embed_pending(first_paths=[target])
    chunk_ids = w.manifest.all_chunk_ids()
    in_faiss = set(w.vectors.ids().tolist())
    assert in_faiss == chunk_ids  # every chunk has a vector, and no vector outlived its chunk
    assert w.manifest.chunk_counts()["pending"] == 0
    hits = w.search(SearchRequest("saved_mid_embedding", "semantic")).hits
    assert hits and hits[0].path == target
    w.close()


@pytest.mark.parametrize("filters", [
    pytest.param(Filters(roles=("repository",)), id="role"),
    pytest.param(Filters(tags=("backend",)), id="tag"),
    pytest.param(Filters(authors=("Ann Lee",)), id="author-without-git"),
    pytest.param(Filters(modified_after=0), id="date-without-git"),
    pytest.param(Filters(paths=("app/**",)), id="path"),
])
def test_filtered_lexical_total_is_what_the_pages_hold(ws: Workspace, filters: Filters):
    """totalHits counts after every filter: paging by 2 walks exactly totalHits hits."""
    from sylk.engine import documents

    documents.tag(ws, ["app/repository.py"], ["backend"])
    everything = ws.search(SearchRequest("user", "lexical", limit=2)).total_hits
    first = ws.search(SearchRequest("user", "lexical", limit=2, filters=filters, facets=True))
    seen: list[tuple] = []
    while True:
        page = ws.search(SearchRequest("user", "lexical", limit=2, offset=len(seen), filters=filters))
        assert page.total_hits == first.total_hits
        if not page.hits:
            break
        seen.extend((h.path, h.start_line) for h in page.hits)
    assert len(seen) == len(set(seen)) == first.total_hits < everything
    if first.facets:
        assert sum(n for _v, n in first.facets["language"]) == first.total_hits


@pytest.mark.parametrize("fusion", ["convex", "rrf"])
def test_hybrid_total_is_what_the_pages_hold(ws: Workspace, fusion: str):
    """Hybrid pages the fused list (the first ``depth`` candidates of each side): its
    total is that list's length, so the last page is never announced and empty."""
    first = ws.search(SearchRequest("user", "hybrid", limit=2, fusion=fusion, fuse_depth=5))
    assert len(lexical(ws, "user", limit=50)) > 5  # more candidates than are fused
    seen = []
    while True:
        page = ws.search(SearchRequest("user", "hybrid", limit=2, offset=len(seen), fusion=fusion, fuse_depth=5))
        assert page.total_hits == first.total_hits
        if not page.hits:
            break
        seen.extend(h.id for h in page.hits)
    assert len(seen) == len(set(seen)) == first.total_hits


def test_close_waits_for_a_search_in_flight_then_refuses_new_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """close() while a search is in flight refuses new searches at once, waits for the one
    in flight (the stores stay open for it), and closes when it is over. Nothing is timed:
    the test waits until close() is blocked on the searches in flight (its condition)."""
    import threading
    import time

    from sylk.engine import workspace as workspace_module
    from sylk.errors import IndexClosed

    monkeypatch.setattr(workspace_module, "CLOSE_WAIT_S", 3600.0)  # its own bound, far out of the way
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def retry_payment():\n    return 1\n")
    ws = Workspace(root, Settings(index_dir=str(tmp_path / "idx")))
    ws.index()

    waiting = threading.Event()

    class Use(threading.Condition):
        """The workspace's condition of the searches in flight, saying when someone waits on it."""

        def wait(self, timeout: float | None = None) -> bool:
            waiting.set()
            return super().wait(timeout)

    ws._use = Use()  # (no search in flight yet)
    closer = threading.Thread(target=ws.close)
    with ws.in_use():  # a request in flight
        closer.start()
        # until close() waits on the searches in flight, or returns without waiting
        deadline = time.monotonic() + TIMEOUT
        while not waiting.wait(0.02) and closer.is_alive():
            assert time.monotonic() < deadline, "close() neither waited nor returned"
        assert waiting.is_set() and closer.is_alive(), "close() returned without waiting for the search in flight"
        with pytest.raises(IndexClosed, match="was closed"):
            ws.search(SearchRequest("retry", "lexical"))
        assert ws.manifest.counts()["files"] == 1  # the stores are still open for the one in flight
    closer.join(TIMEOUT)
    assert not closer.is_alive(), "close() did not return once the search in flight was over"
    with pytest.raises(IndexClosed, match="was closed"):
        ws.search(SearchRequest("retry", "lexical"))
    with pytest.raises(IndexClosed):
        ws.search_symbols("retry")


def test_hits_of_files_changed_since_they_were_indexed(ws: Workspace, workspace: Path):
    """No reindex in between: a file touched with the same text keeps its hits; lines
    added above a method move its hit and snippet with it; a deleted file's hits are stale."""
    repo = workspace / "app/repository.py"
    before = lexical(ws, "get_user_by_id")[0]
    st = repo.stat()
    os.utime(repo, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    touched = lexical(ws, "get_user_by_id")[0]
    assert (touched.start_line, touched.end_line, touched.stale) == (before.start_line, before.end_line, False)

    repo.write_text("# moved down\n# by three lines\n\n" + repo.read_text())
    moved = lexical(ws, "get_user_by_id")[0]
    assert (moved.symbol, moved.start_line, moved.end_line) == ("get_user_by_id", before.start_line + 3,
                                                                 before.end_line + 3)
    assert not moved.stale and moved.snippet == before.snippet and moved.snippet_line == before.snippet_line + 3
    lines = repo.read_text().splitlines()
    assert moved.snippet.split("\n")[0] == lines[moved.snippet_line]
    repo.write_text("# and two more\n\n" + repo.read_text())  # a file found again is followed again
    assert lexical(ws, "get_user_by_id")[0].start_line == before.start_line + 5

    (workspace / "app/http.py").unlink()
    gone = lexical(ws, "HttpRetryPolicy")
    assert gone and all(h.path == "app/http.py" and h.stale and h.snippet == "" for h in gone)
