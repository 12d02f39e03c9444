"""End to end: a commit made while a server runs is searchable (commit messages, the
author filter) without a reindex, over the language server and MCP alike. The commit
touches no file on disk (the file was staged before the server started), so only
HEAD moving can tell the server; and it re-indexes no file."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
import sylk.service as service_module
from conftest import eventually, git_commit, mcp_session, start_lsp
from sylk.config import EmbeddingSettings, Settings
from sylk.engine import gitmeta
from sylk.service import WorkspaceService
from sylk.steps import Reporter
from sylk.watch import Watcher, is_ref_path

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

# HEAD moving is picked up within about a second; this bound only stops a hung test.
HEAD_WAIT_S = 20.0
MESSAGE = "Reconcile the ledger nightly"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """One commit by Ann Lee; ledger.py staged, not committed yet."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "-C", str(root), "init", "-q"], check=True)
    (root / ".sylk.toml").write_text("[embedding]\nenabled = false\n")
    (root / "invoice.py").write_text("def settle_invoice(total):\n    return round(total, 2)\n")
    git_commit(root, "Ann Lee", "initial import")
    (root / "ledger.py").write_text("def reconcile_ledger_entries(entries):\n    return sorted(entries)\n")
    subprocess.run(["git", "-C", str(root), "add", "ledger.py"], check=True)
    return root


def _get(obj: Any, key: str) -> Any:
    return obj[key] if isinstance(obj, dict) else getattr(obj, key)


async def test_a_commit_is_searchable_over_the_language_server(repo: Path, _isolated_index: Path):
    client = await start_lsp(repo, _isolated_index, "visual-studio-code", {"embedding": {"enabled": False}})
    try:
        async def search(params: dict[str, Any]) -> Any:
            return await client.protocol.send_request_async("sylk/search", params)

        async def status() -> Any:
            return await client.protocol.send_request_async("sylk/status", {})

        commits = {"query": "ledger import", "mode": "lexical", "filters": {"types": ["git_commit"]}}
        await eventually(lambda: search(commits), lambda r: any(h.snippet == "initial import" for h in r.hits),
                         "the first commit to be searchable")
        st = await eventually(status, lambda s: _get(_get(s, "watch"), "active"), "the watcher")
        applied = _get(_get(st, "watch"), "changesApplied")

        git_commit(repo, "Cy Young", MESSAGE, "ledger.py")

        found = await eventually(lambda: search(commits), lambda r: any(h.snippet == MESSAGE for h in r.hits),
                                 "the new commit to be searchable", HEAD_WAIT_S)
        hit = next(h for h in found.hits if h.snippet == MESSAGE)
        assert hit.author == "Cy Young" and list(hit.commit.files) == ["ledger.py"]
        by_cy = {"query": "reconcile_ledger_entries", "mode": "lexical", "filters": {"authors": ["Cy Young"]}}
        r = await eventually(lambda: search(by_cy), lambda r: bool(r.hits), "the author filter to find ledger.py",
                             HEAD_WAIT_S)
        assert {h.path for h in r.hits} == {"ledger.py"} and r.hits[0].author == "Cy Young"
        # the commit moved HEAD only: no file was indexed again
        assert _get(_get(await status(), "watch"), "changesApplied") == applied
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_a_commit_is_searchable_over_mcp(repo: Path, _isolated_index: Path):
    async with mcp_session(repo, _isolated_index) as s:
        async def call(tool: str, **args: Any) -> dict[str, Any]:
            result = await s.call_tool(tool, args)
            text = result.content[0].text  # type: ignore[union-attr]
            assert not result.is_error, text
            return json.loads(text)

        async def commit_search() -> dict[str, Any]:
            return await call("search_code", query="ledger import", mode="lexical", types=["git_commit"])

        await eventually(commit_search, lambda r: any(h["snippet"] == "initial import" for h in r["hits"]),
                         "the first commit to be searchable")
        await eventually(lambda: call("get_status"), lambda st: st["watch"]["active"], "the watcher")

        git_commit(repo, "Cy Young", MESSAGE, "ledger.py")

        found = await eventually(commit_search, lambda r: any(h["snippet"] == MESSAGE for h in r["hits"]),
                                 "the new commit to be searchable", HEAD_WAIT_S)
        hit = next(h for h in found["hits"] if h["snippet"] == MESSAGE)
        assert hit["author"] == "Cy Young" and hit["files"] == ["ledger.py"]
        r = await eventually(lambda: call("search_code", query="reconcile_ledger_entries", mode="lexical",
                                          authors=["Cy Young"]),
                             lambda r: bool(r["hits"]), "the author filter to find ledger.py", HEAD_WAIT_S)
        assert {h["path"] for h in r["hits"]} == {"ledger.py"}


def test_only_head_refs_and_packed_refs_move_head():
    assert all(is_ref_path(p) for p in ("HEAD", "packed-refs", "refs/heads/main", "refs/remotes/origin/dev"))
    # git's lock files, the index, the reflogs and objects change with every commit too
    assert not any(is_ref_path(p) for p in ("HEAD.lock", "refs/heads/main.lock", "index", "logs/HEAD",
                                            "objects/ab/cdef", "ORIG_HEAD", "FETCH_HEAD", "COMMIT_EDITMSG"))


def test_a_commit_in_a_linked_worktree_is_seen(repo: Path, tmp_path: Path):
    """A linked worktree keeps its HEAD outside the workspace (in the main repository's
    .git/worktrees/): the watcher follows that folder too."""
    tree = tmp_path / "tree"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", "-b", "side", str(tree)], check=True)
    dirs = gitmeta.folders(tree, True)
    assert dirs and not any(d.startswith(str(tree.resolve())) for d in dirs)
    moved = threading.Event()
    watcher = Watcher(tree, lambda rels: None, lambda rel, is_dir: False, on_git=moved.set,
                      git_dirs=lambda: dirs).start()
    try:
        assert watcher.ready.wait(HEAD_WAIT_S), "the watcher did not start"
        (tree / "notes.py").write_text("def side_note():\n    pass\n")
        git_commit(tree, "Cy Young", "a note on the side", "notes.py")
        assert moved.wait(HEAD_WAIT_S), "the commit's HEAD move was not reported"
    finally:
        watcher.stop()


def test_a_burst_of_head_moves_refreshes_git_metadata_once(repo: Path, monkeypatch: pytest.MonkeyPatch):
    """A rebase moves HEAD many times: the moves that arrive while a refresh is queued join it."""
    service = WorkspaceService(repo, Settings(embedding=EmbeddingSettings(enabled=False)), Reporter())
    try:
        assert service.start_indexing().result(HEAD_WAIT_S) is not None
        service.jobs.submit("idle", lambda: None, embed=True).result(HEAD_WAIT_S)  # the first refresh is over
        refreshed: list[str] = []
        monkeypatch.setattr(service_module, "update_git", lambda ws: refreshed.append(threading.current_thread().name))
        busy = threading.Event()
        service.jobs.submit("a long index run", busy.wait, HEAD_WAIT_S)
        for _ in range(25):
            service.head_moved()
        busy.set()
        service.jobs.submit("idle", lambda: None).result(HEAD_WAIT_S)
        assert len(refreshed) == 1 and refreshed[0].startswith("sylk-index")
        service.head_moved()  # a later move gets a refresh of its own
        service.jobs.submit("idle", lambda: None).result(HEAD_WAIT_S)
        assert len(refreshed) == 2
    finally:
        service.close()
