"""Sylk deletes only what it created (issue 29): the index folder is the user's choice
(SYLK_INDEX_DIR, the LSP's initializationOptions ``indexDir``) and may name any folder.
A folder holding files without Sylk's stamp is refused with an error naming it, and
nothing in it is touched (no probe, no lock file); ``sylk clear``, ``--repair`` and a
schema rebuild remove only the names of Sylk's own layout, unlink links planted in it
instead of following them, and remove the folder itself only when that leaves it empty.
Every victim's files are compared byte for byte before and after."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import TIMEOUT, eventually, mcp_call, mcp_call_error, mcp_session, run_sylk, start_lsp, without_embedding, \
    write_tree
from lsprotocol import types

WAIT_S = TIMEOUT  # bounded waits on a server's word
REFUSED = "holds files Sylk did not create"
SYLK_NAMES = {"sylk-index.json", "sylk.lock", "manifest.sqlite3", "tantivy", "grams", "vectors", "symbols.bin",
              "embeddings.sqlite"}


def snapshot(folder: Path) -> dict[str, Any]:
    """Everything under ``folder`` (links not followed): path -> bytes, "dir" or the link's target."""
    out: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            key = p.relative_to(folder).as_posix()
            if p.is_symlink():
                out[key] = ("link", os.readlink(p))
            elif p.is_dir():
                out[key] = "dir"
            else:
                out[key] = p.read_bytes()
    return out


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A small workspace (embedding off: the tests are about the index folder)."""
    root = write_tree(tmp_path / "ws", {
        "app/retry.py": "class HttpRetryPolicy:\n    def backoff_delay(self, attempt):\n        return 2 ** attempt\n",
        "lib/util.py": "def flatten_rows(rows):\n    return [x for r in rows for x in r]\n",
    })
    return without_embedding(root)


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A folder of the user's: files, a subfolder, binary bytes, a SQLite database, and
    names Sylk's stores use (meta.json, vectors.faiss) that a store opened through a link
    would read, overwrite or delete."""
    root = write_tree(tmp_path / "victim", {
        "notes.txt": "my notes\n",
        "sub/deeper/plan.md": "# plan\n",
        "meta.json": "{\"mine\": true}\n",
        "vectors.faiss": "not a faiss index\n",
        "lockfile": "precious\n",
    })
    (root / "photo.jpg").write_bytes(bytes(range(256)) * 8)
    db = sqlite3.connect(root / "app.db")
    db.execute("CREATE TABLE users (name TEXT)")
    db.execute("INSERT INTO users VALUES ('ada')")
    db.commit()
    db.close()
    return root


def sylk(*args: str, cache: Path, cwd: Path, index_dir: str | Path, **env: str) -> Any:
    return run_sylk(*args, cache=cache, cwd=cwd, env={"SYLK_INDEX_DIR": str(index_dir), **env})


def assert_refused(r: Any, *names: Path) -> None:
    assert r.returncode != 0, r.stdout + r.stderr
    assert REFUSED in r.stderr or "not cleared" in r.stderr, r.stderr
    assert any(str(n) in r.stderr for n in names), r.stderr
    assert "Traceback" not in r.stderr, r.stderr


# --- the state of a folder -----------------------------------------------------------------------

def test_the_state_of_a_folder_is_a_value(tmp_path: Path):
    from sylk.store.layout import SCHEMA_VERSION, FolderState, folder_state

    def state(files: dict[str, str]) -> FolderState:
        folder = tmp_path / f"f{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        write_tree(folder, files)
        return folder_state(folder).state

    assert folder_state(tmp_path / "missing").state is FolderState.MISSING
    assert state({}) is FolderState.EMPTY
    # what a first open killed before the stamp leaves: still Sylk's to use
    assert state({"sylk.lock": "open 1\n", ".write-test.7": "", "sylk-index.tmp": ""}) is FolderState.EMPTY
    assert state({"notes.txt": "x"}) is FolderState.FOREIGN
    assert state({"manifest.sqlite3": "x"}) is FolderState.FOREIGN  # Sylk's names, but no stamp
    stamp = json.dumps({"schema": SCHEMA_VERSION})
    assert state({"sylk-index.json": stamp, "notes.txt": "x"}) is FolderState.CURRENT
    assert state({"sylk-index.json": json.dumps({"schema": 1})}) is FolderState.VERSION
    assert state({"sylk-index.json": "\x00garbage"}) is FolderState.VERSION
    linked = tmp_path / "linked"
    write_tree(linked, {"sylk-index.json": stamp})
    (linked / "vectors").symlink_to(tmp_path, target_is_directory=True)
    check = folder_state(linked)
    assert check.state is FolderState.LINKED and check.stale and "vectors" in (check.why or "")
    (tmp_path / "a-file").write_text("x")
    check = folder_state(tmp_path / "a-file")
    assert check.state is FolderState.NOT_A_FOLDER and check.refused
    user = write_tree(tmp_path / "user", {"notes.txt": "x", "sub/a.txt": "y"})
    foreign = folder_state(user)
    assert foreign.refused and foreign.why == (f"the index folder {user} holds files Sylk did not create "
                                               "(notes.txt, sub); choose an empty folder or remove indexDir")


# --- the CLI ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["folder", "home", "symlink"])
def test_a_folder_of_the_users_is_refused_and_untouched(kind: str, ws: Path, victim: Path, tmp_path: Path,
                                                         _isolated_index: Path):
    env: dict[str, str] = {}
    named = [victim]
    if kind == "folder":
        index_dir: str | Path = victim
    elif kind == "home":  # indexDir = "~" with a (fake) home of files
        env["HOME"] = str(victim)
        index_dir = "~"
    else:  # a link to the user's folder
        index_dir = tmp_path / "link-to-victim"
        index_dir.symlink_to(victim, target_is_directory=True)
        named.append(index_dir)
    before = snapshot(victim)
    r = sylk("index", cache=_isolated_index, cwd=ws, index_dir=index_dir, **env)
    assert_refused(r, *named)
    assert snapshot(victim) == before
    searched = sylk("symbols", "HttpRetryPolicy", cache=_isolated_index, cwd=ws, index_dir=index_dir, **env)
    assert searched.returncode != 0 and snapshot(victim) == before
    cleared = sylk("clear", cache=_isolated_index, cwd=ws, index_dir=index_dir, **env)
    assert_refused(cleared, *named)
    assert snapshot(victim) == before
    if kind == "symlink":
        assert index_dir.is_symlink()  # type: ignore[union-attr]
    if kind == "folder":  # sylk doctor says so too, and writes no probe there
        doctor = sylk("doctor", cache=_isolated_index, cwd=ws, index_dir=index_dir, **env)
        assert doctor.returncode == 1 and REFUSED in doctor.stdout, doctor.stdout + doctor.stderr
        assert snapshot(victim) == before


def test_the_root_folder_is_refused(ws: Path, _isolated_index: Path):
    from sylk.store.layout import FolderState, folder_state

    # the same check the CLI makes, asked first: an unguarded Sylk would empty "/"
    assert folder_state(Path("/")).state is FolderState.FOREIGN
    planted = [Path("/") / n for n in ("sylk.lock", "sylk-index.json", "sylk-index.tmp", ".write-test")]
    assert not any(p.exists() for p in planted)
    for command in ("index", "clear"):
        r = sylk(command, cache=_isolated_index, cwd=ws, index_dir="/")
        assert_refused(r, Path("/"))
        assert not any(p.exists() or p.is_symlink() for p in planted)
        assert not list(Path("/").glob(".write-test*"))


def test_an_empty_folder_is_used_and_clear_removes_it(ws: Path, tmp_path: Path, _isolated_index: Path):
    index_dir = tmp_path / "empty"
    index_dir.mkdir()
    r = sylk("index", cache=_isolated_index, cwd=ws, index_dir=index_dir)
    assert r.returncode == 0, r.stderr
    assert "rebuilding" not in r.stderr
    assert json.loads((index_dir / "sylk-index.json").read_text())["schema"]
    found = sylk("symbols", "HttpRetryPolicy", cache=_isolated_index, cwd=ws, index_dir=index_dir)
    assert found.returncode == 0 and "app/retry.py" in found.stdout, found.stderr
    cleared = sylk("clear", cache=_isolated_index, cwd=ws, index_dir=index_dir)
    assert cleared.returncode == 0 and cleared.stdout.startswith("removed"), cleared.stderr
    assert not index_dir.exists()


def plant(index_dir: Path, victim: Path, tmp_path: Path) -> dict[str, Any]:
    """Links named like Sylk's stores into the user's folders, and a file of the user's
    put into the index folder; returns the victims' snapshot."""
    import shutil

    other = write_tree(tmp_path / "victim2", {"keep.txt": "second victim\n", "vectors.json": "{}\n"})
    shutil.rmtree(index_dir / "tantivy")
    (index_dir / "tantivy").symlink_to(victim, target_is_directory=True)
    if (index_dir / "vectors").exists():
        shutil.rmtree(index_dir / "vectors")
    (index_dir / "vectors").symlink_to(other, target_is_directory=True)
    (index_dir / "sylk.lock").unlink()
    (index_dir / "sylk.lock").symlink_to(victim / "lockfile")
    (index_dir / "embeddings.sqlite").symlink_to(victim / "app.db")
    (index_dir / "my-notes.txt").write_text("the user's own file\n")
    return {"victim": snapshot(victim), "other": snapshot(other)}


@pytest.mark.parametrize("operation", ["clear", "repair", "schema"])
def test_links_planted_in_an_index_are_unlinked_never_followed(operation: str, ws: Path, victim: Path,
                                                               tmp_path: Path, _isolated_index: Path):
    index_dir = tmp_path / "index"
    r = sylk("index", cache=_isolated_index, cwd=ws, index_dir=index_dir)
    assert r.returncode == 0, r.stderr
    before = plant(index_dir, victim, tmp_path)
    if operation == "clear":
        r = sylk("clear", cache=_isolated_index, cwd=ws, index_dir=index_dir)
    elif operation == "repair":
        r = sylk("index", "--repair", cache=_isolated_index, cwd=ws, index_dir=index_dir)
    else:  # an index of an older schema is rebuilt
        (index_dir / "sylk-index.json").write_text(json.dumps({"schema": 1}))
        r = sylk("index", cache=_isolated_index, cwd=ws, index_dir=index_dir)
    assert r.returncode == 0, r.stderr
    assert {"victim": snapshot(victim), "other": snapshot(tmp_path / "victim2")} == before
    assert (index_dir / "my-notes.txt").read_text() == "the user's own file\n"  # never Sylk's to remove
    left = {p.name for p in index_dir.iterdir()}
    assert not any((index_dir / n).is_symlink() for n in SYLK_NAMES)
    if operation == "clear":
        assert left == {"my-notes.txt"}  # Sylk's names gone; the folder stays: it is not empty
    else:
        assert "rebuilding the index" in r.stderr, r.stderr
        found = sylk("symbols", "HttpRetryPolicy", cache=_isolated_index, cwd=ws, index_dir=index_dir)
        assert found.returncode == 0 and "app/retry.py" in found.stdout, found.stderr


def test_damaged_stores_set_aside_leave_folders_not_sylks_alone(ws: Path, tmp_path: Path, _isolated_index: Path):
    """A damaged index is moved to <folder>.corrupt-<time>, and older such folders are
    deleted: only those that are Sylk's."""
    index_dir = tmp_path / "index"
    lookalike = write_tree(tmp_path / "index.corrupt-photos", {"holiday.txt": "not Sylk's\n"})
    before = snapshot(lookalike)
    for _ in range(2):
        assert sylk("index", cache=_isolated_index, cwd=ws, index_dir=index_dir).returncode == 0
        (index_dir / "manifest.sqlite3").write_bytes(b"garbage" * 100)
        r = sylk("index", cache=_isolated_index, cwd=ws, index_dir=index_dir)
        assert r.returncode == 0 and "the damaged index was moved to" in r.stderr, r.stderr
    assert snapshot(lookalike) == before
    aside = [p for p in tmp_path.glob("index.corrupt-*") if p != lookalike]
    assert len(aside) == 1 and (aside[0] / "sylk-index.json").exists()


# --- the language server ------------------------------------------------------------------------

async def test_the_language_server_refuses_a_folder_of_the_users(ws: Path, victim: Path, _isolated_index: Path):
    before = snapshot(victim)
    client = await start_lsp(ws, _isolated_index, "visual_studio_code",
                             {"indexDir": str(victim), "embedding": {"enabled": False}}, cwd=ws)
    try:
        said = await eventually(lambda: _messages(client), lambda m: any(REFUSED in m.message for m in m),
                                "the server says why it does not index", timeout=WAIT_S)
        assert any(str(victim) in m.message and m.type == types.MessageType.Error for m in said)
        status = await eventually(lambda: client.protocol.send_request_async("sylk/status", {}),
                                  lambda st: REFUSED in (getattr(st, "lastRun", None) or ""), "status says why",
                                  timeout=WAIT_S)
        assert not status.ready and str(victim) in status.lastRun
        # the server keeps answering
        assert await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="HttpRetryPolicy")) == []
        cleared = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="sylk.clearIndex"))
        assert cleared["cleared"][0]["removed"] is None and REFUSED in cleared["cleared"][0]["error"]
        assert snapshot(victim) == before
    finally:
        await client.shutdown_session()
    assert snapshot(victim) == before


async def _messages(client: Any) -> list[types.ShowMessageParams]:
    return list(client.messages)


# --- MCP ----------------------------------------------------------------------------------------

async def test_mcp_refuses_a_folder_of_the_users(ws: Path, victim: Path, _isolated_index: Path):
    before = snapshot(victim)
    async with mcp_session(ws, _isolated_index, env={"SYLK_INDEX_DIR": str(victim)}, cwd=ws) as s:
        status = await eventually(lambda: mcp_call(s, "get_status"), lambda st: REFUSED in (st.get("error") or ""),
                                  "get_status says why", timeout=WAIT_S)
        assert str(victim) in status["error"]
        assert REFUSED in await mcp_call_error(s, "clear_index")
        assert snapshot(victim) == before
        await mcp_call(s, "get_status")  # still answering
    assert snapshot(victim) == before
