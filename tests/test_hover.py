"""Hover (definitions and related code) and sylk/similar: the engine with the real
packaged model, and end to end over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EMBEDDING, NO_EMBEDDING, eventually, start, uri, wait_for_progress_end
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from sylk.config import Settings
from sylk.engine.workspace import Workspace
from sylk.search import related


@pytest.mark.parametrize(("line", "col", "want"), [
    ("    policy = policy or HttpRetryPolicy()", 26, "HttpRetryPolicy"),
    ("    policy = policy or HttpRetryPolicy()", 38, "HttpRetryPolicy"),  # just after it
    ("x = 😀😀 + value_of", 11, "value_of"),  # two emoji: 4 UTF-16 units, 2 characters
    ("    ", 2, None),
])
def test_identifier_at_a_utf16_column(line: str, col: int, want: str | None):
    assert related.identifier_at(line, col) == want


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory):
    import shutil

    from conftest import WORKSPACE

    root = tmp_path_factory.mktemp("hover") / "workspace"
    shutil.copytree(WORKSPACE, root, symlinks=True)
    ws = Workspace(root, Settings(index_dir=str(root.parent / "idx")))
    ws.index()
    ws.load_semantic()
    ws.embed_pending()
    yield ws
    ws.close()


def test_related_code_excludes_itself_and_what_encloses_it(embedded: Workspace):
    defs = related.definitions(embedded, "backoff_delay")
    assert [(d.path, d.symbol.container) for d in defs] == [("app/http.py", "HttpRetryPolicy")]
    chunk = related.chunk_of(embedded, "app/http.py", defs[0].symbol.range[0], "backoff_delay")
    assert chunk is not None and chunk.symbol == "backoff_delay"
    near = related.similar(embedded, chunk, 5)
    assert near is not None and 1 <= len(near) <= 5
    assert all(r.chunk.id != chunk.id for r in near)
    # the class chunk holding the method is not "related code" of it
    assert not any(r.chunk.path == "app/http.py" and r.chunk.start_line <= chunk.start_line <= r.chunk.end_line
                   for r in near)
    # neighbours from its own file are capped: related code is mostly found elsewhere
    assert sum(r.chunk.path == "app/http.py" for r in near) <= related.SAME_FILE_MAX
    assert any(r.chunk.path != "app/http.py" for r in near)
    scores = [r.score for r in near]
    assert scores == sorted(scores, reverse=True)


def test_no_related_code_before_the_chunk_is_embedded(workspace: Path, tmp_path: Path):
    ws = Workspace(workspace, Settings(index_dir=str(tmp_path / "idx")))
    ws.index()
    ws.load_semantic()
    chunk = related.chunk_of(ws, "app/http.py", 8, "HttpRetryPolicy")
    assert chunk is not None and related.similar(ws, chunk) is None
    ws.close()


async def hover_at(client: LanguageClient, path: Path, line: int, character: int) -> types.Hover | None:
    return await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri(path)), position=types.Position(line, character)))


async def test_hover_shows_the_definition_and_related_code(workspace: Path, _isolated_index: Path):
    client = await start(workspace, _isolated_index, "visual-studio-code", None)
    try:
        await wait_for_progress_end(client)
        await wait_for_progress_end(client, title=EMBEDDING)
        # on the use of HttpRetryPolicy in fetch_with_retries (line 30, 1-based)
        h = await hover_at(client, workspace / "app/http.py", 29, 27)
        assert h is not None and isinstance(h.contents, types.MarkupContent)
        text = h.contents.value
        assert text.startswith("```python\nclass HttpRetryPolicy")
        assert "Decides whether and when a failed HTTP request is retried." in text
        assert f"]({uri(workspace / 'app/http.py')}#L9)" in text
        related_part = text.split("**Related code**", 1)[1]
        links = [ln for ln in related_part.splitlines() if ln.startswith("- ")]
        assert 1 <= len(links) <= 5 and all("](file://" in ln and "#L" in ln for ln in links)
        # sylk/similar on the same definition
        sim = await client.protocol.send_request_async("sylk/similar", {
            "uri": uri(workspace / "app/http.py"), "position": {"line": 24, "character": 8}, "limit": 3})
        assert sim.chunk.symbol == "backoff_delay"
        assert 1 <= len(sim.similar) <= 3 and all(s.uri.startswith("file://") for s in sim.similar)
        assert sim.similar[0].score >= sim.similar[-1].score
        with pytest.raises(JsonRpcException, match="position"):
            await client.protocol.send_request_async("sylk/similar", {"uri": uri(workspace / "app/http.py")})
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_hover_without_embeddings_still_shows_definitions(workspace: Path, _isolated_index: Path):
    client = await start(workspace, _isolated_index, "neovim", NO_EMBEDDING)
    try:
        await wait_for_progress_end(client)
        h = await hover_at(client, workspace / "app/http.py", 29, 27)
        assert h is not None
        text = h.contents.value  # type: ignore[union-attr]
        assert "class HttpRetryPolicy" in text and "Related code: semantic search is off" in text
        assert await hover_at(client, workspace / "app/http.py", 1, 0) is None  # a blank line
        assert await hover_at(client, workspace / "app/http.py", 2, 8) is None  # `random`: nothing defines it
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_related_code_links_open_virtual_documents(workspace: Path, _isolated_index: Path):
    """A note that repeats a class's code is related code of it: the hover links to the
    note's sylk: URI (which sylk/documentText opens), never to a file named after it."""
    client = await start(workspace, _isolated_index, "visual-studio-code", None)
    try:
        await wait_for_progress_end(client)
        await wait_for_progress_end(client, title=EMBEDDING)
        code = (workspace / "app/http.py").read_text().split("\n")[8:27]
        await client.protocol.send_request_async("sylk/indexDocument", {
            "id": "chat/7", "type": "prompt", "text": "\n".join(code)})
        await eventually(lambda: client.protocol.send_request_async("sylk/status", {}),
                         lambda st: st.pending == 0 and not st.embedding, "the note's vectors")
        h = await hover_at(client, workspace / "app/http.py", 29, 27)
        assert h is not None and isinstance(h.contents, types.MarkupContent)
        related_part = h.contents.value.split("**Related code**", 1)[1]
        links = [ln for ln in related_part.splitlines() if ln.startswith("- ")]
        note = [ln for ln in links if "sylk:/chat/7" in ln]
        assert note and "](sylk://document/chat/7#L" in note[0], links
        assert "sylk%3A" not in h.contents.value
        opened = await client.protocol.send_request_async("sylk/documentText", {"uri": "sylk://document/chat/7"})
        assert opened.text.split("\n")[0] == code[0]
        # sylk/similar names it by the same URI
        sim = await client.protocol.send_request_async("sylk/similar", {
            "uri": uri(workspace / "app/http.py"), "position": {"line": 8, "character": 6}, "limit": 5})
        assert "sylk://document/chat/7" in [s.uri for s in sim.similar]
    finally:
        await client.shutdown_session()
        await client.stop()
