"""End to end, issue 11 items 5 and 6: settings per folder (workspace/configuration with
a scopeUri) that take effect while running, a failing feature contained in a JSON-RPC
error, and optional features registered only when on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import eventually, start_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcMethodNotFound
from pygls.uris import from_fs_path
from pytest_lsp import LanguageClient

OFF = {"embedding": {"enabled": False}}
EMBEDDING = "Sylk: Embedding"


def field(obj: Any, name: str) -> Any:
    """A field of a custom answer (pygls hands them over as objects, or as dicts)."""
    return obj[name] if isinstance(obj, dict) else getattr(obj, name)


async def status(client: LanguageClient) -> Any:
    return await client.protocol.send_request_async("sylk/status", {})


async def ready(client: LanguageClient, watching: bool = True) -> Any:
    return await eventually(lambda: status(client), lambda st: field(st, "ready") and all(
        field(field(f, "watch"), "active") == watching for f in field(st, "folders")), "every folder indexed")


async def names(client: LanguageClient, query: str) -> list[str]:
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    return [s.name for s in found or []]


@asynccontextmanager
async def serving(root: Path, cache: Path, spec: str, options: Any, **kw: Any) -> AsyncIterator[LanguageClient]:
    """A server for ``root`` (see conftest.start_lsp), shut down at the end."""
    client = await start_lsp(root, cache, spec, options, **kw)
    try:
        yield client
    finally:
        await client.shutdown_session()
        await client.stop()


def change_settings(client: LanguageClient, settings: dict[str, Any]) -> None:
    """The user changes the settings (every folder): the client says so; the server asks."""
    client.set_configuration(settings, section="sylk")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))


async def test_each_folder_gets_its_own_settings(tmp_path: Path, _isolated_index: Path):
    first, second = tmp_path / "first", tmp_path / "second"
    for root, name in ((first, "generated_in_first"), (second, "generated_in_second")):
        (root / "gen").mkdir(parents=True)
        (root / "gen/made.py").write_text(f"def {name}():\n    pass\n")
        (root / "main.py").write_text(f"def main_of_{root.name}():\n    pass\n")
    # the client answers per scope: only the first folder leaves gen/ out
    async with serving(first, _isolated_index, "visual-studio-code", OFF, folders=[first, second],
                       configuration={first: {"exclude": ["gen/"]}, second: {"exclude": []}}) as client:
        await ready(client)
        assert await names(client, "main_of_first") == ["main_of_first"]
        assert await names(client, "generated_in_second") == ["generated_in_second"]
        assert await names(client, "generated_in_first") == []
        # changed while running: the first folder takes gen/ back, the second leaves it out
        client.set_configuration({"exclude": []}, section="sylk", scope_uri=from_fs_path(str(first)))
        client.set_configuration({"exclude": ["gen/"]}, section="sylk", scope_uri=from_fs_path(str(second)))
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        await eventually(lambda: names(client, "generated_in_first"), lambda n: n == ["generated_in_first"],
                         "the first folder's gen/ indexed after the change")
        await eventually(lambda: names(client, "generated_in_second"), lambda n: n == [],
                         "the second folder's gen/ dropped after the change")


async def test_invalid_scoped_setting_is_named_once_and_the_rest_applies(workspace: Path, _isolated_index: Path):
    async with serving(workspace, _isolated_index, "visual-studio-code", OFF,
                       configuration={workspace: {"symbols": {"limit": 2}, "maxFileSize": -1}}) as client:
        await ready(client)
        warnings = [m.message for m in client.messages if "invalid settings" in m.message]
        assert len(warnings) == 1 and "maxFileSize" in warnings[0]
        assert len(await names(client, "e")) == 2
        assert field(await status(client), "files") == 16  # the default maxFileSize


@pytest.mark.semantic
async def test_embedding_turned_on_and_off_while_running(workspace: Path, _isolated_index: Path):
    query = {"query": "how far apart are two locations on a plane", "mode": "semantic", "limit": 3}
    async with serving(workspace, _isolated_index, "visual-studio-code", OFF) as client:
        await ready(client)
        off = await client.protocol.send_request_async("sylk/search", query)
        assert "disabled" in field(off, "message")
        assert all(field(h, "semanticRank") is None for h in field(off, "hits"))
        change_settings(client, {"embedding": {"enabled": True}})

        def embedded(reports: Any) -> bool:
            return any(vs and isinstance(vs[0], types.WorkDoneProgressBegin) and vs[0].title == EMBEDDING
                       and isinstance(vs[-1], types.WorkDoneProgressEnd) for vs in reports)

        async def progress() -> Any:
            return list(client.progress_reports.values())
        await eventually(progress, embedded, "the embedding pass after turning embedding on")
        on = await client.protocol.send_request_async("sylk/search", query)
        top = field(on, "hits")[0]
        assert (field(top, "symbol"), field(top, "path")) == ("Distance", "services/geo/point.go")
        assert field(top, "semanticRank") == 1
        change_settings(client, {"embedding": {"enabled": False}})
        again = await eventually(lambda: client.protocol.send_request_async("sylk/search", query),
                                 lambda r: "disabled" in (getattr(r, "message", None) or ""),
                                 "semantic search off again")
        assert all(field(h, "semanticRank") is None for h in field(again, "hits"))


async def test_watch_turned_off_and_on_while_running(workspace: Path, _isolated_index: Path):
    async with serving(workspace, _isolated_index, "visual-studio-code", OFF) as client:
        await ready(client)
        change_settings(client, {"watch": False})
        await ready(client, watching=False)
        (workspace / "app/unwatched.py").write_text("def written_while_not_watching():\n    pass\n")
        change_settings(client, {"watch": True})
        await ready(client, watching=True)
        (workspace / "app/watched.py").write_text("def written_while_watching():\n    pass\n")
        await eventually(lambda: names(client, "written_while_watching"), lambda n: n == ["written_while_watching"],
                         "the change made while watching")
        assert await names(client, "written_while_not_watching") == []


async def test_a_failing_feature_answers_an_error_and_the_server_stays_up(workspace: Path, _isolated_index: Path):
    async with serving(workspace, _isolated_index, "neovim", OFF) as client:
        await ready(client)
        # a file name with a NUL byte: deserializes (a string), then fails opening the file
        bad = from_fs_path(str(workspace / "app")) + "/bad%00name.py"
        with pytest.raises(JsonRpcInternalError, match=r"Error in 'symbols\.textDocument/documentSymbol'") as err:
            await client.text_document_document_symbol_async(
                types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=bad)))
        assert err.value.code == -32603 and "\n" not in err.value.message
        assert await names(client, "HttpRetryPolicy") == ["HttpRetryPolicy"]


@pytest.mark.parametrize("enabled", [False, True], ids=["embedding-off", "embedding-on"])
async def test_features_turned_off_are_not_registered(workspace: Path, _isolated_index: Path, enabled: bool,
                                                      tmp_path: Path):
    """sylk/similar is advertised and served only with embedding on (here with a model that
    cannot load: it answers with the chunk asked about and why nothing is similar, and
    the user is told the model is missing); off, the method does not exist."""
    options = {"embedding": {"enabled": True, "modelPath": str(tmp_path / "no-model")}} if enabled else OFF
    result: list[types.InitializeResult] = []
    async with serving(workspace, _isolated_index, "visual-studio-code", options, result=result) as client:
        requests = field(field(result[0].capabilities.experimental, "sylk"), "requests")
        assert "sylk/search" in requests and "sylk/status" in requests
        assert ("sylk/similar" in requests) is enabled
        await ready(client)
        params = {"uri": from_fs_path(str(workspace / "app/http.py")), "position": {"line": 0, "character": 0}}
        if enabled:
            # the model was tried and could not load: the status and a message say so, and nothing embeds
            st = await eventually(lambda: status(client), lambda st: field(field(st, "semantic"), "state") != "loading",
                                  "the model load tried")
            semantic = field(st, "semantic")
            assert field(semantic, "state") == "unavailable" and "no-model" in field(semantic, "message")
            assert field(st, "embedding") is False and field(st, "embedded") == 0
            assert any("embedding.modelPath" in m.message and "no-model" in m.message for m in client.messages)
            answer = await client.protocol.send_request_async("sylk/similar", params)
            chunk = field(answer, "chunk")
            assert chunk is not None, answer  # the chunk at the position asked about
            assert (field(chunk, "path"), field(field(field(chunk, "range"), "start"), "line")) == ("app/http.py", 0)
            assert field(answer, "similar") == [] and field(answer, "message") == "semantic search is off"
        else:
            with pytest.raises(JsonRpcMethodNotFound):
                await client.protocol.send_request_async("sylk/similar", params)
            assert field(field(await status(client), "semantic"), "state") == "off"
