"""End to end: `sylk serve --stdio` as a subprocess, driven by pytest-lsp's client
with the recorded capabilities of real editors."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from conftest import (
    EMBEDDING,
    INDEXING,
    NO_EMBEDDING,
    TIMEOUT,
    eventually,
    hold_index,
    progress_ends,
    rel,
    start,
    start_lsp,
    symbols,
    uri,
    wait_for_progress_end,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

CLIENTS = ["visual-studio-code", "neovim"]


async def wait_until_ready(client: LanguageClient) -> dict:
    async def ready() -> dict:
        while True:
            st = await client.protocol.send_request_async("sylk/status", {})
            if st.ready:
                return st
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(ready(), TIMEOUT)


@pytest_asyncio.fixture(params=CLIENTS)
async def client(request: pytest.FixtureRequest, workspace: Path, _isolated_index: Path):
    options = None if request.node.get_closest_marker("semantic") else NO_EMBEDDING
    client = await start(workspace, _isolated_index, request.param, options)
    client.workspace_root = workspace  # type: ignore[attr-defined]
    yield client
    await client.shutdown_session()
    await client.stop()


async def test_initial_index_reports_progress_with_counts(client: LanguageClient):
    end = await wait_for_progress_end(client)
    reports = [v for vs in client.progress_reports.values() for v in vs]
    begin = reports[0]
    assert isinstance(begin, types.WorkDoneProgressBegin)
    assert begin.title == "Sylk: Indexing workspace"
    assert end.message is not None and "files" in end.message and "symbols" in end.message
    status = await wait_until_ready(client)
    # 16 files of the fixture are indexable; ignored_dir/ and node_modules/ are not.
    assert status.files == 16
    assert status.symbols > 100


async def test_workspace_symbol_camel_hump_finds_method(client: LanguageClient):
    await wait_for_progress_end(client)
    found = await symbols(client, "gubi")
    top = found[0]
    assert (top.name, top.kind, top.container_name) == ("get_user_by_id", types.SymbolKind.Method, "UserRepository")
    assert rel(client, top.location.uri) == "app/repository.py"
    text = (client.workspace_root / "app/repository.py").read_text().splitlines()  # type: ignore[attr-defined]
    r = top.location.range
    assert text[r.start.line][r.start.character:r.end.character] == "get_user_by_id"


@pytest.mark.parametrize(("query", "expected"), [
    pytest.param("HttpRetryPolicy", ("HttpRetryPolicy", types.SymbolKind.Class), id="exact"),
    pytest.param("httpretry", ("HttpRetryPolicy", types.SymbolKind.Class), id="prefix-case-insensitive"),
    pytest.param("hrp", ("HttpRetryPolicy", types.SymbolKind.Class), id="hump"),
    pytest.param("Translate", ("Translate", types.SymbolKind.Method), id="go-method"),
    pytest.param("SessionStore", ("SessionStore", types.SymbolKind.Interface), id="ts-interface"),
])
async def test_workspace_symbol_ranking(client: LanguageClient, query: str, expected: tuple):
    await wait_for_progress_end(client)
    found = await symbols(client, query)
    assert (found[0].name, found[0].kind) == expected


async def test_ignored_files_are_not_indexed(client: LanguageClient):
    """ignored_dir/ (.gitignore) and node_modules/ are on disk but not indexed: their
    symbols are not found, while the same files copied next to indexed code are."""
    await wait_for_progress_end(client)
    root: Path = client.workspace_root  # type: ignore[attr-defined]
    ignored = {"should_not_be_indexed": ("ignored_dir/secret.py", "app/secret.py"),
               "alsoNotIndexed": ("node_modules/pkg/index.js", "web/src/pkg_index.js")}
    for name, (path, _copy) in ignored.items():
        assert name in (root / path).read_text()
        assert await symbols(client, name) == []
    status = await client.protocol.send_request_async("sylk/status", {})
    assert status.files == 16  # the fixture's 18 files but these two
    # the same files, not ignored: found, and only there (the query would find them)
    for name, (path, copy) in ignored.items():
        (root / copy).write_text((root / path).read_text())
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri(root / copy))))
        found = await eventually(lambda name=name: symbols(client, name), bool, f"{name} in {copy}")
        assert [(s.name, rel(client, s.location.uri)) for s in found] == [(name, copy)]


async def test_utf16_columns_after_emoji(client: LanguageClient):
    await wait_for_progress_end(client)
    found = await symbols(client, "EMOJI_AFTER")
    assert found[0].name == "EMOJI_AFTER"
    # `GREETING = "héllo 😀"; ` is 23 UTF-16 code units (26 bytes, 22 code points).
    assert found[0].location.range.start == types.Position(line=2, character=23)
    assert found[0].location.range.end == types.Position(line=2, character=34)


async def test_document_symbol_hierarchy(client: LanguageClient):
    await wait_for_progress_end(client)
    doc_uri = uri(client.workspace_root / "app/http.py")  # type: ignore[attr-defined]
    result = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=doc_uri)))
    assert result is not None
    top = {s.name: s for s in result}  # type: ignore[union-attr]
    assert set(top) >= {"MAX_BACKOFF_SECONDS", "HttpRetryPolicy", "fetch_with_retries"}
    cls = top["HttpRetryPolicy"]
    assert cls.kind == types.SymbolKind.Class
    children = {c.name: c.kind for c in cls.children or []}
    assert children["should_retry"] == types.SymbolKind.Method
    assert children["backoff_delay"] == types.SymbolKind.Method
    assert children["__init__"] == types.SymbolKind.Method


async def test_document_symbol_of_unsaved_buffer(client: LanguageClient):
    await wait_for_progress_end(client)
    path = client.workspace_root / "app/scratch.py"  # type: ignore[attr-defined]
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri(path), language_id="python", version=1, text="class Draft:\n    def typed_a_second_ago(self): pass\n")))
    result = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri(path))))
    assert [(s.name, [c.name for c in s.children or []]) for s in result] == [("Draft", ["typed_a_second_ago"])]


async def test_did_save_reindexes_the_file(client: LanguageClient):
    await wait_for_progress_end(client)
    path = client.workspace_root / "app/http.py"  # type: ignore[attr-defined]
    path.write_text(path.read_text() + "\n\ndef freshly_saved_helper():\n    return 1\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(path))))

    async def appears() -> list[types.SymbolInformation]:
        while not (found := await symbols(client, "freshly_saved_helper")):
            await asyncio.sleep(0.02)
        return found

    found = await asyncio.wait_for(appears(), TIMEOUT)
    assert found[0].kind == types.SymbolKind.Function
    assert found[0].location.range.start.line == path.read_text().splitlines().index(
        "def freshly_saved_helper():")


async def test_second_start_is_incremental(workspace: Path, _isolated_index: Path):
    first = await start(workspace, _isolated_index, "visual-studio-code")
    await wait_for_progress_end(first)
    await first.shutdown_session()
    await first.stop()
    (workspace / "app" / "new_module.py").write_text("def added_while_stopped():\n    pass\n")
    (workspace / "ruby" / "lib" / "notifier.rb").unlink()
    second = await start(workspace, _isolated_index, "visual-studio-code")
    try:
        end = await wait_for_progress_end(second)
        assert end.message is not None
        assert "1 added, 0 changed, 1 deleted, 15 unchanged" in end.message
        assert [s.name for s in await symbols(second, "added_while_stopped")] == ["added_while_stopped"]
    finally:
        await second.shutdown_session()
        await second.stop()


async def test_invalid_settings_are_reported_and_defaults_used(workspace: Path, _isolated_index: Path):
    client = await start(workspace, _isolated_index, "visual-studio-code",
                         options={"maxFileSize": "huge", "symbols": {"limit": 2}, "colour": "blue", **NO_EMBEDDING})
    try:
        await wait_for_progress_end(client)
        texts = " ".join(m.message for m in client.messages)
        assert "maxFileSize" in texts and "colour" in texts
        # the valid part (symbols.limit) still applies, and the server keeps serving
        assert len(await symbols(client, "e")) == 2
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_did_change_configuration_applies_new_limit(workspace: Path, _isolated_index: Path):
    client = await start(workspace, _isolated_index, "visual-studio-code")
    try:
        await wait_for_progress_end(client)
        assert len(await symbols(client, "e")) > 3
        client.set_configuration({"symbols": {"limit": 3}}, section="sylk")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))

        async def limited() -> None:
            while len(await symbols(client, "e")) != 3:
                await asyncio.sleep(0.02)

        await asyncio.wait_for(limited(), TIMEOUT)
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_workspace_symbol_answers_during_the_first_index(tmp_path: Path, _isolated_index: Path):
    """A query sent while the initial index runs is answered at once (with what is
    indexed so far), not held until indexing ends. The run is held after its first file
    by the server's test hook, so the answers certainly come during it, whatever the
    machine's speed."""
    root = tmp_path / "big"
    for d in range(4):  # 120 files: parsed by worker processes, as a large first index is
        pkg = root / f"pkg{d}"
        pkg.mkdir(parents=True)
        for f in range(30):
            body = "\n\n".join(f"def func_{d}_{f}_{k}(x):\n    return x + {k}\n" for k in range(10))
            (pkg / f"mod{f}.py").write_text(body)
    hold, env = hold_index(tmp_path)
    client = await start_lsp(root, _isolated_index, "visual-studio-code", NO_EMBEDDING, env=env)
    client.workspace_root = root  # type: ignore[attr-defined]
    try:
        found = await eventually(lambda: symbols(client, "func"), bool, "an answer with the first file's functions")
        # the run is under way: its progress began and has not ended, the status says so
        titles = [r[0].title for r in client.progress_reports.values() if r and isinstance(r[0],
                                                                                          types.WorkDoneProgressBegin)]
        assert INDEXING in titles and progress_ends(client) == []
        st = await client.protocol.send_request_async("sylk/status", {})
        assert st.indexing is True and st.ready is False
        # what is indexed so far is served: the one file the run has done, all of its functions
        files = {rel(client, s.location.uri) for s in found}
        assert len(files) == 1 and len(found) == 10, files
        for _ in range(5):  # and every query meanwhile is answered, not held
            again = await asyncio.wait_for(symbols(client, "func"), TIMEOUT)
            assert {rel(client, s.location.uri) for s in again} == files
        assert progress_ends(client) == []
        hold.unlink()
        end = await wait_for_progress_end(client)
        assert "120 files" in (end.message or "")
        assert [s.name for s in await symbols(client, "func_3_29_9")] == ["func_3_29_9"]
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_sylk_search_lexical_over_stdio(client: LanguageClient):
    await wait_for_progress_end(client)
    result = await client.protocol.send_request_async("sylk/search", {
        "query": "lang:python get_user_by_id", "mode": "lexical", "limit": 3, "facets": True})
    hit = result.hits[0]
    assert (hit.path, hit.symbol, hit.kind, hit.containerName) == (
        "app/repository.py", "get_user_by_id", "method", "UserRepository")
    assert hit.uri == uri(client.workspace_root / "app/repository.py")  # type: ignore[attr-defined]
    lines = (client.workspace_root / "app/repository.py").read_text().splitlines()  # type: ignore[attr-defined]
    h = hit.highlights[0]
    assert lines[h.start.line][h.start.character:h.end.character] == "get_user_by_id"
    assert result.mode == "lexical" and result.index.files == 16
    assert [f.value for f in result.facets.language] == ["python"]


async def test_sylk_search_leaves_out_what_is_excluded_over_stdio(client: LanguageClient):
    await wait_for_progress_end(client)
    every = await client.protocol.send_request_async("sylk/search", {"query": "service", "mode": "lexical",
                                                                     "limit": 100})
    assert {h.language for h in every.hits} == {"java", "markdown"}
    for params, kept in (({"query": "service -lang:markdown"}, {"java"}),
                         ({"query": "service", "filters": {"exclude": {"paths": ["java/**"]}}}, {"markdown"})):
        result = await client.protocol.send_request_async("sylk/search", {**params, "mode": "lexical", "limit": 100})
        assert {h.language for h in result.hits} == kept, params
    lines = await client.protocol.send_request_async("sylk/search", {
        "query": "service", "mode": "exact", "caseSensitive": False, "limit": 100,
        "filters": {"exclude": {"paths": ["java/**"]}}})
    assert lines.hits and all(not h.path.startswith("java/") for h in lines.hits)
    # a word left out (every java chunk holds InvoiceService), and OR (this server embeds
    # nothing: the semantic side's are tests/test_query_tree.py's)
    for mode in ("lexical", "hybrid"):
        left = await client.protocol.send_request_async("sylk/search", {
            "query": "service -invoice", "mode": mode, "limit": 100, "minScore": 0})
        assert left.hits and {h.language for h in left.hits} == {"markdown"}, mode
        either = await client.protocol.send_request_async("sylk/search", {
            "query": "(invoice OR geometry) service", "mode": mode, "limit": 100, "minScore": 0})
        assert {h.path for h in either.hits} == {"java/com/acme/billing/InvoiceService.java", "README.md"}, mode


async def test_sylk_search_refuses_a_malformed_boolean_query_naming_it(client: LanguageClient):
    from pygls.exceptions import JsonRpcInvalidParams

    await wait_for_progress_end(client)
    with pytest.raises(JsonRpcInvalidParams, match="query: a '\\(' without its '\\)'"):
        await client.protocol.send_request_async("sylk/search", {"query": "(invoice OR geometry"})


async def test_sylk_search_explain_over_stdio(client: LanguageClient):
    await wait_for_progress_end(client)
    result = await client.protocol.send_request_async("sylk/search", {
        "query": "get_usr_by_id", "mode": "lexical", "limit": 1, "explain": True})
    hit = result.hits[0]
    assert hit.symbol == "get_user_by_id"  # one letter missing, found without asking for fuzzy
    assert hit.explain.lexicalRank == 1 and hit.explain.lexicalScore > 0 and hit.explain.semanticRank is None
    assert result.explain.style == "identifier" and result.explain.identifiers == ["get_usr_by_id"]
    plain = await client.protocol.send_request_async("sylk/search", {"query": "get_user_by_id", "mode": "lexical"})
    assert not hasattr(plain, "explain") and not hasattr(plain.hits[0], "explain")


async def test_sylk_search_rejects_bad_params_naming_the_field(client: LanguageClient):
    from pygls.exceptions import JsonRpcInvalidParams

    await wait_for_progress_end(client)
    with pytest.raises(JsonRpcInvalidParams, match="mode"):
        await client.protocol.send_request_async("sylk/search", {"query": "x", "mode": "psychic"})
    with pytest.raises(JsonRpcInvalidParams, match="filters.minLines"):
        await client.protocol.send_request_async("sylk/search", {"query": "x", "filters": {"minLines": "a"}})
    # an unknown language, type or kind lists the allowed values (it used to find nothing, quietly)
    with pytest.raises(JsonRpcInvalidParams, match="filters.languages: unknown language 'golang'; one of python"):
        await client.protocol.send_request_async("sylk/search", {"query": "x", "filters": {"languages": ["golang"]}})
    with pytest.raises(JsonRpcInvalidParams, match="filters.types: unknown type 'go'"):
        await client.protocol.send_request_async("sylk/search", {"query": "x", "filters": {"types": ["go"]}})
    with pytest.raises(JsonRpcInvalidParams, match="kind: unknown kind 'func'; one of class"):
        await client.protocol.send_request_async("sylk/search", {"query": "kind:func x"})
    # the server keeps serving
    ok = await client.protocol.send_request_async("sylk/search", {"query": "Point", "mode": "lexical"})
    assert ok.hits


async def test_sylk_search_as_a_command(client: LanguageClient):
    await wait_for_progress_end(client)
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="sylk.search", arguments=[{"query": "Translate", "mode": "lexical", "limit": 1}]))
    assert result["hits"][0]["symbol"] == "Translate"


@pytest.mark.semantic
async def test_semantic_search_after_background_embedding(client: LanguageClient):
    """Embedding runs after the lexical index with its own progress; then a query that
    shares no word with the code finds it by meaning, with the real packaged model."""
    await wait_for_progress_end(client)
    end = await wait_for_progress_end(client, title=EMBEDDING)
    assert end.message is not None and "chunks embedded" in end.message
    begin = next(vs[0] for vs in client.progress_reports.values() if vs and vs[0].title == EMBEDDING)
    assert begin.percentage == 0 and "chunks" in (begin.message or "")
    result = await client.protocol.send_request_async("sylk/search", {
        "query": "how far apart are two locations on a plane", "mode": "semantic", "limit": 3})
    assert (result.hits[0].symbol, result.hits[0].path) == ("Distance", "services/geo/point.go")
    assert result.hits[0].semanticRank == 1 and result.hits[0].lexicalRank is None
    assert result.index.ready is True and result.index.pending == 0
    hybrid = await client.protocol.send_request_async("sylk/search", {"query": "wait longer after each failed attempt"})
    top = [(h.path, h.symbol) for h in hybrid.hits[:3]]
    assert ("app/http.py", "backoff_delay") in top or ("app/http.py", "HttpRetryPolicy") in top, top


async def test_clear_index_command_rebuilds_every_folder(workspace: Path, _isolated_index: Path):
    """sylk.clearIndex (listed in the capabilities) deletes the index, says which folder it
    removed, and indexes again: a virtual document is gone, the files are back."""
    from pygls.exceptions import JsonRpcInvalidParams

    answers: list[Any] = []
    client = await start_lsp(workspace, _isolated_index, "visual-studio-code", NO_EMBEDDING, result=answers)
    try:
        assert "sylk.clearIndex" in answers[0].capabilities.execute_command_provider.commands
        await wait_for_progress_end(client)
        await client.protocol.send_request_async("sylk/indexDocument", {
            "id": "notes/clear", "text": "Quokka retention policy for the ledger.", "type": "note"})
        before = await client.protocol.send_request_async("sylk/search", {"query": "quokka", "mode": "lexical"})
        assert before.hits
        index_dir = Path((await wait_until_ready(client)).indexDir)
        result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="sylk.clearIndex"))
        assert result["cleared"] == [{"root": str(workspace.resolve()), "removed": str(index_dir), "error": None}]
        assert result["indexing"] is True
        await wait_for_progress_end(client, title="Sylk: Re-indexing workspace")
        st = await wait_until_ready(client)
        assert st.files == 16 and Path(st.indexDir).is_dir()
        after = await client.protocol.send_request_async("sylk/search", {"query": "quokka", "mode": "lexical"})
        assert after.hits == []
        assert await symbols(client, "get_user_by_id")
        # one folder by URI; a folder that is not open is refused
        one = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="sylk.clearIndex", arguments=[uri(workspace)]))
        assert one["cleared"][0]["root"] == str(workspace.resolve())
        with pytest.raises(JsonRpcInvalidParams, match="not a workspace folder"):
            await client.workspace_execute_command_async(types.ExecuteCommandParams(
                command="sylk.clearIndex", arguments=["/nowhere"]))
        await wait_for_progress_end(client, 2, title="Sylk: Re-indexing workspace")
        assert (await wait_until_ready(client)).files == 16
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_status_counts_skipped_files_by_reason_with_examples(binaries: Path, _isolated_index: Path):
    """issue 13 #11: sylk/status named every skipped file. Now: counts by reason, the
    first 20 files of each, and every file when asked (``skipped: "all"``)."""
    from pygls.exceptions import JsonRpcException

    client = await start(binaries, _isolated_index, "visual-studio-code")
    try:
        await wait_for_progress_end(client)
        st = await client.protocol.send_request_async("sylk/status", {})
        assert st.skipped.total == 301 and st.skipped.complete is False
        assert [(r.reason, r.count) for r in st.skipped.byReason] == [("binary", 300), ("too-large", 1)]
        binary, large = st.skipped.byReason
        assert list(binary.files) == [f"blobs/blob-{i:03d}.bin" for i in range(20)]
        assert list(large.files) == ["big.py"]
        assert st.folders[0].skipped.total == 301 and len(st.folders[0].skipped.byReason[0].files) == 20

        full = await client.protocol.send_request_async("sylk/status", {"skipped": "all"})
        assert full.skipped.complete is True and len(full.skipped.byReason[0].files) == 300
        by_command = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="sylk.status", arguments=[{"skipped": "all"}]))
        assert by_command["skipped"]["complete"] is True
        assert len(by_command["skipped"]["byReason"][0]["files"]) == 300
        assert (await client.protocol.send_request_async("sylk/status", None)).skipped.complete is False

        for bad in ({"skipped": "every"}, {"skipped": 5}, [1, 2]):
            with pytest.raises(JsonRpcException) as err:
                await client.protocol.send_request_async("sylk/status", bad)
            assert err.value.code == -32602
            assert ("skipped" if isinstance(bad, dict) else "params") in str(err.value)
    finally:
        await client.shutdown_session()
        await client.stop()
