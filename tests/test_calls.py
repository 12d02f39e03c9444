"""The call hierarchy from the index (search/calls.py, lsp/calls.py): the callers of a
function grouped by the function around each call, and the calls a function makes
resolved to their definitions, over stdio as an editor asks."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import start, uri, wait_for_progress_end, write_tree
from lsprotocol import types
from sylk.config import Settings
from sylk.engine.workspace import Workspace

FILES = {
    "jobs/work.py": (
        "def step(n):\n"                      # 0
        "    return n + 1\n"
        "\n"
        "def run(items):\n"                   # 3
        "    total = 0\n"
        "    for i in items:\n"
        "        total += step(i)\n"         # 6
        "    print(total)  # step(total) is a comment\n"
        "    return finish(total)\n"         # 8
        "\n"
        "def finish(t):\n"                    # 10
        "    return step(t) + step(t + 1)\n"  # 11
        "\n"
        "step(0)\n"                           # 13
        "handler = step\n"                    # 14: named, not called
    ),
    "jobs/other.py": "from jobs.work import step\n\nclass Box:\n    def go(self):\n        return step(2)\n",
    "calc/ops.c": (
        "int add(int a, int b) { return a + b; }\n"
        "int twice(int x) { return add(x, x); }\n"
        "int main(void) { return twice(2) + add(1, 2); }\n"
    ),
}

EVERY_LANGUAGE = {"embedding": {"enabled": False}, "navigation": {"skipLanguages": []}}


@pytest.fixture
def calls_root(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "calls", FILES)


def test_callers_and_callees_in_the_engine(calls_root: Path, tmp_path: Path):
    ws = Workspace(calls_root, Settings(index_dir=str(tmp_path / "index")))
    try:
        ws.index()
        callers = ws.incoming_calls("step")
        got = {(c.path, c.symbol.qualified_name if c.symbol else None): [r.line for r in c.calls] for c in callers}
        assert got == {("jobs/work.py", "run"): [6], ("jobs/work.py", "finish"): [11, 11],
                       ("jobs/work.py", None): [13], ("jobs/other.py", "Box.go"): [4]}
        run = next(s for s in ws.table.named_in("run", {"jobs/work.py"}))
        out = ws.outgoing_calls("jobs/work.py", run.symbol.range)
        assert [(c.name, [o.line for o in c.calls]) for c in out] == [("step", [6]), ("print", [7]), ("finish", [8])]
        assert [c.name for c in ws.outgoing_calls("calc/ops.c", (2, 0, 2, 60))] == ["twice", "add"]
    finally:
        ws.close()


async def test_call_hierarchy_over_stdio(calls_root: Path, _isolated_index: Path):
    client = await start(calls_root, _isolated_index, "visual-studio-code", EVERY_LANGUAGE)
    try:
        await wait_for_progress_end(client)
        items = await client.text_document_prepare_call_hierarchy_async(types.CallHierarchyPrepareParams(
            text_document=types.TextDocumentIdentifier(uri=uri(calls_root / "jobs/work.py")),
            position=types.Position(line=6, character=18)))  # on `step` in run()
        assert items and items[0].name == "step" and items[0].selection_range.start.line == 0
        assert items[0].uri == uri(calls_root / "jobs/work.py") and items[0].kind == types.SymbolKind.Function

        incoming = await client.call_hierarchy_incoming_calls_async(
            types.CallHierarchyIncomingCallsParams(item=items[0]))
        by_caller = {(c.from_.name, c.from_.uri.rsplit("/", 1)[-1]): [r.start.line for r in c.from_ranges]
                     for c in incoming}
        assert by_caller == {("run", "work.py"): [6], ("finish", "work.py"): [11, 11], ("work.py", "work.py"): [13],
                             ("go", "other.py"): [4]}
        text = (calls_root / "jobs/work.py").read_text().split("\n")
        for c in incoming:
            for r in c.from_ranges:
                if c.from_.uri.endswith("work.py"):
                    assert text[r.start.line][r.start.character:r.end.character] == "step"

        run = await client.text_document_prepare_call_hierarchy_async(types.CallHierarchyPrepareParams(
            text_document=types.TextDocumentIdentifier(uri=uri(calls_root / "jobs/work.py")),
            position=types.Position(line=3, character=5)))
        outgoing = await client.call_hierarchy_outgoing_calls_async(
            types.CallHierarchyOutgoingCallsParams(item=run[0]))
        # print is not defined in the workspace: left out
        assert [(c.to.name, c.to.selection_range.start.line, [r.start.line for r in c.from_ranges])
                for c in outgoing] == [("step", 0, [6]), ("finish", 10, [8])]

        c_items = await client.text_document_prepare_call_hierarchy_async(types.CallHierarchyPrepareParams(
            text_document=types.TextDocumentIdentifier(uri=uri(calls_root / "calc/ops.c")),
            position=types.Position(line=1, character=26)))  # on `add` in twice()
        c_in = await client.call_hierarchy_incoming_calls_async(types.CallHierarchyIncomingCallsParams(item=c_items[0]))
        assert sorted(c.from_.name for c in c_in) == ["main", "twice"]
        blank = await client.text_document_prepare_call_hierarchy_async(types.CallHierarchyPrepareParams(
            text_document=types.TextDocumentIdentifier(uri=uri(calls_root / "jobs/work.py")),
            position=types.Position(line=2, character=0)))
        assert not blank
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_mcp_get_callers(calls_root: Path, _isolated_index: Path):
    from conftest import mcp_call, mcp_call_error, mcp_indexed, mcp_session, mcp_wait_until, without_embedding

    async with mcp_session(without_embedding(calls_root), _isolated_index) as s:
        await mcp_wait_until(s, mcp_indexed, "the first index run")
        got = await mcp_call(s, "get_callers", name="step")
        assert got["total"] == 4 and got["calls"] == 5 and got["nextOffset"] is None
        callers = {(c["path"], c["caller"]["name"] if c["caller"] else None):
                   [(k["line"], k["text"]) for k in c["calls"]] for c in got["callers"]}
        assert callers[("jobs/work.py", "run")] == [(7, "total += step(i)")]
        assert callers[("jobs/work.py", None)] == [(14, "step(0)")]
        assert callers[("jobs/other.py", "go")] == [(5, "return step(2)")]
        page = await mcp_call(s, "get_callers", name="step", limit=1, offset=1)
        assert len(page["callers"]) == 1 and page["nextOffset"] == 2
        assert "name" in await mcp_call_error(s, "get_callers", name="step(")
