"""End to end over stdio: the index follows the disk (the watcher) and the editor
(saves, unsaved buffers), and a restarted server catches up with what changed while
it was stopped. Every wait is on a server signal (sylk/status, progress), never a sleep."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import (TIMEOUT, _get, eventually, rel, start, status, symbols, uri, wait_applied,
                      wait_for_progress_end)
from lsprotocol import types
from pytest_lsp import LanguageClient


async def wait_watching(client: LanguageClient) -> int:
    """Wait until the watcher is in place; returns the count of change batches applied."""
    async def watching() -> int:
        while True:
            w = _get(await status(client), "watch")
            if _get(w, "active"):
                return _get(w, "changesApplied")
            await asyncio.sleep(0.02)
    return await asyncio.wait_for(watching(), TIMEOUT)


async def names(client: LanguageClient, query: str) -> dict[str, str]:
    return {s.name: rel(client, s.location.uri) for s in await symbols(client, query)}


@pytest.fixture
async def served(workspace: Path, _isolated_index: Path):
    client = await start(workspace, _isolated_index, "visual-studio-code")
    client.workspace_root = workspace  # type: ignore[attr-defined]
    await wait_for_progress_end(client)
    yield client
    await client.shutdown_session()
    await client.stop()


async def test_files_created_renamed_and_deleted_on_disk_are_followed(served: LanguageClient, workspace: Path):
    n = await wait_watching(served)
    (workspace / "app/generated.py").write_text("def made_by_a_generator():\n    pass\n")
    n = await wait_applied(served, n)
    assert (await names(served, "made_by_a_generator")) == {"made_by_a_generator": "app/generated.py"}

    (workspace / "app/generated.py").rename(workspace / "app/renamed.py")
    n = await wait_applied(served, n)
    assert (await names(served, "made_by_a_generator")) == {"made_by_a_generator": "app/renamed.py"}

    (workspace / "services/geo").rename(workspace / "services/geometry")  # a folder: one event for it
    n = await wait_applied(served, n)
    found = await symbols(served, "Point")
    assert found and {rel(served, s.location.uri) for s in found} == {"services/geometry/point.go"}

    shutil.rmtree(workspace / "app")
    n = await wait_applied(served, n)
    assert await names(served, "made_by_a_generator") == {}
    assert await names(served, "HttpRetryPolicy") == {}


async def test_ignore_file_changes_take_effect(served: LanguageClient, workspace: Path):
    n = await wait_watching(served)
    assert "Notifier" in await names(served, "Notifier")
    gi = workspace / ".gitignore"
    gi.write_text(gi.read_text() + "ruby/\n")
    n = await wait_applied(served, n)
    assert "Notifier" not in await names(served, "Notifier")
    # files the watcher sees in an ignored folder stay out
    (workspace / "ruby/lib/extra.rb").write_text("class StillIgnored\nend\n")
    (workspace / "app/visible.py").write_text("def visible_one():\n    pass\n")
    n = await wait_applied(served, n)
    assert await names(served, "visible_one") == {"visible_one": "app/visible.py"}
    assert await names(served, "StillIgnored") == {}


async def test_a_burst_of_changes_is_indexed_in_few_passes_with_progress(served: LanguageClient, workspace: Path):
    """300 files written at once (a branch switch, a code generator) are indexed in a few
    coalesced passes, and the editor shows an "Indexing changes" progress that ends with
    what was added. The burst is made whole on the server's side: the server is stopped
    (SIGSTOP) while the files are written into a folder it already watches, so the kernel
    queues every event and the watcher reads them all at once when it goes on; how fast
    this machine writes 300 files decides nothing."""
    n = await wait_watching(served)
    folder = workspace / "gen"
    folder.mkdir()
    # the folder's own pass: the watcher watches inside it from then on (files written
    # into a folder before its watch is in place are seen only as the folder's event)
    n = await wait_applied(served, n)
    before = n
    server = served._server  # the `sylk serve --stdio` process this test started
    assert server is not None and server.returncode is None
    os.kill(server.pid, signal.SIGSTOP)
    try:
        for i in range(300):
            (folder / f"mod_{i}.py").write_text(f"def generated_function_{i}():\n    return {i}\n")
    finally:
        os.kill(server.pid, signal.SIGCONT)

    async def all_there() -> int:
        nonlocal n
        while True:
            n = await wait_applied(served, n)
            found = await symbols(served, "generated_function_")
            if len(found) == 100:  # the symbol limit
                files = {s.name for s in await symbols(served, "generated_function_299")}
                if "generated_function_299" in files:
                    return n
    applied = await asyncio.wait_for(all_there(), TIMEOUT)
    passes = applied - before
    assert 1 <= passes <= 5, f"300 files should arrive in a few coalesced batches, not {passes} passes"
    # Each file is added by exactly one pass, so one pass added at least 300 / passes files,
    # more than PROGRESS_MIN_CHANGES: that pass showed a progress. Its end goes out after
    # the pass is counted in sylk/status, so it is waited for, not looked for at once.
    await eventually(lambda: _added_counts(served), lambda counts: max(counts, default=0) >= 300 // passes,
                     "an 'Indexing changes' progress that ends saying what it added")


async def _added_counts(client: LanguageClient) -> list[int]:
    """The "N added" of every "Sylk: Indexing changes" progress that ended (each end says
    what its pass did: "... 1 added, 0 changed, 0 deleted ...")."""
    counts = []
    for end in _ends(client, "Sylk: Indexing changes"):
        m = re.search(r"(\d+) added, \d+ changed, \d+ deleted", end.message or "")
        assert m, f"an 'Indexing changes' end that does not say what its pass did: {end.message!r}"
        counts.append(int(m.group(1)))
    return counts


def _ends(client: LanguageClient, title: str) -> list[types.WorkDoneProgressEnd]:
    out = []
    for reports in list(client.progress_reports.values()):
        if reports and isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].title == title:
            out.extend(v for v in reports if isinstance(v, types.WorkDoneProgressEnd))
    return out


@pytest.mark.parametrize("with_git", [False, True], ids=["no-git", "git"])
async def test_restart_catches_up_with_changes_made_while_stopped(workspace: Path, _isolated_index: Path,
                                                                  with_git: bool):
    if with_git:
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
            subprocess.run(["git", "-C", str(workspace), "-c", "user.email=t@t", "-c", "user.name=t", *args],
                           check=True, capture_output=True)
    client = await start(workspace, _isolated_index, "neovim", {"embedding": {"enabled": False}, "watch": False})
    client.workspace_root = workspace  # type: ignore[attr-defined]
    await wait_for_progress_end(client)
    await client.shutdown_session()
    await client.stop()
    (workspace / "app/http.py").write_text("class ChangedWhileStopped:\n    pass\n")
    (workspace / "app/offline.py").write_text("def added_while_stopped():\n    pass\n")
    (workspace / "web/src/cart.js").unlink()
    client = await start(workspace, _isolated_index, "neovim", {"embedding": {"enabled": False}, "watch": False})
    client.workspace_root = workspace  # type: ignore[attr-defined]
    try:
        end = await wait_for_progress_end(client)
        assert "1 added, 1 changed, 1 deleted" in (end.message or "")
        assert await names(client, "ChangedWhileStopped") == {"ChangedWhileStopped": "app/http.py"}
        assert await names(client, "added_while_stopped") == {"added_while_stopped": "app/offline.py"}
        assert await names(client, "HttpRetryPolicy") == {}
        assert all(rel(client, s.location.uri) != "web/src/cart.js" for s in await symbols(client, "cart"))
    finally:
        await client.shutdown_session()
        await client.stop()


async def wait_symbol(client: LanguageClient, name: str, present: bool = True) -> dict[str, str]:
    """Poll workspace/symbol until ``name`` is (or is no longer) found: the answer is the signal."""
    async def poll() -> dict[str, str]:
        while True:
            found = await names(client, name)
            if (name in found) == present:
                return found
            await asyncio.sleep(0.02)
    return await asyncio.wait_for(poll(), TIMEOUT)


async def test_symbols_of_unsaved_buffers_are_served(served: LanguageClient, workspace: Path):
    path = workspace / "app/repository.py"
    doc = types.TextDocumentIdentifier(uri=uri(path))
    text = path.read_text()
    served.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=doc.uri, language_id="python", version=1, text=text)))
    end = len(text.splitlines())
    served.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=doc.uri, version=2),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(end, 0), end=types.Position(end, 0)),
            text="\n\ndef typed_a_second_ago(x):\n    return x\n")]))
    found = await wait_symbol(served, "typed_a_second_ago")
    assert found == {"typed_a_second_ago": "app/repository.py"}
    assert "get_user_by_id" in await names(served, "get_user_by_id")  # the rest of the file stays
    # closing without saving: back to what the disk holds
    served.text_document_did_close(types.DidCloseTextDocumentParams(text_document=doc))
    await wait_symbol(served, "typed_a_second_ago", present=False)
    assert "get_user_by_id" in await names(served, "get_user_by_id")


async def test_a_saved_buffer_stays_found_through_the_reindex(served: LanguageClient, workspace: Path):
    path = workspace / "app/http.py"
    doc_uri = uri(path)
    served.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=doc_uri, language_id="python", version=1, text=path.read_text())))
    new_text = "def saved_function():\n    pass\n"
    served.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=doc_uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_text)]))
    await wait_symbol(served, "saved_function")
    path.write_text(new_text)
    served.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(
        uri=doc_uri)))
    await wait_symbol(served, "HttpRetryPolicy", present=False)
    assert await names(served, "saved_function") == {"saved_function": "app/http.py"}
    served.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=doc_uri)))
    st = await status(served)
    assert await names(served, "saved_function") == {"saved_function": "app/http.py"}
    assert _get(st, "ready")


async def test_embedding_turned_off_is_logged_not_popped_up(served: LanguageClient):
    async def logged() -> None:
        while not any("disabled" in m.message for m in served.log_messages):
            await asyncio.sleep(0.02)
    await asyncio.wait_for(logged(), TIMEOUT)
    assert not any("disabled" in m.message for m in served.messages)
    assert _get(_get(await status(served), "semantic"), "state") == "off"


async def test_a_read_only_second_server_follows_the_writer(served: LanguageClient, workspace: Path,
                                                            _isolated_index: Path):
    await wait_watching(served)
    reader = await start(workspace, _isolated_index, "neovim")
    reader.workspace_root = workspace  # type: ignore[attr-defined]
    try:

        async def ready() -> Any:
            while True:
                s = await status(reader)
                if _get(s, "ready"):
                    return s
                await asyncio.sleep(0.02)
        st = await asyncio.wait_for(ready(), TIMEOUT)
        assert _get(st, "readOnly") is True
        (workspace / "app/written_later.py").write_text("def found_by_the_reader_too():\n    pass\n")
        (workspace / "ruby/lib/notifier.rb").unlink()
        # the writer's watcher indexes the changes; the reader picks up the writer's run
        assert await wait_symbol(reader, "found_by_the_reader_too") == {
            "found_by_the_reader_too": "app/written_later.py"}
        await wait_symbol(reader, "Notifier", present=False)
        hits = await reader.protocol.send_request_async("sylk/search", {
            "query": "found_by_the_reader_too", "mode": "lexical"})
        assert hits.hits and hits.hits[0].path == "app/written_later.py"
    finally:
        await reader.shutdown_session()
        await reader.stop()
