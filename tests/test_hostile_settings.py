"""End to end, issue 29 items 3 and 5: a workspace is data from a stranger. Its own
``.sylk.toml`` / ``[tool.sylk]`` cannot send Sylk outside it (``indexDir``,
``embedding.modelPath``, ``embedding.model``: refused, and the user told why, the rest of
the file applied), the user's own sources can; and a workspace the editor does not trust
(``trusted: false``) has its file ignored and git never run. Every server is started with
its working directory inside the workspace, as an editor or a terminal starts it."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    eventually,
    eventually_blocking,
    git_commit,
    mcp_call,
    mcp_session,
    mcp_wait_until,
    run_sylk,
    start_lsp,
    wait_for_progress_end,
    write_tree,
)
from lsprotocol import types
from sylk import config

PROBE = "hostile_settings_probe"
FILES = {"src/probe.py": f"def {PROBE}():\n    return 'zebracorn'\n", "README.md": "# a downloaded repository\n"}
NO_EMBEDDING = "[embedding]\nenabled = false\n"
WHY_INDEX_DIR = "indexDir is ignored: a workspace file may not choose where Sylk writes"


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every entry under ``folder``: a file's bytes, None for a folder."""
    return {p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() and not p.is_symlink() else None)
            for p in sorted(folder.rglob("*"))}


def victim_folder(tmp_path: Path) -> Path:
    """Files of the user's that a hostile workspace aims Sylk at."""
    return write_tree(tmp_path / "victim", {"thesis.tex": "\\chapter{Four years}\n", "photos/cat.txt": "meow\n",
                                            "notes.md": "# mine\n"})


def fake_home(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "home", {".bashrc": "export PATH=$HOME/bin:$PATH\n", ".ssh/id_ed25519": "KEY\n",
                                          "Documents/letter.txt": "Dear ...\n"})


def home_env(home: Path) -> dict[str, str]:
    """A subprocess whose $HOME (and XDG folders but the cache) is ``home``."""
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_STATE_HOME": str(home / ".local/state")}


def hostile(root: Path, where: str, body: str) -> Path:
    """``body`` (TOML settings) as the workspace's ``.sylk.toml`` or its pyproject.toml's
    ``[tool.sylk]``; returns the file."""
    if where == ".sylk.toml":
        path, text = root / ".sylk.toml", body
    else:
        path = root / "pyproject.toml"
        text = "[project]\nname = 'probe'\n\n[tool.sylk]\n" + body.replace("[embedding]", "[tool.sylk.embedding]")
    path.write_text(text, encoding="utf-8")
    return path


def default_index(root: Path) -> Path:
    """Where the index of ``root`` lives when nobody chose: the test's XDG_CACHE_HOME."""
    return config.index_dir_for(root, config.Settings())


def toml_string(value: str) -> str:
    return json.dumps(value)  # a TOML basic string is a JSON string


# -- the command line -----------------------------------------------------------------

@pytest.mark.parametrize("where", [".sylk.toml", "pyproject.toml"])
@pytest.mark.parametrize("target", ["victim", "home", "root"])
def test_a_workspace_file_cannot_choose_the_index_folder(tmp_path: Path, _isolated_index: Path, where: str,
                                                         target: str):
    ws = write_tree(tmp_path / "downloaded", FILES)
    home = fake_home(tmp_path)
    env = home_env(home)
    aimed = {"victim": str(victim_folder(tmp_path)), "home": "~", "root": "/"}[target]
    guarded = {"victim": tmp_path / "victim", "home": home, "root": None}[target]
    before = snapshot(guarded) if guarded else None
    root_before = set(os.listdir("/")) if target == "root" else None
    file = hostile(ws, where, f"indexDir = {toml_string(aimed)}\nmaxFileSize = 4096\n" + NO_EMBEDDING)

    indexed = run_sylk("index", cache=_isolated_index, cwd=ws, env=env)
    assert indexed.returncode == 0, indexed.stderr
    # the user sees why, naming the file and the key, and where the setting may come from
    assert f"sylk: warning: {file}: {WHY_INDEX_DIR}" in indexed.stderr
    assert "SYLK_INDEX_DIR" in indexed.stderr and "config.toml" in indexed.stderr
    # the rest of the file applied: no embedding
    assert "embedded" not in indexed.stdout

    # the workspace's files are indexed, in the default cache place
    found = run_sylk("symbols", PROBE, "--format", "json", "--no-refresh", cache=_isolated_index, cwd=ws, env=env)
    assert found.returncode == 0, found.stderr
    assert [(h["name"], h["path"]) for h in json.loads(found.stdout)][:1] == [(PROBE, "src/probe.py")]
    status = run_sylk("status", "--format", "json", cache=_isolated_index, cwd=ws, env=env)
    st = json.loads(status.stdout)
    assert st["indexDir"] == str(default_index(ws)) and st["trusted"] is True
    assert (default_index(ws) / "manifest.sqlite3").is_file()
    assert st["files"] == 3  # FILES and the settings file

    # nothing of the victim's changed, nothing was added
    if guarded is not None:
        assert snapshot(guarded) == before
    if root_before is not None:
        assert set(os.listdir("/")) == root_before


def test_the_user_chooses_the_index_folder_with_sylk_index_dir(tmp_path: Path, _isolated_index: Path):
    ws = write_tree(tmp_path / "downloaded", FILES)
    (ws / ".sylk.toml").write_text(NO_EMBEDDING, encoding="utf-8")
    chosen = tmp_path / "my-indexes" / "downloaded"
    indexed = run_sylk("index", cache=_isolated_index, cwd=ws, env={"SYLK_INDEX_DIR": str(chosen)})
    assert indexed.returncode == 0, indexed.stderr
    assert "ignored" not in indexed.stderr
    assert (chosen / "manifest.sqlite3").is_file() and not default_index(ws).exists()


def test_the_user_config_file_is_honoured(tmp_path: Path, _isolated_index: Path):
    ws = write_tree(tmp_path / "downloaded", FILES)
    home = fake_home(tmp_path)
    chosen = tmp_path / "my-indexes" / "downloaded"
    write_tree(home / ".config" / "sylk", {"config.toml": f"indexDir = {toml_string(str(chosen))}\n" + NO_EMBEDDING})
    env = home_env(home)
    indexed = run_sylk("index", cache=_isolated_index, cwd=ws, env=env)
    assert indexed.returncode == 0, indexed.stderr
    assert "ignored" not in indexed.stderr and "embedded" not in indexed.stdout
    st = json.loads(run_sylk("status", "--format", "json", cache=_isolated_index, cwd=ws, env=env).stdout)
    assert st["indexDir"] == str(chosen) and st["files"] == 2
    assert not default_index(ws).exists()


# -- the language server ----------------------------------------------------------------

async def lsp_status(client: Any) -> Any:
    return await client.protocol.send_request_async("sylk/status", {})


def field(obj: Any, name: str) -> Any:
    return obj[name] if isinstance(obj, dict) else getattr(obj, name)


async def test_the_language_server_refuses_a_workspace_index_dir_and_says_why(tmp_path: Path,
                                                                              _isolated_index: Path):
    ws = write_tree(tmp_path / "downloaded", FILES)
    victim = victim_folder(tmp_path)
    before = snapshot(victim)
    file = hostile(ws, ".sylk.toml", f"indexDir = {toml_string(str(victim))}\n" + NO_EMBEDDING)
    client = await start_lsp(ws, _isolated_index, "visual-studio-code", None, cwd=ws)
    try:
        await wait_for_progress_end(client)
        st = await eventually(lambda: lsp_status(client), lambda s: field(s, "ready"), "the index run")
        assert field(st, "indexDir") == str(default_index(ws)) and field(st, "trusted") is True
        found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=PROBE))
        assert [s.name for s in found or []] == [PROBE]
        shown = [m.message for m in client.messages]
        assert any(f"{file}: {WHY_INDEX_DIR}" in m for m in shown), shown
    finally:
        await client.shutdown_session()
        await client.stop()
    assert snapshot(victim) == before


async def test_initialization_options_choose_the_index_folder(tmp_path: Path, _isolated_index: Path):
    ws = write_tree(tmp_path / "downloaded", FILES)
    chosen = tmp_path / "my-indexes" / "downloaded"
    client = await start_lsp(ws, _isolated_index, "visual-studio-code",
                             {"indexDir": str(chosen), "embedding": {"enabled": False}}, cwd=ws)
    try:
        await wait_for_progress_end(client)
        st = await eventually(lambda: lsp_status(client), lambda s: field(s, "ready"), "the index run")
        assert field(st, "indexDir") == str(chosen) and (chosen / "manifest.sqlite3").is_file()
        assert not any("ignored" in m.message for m in client.messages)
    finally:
        await client.shutdown_session()
        await client.stop()
    assert not default_index(ws).exists()


# -- the model: never a download or a folder outside because a workspace says so --------

async def test_a_workspace_file_cannot_choose_the_model(tmp_path: Path, _isolated_index: Path):
    ws = write_tree(tmp_path / "downloaded", FILES)
    outside = write_tree(tmp_path / "elsewhere" / "model", {"model.onnx": "not a model", "tokenizer.json": "{}",
                                                            "tokenizer_config.json": "{}", "config.json": "{}"})
    before = snapshot(outside)
    victim = victim_folder(tmp_path)
    file = hostile(ws, "pyproject.toml", f"indexDir = {toml_string(str(victim))}\n[embedding]\n"
                                         f"modelPath = {toml_string(str(outside))}\n"
                                         'model = "BAAI/bge-small-en-v1.5"\nbatchSize = 2\n')
    async with mcp_session(ws, _isolated_index, cwd=ws) as s:
        st = await mcp_wait_until(s, lambda st: st["state"] == "ready" and st.get("lastRun") is not None
                                  and st["embedding"]["state"] in ("ready", "unavailable") and st["pending"] == 0,
                                  "the index run and the embedding pass")
        # the packaged model, loaded from the wheel: no hub name, no folder outside
        assert st["embedding"]["state"] == "ready", st["embedding"]
        assert st["embedding"]["model"].startswith(config.MODEL_ID_DEFAULT + "@"), st["embedding"]
        assert st["embedded"] > 0 and st["indexDir"] == str(default_index(ws))
        notes = " | ".join(st.get("notes", []))
        for key in ("indexDir", "embedding.modelPath", "embedding.model"):
            assert f"{file}: {key} is ignored: a workspace file may not" in notes, notes
        found = await mcp_call(s, "search_symbol", query=PROBE)
        assert [h["name"] for h in found["symbols"]][:1] == [PROBE]
    # fastembed was never asked for a model (its cache is where a download would land)
    assert not (_isolated_index / "sylk" / "fastembed").exists()
    assert snapshot(outside) == before and not (victim / "manifest.sqlite3").exists()


# -- trust --------------------------------------------------------------------------------

def git_watched(tmp_path: Path) -> tuple[Path, dict[str, str], Path, Path]:
    """A git repository whose ``core.fsmonitor`` writes a marker when git runs its hook, and
    a ``git`` first on PATH that writes another when it runs at all: (the repository, the
    environment that puts that git first, the hook's marker, the git marker)."""
    ws = write_tree(tmp_path / "downloaded", FILES)
    hook_marker, git_marker = tmp_path / "fsmonitor-ran", tmp_path / "git-ran"
    hook = write_tree(tmp_path / "hooks", {"fsmonitor": f"#!/bin/sh\necho ran >> {hook_marker}\n"}) / "fsmonitor"
    hook.chmod(0o755)
    real = shutil.which("git")
    assert real is not None
    wrapper = write_tree(tmp_path / "bin", {"git": f'#!/bin/sh\necho "$*" >> {git_marker}\nexec {real} "$@"\n'}) / "git"
    wrapper.chmod(0o755)
    subprocess.run(["git", "-C", str(ws), "init", "-q"], check=True)
    git_commit(ws, "Ann Lee", "add the zebracorn probe")
    subprocess.run(["git", "-C", str(ws), "config", "core.fsmonitor", str(hook)], check=True)
    hook_marker.unlink(missing_ok=True)
    return ws, {"PATH": f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}"}, hook_marker, git_marker


async def test_an_untrusted_workspace_over_stdio(tmp_path: Path, _isolated_index: Path):
    ws, env, hook_marker, git_marker = git_watched(tmp_path)
    # would leave src/ out and the probe unindexed, were the file read
    (ws / ".sylk.toml").write_text('exclude = ["src/**"]\n', encoding="utf-8")
    client = await start_lsp(ws, _isolated_index, "visual-studio-code",
                             {"trusted": False, "embedding": {"enabled": False}}, cwd=ws, env=env)
    try:
        await wait_for_progress_end(client)
        st = await eventually(lambda: lsp_status(client), lambda s: field(s, "ready"), "the index run")
        assert field(st, "trusted") is False and "git is not run" in field(st, "trustMessage")
        folder = field(st, "folders")[0]
        assert field(folder, "trusted") is False
        found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=PROBE))
        assert [s.name for s in found or []] == [PROBE]  # .sylk.toml's exclude was not applied
        shown = [m.message for m in client.messages]
        assert sum(f"untrusted workspace {ws}: .sylk.toml ignored, git off" in m for m in shown) == 1, shown
        # no git metadata: the commit is not searchable
        commits = await client.protocol.send_request_async("sylk/search", {
            "query": "zebracorn", "mode": "lexical", "filters": {"types": ["git_commit"]}})
        assert field(commits, "hits") == []
    finally:
        await client.shutdown_session()
        await client.stop()
    assert not git_marker.exists(), git_marker.read_text()
    assert not hook_marker.exists()


def test_the_command_line_untrusted_flag_and_a_trusted_run_for_contrast(tmp_path: Path, _isolated_index: Path):
    ws, env, _hook_marker, git_marker = git_watched(tmp_path)
    (ws / ".sylk.toml").write_text('exclude = ["src/**"]\n' + NO_EMBEDDING, encoding="utf-8")
    untrusted = run_sylk("index", "--untrusted", "--no-embed", cache=_isolated_index, cwd=ws, env=env)
    assert untrusted.returncode == 0, untrusted.stderr
    assert f"untrusted workspace {ws}: .sylk.toml ignored, git off" in untrusted.stderr
    st = json.loads(run_sylk("status", "--untrusted", "--format", "json", cache=_isolated_index, cwd=ws,
                             env=env).stdout)
    assert st["trusted"] is False and "git is not run" in st["trustMessage"]
    assert st["files"] == 3  # src/ too: the exclude was not read
    assert not git_marker.exists(), git_marker.read_text()
    # the same run trusted does call git (the marker is a working detector) and reads the file
    trusted = run_sylk("index", "--no-embed", cache=_isolated_index, cwd=ws, env=env)
    assert trusted.returncode == 0, trusted.stderr
    assert git_marker.exists()
    st = json.loads(run_sylk("status", "--format", "json", cache=_isolated_index, cwd=ws, env=env).stdout)
    assert st["trusted"] is True and "trustMessage" not in st and st["files"] == 2


async def test_mcp_untrusted_by_the_environment(tmp_path: Path, _isolated_index: Path):
    ws, env, hook_marker, git_marker = git_watched(tmp_path)
    (ws / ".sylk.toml").write_text('exclude = ["src/**"]\n', encoding="utf-8")
    # (the workspace file is not read: the model stays off by the user's own file)
    write_tree(Path(os.environ["XDG_CONFIG_HOME"]) / "sylk", {"config.toml": NO_EMBEDDING})
    async with mcp_session(ws, _isolated_index, cwd=ws, env={**env, "SYLK_TRUSTED": "0"}) as s:
        st = await mcp_wait_until(s, lambda st: st["state"] in ("ready", "embedding") and st.get("lastRun"),
                                  "the index run")
        assert st["trusted"] is False and "git is not run" in st["trustMessage"]
        assert any(f"untrusted workspace {ws}: .sylk.toml ignored, git off" in n for n in st.get("notes", []))
        found = await mcp_call(s, "search_symbol", query=PROBE)
        assert [h["name"] for h in found["symbols"]][:1] == [PROBE]
    assert not git_marker.exists() and not hook_marker.exists()


def test_settings_pushed_later_do_not_make_an_untrusted_workspace_trusted(tmp_path: Path, raw_lsp: Any):
    """A client without workspace/configuration pushes its settings in
    didChangeConfiguration, replacing those of initialize: the trust it declared at start
    stays (only a restart with ``trusted`` true trusts the workspace)."""
    ws = write_tree(tmp_path / "ws", {"src/app.py": "def probe_one():\n    pass\n\ndef probe_two():\n    pass\n",
                                      ".sylk.toml": 'exclude = ["src/**"]\n'})
    server = raw_lsp()
    server.initialize(ws, {"trusted": False, "embedding": {"enabled": False}})

    ids = itertools.count()

    def status() -> dict[str, Any]:
        return server.request(f"status-{next(ids)}", "sylk/status", {})["result"]

    def symbols(query: str) -> list[Any]:
        return server.request(f"symbols-{next(ids)}", "workspace/symbol", {"query": query})["result"]

    first = eventually_blocking(status, lambda s: s["ready"] and s.get("lastRun") is not None, "the first run")
    assert first["trusted"] is False
    assert len(symbols("probe")) == 2  # .sylk.toml's exclude is not applied
    server.frame({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration",
                  "params": {"settings": {"sylk": {"symbols": {"limit": 1}, "embedding": {"enabled": False}}}}})
    eventually_blocking(lambda: symbols("probe"), lambda found: len(found) == 1, "the pushed settings")
    again = eventually_blocking(status, lambda s: s["ready"], "the run after the change")
    assert again["trusted"] is False and again["folders"][0]["trusted"] is False

