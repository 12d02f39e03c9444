"""Periodic reconcile (setting ``reconcileMinutes``): changes on disk no watcher reported
become searchable, and the server says in one log line what it found. End to end over
stdio (the language server, and the MCP server through the SDK's client), and the
service in process with a watcher that loses its events. Every wait is on what a user
sees (a symbol found, a log line), never a sleep."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import NO_EMBEDDING, TIMEOUT, eventually, git_commit, server_env, start_lsp
from lsprotocol import types
from sylk import config, settings_sources
from sylk.engine.indexer import IndexReport
from sylk.jobs import Periodic
from sylk.service import WorkspaceService
from sylk.steps import Reporter, Severity, drift_line

# 0.6 s: a test waits for the first check, never for ten minutes
SOON = 0.01
NEW_FUNCTION = "def reconciled_later_on():\n    return 1\n"


def change_behind_the_servers_back(workspace: Path) -> None:
    """One file added, one changed, one deleted (while the service cannot reconcile, so
    one check sees all three)."""
    (workspace / "app/added_later.py").write_text(NEW_FUNCTION, encoding="utf-8")
    http = workspace / "app/http.py"
    http.write_text(http.read_text(encoding="utf-8") + "\n\ndef changed_later_on():\n    return 2\n",
                    encoding="utf-8")
    (workspace / "app/unicode.py").unlink()


# --- the setting and the log line --------------------------------------------------------

def test_the_setting_takes_minutes_and_refuses_what_is_not_a_duration(tmp_path: Path) -> None:
    assert config.Settings().reconcile_minutes == 10
    assert config.structure({"reconcileMinutes": 0.5}).reconcile_minutes == 0.5
    assert config.structure({"reconcileMinutes": 0}).reconcile_minutes == 0  # off
    for bad in (-1, float("inf"), "soon"):
        with pytest.raises(config.SettingsError) as err:
            config.structure({"reconcileMinutes": bad})
        assert "reconcileMinutes" in str(err.value)
    resolved = settings_sources.resolve(tmp_path, {"reconcileMinutes": -5, "watch": False}, environ={})
    settings, problems = resolved.settings, list(resolved.problems)
    assert problems == ["editor settings: reconcileMinutes must be a number of minutes >= 0 (0: never), "
                        "got -5.0 @ sylk"]
    assert settings.reconcile_minutes == 10 and settings.watch is False  # the rest still applies


def test_the_log_line_says_what_changed_and_whether_a_watcher_was_on() -> None:
    assert drift_line(IndexReport(unchanged=40), watching=True) is None
    assert drift_line(IndexReport(changed=2, deleted=1), watching=True) == \
        "reconcile: 3 files changed on disk that the watcher missed (2 changed, 1 deleted)"
    assert drift_line(IndexReport(added=1), watching=False) == \
        "reconcile: 1 file changed on disk while file watching was off (1 added)"
    assert drift_line(IndexReport(added=1, cancelled=True), watching=True) is None


def test_periodic_tries_again_when_busy_and_takes_a_new_interval_at_once() -> None:
    minutes = [0.0]  # paused
    calls: list[float] = []
    answers = iter([False, True])  # busy first: tried again after retry_s
    second = threading.Event()

    def fn() -> bool:
        calls.append(minutes[0])
        if len(calls) == 2:
            minutes[0] = 0  # paused again
            second.set()
        return next(answers, True)

    timer = Periodic("test-periodic", lambda: minutes[0] * 60, fn, retry_s=0.01).start()
    try:
        assert calls == []  # paused: nothing runs until a wake brings an interval
        minutes[0] = SOON / 6  # 0.1 s
        timer.wake()
        assert second.wait(TIMEOUT)
        assert calls == [SOON / 6, SOON / 6]
    finally:
        timer.stop()


# --- in process: a watcher that loses events ---------------------------------------------

class Recorder(Reporter):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def log(self, text: str, severity: Severity = Severity.LOG) -> None:
        self.lines.append(text)


def add_atomically(workspace: Path, tmp_path: Path) -> None:
    """A new file that appears whole (a check in between sees it or not, never half)."""
    staged = tmp_path / "added_later.py"
    staged.write_text(NEW_FUNCTION, encoding="utf-8")
    staged.rename(workspace / "app/added_later.py")


@pytest.mark.parametrize("tree", ["plain", "git"])
def test_a_watcher_that_lost_events_is_caught_up_with(workspace: Path, tmp_path: Path, tree: str) -> None:
    """The watcher runs, but its events never reach the index (as when inotify's queue
    overflows): the reconcile finds the three changes (in a git work tree through git's
    view of what changed, else by a stat() of every file) and says the watcher missed them."""
    if tree == "git":
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        subprocess.run(["git", "-C", str(workspace), "init", "-q"], check=True)
        git_commit(workspace, "Ann Lee", "initial import")
    settings = config.Settings(index_dir=str(tmp_path / "idx"), reconcile_minutes=SOON,
                               embedding=config.EmbeddingSettings(enabled=False))
    reporter = Recorder()
    service = WorkspaceService(workspace, settings, reporter)
    service.changes.add = lambda rels: None  # type: ignore[method-assign]  # events lost
    try:
        service.start_indexing().result(TIMEOUT)
        assert service.engine is not None
        _wait(lambda: service.watching)
        # The reconcile runs on the indexing thread: while a job of the test holds that
        # thread, none is running (one may be queued behind it), so the first check after
        # it sees the three changes together, however slow this machine is.
        holding, release = threading.Event(), threading.Event()
        held = service.jobs.submit("holding the indexing thread", lambda: (holding.set(), release.wait(TIMEOUT)))
        assert held is not None and holding.wait(TIMEOUT), "the indexing thread never took the test's job"
        try:
            change_behind_the_servers_back(workspace)
        finally:
            release.set()
        _wait(lambda: service.changes_applied)  # one batch of changes taken in, by the reconcile
        assert "reconcile: 3 files changed on disk that the watcher missed (1 added, 1 changed, 1 deleted)" \
            in reporter.lines
        engine = service.engine
        assert [h.path for h in engine.search_symbols("reconciled_later_on")] == ["app/added_later.py"]
        assert [h.path for h in engine.search_symbols("changed_later_on")] == ["app/http.py"]
        assert engine.search_symbols("emoji_after") == []
    finally:
        service.close()


def _wait(probe: Any) -> Any:
    done = threading.Event()
    result: list[Any] = []

    def poll() -> None:
        while not done.is_set():
            answer = probe()
            if answer:
                result.append(answer)
                done.set()
                return
            done.wait(0.02)

    t = threading.Thread(target=poll, daemon=True)
    t.start()
    finished = done.wait(TIMEOUT)
    done.set()
    assert finished, "timed out waiting for the reconcile"
    return result[0]


# --- over stdio: the language server -----------------------------------------------------

async def test_the_language_server_indexes_what_no_watcher_saw(workspace: Path, _isolated_index: Path,
                                                                tmp_path: Path) -> None:
    """With watching off nothing reports changes made outside the editor; the periodic
    check finds them: the new function is a workspace symbol, the deleted file's are gone,
    and window/logMessage says what it found."""
    client = await start_lsp(workspace, _isolated_index, "visual-studio-code",
                             {**NO_EMBEDDING, "watch": False, "reconcileMinutes": SOON})
    try:
        async def status() -> Any:
            return await client.protocol.send_request_async("sylk/status", {})

        async def symbols(query: str) -> list[types.SymbolInformation]:
            return list(await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query)) or [])

        def logged(line: str) -> Any:
            return lambda _st: any(line in m.message for m in client.log_messages)

        await eventually(status, lambda st: st.ready and st.files > 0, "the first index run")
        assert await symbols("emoji_after")  # app/unicode.py, deleted below
        add_atomically(workspace, tmp_path)
        found = await eventually(lambda: symbols("reconciled_later_on"), bool, "the reconcile")
        assert [s.location.uri.rsplit("/", 1)[1] for s in found] == ["added_later.py"]
        await eventually(status, logged("reconcile: 1 file changed on disk while file watching was off (1 added)"),
                         "the reconcile's log line")
        (workspace / "app/unicode.py").unlink()
        await eventually(status, logged("reconcile: 1 file changed on disk while file watching was off "
                                        "(1 deleted)"), "the next reconcile's log line")
        assert await symbols("emoji_after") == []
        st = await status()
        assert st.watch.active is False and st.watch.changesApplied == 2
    finally:
        await client.shutdown_session()
        await client.stop()


# --- through the MCP SDK's client --------------------------------------------------------

@asynccontextmanager
async def mcp_with_log(workspace: Path, cache: Path, log: Path) -> AsyncIterator[Any]:
    """`sylk mcp` with its stderr (the server's log) written to ``log``. Each wait is
    bounded, not the session: every request gets TIMEOUT for its answer, the polls their
    own deadline (``eventually``)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "sylk.cli", "mcp", str(workspace)],
                                   env=server_env(cache))
    with log.open("w", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=TIMEOUT) as s:
                with anyio.fail_after(TIMEOUT):
                    await s.initialize()
                yield s


async def test_the_mcp_server_indexes_what_no_watcher_saw(workspace: Path, _isolated_index: Path,
                                                          tmp_path: Path) -> None:
    (workspace / ".sylk.toml").write_text(
        f"watch = false\nreconcile_minutes = {SOON}\n[embedding]\nenabled = false\n", encoding="utf-8")
    log = tmp_path / "mcp.log"
    async with mcp_with_log(workspace, _isolated_index, log) as s:
        async def call(tool: str, **args: Any) -> dict[str, Any]:
            result = await s.call_tool(tool, args)
            assert not result.is_error, result.content
            return json.loads(result.content[0].text)  # type: ignore[union-attr]

        await eventually(lambda: call("get_status"), lambda st: st["state"] == "ready" and "lastRun" in st,
                         "the first index run")
        add_atomically(workspace, tmp_path)
        found = await eventually(lambda: call("search_symbol", query="reconciled_later_on"),
                                 lambda r: bool(r["symbols"]), "the reconcile")
        assert [h["path"] for h in found["symbols"]] == ["app/added_later.py"]
        line = "reconcile: 1 file changed on disk while file watching was off (1 added)"
        await eventually(lambda: call("get_status"), lambda _st: line in log.read_text(encoding="utf-8"),
                         "the reconcile's log line")
        st = await call("get_status")
        assert st["watch"]["active"] is False
        assert (st["lastRun"]["added"], st["lastRun"]["changed"], st["lastRun"]["deleted"]) == (1, 0, 0)
