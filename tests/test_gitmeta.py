"""Git metadata: last commit, author and time per file, its filters, facet and grouping."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import TIMEOUT, eventually, git_commit, start, wait_for_progress_end
from sylk.config import Settings
from sylk.engine import gitmeta
from sylk.engine.workspace import Workspace
from sylk.ingest import gitsync
from sylk.params import request_from_params

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

JAN, JUN = "2024-01-15T12:00:00+00:00", "2024-06-15T12:00:00+00:00"


def commit(root: Path, author: str, when: str, message: str, *paths: str) -> None:
    git_commit(root, author, message, *paths, when=when)


@pytest.fixture
def repo(workspace: Path) -> Path:
    subprocess.run(["git", "-C", str(workspace), "init", "-q"], check=True)
    commit(workspace, "Ann Lee", JAN, "initial import")
    (workspace / "app/http.py").write_text((workspace / "app/http.py").read_text() + "\n\ndef jitter():\n    pass\n")
    commit(workspace, "Bob Stone", JUN, "retry jitter", "app/http.py")
    return workspace


def test_metadata_per_file_and_incremental_on_head_moves(repo: Path):
    ws = Workspace(repo, Settings())
    ws.index()
    assert gitmeta.update(ws) == 16  # every tracked, indexed file, in one git log walk
    meta = ws.manifest.git_files()
    assert meta["app/http.py"][1] == "Bob Stone" and meta["app/repository.py"][1] == "Ann Lee"
    assert gitmeta.update(ws) == 0  # HEAD did not move: nothing to do
    (repo / "app/repository.py").write_text("def rewritten():\n    pass\n")
    commit(repo, "Cy Young", JUN, "rewrite repository", "app/repository.py")
    ws.index()
    assert gitmeta.update(ws) == 1  # only what HEAD changed
    assert ws.manifest.git_files()["app/repository.py"][1] == "Cy Young"
    ws.close()


def test_author_and_date_filters_facet_and_hit_fields(repo: Path):
    ws = Workspace(repo, Settings())
    ws.index()
    gitmeta.update(ws)
    bob = ws.search(request_from_params({"query": "retry user", "mode": "lexical", "limit": 50,
                                         "filters": {"authors": ["Bob Stone"]}, "facets": True}))
    assert bob.hits and {h.path for h in bob.hits} == {"app/http.py"}
    assert all(h.author == "Bob Stone" and h.modified > 0 for h in bob.hits)
    recent = ws.search(request_from_params({"query": "retry user", "mode": "lexical", "limit": 50,
                                            "filters": {"modifiedAfter": "2024-03-01"}}))
    assert {h.path for h in recent.hits} == {"app/http.py"}
    old = ws.search(request_from_params({"query": "retry user", "mode": "lexical", "limit": 50,
                                         "filters": {"modifiedBefore": "2024-03-01"}}))
    assert old.hits and "app/http.py" not in {h.path for h in old.hits}
    inline = ws.search(request_from_params({"query": 'author:"Ann Lee" user', "mode": "lexical", "facets": True}))
    assert inline.hits and all(h.author == "Ann Lee" for h in inline.hits)
    every = ws.search(request_from_params({"query": "retry user", "mode": "lexical", "facets": True}))
    authors = dict(every.facets["author"])
    assert set(authors) == {"Ann Lee", "Bob Stone"}
    ws.close()


def test_before_the_metadata_is_read_the_filters_say_so_not_that_git_is_missing(repo: Path):
    # (the server reads it on its indexing thread after an index run: for a moment none is there)
    ws = Workspace(repo, Settings())
    ws.index()
    early = ws.search(request_from_params({"query": "retry", "mode": "lexical", "filters": {"authors": ["Bob Stone"]}}))
    assert early.hits == [] and early.message is not None
    assert "git metadata is not read yet" in early.message and "not a git repository" not in early.message
    gitmeta.update(ws)
    read = ws.search(request_from_params({"query": "retry", "mode": "lexical", "filters": {"authors": ["Bob Stone"]}}))
    assert read.hits and not read.message
    ws.close()


def test_without_git_the_filters_match_nothing_and_say_why(workspace: Path):
    ws = Workspace(workspace, Settings())
    ws.index()
    assert gitmeta.update(ws) == 0
    r = ws.search(request_from_params({"query": "user", "mode": "lexical", "filters": {"authors": ["Ann Lee"]}}))
    assert r.hits == [] and r.message is not None and "no git metadata" in r.message
    plain = ws.search(request_from_params({"query": "user", "mode": "lexical", "facets": True}))
    assert plain.hits and "author" not in plain.facets and plain.hits[0].author == ""
    ws.close()


def test_last_commits_stops_at_the_commit_limit(repo: Path):
    found = gitsync.last_commits(repo, "", {"app/http.py", "app/repository.py"}, max_commits=1)
    assert set(found) == {"app/http.py"}  # repository.py was last changed before the newest commit


async def test_group_by_author_over_stdio(repo: Path, _isolated_index: Path):
    client = await start(repo, _isolated_index, "visual-studio-code")
    try:
        await wait_for_progress_end(client)

        async def grouped():
            while True:  # the metadata arrives right after the index, off the indexing thread
                r = await client.protocol.send_request_async("sylk/search", {
                    "query": "retry user", "mode": "lexical", "groupBy": "author", "limit": 30})
                if any(g.value == "Bob Stone" for g in r.groups):
                    return r
                await asyncio.sleep(0.05)
        r = await asyncio.wait_for(grouped(), TIMEOUT)
        by = {g.value: [r.hits[i].path for i in g.hits] for g in r.groups}
        assert set(by["Bob Stone"]) == {"app/http.py"}
        assert "Ann Lee" in by and "app/http.py" not in by["Ann Lee"]
        assert all(h.author in ("Ann Lee", "Bob Stone") and h.modified for h in r.hits)
        # the commit messages are indexed after the files' authors (gitmeta), so they are
        # waited for on their own
        c = await eventually(lambda: client.protocol.send_request_async("sylk/search", {
            "query": "type:git_commit retry jitter"}), lambda c: bool(c.hits), "the commit messages to be indexed")
        top = c.hits[0]
        assert (top.type, top.snippet, top.author) == ("git_commit", "retry jitter", "Bob Stone")
        assert len(top.commit.sha) == 40 and list(top.commit.files) == ["app/http.py"] and top.range is None
        assert top.uri == f"sylk://commit/{top.commit.sha}" and top.path == "app/http.py"
    finally:
        await client.shutdown_session()
        await client.stop()


def test_commit_messages_are_searchable_as_git_commit_documents(repo: Path):
    ws = Workspace(repo, Settings())
    ws.index()
    gitmeta.update(ws)
    r = ws.search(request_from_params({"query": "when did we change the retry jitter",
                                       "filters": {"types": ["git_commit"]}}))
    assert r.hits and r.hits[0].type == "git_commit"
    top = r.hits[0]
    assert top.snippet == "retry jitter" and top.author == "Bob Stone"
    assert top.commit is not None and top.commit.files == ("app/http.py",)
    assert len(top.commit.sha) == 40 and top.symbol == ""  # the commit is its own record, not the symbol
    # new commits are added incrementally; a rewritten history is read again
    (repo / "README.md").write_text("# Retry budget notes\n")
    commit(repo, "Ann Lee", JUN, "Document the retry budget", "README.md")
    ws.index()
    gitmeta.update(ws)
    assert ws.manifest.commit_count() == 3
    r = ws.search(request_from_params({"query": "retry budget", "filters": {"types": ["git_commit"]}}))
    assert r.hits[0].snippet == "Document the retry budget"
    by_ann = ws.search(request_from_params({"query": "retry", "filters": {"types": ["git_commit"],
                                                                          "authors": ["Ann Lee"]}}))
    assert [h.snippet for h in by_ann.hits] == ["Document the retry budget"]
    both = ws.search(request_from_params({"query": "retry", "filters": {"types": ["git_commit"]}}))
    assert {h.snippet for h in both.hits} == {"Document the retry budget", "retry jitter"}
    left = ws.search(request_from_params({"query": "retry -jitter", "filters": {"types": ["git_commit"]}}))
    assert [h.snippet for h in left.hits] == ["Document the retry budget"]  # a word left out, in commits too
    # an author left out, in commits too (before, -author: was not applied to commit messages)
    not_ann = ws.search(request_from_params({"query": "retry type:git_commit -author:\"Ann Lee\""}))
    assert [h.snippet for h in not_ann.hits] == ["retry jitter"]
    subprocess.run(["git", "-C", str(repo), "reset", "-q", "--hard", "HEAD~1"], check=True)
    ws.index()
    gitmeta.update(ws)
    assert ws.manifest.commit_count() == 2  # the dropped commit left with the rewrite
    # mixed with code: both kinds of hits in one ranking
    mixed = ws.search(request_from_params({"query": "jitter", "mode": "lexical",
                                           "filters": {"types": ["git_commit", "source_code"]}}))
    assert {h.type for h in mixed.hits} == {"git_commit", "source_code"}
    ws.close()
