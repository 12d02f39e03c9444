"""End to end: `sylk mcp` as a subprocess, driven by the MCP SDK's own client over stdio.

Assertions are on what an agent reads: the JSON text of each tool result (the
structured content must say the same)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import TIMEOUT, eventually, mcp_call, mcp_call_error, mcp_session, mcp_wait_until, server_env
from mcp import ClientSession, StdioServerParameters
from sylk.model import FILTERS, GROUP_BY, OPTIONS, ROLES

TOOLS = {"search_code", "search_symbol", "find_definition", "find_references", "get_callers", "grep", "get_status",
         "reindex", "index", "clear_index", "find_similar_code"}
# Most tests are about symbols and words: the model stays off unless asked for.
NO_EMBEDDING = "[embedding]\nenabled = false\n"


def server_params(workspace: Path, cache: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "sylk.cli", "mcp", str(workspace)],
                                 env=server_env(cache))


@asynccontextmanager
async def session(workspace: Path, cache: Path, sylk_toml: str | None = NO_EMBEDDING) -> AsyncIterator[ClientSession]:
    if sylk_toml is not None:
        (workspace / ".sylk.toml").write_text(sylk_toml, encoding="utf-8")
    async with mcp_session(workspace, cache) as s:
        yield s


def indexed(st: dict[str, Any]) -> bool:
    return st["state"] in ("ready", "embedding") and st.get("lastRun") is not None


def embedded(st: dict[str, Any]) -> bool:
    return st["state"] == "ready" and st["embedding"]["state"] == "ready" and st["pending"] == 0 \
        and st["embedded"] > 0


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line)


async def test_tools_and_their_schemas(workspace: Path, _isolated_index: Path):
    async with session(workspace, _isolated_index) as s:
        assert "search_symbol" in (s.instructions or "")
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert set(tools) == TOOLS
        code = tools["search_code"]
        props = code.input_schema["properties"]
        assert code.input_schema["required"] == ["query"]
        assert props["mode"]["enum"] == ["hybrid", "lexical", "semantic"] and props["mode"]["default"] == "hybrid"
        assert {"languages", "types", "paths", "kinds", "packages", "exported", "min_score", "limit", "offset"} <= set(props)
        assert all(t in props["types"]["description"] for t in ("source_code", "markdown", "config"))
        assert props["limit"]["minimum"] == 1 and props["offset"]["minimum"] == 0
        # the descriptions tell an agent the modes, the pagination and when to use the other tool
        assert all(w in code.description for w in ("lexical", "semantic", "hybrid", "nextOffset", "search_symbol"))
        sym = tools["search_symbol"]
        assert sym.input_schema["required"] == ["query"]
        assert set(sym.input_schema["properties"]) == {"query", "limit", "offset", "kind", "exported"}
        assert "nextOffset" in sym.description and "search_code" in sym.description
        assert set(tools["get_status"].input_schema["properties"]) == {"skipped"}
        assert tools["get_status"].input_schema["properties"]["skipped"]["enum"] == ["sample", "all"]
        assert tools["reindex"].input_schema["properties"]["wait"]["type"] == "boolean"
        assert "background" in tools["reindex"].description
        for name in ("search_code", "search_symbol", "find_definition", "get_status"):
            assert tools[name].annotations is not None and tools[name].annotations.read_only_hint is True
        assert tools["reindex"].annotations.read_only_hint is False
        grep = tools["grep"]
        assert grep.input_schema["required"] == ["pattern"]
        assert grep.input_schema["properties"]["case"]["enum"] == ["smart", "sensitive", "insensitive"]
        assert all(w in grep.description for w in ("rg", "exact", "totalHitsLowerBound", "scanned"))
        assert grep.annotations is not None and grep.annotations.read_only_hint is True
        # each filter of the table is an argument, described by the table: every filter of
        # search_code, the line search's of grep (a filter added there is one here too)
        for tool, specs in (("search_code", FILTERS), ("grep", [f for f in FILTERS if f.line])):
            props = tools[tool].input_schema["properties"]
            assert {f.name for f in FILTERS} & set(props) == {f.name for f in specs}, tool
            assert all(props[f.name]["description"] == f"Only {f.about}" for f in specs), tool
        assert props["kinds"]["anyOf"][0] == {"items": {"type": "string"}, "type": "array"}
        code_props = tools["search_code"].input_schema["properties"]
        assert code_props["roles"]["anyOf"][0]["items"]["enum"] == list(ROLES)
        # and each option of a ranked search (the table of options), in search_code only
        for o in OPTIONS:
            assert code_props[o.name]["description"] == o.about[0].upper() + o.about[1:], o.name
            assert o.name not in tools["grep"].input_schema["properties"]
        assert code_props["group_by"]["anyOf"][0]["enum"] == list(GROUP_BY)
        assert code_props["explain"] == {"default": False, "description": code_props["explain"]["description"],
                                         "title": "Explain", "type": "boolean"}
        assert code_props["min_lines"]["anyOf"][0] == {"minimum": 0, "type": "integer"}


async def test_search_symbol_fuzzy_and_paged(workspace: Path, _isolated_index: Path):
    async with session(workspace, _isolated_index) as s:
        st = await mcp_wait_until(s, indexed, "the first index run")
        assert st["files"] == 17 and st["symbols"] > 100  # the fixture and .sylk.toml
        found = await mcp_call(s, "search_symbol", query="hrp")
        first = found["symbols"][0]
        assert (first["name"], first["kind"], first["path"]) == ("HttpRetryPolicy", "class", "app/http.py")
        assert first["line"] == line_of(workspace / "app/http.py", "class HttpRetryPolicy")
        assert found["indexing"] is False

        member = await mcp_call(s, "search_symbol", query="HttpRetryPolicy.backoff")
        assert [(m["container"], m["name"]) for m in member["symbols"]][:1] == [("HttpRetryPolicy", "backoff_delay")]

        page1 = await mcp_call(s, "search_symbol", query="e", limit=5)
        assert len(page1["symbols"]) == 5 and page1["nextOffset"] == 5
        page2 = await mcp_call(s, "search_symbol", query="e", limit=5, offset=page1["nextOffset"])
        assert page2["offset"] == 5 and len(page2["symbols"]) == 5
        key = lambda h: (h["path"], h["line"], h["name"])  # noqa: E731
        assert not {key(h) for h in page1["symbols"]} & {key(h) for h in page2["symbols"]}
        both = await mcp_call(s, "search_symbol", query="e", limit=10)
        assert [key(h) for h in both["symbols"]] == [key(h) for h in page1["symbols"] + page2["symbols"]]

        none = await mcp_call(s, "search_symbol", query="zzqqxxj")
        assert none["symbols"] == [] and none["nextOffset"] is None


async def test_search_code_lexical_filters_and_pages(workspace: Path, _isolated_index: Path):
    async with session(workspace, _isolated_index) as s:
        await mcp_wait_until(s, indexed, "the first index run")
        found = await mcp_call(s, "search_code", query="get_user_by_id", mode="lexical")
        top = found["hits"][0]
        assert (top["path"], top["symbol"], top["kind"], top["language"]) == (
            "app/repository.py", "get_user_by_id", "method", "python")
        assert top["startLine"] == line_of(workspace / "app/repository.py", "def get_user_by_id")
        assert top["endLine"] >= top["startLine"] and "get_user_by_id" in top["snippet"]
        assert top["lexicalRank"] == 1 and top["semanticRank"] is None and top["score"] > 0
        assert found["totalHits"] >= len(found["hits"]) and found["mode"] == "lexical"
        assert "semantic" not in found  # lexical mode says nothing about embeddings

        # filters as arguments and inline, the same as sylk/search
        go = await mcp_call(s, "search_code", query="distance point", mode="lexical", languages=["go"])
        assert go["hits"] and {h["language"] for h in go["hits"]} == {"go"}
        app = await mcp_call(s, "search_code", query="user", mode="lexical", paths=["app/**"])
        assert app["hits"] and all(h["path"].startswith("app/") for h in app["hits"])
        inline = await mcp_call(s, "search_code", query="lang:python kind:function email", mode="lexical")
        assert inline["hits"] and {(h["language"], h["kind"]) for h in inline["hits"]} == {("python", "function")}
        docs = await mcp_call(s, "search_code", query="service", mode="lexical", types=["markdown"])
        assert docs["hits"] and {h["type"] for h in docs["hits"]} == {"markdown"}
        expanded = await mcp_call(s, "search_code", query="getUserById", mode="lexical", expand=True)
        assert expanded["expandedTerms"][:4] == ["get", "user", "by", "id"]
        assert expanded["hits"][0]["path"] == "app/repository.py"
        every = await mcp_call(s, "search_code", query="service", mode="lexical", limit=100)
        assert {h["language"] for h in every["hits"]} == {"java", "markdown"}
        left = await mcp_call(s, "search_code", query="service", mode="lexical", limit=100, exclude=["path:java/**"])
        assert {h["language"] for h in left["hits"]} == {"markdown"}
        left = await mcp_call(s, "search_code", query="service -lang:markdown", mode="lexical", limit=100)
        assert {h["language"] for h in left["hits"]} == {"java"}
        left = await mcp_call(s, "search_code", query="service -invoice", mode="lexical", limit=100)
        assert left["hits"] and {h["language"] for h in left["hits"]} == {"markdown"}
        either = await mcp_call(s, "search_code", query="(invoice OR geometry) service", mode="lexical", limit=100)
        assert {h["path"] for h in either["hits"]} == {"java/com/acme/billing/InvoiceService.java", "README.md"}
        bad = await mcp_call_error(s, "search_code", query="invoice OR")
        assert "OR needs words on both sides" in bad
        lines = await mcp_call(s, "grep", pattern="(?i)service", limit=100, exclude=["path:java/**"])
        assert lines["hits"] and all(not h["path"].startswith("java/") for h in lines["hits"])
        bad = await mcp_call_error(s, "grep", pattern="user", exclude=["role:test"])
        assert "invalid argument exclude" in bad
        refs = await mcp_call(s, "find_references", name="user", limit=100)
        assert {r["path"] for r in refs["references"]} == {"app/repository.py", "ruby/lib/notifier.rb",
                                                           "web/src/session.ts"}
        refs = await mcp_call(s, "find_references", name="user", limit=100, exclude=["lang:ruby", "path:web/**"])
        assert {r["path"] for r in refs["references"]} == {"app/repository.py"}
        bad = await mcp_call_error(s, "find_references", name="user", exclude=["role:test"])
        assert "references leave out files by" in bad
        untagged = await mcp_call(s, "search_code", query="user", mode="lexical", tags=["backend"])
        assert untagged["hits"] == []  # nothing carries that tag
        nogit = await mcp_call(s, "search_code", query="user", mode="lexical", authors=["Ann"])
        assert nogit["hits"] == [] and "no git metadata" in nogit["message"]

        # offset pages do not overlap and walk the whole list
        first = await mcp_call(s, "search_code", query="return", mode="lexical", limit=3)
        total = first["totalHits"]
        assert total > 6 and first["nextOffset"] == 3
        seen: list[tuple] = []
        page, offset = first, 0
        while True:
            assert page["offset"] == offset and len(page["hits"]) <= 3
            seen.extend((h["path"], h["startLine"], h["endLine"]) for h in page["hits"])
            if page["nextOffset"] is None:
                break
            offset = page["nextOffset"]
            page = await mcp_call(s, "search_code", query="return", mode="lexical", limit=3, offset=offset)
        assert len(seen) == len(set(seen)) == total
        past = await mcp_call(s, "search_code", query="return", mode="lexical", limit=3, offset=total)
        assert past["hits"] == [] and past["nextOffset"] is None
        # with a filter Tantivy does not apply (roles, tags, authors, dates, paths) the total
        # and nextOffset count what passed it: no nextOffset before an empty page
        role = await mcp_call(s, "search_code", query="user", mode="lexical", roles=["repository"], limit=50)
        assert role["hits"] and role["totalHits"] == len(role["hits"]) and role["nextOffset"] is None
        last = await mcp_call(s, "search_code", query="user", mode="lexical", roles=["repository"], limit=1,
                          offset=role["totalHits"] - 1)
        assert len(last["hits"]) == 1 and last["nextOffset"] is None
        assert untagged["totalHits"] == 0 and untagged["nextOffset"] is None
        assert nogit["totalHits"] == 0 and nogit["nextOffset"] is None

        # embedding is off here: semantic asks say so instead of failing
        hybrid = await mcp_call(s, "search_code", query="get_user_by_id")
        assert hybrid["hits"][0]["path"] == "app/repository.py"
        assert hybrid["semantic"]["state"] == "off" and hybrid["semantic"]["complete"] is False
        assert "lexical only" in hybrid["semantic"]["note"]


async def test_bad_arguments_name_the_field(workspace: Path, _isolated_index: Path):
    async with session(workspace, _isolated_index) as s:
        assert "mode" in await mcp_call_error(s, "search_code", query="retry", mode="fast")
        assert "limit" in await mcp_call_error(s, "search_code", query="retry", limit=0)
        assert "offset" in await mcp_call_error(s, "search_code", query="retry", offset=-1)
        assert "types" in await mcp_call_error(s, "search_code", query="retry", types=["no such type!"])
        assert "query" in await mcp_call_error(s, "search_code", mode="lexical")
        # checks of the shared request parser (the same as sylk/search), worded for the tool
        inline = await mcp_call_error(s, "search_code", query="minlines:many retry")
        assert "query" in inline and "minlines" in inline and "expected a number" in inline
        empty = await mcp_call_error(s, "search_code", query=" lang:python ")
        assert "query" in empty and "no words" in empty
        assert "no words" in await mcp_call_error(s, "search_code", query="lang:python OR path:src/** -mock")
        role = await mcp_call_error(s, "search_code", query="role:wizard retry")
        assert "role" in role and "unknown role" in role
        # an unknown language, type or kind is an error listing the allowed ones, not 0 hits
        lang = await mcp_call_error(s, "search_code", query="retry", languages=["golang"])
        assert "invalid argument languages" in lang and "'golang'" in lang and "python" in lang
        typ = await mcp_call_error(s, "search_code", query="retry", types=["go"])
        assert "invalid argument types" in typ and "source_code" in typ
        kind = await mcp_call_error(s, "search_code", query="retry", kinds=["func"])
        assert "invalid argument kinds" in kind and "function" in kind
        inline_kind = await mcp_call_error(s, "search_code", query="kind:func retry")
        assert "invalid argument query" in inline_kind and "kind" in inline_kind and "function" in inline_kind
        assert "limit" in await mcp_call_error(s, "search_symbol", query="hrp", limit=1000)
        assert "query" in await mcp_call_error(s, "search_symbol")
        # the server is still serving after all that
        assert (await mcp_call(s, "get_status"))["root"] == str(workspace)


@pytest.mark.semantic
async def test_semantic_search_after_background_embedding(workspace: Path, _isolated_index: Path):
    """Embedding runs by itself after the index; once get_status says every chunk is
    embedded, a question sharing no word with the code finds it by meaning (the real
    packaged model)."""
    async with session(workspace, _isolated_index, sylk_toml=None) as s:
        st = await mcp_wait_until(s, embedded, "every chunk embedded")
        assert st["embedded"] == st["chunks"] > 50
        assert st["embedding"]["model"].startswith("sentence-transformers/all-MiniLM-L6-v2")
        assert st["embedding"]["lastRun"]["chunks"] == st["chunks"]
        found = await mcp_call(s, "search_code", query="how far apart are two locations on a plane", mode="semantic",
                           limit=3)
        top = found["hits"][0]
        assert (top["symbol"], top["path"]) == ("Distance", "services/geo/point.go")
        assert top["semanticRank"] == 1 and top["lexicalRank"] is None
        assert found["semantic"] == {"state": "ready", "embeddedChunks": st["chunks"], "totalChunks": st["chunks"],
                                     "complete": True}
        hybrid = await mcp_call(s, "search_code", query="wait longer after each failed attempt")
        top3 = [(h["path"], h["symbol"]) for h in hybrid["hits"][:3]]
        assert ("app/http.py", "backoff_delay") in top3 or ("app/http.py", "HttpRetryPolicy") in top3, top3


async def test_reindex_makes_a_new_file_findable(workspace: Path, _isolated_index: Path):
    # no file watcher here: the new file gets in through reindex alone
    async with session(workspace, _isolated_index, sylk_toml="watch = false\n" + NO_EMBEDDING) as s:
        st = await mcp_wait_until(s, indexed, "the first index run")
        assert st["watch"]["active"] is False
        assert (await mcp_call(s, "search_symbol", query="QuarterlyLedgerReconciler"))["symbols"] == []
        (workspace / "app" / "ledger.py").write_text(
            '"""Ledger."""\n\n\nclass QuarterlyLedgerReconciler:\n'
            '    def reconcile_quarter(self, entries):\n        return sum(entries)\n', encoding="utf-8")
        done = await mcp_call(s, "reindex")
        assert done["indexed"] == "done"
        assert (done["changes"]["added"], done["changes"]["changed"], done["changes"]["deleted"]) == (1, 0, 0)
        assert done["embedding"].startswith("off")
        sym = (await mcp_call(s, "search_symbol", query="QLR"))["symbols"][0]
        assert (sym["name"], sym["path"], sym["line"]) == ("QuarterlyLedgerReconciler", "app/ledger.py", 4)
        hit = (await mcp_call(s, "search_code", query="reconcile_quarter", mode="lexical"))["hits"][0]
        assert (hit["path"], hit["symbol"]) == ("app/ledger.py", "reconcile_quarter")
        st = await mcp_call(s, "get_status")
        assert st["files"] == 18 and st["lastRun"]["added"] == 1

        (workspace / "app" / "ledger.py").unlink()
        later = await mcp_call(s, "reindex", wait=False)
        assert later["indexed"] == "running in the background"
        st = await mcp_wait_until(s, lambda st: indexed(st) and st["lastRun"]["deleted"] == 1, "the deletion")
        assert st["files"] == 17
        assert (await mcp_call(s, "search_symbol", query="QuarterlyLedgerReconciler"))["symbols"] == []


async def test_changes_on_disk_are_followed(workspace: Path, _isolated_index: Path):
    async with session(workspace, _isolated_index) as s:
        await mcp_wait_until(s, lambda st: indexed(st) and st["watch"]["active"], "the watcher")
        (workspace / "web" / "src" / "invoice.ts").write_text(
            "export function renderInvoiceTotals(lines: number[]): string {\n"
            "  return lines.join(', ');\n}\n", encoding="utf-8")
        found = await eventually(lambda: mcp_call(s, "search_symbol", query="renderInvoiceTotals"),
                                 lambda f: f["symbols"], "the new file's symbol, found by the watcher")
        assert found["symbols"][0]["path"] == "web/src/invoice.ts"


async def test_a_second_server_reads_and_cannot_reindex(workspace: Path, _isolated_index: Path):
    """One writer per index: a second `sylk mcp` on the same workspace answers from the
    index the first keeps, and says why it cannot reindex."""
    async with session(workspace, _isolated_index) as first:
        await mcp_wait_until(first, indexed, "the first index run")
        async with session(workspace, _isolated_index) as second:
            st = await mcp_wait_until(second, lambda st: st["state"] not in ("opening", "indexing"), "the index open")
            assert st["state"] == "ready" and st["readOnly"] is True and "another Sylk process" in st["readOnlyReason"]
            assert (await mcp_call(second, "search_symbol", query="hrp"))["symbols"][0]["name"] == "HttpRetryPolicy"
            err = await mcp_call_error(second, "reindex")
            assert "cannot reindex" in err and "another Sylk process" in err
            # what the writer indexes later, the reader finds
            (workspace / "app" / "audit.py").write_text("def record_audit_trail(event):\n    return event\n",
                                                        encoding="utf-8")
            assert (await mcp_call(first, "reindex"))["indexed"] == "done"
            # the reader follows the writer's runs on a thread of its own (as the language server does)
            found = await eventually(lambda: mcp_call(second, "search_symbol", query="record_audit_trail"),
                                     lambda f: f["symbols"], "the writer's new symbol, seen by the reader")
            assert [(h["name"], h["path"]) for h in found["symbols"]] == [("record_audit_trail", "app/audit.py")]
            hit = (await mcp_call(second, "search_code", query="record_audit_trail", mode="lexical"))["hits"][0]
            assert hit["path"] == "app/audit.py"


def test_stdout_carries_only_mcp_messages(workspace: Path, _isolated_index: Path, tmp_path: Path):
    """Raw stdio: every line on stdout is a JSON-RPC message (logs go to stderr), and the
    server exits cleanly when the client closes stdin: the next writer of the index finds
    it closed, nothing to repair."""
    from sylk.cli.terminal import settings_for
    from sylk.engine.workspace import Workspace

    (workspace / ".sylk.toml").write_text(NO_EMBEDDING, encoding="utf-8")
    params = server_params(workspace, _isolated_index)
    log = tmp_path / "stderr.log"
    with open(log, "w", encoding="utf-8") as stderr:  # a file: a full stderr pipe nobody reads would block it
        proc = subprocess.Popen([params.command, *params.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=stderr, text=True, env=params.env)
    assert proc.stdin is not None and proc.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()  # stdout, line by line (None: closed), read by a thread

    def read() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()

    def send(message: dict[str, Any]) -> None:
        proc.stdin.write(json.dumps(message) + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def reply(id_: int) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no reply to {id_} within {TIMEOUT:.0f}s") from None
            if line is None:
                raise AssertionError(f"stdout closed before the reply to {id_}")
            message = json.loads(line)  # anything else on stdout fails here
            assert message["jsonrpc"] == "2.0"
            if message.get("id") == id_:
                return message

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        assert reply(1)["result"]["serverInfo"]["name"] == "sylk"
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "reindex", "arguments": {}}})
        assert json.loads(reply(2)["result"]["content"][0]["text"])["indexed"] == "done"
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": "search_symbol", "arguments": {"query": "hrp", "limit": 1}}})
        assert json.loads(reply(3)["result"]["content"][0]["text"])["symbols"][0]["name"] == "HttpRetryPolicy"
        proc.stdin.close()
        assert proc.wait(TIMEOUT) == 0
        try:
            rest = lines.get(timeout=TIMEOUT)
        except queue.Empty:
            raise AssertionError("stdout stayed open after the server exited") from None
        assert rest is None, f"stdout after the last reply: {rest!r}"  # nothing after the last reply either
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "indexed in" in log.read_text(encoding="utf-8")  # the log of the index runs went to stderr
    # the index was closed cleanly: the next writer finds no unclean shutdown to repair
    ws = Workspace(workspace, settings_for(workspace))
    try:
        assert ws.writable and ws.stores.unclean is False and ws.repair_note is None
    finally:
        ws.close()
    status = subprocess.run([sys.executable, "-m", "sylk.cli", "status", str(workspace), "--format", "json"],
                            capture_output=True, text=True, env=params.env, timeout=TIMEOUT)
    assert json.loads(status.stdout)["files"] == 17


def test_front_ends_stay_apart():
    """`sylk mcp` needs no LSP stack, and the core and the CLI load without the MCP SDK."""
    def run(blocked: tuple[str, ...], imports: str) -> subprocess.CompletedProcess:
        code = (
            "import sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            f"        if name.split('.')[0] in {blocked!r}:\n"
            "            raise ImportError('blocked: ' + name)\n"
            "sys.meta_path.insert(0, Block())\n"
            f"import {imports}\n"
            "print('ok')\n"
        )
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT)

    r = run(("pygls", "lsprotocol"), "sylk.mcp.server")
    assert (r.returncode, r.stdout.strip()) == (0, "ok"), r.stderr
    r = run(("mcp",), "sylk.cli, sylk.engine.workspace, sylk.search.hybrid, sylk.search.symbol_search")
    assert (r.returncode, r.stdout.strip()) == (0, "ok"), r.stderr


async def test_status_counts_skipped_files_with_examples_and_all_on_request(binaries: Path, _isolated_index: Path):
    """issue 13 #11: the same ``skipped`` as sylk/status: counts by reason, the first 20
    files of each, every file with ``skipped="all"``."""
    async with session(binaries, _isolated_index) as s:
        st = await mcp_wait_until(s, indexed, "the index run")
        assert st["skipped"]["total"] == 301 and st["skipped"]["complete"] is False
        binary, large = st["skipped"]["byReason"]
        assert (binary["reason"], binary["count"], len(binary["files"])) == ("binary", 300, 20)
        assert large == {"reason": "too-large", "count": 1, "files": ["big.py"]}
        full = await mcp_call(s, "get_status", skipped="all")
        assert full["skipped"]["complete"] is True and len(full["skipped"]["byReason"][0]["files"]) == 300
        bad = await mcp_call_error(s, "get_status", skipped="every")
        assert "skipped" in bad
