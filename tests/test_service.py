"""One scenario through both long-running front ends, which run the same
WorkspaceService: a git repository is indexed, a file is edited on disk and committed
by another author, and then a search by author and a search of commit messages give
the language server and the MCP server the same answers."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import eventually, git_commit, mcp_session, start_lsp

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

NEW_FUNCTION = "def settle_invoice_ledger(total):\n    return round(total, 2)\n"
MESSAGE = "ledger settlement rounds invoices"
JAN, JUN = "2024-01-15T12:00:00+00:00", "2024-06-15T12:00:00+00:00"  # fixed: both copies get the same shas


@pytest.fixture
def repo(workspace: Path) -> Path:
    (workspace / ".sylk.toml").write_text("[embedding]\nenabled = false\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(workspace), "init", "-q"], check=True)
    git_commit(workspace, "Ann Lee", "initial import", when=JAN)
    return workspace


def edit(repo: Path) -> None:
    path = repo / "app/http.py"
    path.write_text(path.read_text(encoding="utf-8") + "\n\n" + NEW_FUNCTION, encoding="utf-8")


class Answers:
    """What a front end answered, in the same shape for both."""

    def __init__(self, by_author: list[tuple[str, str]], commits: list[tuple[str, str, tuple[str, ...]]],
                 symbol_path: str) -> None:
        self.by_author = by_author  # (path, symbol) of the hits of a search by author
        self.commits = commits  # (sha, author, files) of the hits of a commit search
        self.symbol_path = symbol_path

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Answers) and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"Answers({vars(self)})"


BY_AUTHOR = {"query": "settle invoice ledger", "mode": "lexical", "filters": {"authors": ["Bob Stone"]}}
COMMITS = {"query": "ledger settlement", "mode": "lexical", "filters": {"types": ["git_commit"]}}


async def through_lsp(repo: Path, cache: Path) -> tuple[Answers, str]:
    client = await start_lsp(repo, cache, "visual-studio-code", {"embedding": {"enabled": False}})
    try:
        async def status() -> Any:
            return await client.protocol.send_request_async("sylk/status", {})

        async def search(params: dict[str, Any]) -> Any:
            return await client.protocol.send_request_async("sylk/search", params)

        async def symbol() -> list[Any]:
            from lsprotocol import types

            return list(await client.workspace_symbol_async(types.WorkspaceSymbolParams(
                query="settle_invoice_ledger")) or [])

        await eventually(status, lambda st: st.ready and st.watch.active, "the first run and the watcher")
        edit(repo)
        found = await eventually(symbol, bool, "the edit on disk, indexed by the watcher")
        sha = git_commit(repo, "Bob Stone", MESSAGE, "app/http.py", when=JUN)
        await client.workspace_execute_command_async(_command("sylk.reindex"))
        by_author = await eventually(lambda: search(BY_AUTHOR), lambda r: bool(r.hits), "the new author")
        commits = await eventually(lambda: search(COMMITS), lambda r: bool(r.hits), "the new commit")
        root = found[0].location.uri.rsplit("/app/", 1)[0]
        return Answers([(h.path, h.symbol) for h in by_author.hits],
                       [(h.commit.sha, h.author, tuple(h.commit.files)) for h in commits.hits],
                       found[0].location.uri[len(root) + 1:]), sha
    finally:
        await client.shutdown_session()
        await client.stop()


def _command(name: str) -> Any:
    from lsprotocol import types

    return types.ExecuteCommandParams(command=name)


async def through_mcp(repo: Path, cache: Path) -> tuple[Answers, str]:
    async with mcp_session(repo, cache) as s:
        async def call(tool: str, **args: Any) -> dict[str, Any]:
            result = await s.call_tool(tool, args)
            assert not result.is_error, result.content
            return json.loads(result.content[0].text)  # type: ignore[union-attr]

        async def status() -> dict[str, Any]:
            return await call("get_status")

        await eventually(status, lambda st: st["state"] == "ready" and st["watch"]["active"],
                         "the first run and the watcher")
        edit(repo)
        found = await eventually(lambda: call("search_symbol", query="settle_invoice_ledger"),
                                 lambda r: bool(r["symbols"]), "the edit on disk, indexed by the watcher")
        sha = git_commit(repo, "Bob Stone", MESSAGE, "app/http.py", when=JUN)
        assert (await call("reindex"))["indexed"] == "done"
        by_author = await eventually(lambda: call("search_code", query=BY_AUTHOR["query"], mode="lexical",
                                                  authors=["Bob Stone"]),
                                     lambda r: bool(r["hits"]), "the new author")
        commits = await eventually(lambda: call("search_code", query=COMMITS["query"], mode="lexical",
                                                types=["git_commit"]),
                                   lambda r: bool(r["hits"]), "the new commit")
        return Answers([(h["path"], h["symbol"]) for h in by_author["hits"]],
                       [(h["symbol"], h["author"], tuple(h["files"])) for h in commits["hits"]],
                       found["symbols"][0]["path"]), sha


async def test_the_language_server_and_mcp_give_the_same_answers(tmp_path: Path, repo: Path):
    # the same scenario on two copies of the repository, each with its own index
    twin = tmp_path / "twin"
    shutil.copytree(repo, twin, symlinks=True)
    lsp, lsp_sha = await through_lsp(repo, tmp_path / "lsp-cache")
    mcp, mcp_sha = await through_mcp(twin, tmp_path / "mcp-cache")

    assert lsp_sha == mcp_sha  # the same history in both copies
    assert lsp.symbol_path == "app/http.py"
    assert lsp.by_author[0] == ("app/http.py", "settle_invoice_ledger")
    assert {path for path, _symbol in lsp.by_author} == {"app/http.py"}  # only the file Bob committed
    assert lsp.commits == [(lsp_sha, "Bob Stone", ("app/http.py",))]
    assert mcp == lsp
