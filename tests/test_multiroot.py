"""End to end: several workspace folders, one index each, answers from all of them."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

from conftest import TIMEOUT, _get, status, symbols, uri, wait_applied
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities


async def start_multi(roots: list[Path], cache: Path) -> LanguageClient:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    env.pop("SYLK_INDEX_DIR", None)
    client = await ClientServerConfig(server_command=[sys.executable, "-m", "sylk.cli", "serve", "--stdio"],
                                      server_env=env).start()
    assert isinstance(client, LanguageClient)
    result = await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=uri(roots[0]),
        workspace_folders=[types.WorkspaceFolder(uri=uri(r), name=r.name) for r in roots],
        initialization_options={"embedding": {"enabled": False}},
    ))
    folders = result.capabilities.workspace.workspace_folders
    assert folders is not None and folders.supported and folders.change_notifications
    return client


async def wait_folders(client: LanguageClient, roots: list[Path]) -> list:
    """Wait until exactly these folders are open and indexed (and watched)."""
    want = sorted(str(r) for r in roots)
    async def ready() -> list:
        while True:
            st = await status(client)
            per = _get(st, "folders")
            if sorted(_get(f, "root") for f in per) == want and _get(st, "ready") and \
                    all(_get(_get(f, "watch"), "active") for f in per):
                return per
            await asyncio.sleep(0.02)
    return await asyncio.wait_for(ready(), TIMEOUT)


def two_roots(tmp_path: Path, workspace: Path) -> tuple[Path, Path]:
    backend, frontend = tmp_path / "backend", tmp_path / "frontend"
    shutil.copytree(workspace / "app", backend / "app")
    shutil.copytree(workspace / "web", frontend / "web")
    (frontend / "web/src/shared.ts").write_text("export function formatInvoiceTotal(cents: number) {}\n")
    return backend, frontend


async def test_symbols_and_search_come_from_every_folder(tmp_path: Path, workspace: Path, _isolated_index: Path):
    backend, frontend = two_roots(tmp_path, workspace)
    client = await start_multi([backend, frontend], _isolated_index)
    try:
        per = await wait_folders(client, [backend, frontend])
        assert _get(per[0], "indexDir") != _get(per[1], "indexDir")  # one index per folder
        found = {s.name: s.location.uri for s in await symbols(client, "HttpRetryPolicy")}
        assert found["HttpRetryPolicy"] == uri(backend / "app/http.py")
        found = {s.name: s.location.uri for s in await symbols(client, "formatInvoiceTotal")}
        assert found == {"formatInvoiceTotal": uri(frontend / "web/src/shared.ts")}
        result = await client.protocol.send_request_async("sylk/search", {
            "query": "get_user_by_id formatInvoiceTotal", "mode": "lexical", "limit": 50, "facets": True})
        uris = {h.uri for h in result.hits}
        assert uri(backend / "app/repository.py") in uris and uri(frontend / "web/src/shared.ts") in uris
        assert result.totalHits >= 2
        langs = {f.value for f in result.facets.language}
        assert {"python", "typescript"} <= langs
        # pages of the merged list do not overlap
        page1 = await client.protocol.send_request_async("sylk/search", {
            "query": "get_user_by_id formatInvoiceTotal", "mode": "lexical", "limit": 1})
        page2 = await client.protocol.send_request_async("sylk/search", {
            "query": "get_user_by_id formatInvoiceTotal", "mode": "lexical", "limit": 1, "offset": 1})
        assert (page1.hits[0].uri, page1.hits[0].range.start.line) != (page2.hits[0].uri, page2.hits[0].range.start.line)
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_each_folder_answers_with_its_own_search_settings(tmp_path: Path, workspace: Path,
                                                                _isolated_index: Path):
    # (before, the first folder's settings were every folder's: the second's search.exclude was ignored)
    backend, frontend = two_roots(tmp_path, workspace)
    (frontend / ".sylk.toml").write_text('[search]\nexclude = ["path:web/src/shared.ts"]\n\n[symbols]\nlimit = 1\n',
                                        encoding="utf-8")
    client = await start_multi([backend, frontend], _isolated_index)
    try:
        await wait_folders(client, [backend, frontend])
        # Go to Symbol: the second folder gives at most its own symbols.limit, the first its default
        found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="e"))
        assert found is not None
        roots = [backend if s.location.uri.startswith(uri(backend) + "/") else frontend for s in found]
        assert roots.count(frontend) == 1 and roots.count(backend) > 10
        for mode in ("lexical", "exact"):
            query = "get_user_by_id formatInvoiceTotal" if mode == "lexical" else "formatInvoiceTotal"
            result = await client.protocol.send_request_async("sylk/search", {"query": query, "mode": mode,
                                                                              "limit": 50})
            uris = {h.uri for h in result.hits}
            assert uri(frontend / "web/src/shared.ts") not in uris, mode
            if mode == "lexical":
                assert uri(backend / "app/repository.py") in uris
        # a search that names the filter itself asks for what the default leaves out
        named = await client.protocol.send_request_async("sylk/search", {
            "query": "formatInvoiceTotal path:web/**", "mode": "lexical", "limit": 50})
        assert uri(frontend / "web/src/shared.ts") in {h.uri for h in named.hits}
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_folders_added_and_removed_while_running(tmp_path: Path, workspace: Path, _isolated_index: Path):
    backend, frontend = two_roots(tmp_path, workspace)
    client = await start_multi([backend], _isolated_index)
    try:
        await wait_folders(client, [backend])
        assert await symbols(client, "formatInvoiceTotal") == []
        client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=uri(frontend), name="frontend")], removed=[])))
        await wait_folders(client, [backend, frontend])
        assert [s.name for s in await symbols(client, "formatInvoiceTotal")] == ["formatInvoiceTotal"]
        client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(uri=uri(backend), name="backend")])))
        await wait_folders(client, [frontend])
        assert await symbols(client, "HttpRetryPolicy") == []
        # the removed folder is no longer watched: a change there is not indexed
        before = _get(_get(await status(client), "watch"), "changesApplied")
        (backend / "app/late.py").write_text("def too_late():\n    pass\n")
        (frontend / "web/src/later.ts").write_text("export function stillWatched() {}\n")
        await wait_applied(client, before)
        assert [s.name for s in await symbols(client, "stillWatched")] == ["stillWatched"]
        assert await symbols(client, "too_late") == []
    finally:
        await client.shutdown_session()
        await client.stop()


def test_a_folder_that_only_says_why_it_found_nothing_is_quiet_when_another_found_hits():
    """Merged over folders: the relevance floor's (or an unknown package's) message of a
    folder with no hits is left out when another folder has hits, never a message about
    an index that is not complete; with no hits anywhere every message stays."""
    from sylk.search.merge import merge_results
    from sylk.search.results import Hit, IndexState, SearchResult

    ready, pending = IndexState(3, 3, 3, 0, True), IndexState(3, 3, 0, 3, False)
    hit = Hit(id=1, path="a.py", language="python", type="source_code", kind="function", symbol="f", container="",
              start_line=0, end_line=1, score=0.5, lexical_rank=None, semantic_rank=1)
    floor = "nothing is close enough in meaning: below the relevance floor 0.35"
    found = SearchResult("q", "semantic", 1.0, 1, [hit], {}, ready)
    empty = SearchResult("q", "semantic", 1.0, 0, [], {}, ready, floor)
    waiting = SearchResult("q", "semantic", 1.0, 0, [], {}, pending, "semantic search is not ready yet")
    merged = merge_results([found, empty, waiting], 0, 10, asked=3).result
    assert merged.hits == [hit] and merged.message == "semantic search is not ready yet"
    assert merge_results([empty, waiting], 0, 10, asked=2).result.message == f"{floor}; semantic search is not ready yet"


def test_the_folder_holding_a_path_is_the_innermost(tmp_path: Path):
    """over_folders.holding: the one rule for an LSP document's folder and a path given to MCP."""
    from types import SimpleNamespace

    from sylk.over_folders import holding

    outer, inner, other = tmp_path / "outer", tmp_path / "outer" / "vendor" / "lib", tmp_path / "other"
    for d in (inner / "src", other):
        d.mkdir(parents=True)
    (inner / "src" / "a.py").write_text("x = 1\n")
    (other / "link.py").symlink_to(inner / "src" / "a.py")
    folders = [SimpleNamespace(root=r) for r in (outer, inner, other)]
    assert holding(folders, inner / "src" / "a.py") == (folders[1], "src/a.py")
    assert holding(folders, outer / "vendor" / "x.py") == (folders[0], "vendor/x.py")  # need not exist
    assert holding(folders, outer / "vendor" / ".." / "b.py") == (folders[0], "b.py")
    assert holding(folders, inner) == (folders[1], "")
    assert holding(folders, outer / ".github" / "ci.yml") == (folders[0], ".github/ci.yml")  # a dot folder
    assert holding(folders, other / "link.py") == (folders[1], "src/a.py")  # as the index names the file
    assert holding(folders, tmp_path / "elsewhere.py") is None
