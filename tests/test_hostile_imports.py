"""A workspace's code never runs, and every file it holds is indexed (issue 29 items 1 and 6).

The workspace holds a module named after every standard-library module (and
``sitecustomize``/``usercustomize``), each of which writes a marker when imported,
and enough files to start the parser processes. Sylk runs with its working directory
inside it, as VS Code starts the server, through every front end: the ``sylk``
console script, ``python -m sylk.cli``, ``python -P -m sylk.cli``, the language server
over stdio and MCP. No marker may appear, and every file must be indexed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import (
    TIMEOUT,
    eventually,
    mcp_call,
    mcp_indexed,
    mcp_session,
    mcp_wait_until,
    fired,
    hostile_workspace,
    runpy_startup_modules,
    run_sylk,
    server_env,
    start_lsp,
    status,
    symbols,
    wait_for_progress_end,
)

@pytest.mark.parametrize("start", ["console-script", "python -P -m", "python -m"])
def test_the_cli_started_inside_a_workspace_imports_none_of_its_modules(tmp_path: Path, _isolated_index: Path,
                                                                      start: str):
    root, markers = tmp_path / "ws", tmp_path / "markers"
    root.mkdir()
    leave_out = runpy_startup_modules() if start == "python -m" else set()
    total = hostile_workspace(root, markers, leave_out)
    env = {"PYTHONSAFEPATH": ""}  # the user's environment does not set it
    if start == "python -P -m":
        cmd = [sys.executable, "-P", "-m", "sylk.cli", "index", "--no-embed", "--workers", "2", "."]
        r = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL,
                           env={**server_env(_isolated_index), **env})
    else:
        r = run_sylk("index", "--no-embed", "--workers", "2", ".", cache=_isolated_index, cwd=root,
                     console_script=start == "console-script", env=env)
    assert r.returncode == 0, r.stderr
    assert fired(markers) == []
    st = json.loads(run_sylk("status", "--format", "json", ".", cache=_isolated_index, cwd=root,
                             console_script=True).stdout)
    assert (st["files"], st["skipped"]["total"]) == (total, 0), st["skipped"]
    assert f"{total} added" in r.stdout
    assert fired(markers) == []


async def test_the_language_server_started_inside_a_workspace_imports_none_of_its_modules(
        tmp_path: Path, _isolated_index: Path):
    root, markers = tmp_path / "ws", tmp_path / "markers"
    root.mkdir()
    total = hostile_workspace(root, markers)
    client = await start_lsp(root, _isolated_index, "visual-studio-code", {"embedding": {"enabled": False}},
                             cwd=root, console_script=True, env={"PYTHONSAFEPATH": ""})
    try:
        end = await wait_for_progress_end(client)
        st = await status(client)
        assert (st.files, st.skipped.total) == (total, 0), (end.message, st)
        found = await symbols(client, "source_function_119")
        assert [s.name for s in found][:1] == ["source_function_119"]
    finally:
        await client.shutdown_session()
    assert fired(markers) == []


async def test_mcp_started_inside_a_workspace_imports_none_of_its_modules(tmp_path: Path, _isolated_index: Path):
    root, markers = tmp_path / "ws", tmp_path / "markers"
    root.mkdir()
    total = hostile_workspace(root, markers)
    async with mcp_session(root, _isolated_index, cwd=root, console_script=True, env={"PYTHONSAFEPATH": ""}) as s:
        st = await mcp_wait_until(s, mcp_indexed, "the first index run")
        assert st["files"] == total, st
        hits = await eventually(lambda: mcp_call(s, "search_symbol", query="source_function_000"),
                                lambda r: bool(r["symbols"]), "the symbol")
        assert hits["symbols"][0]["name"] == "source_function_000"
    assert fired(markers) == []
