"""Virtual documents (sylk/indexDocument, sylk/removeDocument, sylk add) and user tags."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import TIMEOUT, eventually, git_commit, run_sylk, start, wait_for_progress_end
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.uris import to_fs_path
from sylk.config import Settings
from sylk.engine import documents
from sylk.engine.workspace import Workspace
from sylk.lsp import uris
from sylk.params import request_from_params

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
        assert hit.uri == "sylk://document/chat/42" and hit.path == "sylk:/chat/42" and hit.type == "response"
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


def test_cli_add_docs_tag_and_search(workspace: Path, tmp_path: Path, _isolated_index: Path):
    def sylk(*args: str) -> subprocess.CompletedProcess:
        return run_sylk(*args, cache=_isolated_index, cwd=workspace)  # bounded by TIMEOUT
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


@pytest.mark.parametrize("id_", ["adr/0007", "chat/42", "notes/retry-ünï", "a@b:c+d", "x.y_z-1"])
def test_a_document_uri_names_the_document_and_reads_back(id_: str):
    uri = uris.document_uri(id_)
    assert uri.startswith("sylk://document/") and " " not in uri
    assert uris.parse(uri) == uris.SylkUri("document", id_)
    # an editor that does not percent-encode still names the same document
    assert uris.parse("sylk://document/" + id_) == uris.SylkUri("document", id_)


@pytest.mark.parametrize("uri", ["file:///ws/app/http.py", "sylk:/adr/0007", "sylk://page/1", "sylk://document/",
                                 "sylk://document/a?b=1", "sylk://commit/abc", "sylk://commit/" + "G" * 40,
                                 "sylk://document/%ff"])
def test_anything_else_is_not_a_sylk_uri(uri: str):
    with pytest.raises(uris.UriError):
        uris.parse(uri)


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=Ann Lee", "-c", "user.email=x@y", *args],
                   check=True, capture_output=True, timeout=TIMEOUT)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
async def test_every_hit_has_a_uri_an_editor_can_open_over_stdio(workspace: Path, _isolated_index: Path):
    """Files, a virtual document and commits (a merge commit touches no file of its own):
    each hit's uri is a file on disk, or a sylk: URI whose text sylk/documentText answers."""
    git(workspace, "init", "-q", "-b", "main")
    git_commit(workspace, "Ann Lee", "initial import")
    git(workspace, "checkout", "-q", "-b", "backoff")
    (workspace / "app/http.py").write_text((workspace / "app/http.py").read_text() + "\n\ndef jitter():\n    pass\n")
    git_commit(workspace, "Bob Stone", "retry with jitter", "app/http.py")
    git(workspace, "checkout", "-q", "main")
    (workspace / "README.md").write_text("# Retry notes\n")
    git_commit(workspace, "Ann Lee", "retry notes", "README.md")
    git(workspace, "merge", "-q", "--no-ff", "-m", "Merge the retry work", "backoff")
    client = await start(workspace, _isolated_index, "visual-studio-code")
    try:
        await wait_for_progress_end(client)
        await client.protocol.send_request_async("sylk/indexDocument", {
            "id": "notes/retry-ünï", "type": "note", "title": "Retry budget",
            "text": "We retry five times at most.\n\nThe retry budget is shared by every client."})

        async def search() -> Any:
            return await client.protocol.send_request_async("sylk/search", {
                "query": "retry", "mode": "lexical", "limit": 50,
                "filters": {"types": ["source_code", "markdown", "note", "git_commit"]}})
        found = await eventually(search, lambda r: any(h.type == "git_commit" and not h.commit.files for h in r.hits),
                                 "the merge commit among the hits")
        kinds = {h.type for h in found.hits}
        assert {"source_code", "note", "git_commit"} <= kinds
        for hit in found.hits:
            assert isinstance(hit.uri, str), hit
            if hit.uri.startswith("file:"):
                assert Path(to_fs_path(hit.uri)).is_file(), hit.uri
                continue
            assert hit.uri.startswith("sylk://"), hit.uri
            opened = await client.protocol.send_request_async("sylk/documentText", {"uri": hit.uri})
            assert opened.uri == hit.uri
            lines = opened.text.split("\n")
            if hit.type == "git_commit":
                assert hit.uri == f"sylk://commit/{hit.commit.sha}"
                assert hit.commit.sha in opened.text and hit.snippet in opened.text
                assert all(f in lines for f in hit.commit.files)
            else:
                assert hit.path == "sylk:/notes/retry-ünï"
                assert hit.uri == "sylk://document/notes/retry-%C3%BCn%C3%AF"
                assert (opened.languageId, opened.title) == ("markdown", "Retry budget")
                assert "The retry budget is shared by every client." in lines
                # the hit's lines are the text's lines: an editor jumps to the right place
                first = hit.snippetRange.start.line
                assert lines[first:first + len(hit.snippet.split("\n"))] == hit.snippet.split("\n")
        titles = {(await client.protocol.send_request_async("sylk/documentText", {"uri": h.uri})).title
                  for h in found.hits if h.type == "git_commit"}
        assert any(t.endswith("Merge the retry work") for t in titles), titles

        # anything else is refused, naming the field
        for bad in ({"uri": "sylk://document/notes/nope"}, {"uri": "sylk://commit/" + "0" * 40},
                    {"uri": "sylk://commit/xyz"}, {"uri": "sylk://page/1"}, {"uri": "sylk:/notes/retry"},
                    {"uri": (workspace / "app/http.py").as_uri()}, {"uri": 5}, {}):
            with pytest.raises(JsonRpcInvalidParams, match="uri"):
                await client.protocol.send_request_async("sylk/documentText", bad)
    finally:
        await client.shutdown_session()
        await client.stop()
