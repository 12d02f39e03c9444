"""Virtual documents (sylk/indexDocument, sylk/removeDocument, sylk add) and user tags."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException
from sylk.config import Settings
from sylk.engine import documents
from sylk.engine.workspace import Workspace
from sylk.search.query import request_from_params
from test_lsp import start, wait_for_progress_end

NOTE = ("We cap retries at five attempts because the upstream rate limiter bans clients that retry "
        "more often.\n\n## Follow-up\n\nAsk the platform team for a higher quota.\n")


def lexical(ws: Workspace, query: str, **filters) -> list:
    return ws.search(request_from_params({"query": query, "mode": "lexical", "limit": 50,
                                          "filters": filters})).hits


@pytest.fixture
def ws(workspace: Path):
    w = Workspace(workspace, Settings())
    w.index()
    yield w
    w.close()


def test_a_document_is_searchable_by_type_and_survives_reindexing(ws: Workspace, workspace: Path):
    doc = documents.index_document(ws, "adr/0007", NOTE, type="decision", title="Retry budget",
                                   tags=["architecture"], metadata={"url": "https://wiki/adr/7"})
    hits = lexical(ws, "retry budget rate limiter quota", types=["decision"])
    assert hits and {h.path for h in hits} == {"sylk:/adr/0007"}
    assert hits[0].type == "decision" and "Retry budget" in hits[0].snippet
    assert any("quota" in h.snippet for h in hits)  # the second section is a chunk of its own
    assert all(h.tags == ("architecture",) for h in hits)
    # code searches see it too unless filtered out; a full re-index never deletes it
    assert "sylk:/adr/0007" in {h.path for h in lexical(ws, "rate limiter quota")}
    report = ws.index(use_git=False)
    assert report.deleted == 0
    assert documents.get(ws, "adr/0007").metadata == {"url": "https://wiki/adr/7"}
    assert lexical(ws, "quota", types=["decision"])
    # nothing about it counts as drift between the index and the disk
    check = ws.verify()
    assert check.clean, check.counts()
    assert doc.path == "sylk:/adr/0007"


def test_replacing_and_removing_a_document(ws: Workspace):
    documents.index_document(ws, "n1", "first draft about caching", type="note")
    documents.index_document(ws, "n1", "second draft about queues", type="note")
    assert lexical(ws, "caching", types=["note"]) == []
    assert [h.path for h in lexical(ws, "queues", types=["note"])] == ["sylk:/n1"]
    assert documents.remove_document(ws, "n1") is True
    assert lexical(ws, "queues", types=["note"]) == []
    assert documents.remove_document(ws, "n1") is False
    assert "sylk:/n1" not in ws.manifest.files()


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"id": "has space", "text": "x"}, "id"),
    ({"id": "ok", "text": "   "}, "text"),
    ({"id": "ok", "text": "x", "type": "source_code"}, "type"),
    ({"id": "ok", "text": "x", "type": "Note!"}, "type"),
    ({"id": "ok", "text": "x", "tags": "one"}, "tags"),
    ({"id": "ok", "text": "x", "metadata": {"f": object()}}, "metadata"),
])
def test_bad_documents_are_refused_naming_the_field(ws: Workspace, kwargs: dict, field: str):
    id_, text = kwargs.pop("id"), kwargs.pop("text")
    with pytest.raises(documents.DocumentError) as err:
        documents.index_document(ws, id_, text, **kwargs)
    assert err.value.field == field
    assert ws.manifest.document_ids() == []


def test_tags_on_files_filter_searches(ws: Workspace):
    assert documents.tag(ws, ["app/http.py", "app/repository.py"], ["backend"]) == 2
    hits = lexical(ws, "user retry point distance", tags=["backend"])
    assert hits and {h.path for h in hits} == {"app/http.py", "app/repository.py"}
    inline = ws.search(request_from_params({"query": "tag:backend retry", "mode": "lexical"})).hits
    assert {h.path for h in inline} == {"app/http.py"}
    documents.tag(ws, ["app/http.py"], ["backend"], remove=True)
    assert {h.path for h in lexical(ws, "user retry point distance", tags=["backend"])} == {"app/repository.py"}
    with pytest.raises(documents.DocumentError, match="not in the index: nope.py"):
        documents.tag(ws, ["nope.py"], ["x"])


async def test_documents_over_stdio(workspace: Path, _isolated_index: Path):
    client = await start(workspace, _isolated_index, "visual-studio-code")
    try:
        await wait_for_progress_end(client)
        r = await client.protocol.send_request_async("sylk/indexDocument", {
            "id": "chat/42", "type": "response", "title": "How the session store expires tokens",
            "text": "Sessions expire when expiresAt passes; revoke deletes the token at once.",
            "tags": ["llm"], "metadata": {"model": "local"}})
        assert (r.id, r.type, r.chunks) == ("chat/42", "response", 1)
        found = await client.protocol.send_request_async("sylk/search", {
            "query": "type:response session expires token", "mode": "lexical"})
        hit = found.hits[0]
        assert hit.uri is None and hit.path == "sylk:/chat/42" and hit.type == "response"
        assert hit.document.title == "How the session store expires tokens" and hit.document.metadata.model == "local"
        assert list(hit.tags) == ["llm"]
        with pytest.raises(JsonRpcException, match="type"):
            await client.protocol.send_request_async("sylk/indexDocument", {"id": "x", "text": "y",
                                                                           "type": "markdown"})
        gone = await client.protocol.send_request_async("sylk/removeDocument", {"id": "chat/42"})
        assert gone.removed is True
        after = await client.protocol.send_request_async("sylk/search", {
            "query": "type:response session expires token", "mode": "lexical"})
        assert after.hits == []
    finally:
        await client.shutdown_session()
        await client.stop()


def test_cli_add_docs_tag_and_search(workspace: Path, tmp_path: Path):
    def sylk(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "sylk.cli", *args], cwd=workspace, input=stdin,
                              capture_output=True, text=True)
    assert sylk("index", "--no-embed").returncode == 0
    page = tmp_path / "page.md"
    page.write_text("# Deploying\n\nBlue-green deploys switch the load balancer after the health check.\n")
    out = sylk("add", str(page), "--type", "web_page", "--tag", "ops", "--meta", "url=https://example/deploy",
               "--no-embed")
    assert out.returncode == 0 and "added web_page 'page.md'" in out.stdout
    listed = json.loads(sylk("docs", "--format", "json").stdout)
    assert listed[0]["id"] == "page.md" and listed[0]["metadata"] == {"url": "https://example/deploy"}
    hits = sylk("search", "load balancer health check", "--mode", "lexical", "--type", "web_page",
                "--format", "paths")
    assert hits.stdout.split() == ["sylk:/page.md"]
    assert sylk("tag", "add", "payments", "java/com/acme/billing/InvoiceService.java").returncode == 0
    tagged = sylk("search", "invoice", "--mode", "lexical", "--tag", "payments", "--format", "paths", "--no-refresh")
    assert tagged.stdout.split() == ["java/com/acme/billing/InvoiceService.java"]
    bad = sylk("add", str(page), "--type", "markdown")
    assert bad.returncode == 2 and "type:" in bad.stderr
    assert sylk("remove", "page.md").returncode == 0
    assert sylk("remove", "page.md").returncode == 1


async def test_related_files_skip_virtual_documents_over_stdio(workspace: Path, _isolated_index: Path):
    """relatedFiles with a virtual document among the hits: it has no file to read imports
    from, so it adds none; the files' imports are still listed."""
    client = await start(workspace, _isolated_index, "visual-studio-code")
    try:
        await wait_for_progress_end(client)
        await client.protocol.send_request_async("sylk/indexDocument", {
            "id": "notes/users", "type": "note", "title": "Users",
            "text": "import json\n\nget_user_by_id reads the repository; the user lookup is cached."})
        found = await client.protocol.send_request_async("sylk/search", {
            "query": "get_user_by_id", "mode": "lexical", "limit": 20, "relatedFiles": True})
        paths = [h.path for h in found.hits]
        assert "sylk:/notes/users" in paths and "app/repository.py" in paths
        assert all("sylk:/notes/users" not in f.importedBy for f in found.relatedFiles)
        assert any("app/repository.py" in f.importedBy for f in found.relatedFiles)
    finally:
        await client.shutdown_session()
        await client.stop()
