"""Crash safety: `sylk index` killed with SIGKILL at chosen and at random moments, then
restarted; damaged index folders (truncation, garbage) for each store; a second
language server on the same workspace.

What a user must see: the index opens, says once what it repaired or rebuilt (never a
traceback), converges to the disk after `sylk index`, and holds no orphan or
duplicate document or vector. The stores are read back with SQLite, Tantivy and
FAISS directly (bench/kill_restart.py: read_stores, drift, convergence)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from sylk.store.layout import LOCK_FILE, META_FILE, VECTOR_DIRS
from sylk.store.manifest import merkle_root
from sylk.store.stores import READ_ONLY_REASON

_spec = importlib.util.spec_from_file_location(
    "kill_restart", Path(__file__).resolve().parents[1] / "bench" / "kill_restart.py")
assert _spec is not None and _spec.loader is not None
kill_restart = importlib.util.module_from_spec(_spec)
sys.modules["kill_restart"] = kill_restart
_spec.loader.exec_module(kill_restart)
Site = kill_restart.Site


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """The fixture workspace plus 12 generated modules, indexed and embedded once."""
    base = tmp_path_factory.mktemp("crash-golden")
    site = Site(base, 12, seed=11, cache=base / "cache")
    r = site.sylk("index", str(site.root))
    assert r.returncode == 0, r.stderr
    return site


@pytest.fixture
def site(golden: Site, tmp_path: Path) -> Site:
    return golden.copy_to(tmp_path)


def messages(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """What sylk tells the user on stderr (one line each), tracebacks included."""
    lines = proc.stderr.splitlines()
    assert not any(line.startswith("Traceback") for line in lines), proc.stderr
    return [line for line in lines if line.startswith("sylk:")]


def assert_converged(site: Site) -> None:
    """The index matches the disk exactly: every file at its hash, every marker found once
    in its file, no dead marker, the stores in agreement, verify clean."""
    assert not kill_restart.convergence(site)
    ws = site.open(writable=False)
    try:
        check = ws.verify()
    finally:
        ws.close()
    assert check.clean, (check.counts(), check.damage)


# --- kill -9 at chosen moments -------------------------------------------------------------

def run_driver(site: Site, point: str, nth: int, *args: str) -> bool:
    """`sylk index` killed at ``point``; True if it was (False: it ended without reaching
    it). Its parser workers must exit by themselves (run_and_kill raises otherwise)."""
    killed, _ran = kill_restart.run_and_kill(
        [sys.executable, "-c", kill_restart.DRIVER, point, str(nth), "index", str(site.root), *args],
        site.env(), None)
    return killed


@pytest.mark.parametrize(("point", "nth", "many"), [
    pytest.param("parsing", 2, False, id="parsing"),
    pytest.param("parsing", 20, True, id="parsing-in-the-worker-pool"),
    pytest.param("during-text-commit", 1, False, id="during-tantivy-commit"),
    pytest.param("after-text-commit", 1, False, id="between-tantivy-commit-and-manifest"),
    pytest.param("after-manifest-write", 1, False, id="after-manifest-write"),
    pytest.param("embedding", 1, False, id="embedding"),
    pytest.param("after-embedded-flags", 1, False, id="embedded-flags-not-committed"),
    # the first FAISS save is the quick pass's, the second the model's
    pytest.param("faiss-write", 1, False, id="during-faiss-save"),
    pytest.param("faiss-write", 2, False, id="during-faiss-save-of-the-models-vectors"),
    pytest.param("between-faiss-renames", 1, False, id="between-faiss-renames"),
    pytest.param("between-faiss-renames", 2, False, id="between-faiss-renames-of-the-models-vectors"),
])
def test_kill_at_a_crash_point_then_restart_converges(site: Site, point: str, nth: int, many: bool):
    if many:  # enough files for the parser worker pool
        for i in range(60):
            site._write(f"gen/bulk/mod{i}.py")
    change = site.mutate()
    assert run_driver(site, point, nth), f"{point} was not reached ({change})"
    left = kill_restart.drift(kill_restart.read_stores(site.index))
    leftovers = [p for d in VECTOR_DIRS for p in (site.index / d).glob(".*.tmp")]  # the model's and the quick pass's
    if point == "after-text-commit":  # the case the repair exists for
        assert left["orphan docs"] > 0, left
    if point == "faiss-write":
        assert leftovers

    note, after = kill_restart.restart(site)
    assert not after, f"restart left drift after a kill at {point}: {dict(after)}"
    assert not [p for d in VECTOR_DIRS for p in (site.index / d).glob(".*.tmp")]
    assert (site.index / LOCK_FILE).read_text() == "closed\n"
    if left["orphan docs"] or left["duplicate docs"]:
        assert note is not None and note.startswith("repaired the index after an unclean shutdown: deleted ")

    embeds = point in kill_restart.EMBED_POINTS
    final = site.sylk("index", str(site.root), *([] if embeds else ["--no-embed"]))
    assert final.returncode == 0, final.stderr
    assert messages(final) == []  # the restart said it all
    assert_converged(site)
    if embeds:
        counts = kill_restart.read_stores(site.index)["chunks"]
        assert all(counts.values()), "every chunk is embedded again"


# --- kill -9 at random moments ---------------------------------------------------------------

ROUNDS = 15


def test_kill_and_restart_loop(site: Site):
    """15 rounds: change files, run `sylk index` (embedding in two rounds of three), SIGKILL
    it after a random delay, restart and check the invariants; then one uninterrupted run
    must leave the index equal to the disk. The same loop runs 50 rounds in
    bench/kill_restart.py (from a cold index, converging after every round)."""
    lines: list[str] = []
    result = kill_restart.run(site, ROUNDS, seed=5, converge_each_round=False, delays=(0.4, 1.8), scale=1,
                              log=lines.append)
    report = "\n".join(lines)
    assert not result["failures"], report + "\n" + "\n".join(result["failures"])
    assert not result["final"]
    totals = result["totals"]
    assert totals["killed"] >= ROUNDS // 2, report  # the kills really interrupted work
    assert_converged(result["site"])


# --- damaged index folders -------------------------------------------------------------------


def _largest(folder: Path, pattern: str) -> Path:
    return max(folder.glob(pattern), key=lambda p: p.stat().st_size)


def _truncate(path: Path, fraction: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * fraction)])


def _garble(path: Path, start: float = 0.0, size: int | None = None) -> None:
    data = bytearray(path.read_bytes())
    at = int(len(data) * start)
    n = len(data) - at if size is None else size
    data[at:at + n] = random.Random(7).randbytes(n)
    path.write_bytes(bytes(data))


DAMAGE = [
    pytest.param(lambda ix: _truncate(ix / "manifest.sqlite3"),
                 "rebuilding the index (manifest.sqlite3 is damaged: database disk image is malformed",
                 id="manifest-truncated"),
    pytest.param(lambda ix: _garble(ix / "manifest.sqlite3"),
                 "rebuilding the index (manifest.sqlite3 is damaged: file is not a database", id="manifest-garbage"),
    pytest.param(lambda ix: _garble(ix / "tantivy" / "meta.json"),
                 "rebuilding the index (the text index is damaged: tantivy/meta.json:", id="tantivy-meta-garbage"),
    pytest.param(lambda ix: (ix / "tantivy" / "meta.json").unlink(),
                 "rebuilding the index (the text index is gone (tantivy/meta.json is missing)",
                 id="tantivy-meta-missing"),
    pytest.param(lambda ix: _truncate(_largest(ix / "tantivy", "*.store"), 0.9),
                 "no valid footer", id="tantivy-segment-truncated"),
    pytest.param(lambda ix: _garble(_largest(ix / "tantivy", "*.term"), 0.3, 64),
                 "checksum mismatch", id="tantivy-segment-garbage"),
    pytest.param(lambda ix: _garble(ix / META_FILE),
                 "rebuilding the index (unreadable sylk-index.json", id="stamp-garbage"),
    pytest.param(lambda ix: _truncate(ix / "vectors" / "vectors.faiss"),
                 "vectors.faiss is ", id="faiss-truncated"),
    pytest.param(lambda ix: _truncate(ix / "vectors" / "vectors.json"),
                 "vectors.json is unreadable", id="faiss-json-truncated"),
]


@pytest.mark.parametrize(("damage", "said"), DAMAGE)
def test_a_damaged_index_is_rebuilt_with_one_message(site: Site, damage, said: str):
    damage(site.index)
    vectors = "vectors" in said  # else the text side: no need for the model
    r = site.sylk("index", str(site.root), *([] if vectors else ["--no-embed"]))
    assert r.returncode == 0, r.stderr
    said_lines = messages(r)
    assert len(said_lines) == 1 and said in said_lines[0], r.stderr
    if vectors:
        assert said_lines[0].endswith("rebuilding the vectors")
    elif "sylk-index.json" in said:  # another schema or no stamp: the folder was emptied
        assert not list(site.index.parent.glob(f"{site.index.name}.corrupt-*"))
    else:  # the damaged stores were moved aside, one folder kept
        assert "; the damaged index was moved to " in said_lines[0]
        assert len(list(site.index.parent.glob(f"{site.index.name}.corrupt-*"))) == 1
    sym = site.sylk("symbols", "hrp", str(site.root))
    assert sym.returncode == 0 and messages(sym) == []
    kind, name, where = sym.stdout.split()[:3]
    assert (kind, name) == ("class", "HttpRetryPolicy") and where.startswith("app/http.py:")
    query = "how long to wait before trying again" if vectors else "backoff_delay"
    found = site.sylk("search", query, str(site.root), "--format", "json",
                      "--mode", "semantic" if vectors else "lexical")
    assert found.returncode == 0 and messages(found) == []
    result = json.loads(found.stdout)
    assert result["hits"][0]["path"] == "app/http.py"
    assert result["index"]["pending"] == (0 if vectors else result["index"]["chunks"])
    assert_converged(site)


def test_a_second_open_after_a_damaged_one_says_nothing(site: Site):
    _garble(site.index / "manifest.sqlite3")
    first = site.sylk("index", str(site.root), "--no-embed")
    assert first.returncode == 0 and len(messages(first)) == 1
    again = site.sylk("index", str(site.root), "--no-embed")
    assert again.returncode == 0 and messages(again) == []
    assert "0 added, 0 changed, 0 deleted" in again.stdout


def test_a_reader_reports_damage_in_one_line_and_changes_nothing(site: Site):
    _garble(site.index / "manifest.sqlite3")
    r = site.sylk("status", str(site.root))
    assert r.returncode == 1
    assert messages(r) == [f"sylk: error: the index in {site.index} is damaged (manifest.sqlite3 is damaged: "
                           "file is not a database); the next 'sylk index' rebuilds it"]
    assert not list(site.index.parent.glob(f"{site.index.name}.corrupt-*"))


# --- the language server ----------------------------------------------------------------------

TIMEOUT = 60.0
NO_EMBEDDING = {"embedding": {"enabled": False}}


async def start_server(site: Site) -> LanguageClient:
    root_uri = from_fs_path(str(site.root))
    config = ClientServerConfig(server_command=[sys.executable, "-m", "sylk.cli", "serve", "--stdio"],
                                server_env=site.env())
    client = await config.start()
    assert isinstance(client, LanguageClient)
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=root_uri,
        workspace_folders=[types.WorkspaceFolder(uri=root_uri, name="workspace")],
        initialization_options=NO_EMBEDDING))
    return client


async def ready_status(client: LanguageClient) -> Any:
    async def ready() -> Any:
        while True:
            st = await client.protocol.send_request_async("sylk/status", {})
            if st.ready:
                return st
            await asyncio.sleep(0.05)
    return await asyncio.wait_for(ready(), TIMEOUT)


async def symbol_names(client: LanguageClient, query: str) -> list[str]:
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    return [s.name for s in found or []]


def sylk_messages(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages]


async def test_a_second_server_serves_read_only_and_says_so(site: Site):
    first = await start_server(site)
    second = None
    try:
        assert not (await ready_status(first)).readOnly
        second = await start_server(site)
        st = await ready_status(second)
        assert st.readOnly is True
        disk = kill_restart.disk_hashes(site.root)
        assert st.merkleRoot == merkle_root(sorted(disk.items()))  # the same state as the disk
        assert sylk_messages(second) == [f"Sylk: {READ_ONLY_REASON}"]
        assert (await symbol_names(second, "HttpRetryPolicy"))[0] == "HttpRetryPolicy"
        assert sylk_messages(first) == []
    finally:
        if second is not None:
            await second.shutdown_session()
            await second.stop()
        await first.shutdown_session()
        await first.stop()
    assert (site.index / LOCK_FILE).read_text() == "closed\n"
    assert_converged(site)


@pytest.mark.parametrize(("damage", "said"), [
    pytest.param(lambda ix: _garble(ix / "manifest.sqlite3", 0.0, 4096),
                 "Sylk: rebuilding the index (manifest.sqlite3 is damaged: file is not a database", id="manifest"),
    pytest.param(lambda ix: _garble(_largest(ix / "tantivy", "*.term"), 0.3, 64),
                 "Sylk: rebuilding the index (the text index is damaged: tantivy/", id="tantivy-segment"),
])
async def test_the_server_rebuilds_a_damaged_index_with_one_message(site: Site, damage, said: str):
    damage(site.index)
    client = await start_server(site)
    try:
        st = await ready_status(client)
        said_lines = sylk_messages(client)
        assert len(said_lines) == 1 and said_lines[0].startswith(said), said_lines
        assert st.files == len(kill_restart.disk_hashes(site.root))
        assert (await symbol_names(client, "hrp"))[0] == "HttpRetryPolicy"
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_the_server_repairs_what_a_kill_left_with_one_message(site: Site):
    site.mutate()
    assert run_driver(site, "after-text-commit", 1, "--no-embed")
    left = kill_restart.drift(kill_restart.read_stores(site.index))
    assert left["orphan docs"] > 0
    client = await start_server(site)
    try:
        await ready_status(client)
        said_lines = sylk_messages(client)
        assert len(said_lines) == 1, said_lines
        assert said_lines[0].startswith(f"Sylk: repaired the index after an unclean shutdown: deleted "
                                        f"{left['orphan docs']} orphan text document")
    finally:
        await client.shutdown_session()
        await client.stop()
    assert_converged(site)
