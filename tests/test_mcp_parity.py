"""End to end, issue 17 #4: the MCP server at parity with the language server. `sylk mcp`
runs as a subprocess, driven by the MCP SDK's own client over stdio: search_code's
agent options, find_similar_code, index with paths, clear_index, the resources, and the
roots a client announces as the workspace folders.

Assertions are on what an agent reads: each tool's JSON text, each resource's JSON."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import WORKSPACE, mcp_call, mcp_call_error, mcp_indexed, mcp_session, mcp_wait_until, write_tree
from mcp import ClientSession, MCPError, types
from mcp.shared.exceptions import MCPDeprecationWarning

NO_EMBEDDING = "[embedding]\nenabled = false\n"
STILL = "watch = false\n"  # no file watcher: what gets in, gets in through the tools alone


@asynccontextmanager
async def session(workspace: Path, cache: Path, sylk_toml: str | None = NO_EMBEDDING,
                  **client: Any) -> AsyncIterator[ClientSession]:
    if sylk_toml is not None:
        (workspace / ".sylk.toml").write_text(sylk_toml, encoding="utf-8")
    async with mcp_session(workspace, cache, **client) as s:
        yield s


def all_indexed(st: dict[str, Any]) -> bool:
    return all(mcp_indexed(f) for f in st.get("folders", [st]))


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line)


async def read_json(s: ClientSession, uri: str) -> dict[str, Any]:
    result = await s.read_resource(uri)
    (content,) = result.contents
    assert content.mime_type == "application/json"
    return json.loads(content.text)  # type: ignore[union-attr]


async def read_error(s: ClientSession, uri: str) -> str:
    with pytest.raises(MCPError) as err:
        await s.read_resource(uri)
    return err.value.message


class Roots:
    """The roots a test client announces (and changes: then it says so)."""

    def __init__(self, *paths: Path) -> None:
        self.uris = [p.as_uri() for p in paths]
        self.asked = 0

    async def list_roots(self, _ctx: Any) -> types.ListRootsResult:
        self.asked += 1
        return types.ListRootsResult(roots=[types.Root(uri=u) for u in self.uris])


async def test_the_new_tools_options_and_resources_are_described(workspace: Path, _isolated_index: Path):
    async with session(workspace, _isolated_index) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        props = tools["search_code"].input_schema["properties"]
        assert {"fuzzy", "facets", "group_by", "related_files", "follow_ups", "summary", "explain"} <= set(props)
        group_by = props["group_by"]["anyOf"][0]
        assert {"file", "language", "folder", "kind", "author"} <= set(group_by["enum"])
        assert all(w in tools["search_code"].description for w in ("group_by", "relatedFiles", "facets", "explain"))

        similar = tools["find_similar_code"]
        assert similar.input_schema["required"] == ["path", "line"]
        assert similar.input_schema["properties"]["line"]["minimum"] == 1
        assert similar.annotations is not None and similar.annotations.read_only_hint is True
        assert "embedding" in similar.description

        index = tools["index"]
        assert set(index.input_schema["properties"]) == {"paths", "wait"}  # (the context is not an argument)
        assert index.annotations is not None and index.annotations.read_only_hint is False
        clear = tools["clear_index"]
        assert set(clear.input_schema["properties"]) == {"folder"}
        assert clear.annotations is not None and clear.annotations.destructive_hint is True
        assert "find_similar_code" in (s.instructions or "") and "sylk://symbols/" in (s.instructions or "")

        listed = (await s.list_resources()).resources
        assert [(str(r.uri), r.mime_type) for r in listed] == [("sylk://status", "application/json")]
        templates = (await s.list_resource_templates()).resource_templates
        assert [(t.uri_template, t.mime_type) for t in templates] == [
            ("sylk://symbols/{+path}{?root}", "application/json")]


async def test_search_code_agent_options(workspace: Path, _isolated_index: Path):
    write_tree(workspace, {"app/profiles.py": (
        "from app.repository import UserRepository\n\n\n"
        "def load_profile(repo: UserRepository, user_id: int):\n"
        "    return repo.get_user_by_id(user_id)\n")})
    async with session(workspace, _isolated_index) as s:
        await mcp_wait_until(s, mcp_indexed, "the first index run")
        plain = await mcp_call(s, "search_code", query="user", mode="lexical", limit=10)
        assert not {"facets", "groups", "relatedFiles", "followUps", "summary"} & set(plain)
        assert all("explain" not in h for h in plain["hits"])

        grouped = await mcp_call(s, "search_code", query="user", mode="lexical", limit=10, group_by="file")
        groups = grouped["groups"]
        assert sorted(i for g in groups for i in g["hits"]) == list(range(len(grouped["hits"])))
        for g in groups:
            assert g["count"] == len(g["hits"]) and {grouped["hits"][i]["path"] for i in g["hits"]} == {g["value"]}
        by_language = await mcp_call(s, "search_code", query="user", mode="lexical", group_by="language")
        assert {g["value"] for g in by_language["groups"]} == {h["language"] for h in by_language["hits"]}

        counted = await mcp_call(s, "search_code", query="user", mode="lexical", facets=True)
        languages = {f["value"]: f["count"] for f in counted["facets"]["language"]}
        assert languages["python"] >= 2 and sum(languages.values()) == counted["totalHits"]

        related = await mcp_call(s, "search_code", query="load_profile", mode="lexical", related_files=True)
        assert related["hits"][0]["path"] == "app/profiles.py"
        imported = {r["module"]: r for r in related["relatedFiles"]}
        assert imported["app.repository"]["path"] == "app/repository.py"
        assert "app/profiles.py" in imported["app.repository"]["importedBy"]

        exact = await mcp_call(s, "search_code", query="jiter", mode="lexical")
        typo = await mcp_call(s, "search_code", query="jiter", mode="lexical", fuzzy=True)
        assert exact["hits"] == [] and typo["hits"] and typo["hits"][0]["path"] == "app/http.py"

        explained = await mcp_call(s, "search_code", query="backoff delay", mode="lexical", explain=True, limit=3)
        top = explained["hits"][0]["explain"]
        assert top["lexicalRank"] == 1 and top["lexicalScore"] > 0 and top["semanticRank"] is None
        assert top["fusedScore"] == explained["hits"][0]["score"]

        more = await mcp_call(s, "search_code", query="user", mode="lexical", summary=True, follow_ups=True, limit=5)
        assert more["summary"]["returned"] == len(more["hits"]) and more["summary"]["totalHits"] == more["totalHits"]
        assert all({"query", "options", "reason"} == set(f) for f in more["followUps"])
        assert "facets" not in more  # the follow-ups read them; only asked-for facets are answered


async def test_bad_option_values_name_the_argument(workspace: Path, _isolated_index: Path):
    async with session(workspace, _isolated_index) as s:
        await mcp_wait_until(s, mcp_indexed, "the first index run")
        bad_group = await mcp_call_error(s, "search_code", query="retry", group_by="colour")
        assert "group_by" in bad_group and "file" in bad_group
        assert "facets" in await mcp_call_error(s, "search_code", query="retry", facets="maybe")
        assert "explain" in await mcp_call_error(s, "search_code", query="retry", explain=[1])
        assert "context_lines" in await mcp_call_error(s, "search_code", query="retry", context_lines=21)
        assert "roles" in await mcp_call_error(s, "search_code", query="retry", roles=["wizard"])
        # the shared parser's checks name the argument the agent gave
        lang = await mcp_call_error(s, "search_code", query="retry", languages=["golang"])
        assert "invalid argument languages" in lang and "python" in lang
        inline = await mcp_call_error(s, "search_code", query="kind:func retry")
        assert "invalid argument query" in inline and "inline filter kind" in inline
        assert "invalid argument pattern" in await mcp_call_error(s, "grep", pattern="retry(")
        assert (await mcp_call(s, "get_status"))["state"] in ("ready", "embedding")  # still serving


async def test_find_similar_code_says_when_embedding_is_off(workspace: Path, _isolated_index: Path):
    async with session(workspace, _isolated_index) as s:
        await mcp_wait_until(s, mcp_indexed, "the first index run")
        err = await mcp_call_error(s, "find_similar_code", path="app/http.py", line=24)
        assert "semantic search is off" in err and "embedding.enabled = false" in err and "lexical" in err


@pytest.mark.semantic
async def test_find_similar_code_finds_a_copy_elsewhere(workspace: Path, _isolated_index: Path):
    """sylk/similar's logic for a path and line: the near-copy of a function in another
    file is the nearest outside its own file; the code itself is not among the answers
    (the real model)."""
    write_tree(workspace, {"tools/retrying.py": (
        "import random\n\n\n"
        "def delay_before_retry(base_delay, attempt, cap=30.0):\n"
        '    """Seconds to wait before retry number ``attempt``: exponential backoff with jitter."""\n'
        "    return random.uniform(0, min(cap, base_delay * 2**attempt))\n")})
    async with session(workspace, _isolated_index, sylk_toml=None) as s:
        await mcp_wait_until(s, lambda st: st["state"] == "ready" and st["embedding"]["state"] == "ready"
                             and st["pending"] == 0 and st["embedded"] > 0, "every chunk embedded")
        line = line_of(workspace / "app/http.py", "def backoff_delay")
        found = await mcp_call(s, "find_similar_code", path="app/http.py", line=line + 1, limit=5)
        chunk = found["chunk"]
        assert (chunk["path"], chunk["symbol"], chunk["startLine"]) == ("app/http.py", "backoff_delay", line)
        assert "def backoff_delay" in chunk["snippet"]
        similar = found["similar"]
        assert 1 <= len(similar) <= 5 and "message" not in found
        elsewhere = [h for h in similar if h["path"] != "app/http.py"]
        assert (elsewhere[0]["path"], elsewhere[0]["symbol"]) == ("tools/retrying.py", "delay_before_retry")
        assert elsewhere[0]["snippet"].startswith("def delay_before_retry")
        assert len(similar) - len(elsewhere) <= 2  # the same file's neighbours are the least news
        assert [h["score"] for h in similar] == sorted((h["score"] for h in similar), reverse=True)
        assert all(not (h["path"] == "app/http.py" and h["symbol"] == "backoff_delay") for h in similar)
        # an absolute path names the same file
        again = await mcp_call(s, "find_similar_code", path=str(workspace / "app/http.py"), line=line + 1, limit=5)
        assert again["similar"] == similar

        not_indexed = await mcp_call_error(s, "find_similar_code", path="ignored_dir/secret.py", line=1)
        assert "invalid argument path" in not_indexed and "not an indexed file" in not_indexed
        missing = await mcp_call_error(s, "find_similar_code", path="app/nope.py", line=1)
        assert "not an indexed file" in missing
        past_end = await mcp_call_error(s, "find_similar_code", path="app/http.py", line=10_000)
        assert "invalid argument line" in past_end and "lines" in past_end
        outside = await mcp_call_error(s, "find_similar_code", path="../elsewhere.py", line=1)
        assert "invalid argument path" in outside and "outside" in outside


async def test_index_paths_reports_what_it_did(workspace: Path, _isolated_index: Path):
    async with session(workspace, _isolated_index, sylk_toml=STILL + NO_EMBEDDING) as s:
        st = await mcp_wait_until(s, mcp_indexed, "the first index run")
        files = st["files"]
        write_tree(workspace, {"app/ledger.py": "class QuarterlyLedgerReconciler:\n    pass\n",
                               "app/audit.py": "def record_audit_trail(event):\n    return event\n",
                               "ignored_dir/more.py": "def hidden_helper():\n    pass\n"})
        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, total, message))

        result = await s.call_tool("index", {"paths": ["app/ledger.py", "ignored_dir/more.py", "app/gone.py"]},
                                   progress_callback=on_progress)
        assert not result.is_error, result.content
        done = json.loads(result.content[0].text)  # type: ignore[union-attr]
        assert done["indexed"] == "done"
        assert (done["changes"]["added"], done["changes"]["changed"], done["changes"]["deleted"]) == (1, 0, 0)
        assert done["paths"] == ["app/ledger.py", "ignored_dir/more.py", "app/gone.py"]
        assert done["ignored"] == ["ignored_dir/more.py"] and done["notFound"] == ["app/gone.py"]
        assert done["embedding"].startswith("off")
        assert progress and progress[-1][0] == progress[-1][1] and "files indexed" in (progress[-1][2] or "")
        # only the path asked for: the other new file is not indexed yet
        assert (await mcp_call(s, "search_symbol", query="QuarterlyLedgerReconciler"))["symbols"]
        assert (await mcp_call(s, "search_symbol", query="record_audit_trail"))["symbols"] == []
        assert (await mcp_call(s, "search_symbol", query="hidden_helper"))["symbols"] == []

        # a folder (absolute here) takes in what changed under it: a new file and a deleted one
        (workspace / "app" / "ledger.py").unlink()
        folder = await mcp_call(s, "index", paths=[str(workspace / "app")])
        assert (folder["changes"]["added"], folder["changes"]["deleted"]) == (1, 1)
        st = await mcp_call(s, "get_status")
        assert st["files"] == files + 1 and st["lastRun"]["added"] == 1
        assert (await mcp_call(s, "search_symbol", query="record_audit_trail"))["symbols"][0]["path"] == "app/audit.py"

        # no paths: every file, as reindex
        everything = await mcp_call(s, "index", wait=True)
        assert everything["indexed"] == "done" and everything["changes"]["unchanged"] == files + 1
        assert "paths" not in everything
        outside = await mcp_call_error(s, "index", paths=["/definitely/not/here.py"])
        assert "invalid argument paths" in outside and str(workspace) in outside
        assert "invalid argument paths" in await mcp_call_error(s, "index", paths=["../x.py"])


async def test_clear_index_builds_it_again(workspace: Path, _isolated_index: Path):
    async with session(workspace, _isolated_index) as s:
        st = await mcp_wait_until(s, mcp_indexed, "the first index run")
        index_dir = st["indexDir"]
        cleared = await mcp_call(s, "clear_index")
        assert cleared["cleared"] == [{"root": str(workspace), "removed": index_dir, "error": None}]
        assert "poll get_status" in cleared["indexing"]
        again = await mcp_wait_until(s, lambda st: mcp_indexed(st) and st["lastRun"]["added"] == st["files"],
                                     "the index built again")
        assert again["files"] == st["files"] and again["symbols"] == st["symbols"]
        assert (await mcp_call(s, "search_symbol", query="hrp"))["symbols"][0]["name"] == "HttpRetryPolicy"
        assert (await mcp_call(s, "clear_index", folder=str(workspace)))["cleared"][0]["error"] is None
        wrong = await mcp_call_error(s, "clear_index", folder=str(workspace / "app"))
        assert "invalid argument folder" in wrong and "not a workspace folder" in wrong
        await mcp_wait_until(s, mcp_indexed, "the index built again")


async def test_a_second_server_cannot_clear_or_index(workspace: Path, _isolated_index: Path):
    async with session(workspace, _isolated_index) as first:
        await mcp_wait_until(first, mcp_indexed, "the first index run")
        async with session(workspace, _isolated_index) as second:
            await mcp_wait_until(second, lambda st: st["state"] not in ("opening", "indexing"), "the index open")
            err = await mcp_call_error(second, "clear_index")
            assert "cannot clear" in err and "another process" in err
            assert "cannot index" in await mcp_call_error(second, "index", paths=["app/http.py"])
            assert (await mcp_call(first, "search_symbol", query="hrp"))["symbols"]  # the index is still there


async def test_resources_status_and_symbols(workspace: Path, _isolated_index: Path):
    (workspace / "app" / "café.py").write_text("def naïve_total(xs):\n    return sum(xs)\n", encoding="utf-8")
    async with session(workspace, _isolated_index) as s:
        st = await mcp_wait_until(s, mcp_indexed, "the first index run")
        status = await read_json(s, "sylk://status")
        assert (status["root"], status["files"], status["state"]) == (str(workspace), st["files"], st["state"])
        assert status["roots"] == {"from": "command line", "folders": [str(workspace)]}

        http = await read_json(s, "sylk://symbols/app/http.py")
        assert (http["path"], http["language"]) == ("app/http.py", "python")
        names = [(x["name"], x["kind"], x["container"]) for x in http["symbols"]]
        assert ("HttpRetryPolicy", "class", "") in names and ("backoff_delay", "method", "HttpRetryPolicy") in names
        policy = next(x for x in http["symbols"] if x["name"] == "HttpRetryPolicy")
        assert policy["line"] == line_of(workspace / "app/http.py", "class HttpRetryPolicy")
        assert [x["line"] for x in http["symbols"]] == sorted(x["line"] for x in http["symbols"])
        encoded = await read_json(s, "sylk://symbols/app/caf%C3%A9.py")
        assert [x["name"] for x in encoded["symbols"]] == ["naïve_total"]

        assert "not an indexed file" in await read_error(s, "sylk://symbols/app/nope.py")
        assert "not an indexed file" in await read_error(s, "sylk://symbols/ignored_dir/secret.py")
        assert "Unknown resource" in await read_error(s, "sylk://symbols/../outside.py")
        assert "not a workspace folder" in await read_error(s, "sylk://symbols/app/http.py?root=elsewhere")
        assert "Unknown resource" in await read_error(s, "sylk://nothing")


async def test_client_roots_replace_the_command_line_folder(tmp_path: Path, _isolated_index: Path):
    """A client announcing two roots (neither under the command line's folder) gets
    results from both, and nothing from the command line's folder; when its roots
    change, the server follows."""
    started_in = write_tree(tmp_path / "started_in", {"greet.py": "def hello_world():\n    return 'hi'\n"})
    billing = write_tree(tmp_path / "billing", {
        ".sylk.toml": NO_EMBEDDING,
        "invoices.py": "class InvoiceLedger:\n    def settle_invoice(self, invoice_id):\n"
                       "        return invoice_id  # settle the shared ledger\n",
        "README.md": "# Billing\n\nThe shared ledger settles invoices.\n"})
    shipping = write_tree(tmp_path / "shipping", {
        ".sylk.toml": NO_EMBEDDING,
        "parcels.py": "from invoices import InvoiceLedger\n\n\nclass ParcelTracker:\n"
                      "    def settle_invoice(self, parcel):\n"
                      "        return InvoiceLedger().settle_invoice(parcel)  # the shared ledger again\n"})
    roots = Roots(billing, shipping, tmp_path / "no-such-folder")
    async with session(started_in, _isolated_index, sylk_toml=NO_EMBEDDING, list_roots_callback=roots.list_roots) as s:
        st = await mcp_wait_until(s, all_indexed, "both roots indexed")
        assert roots.asked == 1
        assert st["roots"] == {"from": "client", "folders": [str(billing), str(shipping)]}
        assert [f["root"] for f in st["folders"]] == [str(billing), str(shipping)]
        assert [f["files"] for f in st["folders"]] == [3, 2]
        assert any(str(tmp_path / "no-such-folder") in n and "not a folder" in n for n in st["notes"])

        symbols = await mcp_call(s, "search_symbol", query="settle_invoice")
        assert {(x["root"], x["path"], x["container"]) for x in symbols["symbols"]} == {
            (str(billing), "invoices.py", "InvoiceLedger"), (str(shipping), "parcels.py", "ParcelTracker")}
        assert (await mcp_call(s, "search_symbol", query="hello_world"))["symbols"] == []

        code = await mcp_call(s, "search_code", query="shared ledger", mode="lexical", group_by="file", facets=True)
        assert {(h["root"], h["path"]) for h in code["hits"]} >= {(str(billing), "invoices.py"),
                                                                  (str(shipping), "parcels.py")}
        assert code["totalHits"] == len(code["hits"]) and code["index"]["files"] == 5
        assert sum(f["count"] for f in code["facets"]["language"]) == code["totalHits"]
        page = await mcp_call(s, "search_code", query="shared ledger", mode="lexical", limit=1, offset=1)
        assert page["hits"] == code["hits"][1:2] and page["offset"] == 1

        lines = await mcp_call(s, "grep", pattern="def settle_invoice", exact=True)
        assert [(h["root"], h["path"]) for h in lines["hits"]] == [(str(billing), "invoices.py"),
                                                                   (str(shipping), "parcels.py")]
        refs = await mcp_call(s, "find_references", name="InvoiceLedger")
        assert {(r["root"], r["path"]) for r in refs["references"]} == {(str(billing), "invoices.py"),
                                                                       (str(shipping), "parcels.py")}
        defs = await mcp_call(s, "find_definition", name="settle_invoice", path=str(shipping / "parcels.py"))
        assert [(d["root"], d["container"]) for d in defs["definitions"]][0] == (str(shipping), "ParcelTracker")
        assert len(defs["definitions"]) == 2
        callers = await mcp_call(s, "get_callers", name="settle_invoice")
        assert [(c["root"], c["caller"]["container"]) for c in callers["callers"]] == [
            (str(shipping), "ParcelTracker")]

        # a path of either root, absolute or relative (the root holding it)
        write_tree(shipping, {"labels.py": "def print_parcel_label(parcel):\n    return parcel\n"})
        added = await mcp_call(s, "index", paths=[str(shipping / "labels.py")])
        assert added["changes"]["added"] == 1 and "folders" not in added  # one folder was asked
        again = await mcp_call(s, "index", paths=["labels.py", "invoices.py"])
        assert [(f["root"], f["changes"]["unchanged"]) for f in again["folders"]] == [
            (str(shipping), 1), (str(billing), 1)]
        assert "invalid argument paths" in await mcp_call_error(s, "index", paths=[str(started_in / "greet.py")])

        ledger = await read_json(s, "sylk://symbols/invoices.py")
        assert [x["name"] for x in ledger["symbols"]] == ["InvoiceLedger", "settle_invoice"]
        tracker = await read_json(s, "sylk://symbols/parcels.py?root=shipping")
        assert tracker["symbols"][0]["name"] == "ParcelTracker"
        assert "not an indexed file" in await read_error(s, "sylk://symbols/parcels.py?root=billing")

        # the client's roots change: shipping goes, the folder the server started in comes
        roots.uris = [billing.as_uri(), started_in.as_uri()]
        with pytest.warns(MCPDeprecationWarning):  # (roots leave the protocol after 2026-07-28)
            await s.send_roots_list_changed()
        st = await mcp_wait_until(s, lambda st: st["roots"]["folders"] == [str(billing), str(started_in)]
                                  and all_indexed(st), "the new roots served")
        assert roots.asked == 2
        assert (await mcp_call(s, "search_symbol", query="hello_world"))["symbols"][0]["root"] == str(started_in)
        assert (await mcp_call(s, "search_symbol", query="ParcelTracker"))["symbols"] == []
        cleared = await mcp_call(s, "clear_index", folder="started_in")
        assert [c["root"] for c in cleared["cleared"]] == [str(started_in)]


async def test_a_client_without_roots_gets_the_command_line_folder(workspace: Path, _isolated_index: Path):
    roots = Roots()  # the capability, and no root
    async with session(workspace, _isolated_index, list_roots_callback=roots.list_roots) as s:
        st = await mcp_wait_until(s, mcp_indexed, "the first index run")
        assert st["root"] == str(workspace) and st["roots"] == {"from": "command line", "folders": [str(workspace)]}
        assert any("no local folder" in n for n in st["notes"])
        assert (await mcp_call(s, "search_symbol", query="hrp"))["symbols"][0]["name"] == "HttpRetryPolicy"
        assert "root" not in (await mcp_call(s, "search_symbol", query="hrp"))["symbols"][0]


async def test_a_root_outside_the_command_line_folder(tmp_path: Path, _isolated_index: Path):
    """One announced root, elsewhere: the server serves it alone, results without ``root``."""
    started_in = tmp_path / "empty"
    started_in.mkdir()
    copy = tmp_path / "elsewhere" / "workspace"
    shutil.copytree(WORKSPACE, copy)
    (copy / ".sylk.toml").write_text(NO_EMBEDDING, encoding="utf-8")
    roots = Roots(copy)
    async with session(started_in, _isolated_index, sylk_toml=None, list_roots_callback=roots.list_roots) as s:
        st = await mcp_wait_until(s, mcp_indexed, "the root indexed")
        assert st["root"] == str(copy) and "folders" not in st and st["roots"]["from"] == "client"
        hit = (await mcp_call(s, "search_code", query="get_user_by_id", mode="lexical"))["hits"][0]
        assert hit["path"] == "app/repository.py" and "root" not in hit
