"""Go to definition from the index (search/definitions.py, lsp/navigation.py): from a call
site in each language to the definition its file imports (or sits beside), never to a
decoy of the same name further away; over stdio, as the editors ask."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from conftest import NO_EMBEDDING, TIMEOUT, start, uri, wait_for_progress_end, write_tree
from lsprotocol import types
from sylk.search import definitions as defs

# path -> text. Each language: a definition, a caller that imports it (or sits beside it),
# and a decoy of the same name in another folder.
FILES = {
    "shapes/geometry.py": "def area_of(radius):\n    return 3.14 * radius * radius\n",
    "app/main.py": "from shapes.geometry import area_of\n\n\nprint(area_of(2))\n",
    "other/decoy.py": "def area_of(side):\n    return side * side\n",
    "geo/point.go": "package geo\n\nfunc Distance(a, b float64) float64 {\n\treturn b - a\n}\n",
    "cmd/main.go": 'package main\n\nimport "example.com/nav/geo"\n\nfunc main() {\n\t_ = geo.Distance(1, 2)\n}\n',
    "mathx/dist.go": "package mathx\n\nfunc Distance(x float64) float64 {\n\treturn x\n}\n",
    "web/util.ts": "export function formatPrice(cents: number): string {\n  return `${cents / 100}`;\n}\n",
    "web/cart.ts": 'import { formatPrice } from "./util";\n\nexport const label = formatPrice(250);\n',
    "lib/fmt.ts": "export function formatPrice(n: number): string {\n  return String(n);\n}\n",
    "src/engine.rs": "pub fn run_engine() -> u32 {\n    42\n}\n",
    "src/main.rs": "mod engine;\nuse crate::engine::run_engine;\n\nfn main() {\n    run_engine();\n}\n",
    "tools/other.rs": "fn run_engine() {}\n",
    "java/com/acme/Billing.java": "package com.acme;\n\npublic class Billing {\n"
                                  "    public static int total() { return 1; }\n}\n",
    "java/com/acme/app/Main.java": "package com.acme.app;\n\nimport com.acme.Billing;\n\npublic class Main {\n"
                                   "    int run() { return Billing.total(); }\n}\n",
    "java/com/other/Report.java": "package com.other;\n\npublic class Report {\n    int total() { return 2; }\n}\n",
    "c/ring.c": "int ring_push(int v) {\n    return v;\n}\n",
    "c/main.c": "int ring_push(int v);\n\nint main(void) {\n    return ring_push(3);\n}\n",
    "c2/other.c": "int ring_push(int v) {\n    return -v;\n}\n",
    "rb/lib/notifier.rb": "class Notifier\n  def deliver(msg)\n    msg\n  end\nend\n",
    "rb/app.rb": 'require_relative "lib/notifier"\n\nNotifier.new.deliver("hi")\n',
    "rb2/mailer.rb": "class Mailer\n  def deliver(x)\n    x\n  end\nend\n",
    "emoji/use.py": "from shapes.geometry import area_of\n\nlabel = '🎉🎉'; n = area_of(1)\n",
    # two classes with a method of the same name; a helper nested in another function
    "jobs/runner.py": ("class First:\n    def start(self):\n        return 1\n\n\n"
                       "class Second:\n    def start(self):\n        return 2\n\n"
                       "    def go(self):\n        return self.start()\n\n\n"
                       "def outer():\n    def helper():\n        return 0\n    return helper()\n\n\n"
                       "def later():\n    return helper()\n"),
    "jobs/helpers.py": "def helper():\n    return 1\n",
}

# (file, line, the text the cursor is on) -> (file of the definition, its line)
CASES = [
    pytest.param("app/main.py", 3, "area_of", "shapes/geometry.py", 0, id="python"),
    pytest.param("cmd/main.go", 5, "Distance", "geo/point.go", 2, id="go"),
    pytest.param("web/cart.ts", 2, "formatPrice", "web/util.ts", 0, id="typescript"),
    pytest.param("src/main.rs", 4, "run_engine", "src/engine.rs", 0, id="rust"),
    pytest.param("java/com/acme/app/Main.java", 5, "total", "java/com/acme/Billing.java", 3, id="java"),
    pytest.param("c/main.c", 3, "ring_push", "c/ring.c", 0, id="c"),
    pytest.param("rb/app.rb", 2, "deliver", "rb/lib/notifier.rb", 1, id="ruby"),
]

EVERY_LANGUAGE = {"embedding": {"enabled": False}, "navigation": {"skipLanguages": []}}


@pytest.fixture
def nav(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "nav", FILES)


def _column(root: Path, rel: str, line: int, name: str) -> int:
    """The UTF-16 column of the middle of the last ``name`` on ``line``."""
    text = (root / rel).read_text(encoding="utf-8").split("\n")[line]
    at = text.rindex(name) + len(name) // 2
    return len(text[:at].encode("utf-16-le")) // 2


async def _definition(client, root: Path, rel: str, line: int, character: int) -> list:
    result = await client.text_document_definition_async(types.DefinitionParams(
        text_document=types.TextDocumentIdentifier(uri=uri(root / rel)),
        position=types.Position(line=line, character=character)))
    return list(result or [])


async def test_definition_jumps_to_the_imported_definition_in_every_language(nav: Path, _isolated_index: Path):
    client = await start(nav, _isolated_index, "visual-studio-code", EVERY_LANGUAGE)
    try:
        await wait_for_progress_end(client)
        for case in CASES:
            rel, line, name, want_file, want_line = case.values
            got = await _definition(client, nav, rel, line, _column(nav, rel, line, name))
            assert got, f"{case.id}: no definition of {name}"
            first = got[0]
            assert isinstance(first, types.LocationLink), case.id
            assert first.target_uri == uri(nav / want_file), (case.id, [g.target_uri for g in got])
            assert first.target_selection_range.start.line == want_line, case.id
            # the link names the identifier it was asked from
            text = (nav / rel).read_text().split("\n")[line]
            o = first.origin_selection_range
            assert o is not None and o.start.line == line and text[o.start.character:o.end.character] == name
            # the decoy elsewhere is never the answer
            assert all("decoy" not in g.target_uri and "other" not in g.target_uri.rsplit("/", 1)[-1]
                       for g in got[:1]), case.id
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_definition_edges(nav: Path, _isolated_index: Path):
    """Whitespace and keywords get an empty answer; UTF-16 columns after an emoji; a
    qualified call prefers the qualifier's class; the default settings leave Python to
    its own language server; a file the index has no definition for gets nothing."""
    client = await start(nav, _isolated_index, "neovim", EVERY_LANGUAGE)
    try:
        await wait_for_progress_end(client)
        assert await _definition(client, nav, "app/main.py", 1, 0) == []  # an empty line
        assert await _definition(client, nav, "app/main.py", 0, 1) == []  # `from`, a keyword
        assert await _definition(client, nav, "app/main.py", 3, 2) == []  # `print`: defined nowhere here
        # after two emoji (two UTF-16 units each) the columns still land on the name
        line = (nav / "emoji/use.py").read_text().split("\n")[2]
        col = _column(nav, "emoji/use.py", 2, "area_of")
        got = await _definition(client, nav, "emoji/use.py", 2, col)
        assert got and got[0].target_uri == uri(nav / "shapes/geometry.py")
        o = got[0].origin_selection_range
        start16 = len(line[:line.rindex("area_of")].encode("utf-16-le")) // 2
        assert (o.start.character, o.end.character) == (start16, start16 + len("area_of"))
        # self.start in Second: Second's start, not First's (the same file, the class around)
        got = await _definition(client, nav, "jobs/runner.py", 10, _column(nav, "jobs/runner.py", 10, "start"))
        assert [(g.target_uri, g.target_selection_range.start.line) for g in got] == [
            (uri(nav / "jobs/runner.py"), 6)]
        # a bare helper() inside outer(): its own nested helper; inside later(): not that
        # one (nested in another function) but the module beside it
        got = await _definition(client, nav, "jobs/runner.py", 16, _column(nav, "jobs/runner.py", 16, "helper"))
        assert (got[0].target_uri, got[0].target_selection_range.start.line) == (uri(nav / "jobs/runner.py"), 14)
        got = await _definition(client, nav, "jobs/runner.py", 20, _column(nav, "jobs/runner.py", 20, "helper"))
        assert got[0].target_uri == uri(nav / "jobs/helpers.py")
        # Billing.total: the method of Billing first, Report's total after (or not at all)
        got = await _definition(client, nav, "java/com/acme/app/Main.java", 5,
                                _column(nav, "java/com/acme/app/Main.java", 5, "total"))
        assert got[0].target_uri.endswith("Billing.java")
    finally:
        await client.shutdown_session()
        await client.stop()
    client = await start(nav, _isolated_index, "neovim", NO_EMBEDDING)  # the default settings
    try:
        await wait_for_progress_end(client)
        assert await _definition(client, nav, "app/main.py", 3, _column(nav, "app/main.py", 3, "area_of")) == []
        got = await _definition(client, nav, "rb/app.rb", 2, _column(nav, "rb/app.rb", 2, "deliver"))
        assert got and got[0].target_uri == uri(nav / "rb/lib/notifier.rb")  # Ruby is answered
    finally:
        await client.shutdown_session()
        await client.stop()


def test_a_client_without_link_support_gets_locations(nav: Path, raw_lsp):
    server = raw_lsp()
    server.initialize(nav, EVERY_LANGUAGE)
    deadline = time.monotonic() + TIMEOUT
    # until the index is ready (the server's word, asked again): while it runs, the answer
    # is from the files indexed so far
    while not (server.request(f"s{time.monotonic()}", "sylk/status", {}).get("result") or {}).get("ready"):
        assert time.monotonic() < deadline, "the index never became ready"
        time.sleep(0.1)
    answer = server.request("d", "textDocument/definition", {
        "textDocument": {"uri": uri(nav / "rb/app.rb")},
        "position": {"line": 2, "character": _column(nav, "rb/app.rb", 2, "deliver")}})
    result = answer["result"]
    assert result and set(result[0]) == {"uri", "range"}
    assert result[0]["uri"] == uri(nav / "rb/lib/notifier.rb") and result[0]["range"]["start"]["line"] == 1


def test_cursor_at_reads_the_identifier_its_qualifier_and_utf16_columns():
    line = "x = '🎉'; obj.method_name(1)  # done"
    col = len(line[:line.index("method_name") + 3].encode("utf-16-le")) // 2
    c = defs.cursor_at(line, col, "python")
    assert c == defs.Cursor("method_name", "obj", col - 3, col - 3 + len("method_name"))
    assert defs.cursor_at("    return x", 5, "python") is None  # a keyword
    assert defs.cursor_at("    return x", 5) == defs.Cursor("return", "", 4, 10)  # no language: any word
    assert defs.cursor_at("a  b", 2, "python") is None  # between words
    assert defs.cursor_at("Type::make()", 7, "rust") == defs.Cursor("make", "Type", 6, 10)
    assert defs.cursor_at("p->next", 4, "c").qualifier == "p"


def test_nearness_orders_same_file_imports_folder_language():
    o = defs.Origin("pkg/a.py", "python", frozenset({"lib/b.py", "gopkg/"}))
    near = [defs.nearness(p, lang, o) for p, lang in [
        ("pkg/a.py", "python"), ("lib/b.py", "python"), ("gopkg/x.go", "go"), ("pkg/c.rb", "ruby"),
        ("z/d.py", "python"), ("z/e.go", "go")]]
    assert near == [defs.Near.SAME_FILE, defs.Near.IMPORTED, defs.Near.IMPORTED, defs.Near.SAME_FOLDER,
                    defs.Near.SAME_LANGUAGE, defs.Near.ELSEWHERE]


async def test_mcp_find_definition_ranks_from_the_file_that_uses_the_name(nav: Path, _isolated_index: Path):
    from conftest import mcp_call, mcp_call_error, mcp_indexed, mcp_session, mcp_wait_until, without_embedding

    async with mcp_session(without_embedding(nav), _isolated_index) as s:
        await mcp_wait_until(s, mcp_indexed, "the first index run")
        near = await mcp_call(s, "find_definition", name="area_of", path="app/main.py")
        assert [(d["path"], d["line"], d["near"]) for d in near["definitions"]] == [
            ("shapes/geometry.py", 1, "imported"), ("other/decoy.py", 1, "same_language")]
        # without a file: both, by the symbol table's order; a qualifier picks the container
        assert {d["path"] for d in (await mcp_call(s, "find_definition", name="area_of"))["definitions"]} == {
            "shapes/geometry.py", "other/decoy.py"}
        billing = await mcp_call(s, "find_definition", name="Billing.total")
        assert billing["definitions"][0]["container"] == "Billing"
        assert (await mcp_call(s, "find_definition", name="no_such_name_here"))["definitions"] == []
        assert "name" in await mcp_call_error(s, "find_definition", name="Billing.")
        # a path outside the workspace reads nothing: no ranking from it, no error
        outside = await mcp_call(s, "find_definition", name="area_of", path="../../etc/passwd")
        assert len(outside["definitions"]) == 2


def test_cli_def_prints_rg_style_lines_nearest_first(nav: Path):
    from test_cli import sylk

    near = sylk("def", "area_of", str(nav), "--from", str(nav / "app/main.py"))
    assert near.returncode == 0, near.stderr
    assert near.stdout.splitlines() == ["shapes/geometry.py:1:5: def area_of(radius):",
                                        "other/decoy.py:1:5: def area_of(side):"]
    found = json.loads(sylk("def", "Billing.total", str(nav), "--format", "json", "--no-refresh").stdout)
    assert (found[0]["path"], found[0]["container"], found[0]["line"]) == ("java/com/acme/Billing.java", "Billing", 4)
    none = sylk("def", "no_such_name", str(nav), "--no-refresh")
    assert none.returncode == 1 and none.stdout == ""
    outside = sylk("def", "area_of", str(nav), "--from", "/etc/hostname", "--no-refresh")
    assert outside.returncode == 2 and "not a file of" in outside.stderr
    empty = sylk("def", "x.", str(nav), "--no-refresh")
    assert empty.returncode == 2 and "no identifier" in empty.stderr


async def test_definition_follows_an_unsaved_buffer(nav: Path, _isolated_index: Path):
    """A function typed a moment ago (not saved) is where its call jumps, in the buffer's
    own lines; the editor's text, not the disk's, tells where the cursor is."""
    client = await start(nav, _isolated_index, "visual-studio-code", EVERY_LANGUAGE)
    try:
        await wait_for_progress_end(client)
        doc = uri(nav / "rb/app.rb")
        text = (nav / "rb/app.rb").read_text()
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=doc, language_id="ruby", version=1, text=text)))
        typed = "def deliver(x)\n  x\nend\n\n" + text + "deliver(1)\n"
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=doc, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=typed)]))
        last = len(typed.split("\n")) - 2  # the line of `deliver(1)`

        async def jumped_home() -> list:
            while True:
                got = await _definition(client, nav, "rb/app.rb", last, 2)
                if got and got[0].target_uri == doc:
                    return got
                await asyncio.sleep(0.05)
        got = await asyncio.wait_for(jumped_home(), 30)
        assert got[0].target_selection_range.start.line == 0 and len(got) == 1
    finally:
        await client.shutdown_session()
        await client.stop()
