"""One workspace with every trick at once (issue 29 item 7), opened by each front end.

A downloaded repository that holds: a module named after every standard-library
module (each writes a marker when imported); a ``.git/config`` whose fsmonitor, hooks,
clean filter and pager write markers; a ``.sylk.toml`` that points ``indexDir`` at a
folder of the user's, ``embedding.modelPath`` outside and ``embedding.model`` at a hub
name (and sets ``exclude``, which it may); a FIFO, a link to a device, a link out of the
workspace, a link loop, a huge file, a binary file and invalid UTF-8. Sylk is started
inside it through the CLI (the ``sylk`` script), the language server over stdio and MCP.

Each front end must leave no marker, the user's folder byte for byte as it was, the
index in the user's cache folder, every indexable file indexed (the rest skipped with
its reason), and say why the workspace's settings were refused.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import (
    TIMEOUT,
    fired,
    git_commit,
    hostile_workspace,
    mcp_call,
    mcp_indexed,
    mcp_session,
    mcp_wait_until,
    run_sylk,
    start_lsp,
    status,
    wait_for_progress_end,
)
from lsprotocol import types

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

REFUSED = ".sylk.toml: indexDir is ignored"
SKIPPED = {"special-file", "symlink-outside", "symlink-loop", "too-large", "binary"}  # the reasons the tricks above get


class Scene:
    """The hostile workspace ``root``, the user's folder ``victim`` (with its contents as
    they were) and the ``markers`` folder; ``indexable``: the files Sylk must index."""

    def __init__(self, tmp: Path) -> None:
        self.root, self.victim, self.markers = tmp / "repo", tmp / "victim", tmp / "markers"
        self.root.mkdir()
        self.victim.mkdir()
        (self.victim / "notes.txt").write_text("mine\n", encoding="utf-8")
        (self.victim / "photos").mkdir()
        (self.victim / "photos" / "cat.jpg").write_bytes(b"\xff\xd8\xff" + bytes(range(256)))
        self.before = snapshot(self.victim)
        hostile_workspace(self.root, self.markers)
        (self.root / ".sylk.toml").write_text(
            f'indexDir = "{self.victim}"\nexclude = ["excluded/**"]\n'
            f'[embedding]\nenabled = false\nmodel = "someone/hub-model"\nmodelPath = "{self.victim}"\n',
            encoding="utf-8")
        (self.root / "excluded").mkdir()
        (self.root / "excluded" / "left_out.py").write_text("def left_out():\n    pass\n", encoding="utf-8")
        (self.root / "ledger.py").write_text("def balance():\n    return 0\n", encoding="utf-8")
        (self.root / "latin1.py").write_bytes(b"# caf\xe9\ndef latin():\n    return 1\n")
        (self.root / "big.txt").write_text("x" * (2 << 20), encoding="utf-8")
        (self.root / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02" * 64)
        os.mkfifo(self.root / "pipe")
        (self.root / "zero").symlink_to("/dev/zero")
        (self.root / "outside").symlink_to(self.victim / "notes.txt")
        (self.root / "loop").symlink_to(self.root / "loop")
        self._hostile_git()
        self.indexable = {p.relative_to(self.root).as_posix() for p in self.root.rglob("*")
                          if ".git" not in p.parts and not p.is_symlink() and p.is_file()
                          and stat.S_ISREG(p.stat().st_mode) and p.name not in ("big.txt", "blob.bin")
                          and "excluded" not in p.parts}

    def _hostile_git(self) -> None:
        def prog(name: str) -> str:
            path = self.markers.parent / "bin" / name
            path.parent.mkdir(exist_ok=True)
            path.write_text(f"#!/bin/sh\ntouch {self.markers / ('git-' + name)}\ncat\n", encoding="utf-8")
            path.chmod(0o755)
            return str(path)

        hooks = self.markers.parent / "hooks"
        hooks.mkdir()
        for hook in ("post-index-change", "reference-transaction", "fsmonitor-watchman", "post-checkout"):
            (hooks / hook).write_text(f"#!/bin/sh\ntouch {self.markers / ('hook-' + hook)}\n", encoding="utf-8")
            (hooks / hook).chmod(0o755)
        (self.root / ".gitattributes").write_text("*.py filter=evil\n", encoding="utf-8")
        git = ["git", "-C", str(self.root)]
        subprocess.run([*git, "init", "-q"], check=True, timeout=TIMEOUT)
        git_commit(self.root, "Ada Lovelace", "the ledger")
        for key, value in {"core.fsmonitor": prog("fsmonitor"), "core.hooksPath": str(hooks),
                           "filter.evil.clean": prog("clean"), "filter.evil.smudge": prog("smudge"),
                           "filter.evil.required": "true", "core.pager": prog("pager")}.items():
            subprocess.run([*git, "config", key, value], check=True, timeout=TIMEOUT)
        # a tracked file changed at the same size: status has to clean it to compare
        (self.root / "ledger.py").write_text("def balance():\n    return 1\n", encoding="utf-8")
        assert fired(self.markers) == []  # the test's own git ran nothing hostile yet

    def assert_untouched(self, index_dir: str, cache: Path) -> None:
        assert fired(self.markers) == []
        assert snapshot(self.victim) == self.before
        assert Path(index_dir).is_relative_to(cache), index_dir


def snapshot(folder: Path) -> dict[str, bytes | None]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*"))}


def test_the_cli_inside_a_hostile_workspace(tmp_path: Path, _isolated_index: Path):
    scene = Scene(tmp_path)
    r = run_sylk("index", "--workers", "2", ".", cache=_isolated_index, cwd=scene.root, console_script=True,
                 env={"PYTHONSAFEPATH": ""})
    assert r.returncode == 0, r.stderr
    assert REFUSED in r.stderr and "embedding.modelPath is ignored" in r.stderr and "embedding.model is ignored" \
        in r.stderr
    st = json.loads(run_sylk("status", "--format", "json", "--skipped", ".", cache=_isolated_index, cwd=scene.root,
                             console_script=True).stdout)
    assert st["files"] == len(scene.indexable), st["skipped"]
    reasons = {r["reason"] for r in st["skipped"]["byReason"]}
    assert reasons <= SKIPPED, reasons
    found = run_sylk("symbols", "balance", ".", "--no-refresh", cache=_isolated_index, cwd=scene.root,
                     console_script=True)
    assert "ledger.py" in found.stdout
    scene.assert_untouched(st["indexDir"], _isolated_index)


async def test_the_language_server_inside_a_hostile_workspace(tmp_path: Path, _isolated_index: Path):
    scene = Scene(tmp_path)
    client = await start_lsp(scene.root, _isolated_index, "visual-studio-code", None, cwd=scene.root,
                             console_script=True, env={"PYTHONSAFEPATH": ""})
    try:
        end = await wait_for_progress_end(client)
        st = await status(client)
        assert st.files == len(scene.indexable), (end.message, st.skipped)
        shown = [m.message for m in client.messages if m.type in (types.MessageType.Warning, types.MessageType.Error)]
        assert any(REFUSED in m for m in shown), shown
        index_dir = st.indexDir
    finally:
        await client.shutdown_session()
    scene.assert_untouched(index_dir, _isolated_index)


async def test_mcp_inside_a_hostile_workspace(tmp_path: Path, _isolated_index: Path):
    scene = Scene(tmp_path)
    async with mcp_session(scene.root, _isolated_index, cwd=scene.root, console_script=True,
                           env={"PYTHONSAFEPATH": ""}) as s:
        st = await mcp_wait_until(s, mcp_indexed, "the first index run")
        assert st["files"] == len(scene.indexable), st
        assert any(REFUSED in n for n in st["notes"]), st["notes"]
        hits = await mcp_call(s, "search_symbol", query="balance")
        assert hits["symbols"][0]["path"] == "ledger.py"
        index_dir = st["indexDir"]
    scene.assert_untouched(index_dir, _isolated_index)
