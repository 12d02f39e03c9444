"""Find References from the index (ingest/occurrences.py, search/references.py,
engine/reference_index.py): every whole-word occurrence of a name, as ``rg -w -F`` finds
it in the indexed files, with UTF-16 columns and comment/string/call flags; fresh after
a change on disk and with an unsaved buffer; over stdio, the CLI and MCP."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import start_lsp, uri, wait_for_progress_end, write_tree
from lsprotocol import types
from sylk.config import Settings
from sylk.engine.workspace import Workspace
from sylk.ingest import occurrences as oc
from sylk.ingest.symbols import extract_marked

FILES = {
    "app/users.py": (
        "# get is the verb; get_user is not get\n"
        "def get(key):\n"
        "    return get_user(key) or '''get'''\n"
        "\n"
        "def get_user(key):\n"
        "    return 2get if False else get\n"
    ),
    "app/caller.py": "from app.users import get\n\nvalue = get('a') + get('b')  # get twice\n",
    "web/cart.ts": "export function get(id: string) { return id; }\nconst s = `get ${get('x')}`;\n",
    "native/buf.c": "/* get */\nint get(int x) { return x; }\nint main(void) { return get(1) + get_all(); }\n",
    "rb/box.rb": "class Box\n  def get(k)\n    k\n  end\nend\nBox.new.get(1) # get\n",
    "emoji/note.py": "s = '🎉'; get = 1  # café get\ncafé = get\nnaïve_get = 3\n",
    "docs/README.md": "Call `get` or get_user; getter is not get.\n",
    "data/words.txt": "get,get;get\tget\n",
}

NO_EMBED = {"embedding": {"enabled": False}}


@pytest.fixture
def refs_root(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "refs", FILES)


@pytest.fixture
def ws(refs_root: Path, tmp_path: Path):
    w = Workspace(refs_root, Settings(index_dir=str(tmp_path / "index")))
    w.index()
    yield w
    w.close()


def _words(data: bytes, language: str | None = None) -> dict[str, list[tuple[int, int, int]]]:
    marks = extract_marked(data, language)[1] if language else None
    occ = oc.decode(oc.extract(data, marks))
    return {w: [(o.line, o.column, o.flags) for o in occ.of(w)] for w in occ.words}


def test_whole_identifiers_only():
    words = _words(b"get get_user x.get( 2get get2 _get $get get-x\n")
    assert [c for _l, c, _f in words["get"]] == [0, 15, 36, 40]  # `x.get(`, `$get`, `get-x`
    assert "get_user" in words and "get2" in words and "_get" in words
    assert "2get" not in words  # a run starting with a digit is no identifier, as for rg -w


def test_utf16_columns_and_unicode_words():
    line = "s = '🎉'; get = 1  # café get naïve\n"
    words = _words(line.encode())
    def col(i: int) -> int:
        return len(line[:i].encode("utf-16-le")) // 2
    assert [c for _l, c, _f in words["get"]] == [col(line.index("get")), col(line.rindex("get"))]
    assert words["café"] == [(0, col(line.index("café")), 0)]
    assert "naïve" in words and "caf" not in words
    # invalid UTF-8 costs the bytes, not the file
    bad = _words(b"ok \xff\xfeget more\n")
    assert "ok" in bad and "more" in bad and "get" in bad


@pytest.mark.parametrize("language,source,comment,string,call", [
    ("python", b"# get\nx = 'get'\nget()\nobj.get(1)\n", [0], [1], [2, 3]),
    ("javascript", b"// get\nconst x = `get ${get()}`;\nobj.get(1)\n", [0], [1], [1, 2]),
    ("typescript", b"// get\nconst x: T = `get ${get()}`;\nobj.get(1)\n", [0], [1], [1, 2]),
    ("go", b"package p\n// get\nvar x = \"get\"\nfunc f() { get(); o.get() }\n", [1], [2], [3, 3]),
    ("rust", b"// get\nfn f() { let x = \"get\"; get(); o.get(); T::get(); get!(); }\n", [0], [1], [1, 1, 1, 1]),
    ("java", b"// get\nclass A { void f() { String s = \"get\"; get(); o.get(); } }\n", [0], [1], [1, 1]),
    ("c", b"/* get */\nvoid f() { char *s = \"get\"; get(); o.get(); }\n", [0], [1], [1, 1]),
    ("ruby", b"# get\nx = 'get'\nget(1)\no.get(2)\n", [0], [1], [2, 3]),
    ("csharp", b"// get\nclass A { void F() { var s = \"get\"; get(); o.get(); } }\n", [0], [1], [1, 1]),
])
def test_flags_from_the_tree(language, source, comment, string, call):
    got = _words(source, language)["get"]
    assert [ln for ln, _c, f in got if f & oc.COMMENT] == comment
    assert [ln for ln, _c, f in got if f & oc.STRING] == string
    assert [ln for ln, _c, f in got if f & oc.CALL] == call


def test_damaged_data_is_refused():
    blob = oc.extract(b"def get(): pass\n")
    with pytest.raises(oc.OccurrenceDataError):
        oc.decode(blob[:-3])
    with pytest.raises(oc.OccurrenceDataError):
        oc.decode(b"\x09" + blob[1:])


def _rg(root: Path, files: list[str], name: str) -> set[tuple[str, int, int]]:
    """(path, 0-based line, 0-based UTF-16 column) of each ``rg -w -F`` match."""
    out = subprocess.run(["rg", "-w", "-F", "-o", "-n", "--column", "--no-heading", "--with-filename",
                          "--color", "never", name, *files], cwd=root, capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    found = set()
    for row in out.stdout.splitlines():
        path, line, col, _match = row.split(":", 3)
        text = (root / path).read_bytes().split(b"\n")[int(line) - 1]
        found.add((path, int(line) - 1, len(text[:int(col) - 1].decode().encode("utf-16-le")) // 2))
    return found


def test_references_equal_rg_whole_word_matches(ws: Workspace, refs_root: Path):
    files = sorted(ws.manifest.files())
    assert set(files) == set(FILES)
    names = {"get", "get_user", "key", "café", "Box", "x", "int", "getter", "naïve_get"}
    for name in names:
        got = ws.find_references(name, limit=None)
        mine = {(r.path, r.line, r.column) for r in got.references}
        assert mine == _rg(refs_root, files, name), name
        assert all(r.end - r.column == len(name.encode("utf-16-le")) // 2 for r in got.references)


def test_declarations_text_and_limit(ws: Workspace):
    every = ws.find_references("get")
    declared = {(r.path, r.line) for r in every.references if every.is_declaration(r)}
    assert declared == {("app/users.py", 1), ("web/cart.ts", 0), ("native/buf.c", 1), ("rb/box.rb", 1)}
    without = ws.find_references("get", include_declaration=False)
    assert len(without.references) == len(every.references) - 4
    code = ws.find_references("get", comments_and_strings=False)
    assert {r.path for r in every.references if r.flags & oc.TEXT} - {r.path for r in code.references} <= {
        "app/users.py", "app/caller.py", "native/buf.c", "web/cart.ts", "rb/box.rb", "emoji/note.py"}
    assert all(r.code for r in code.references) and len(code.references) < len(every.references)
    assert any(r.in_comment for r in every.references) and any(r.in_string for r in every.references)
    assert any(r.call for r in every.references if r.path == "app/caller.py")
    cut = ws.find_references("get", limit=3, first="rb/box.rb")
    assert cut.truncated and cut.total == len(every.references) and len(cut.references) == 3
    assert [r.path for r in cut.references] == ["rb/box.rb"] * 3  # the asking file first


def test_references_follow_disk_and_unsaved_buffers(ws: Workspace, refs_root: Path):
    before = {r.path for r in ws.find_references("renamed_thing").references}
    assert before == set()
    (refs_root / "app/caller.py").write_text("renamed_thing = 1\nprint(renamed_thing)\n", encoding="utf-8")
    ws.reindex_paths(["app/caller.py"])
    got = ws.find_references("renamed_thing")
    assert [(r.path, r.line) for r in got.references] == [("app/caller.py", 0), ("app/caller.py", 1)]
    assert not [r for r in ws.find_references("get").references if r.path == "app/caller.py"]
    # an unsaved buffer answers until it is closed
    ws.set_unsaved("app/users.py", b"def fresh_name():\n    return fresh_name\n")
    assert [(r.path, r.line) for r in ws.find_references("fresh_name").references] == [
        ("app/users.py", 0), ("app/users.py", 1)]
    assert not [r for r in ws.find_references("get_user").references if r.path == "app/users.py"]
    ws.set_unsaved("app/users.py", None)
    assert not ws.find_references("fresh_name").references
    assert [r for r in ws.find_references("get_user").references if r.path == "app/users.py"]
    # a deleted file leaves
    (refs_root / "rb/box.rb").unlink()
    ws.reindex_paths(["rb/box.rb"])
    assert "rb/box.rb" not in {r.path for r in ws.find_references("get").references}


def test_a_new_process_reads_the_same_references(ws: Workspace, refs_root: Path, tmp_path: Path):
    want = [(r.path, r.line, r.column, r.flags) for r in ws.find_references("get").references]
    ws.close()
    again = Workspace(refs_root, Settings(index_dir=str(tmp_path / "index")))
    try:
        assert [(r.path, r.line, r.column, r.flags) for r in again.find_references("get").references] == want
    finally:
        again.close()


def _position(root: Path, rel: str, line: int, name: str) -> types.Position:
    text = (root / rel).read_text(encoding="utf-8").split("\n")[line]
    return types.Position(line=line, character=len(text[:text.index(name) + 1].encode("utf-16-le")) // 2)


async def test_references_over_stdio(refs_root: Path, _isolated_index: Path):
    """Ruby and C get answers by default; Python is left to its own server unless the skip
    list is emptied; includeDeclaration is honoured; the ranges are the names'."""
    answers: list = []
    client = await start_lsp(refs_root, _isolated_index, "neovim", NO_EMBED, result=answers)
    try:
        await wait_for_progress_end(client)
        assert answers[0].capabilities.references_provider
        c_params = types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=uri(refs_root / "native/buf.c")),
            position=_position(refs_root, "native/buf.c", 2, "get("),
            context=types.ReferenceContext(include_declaration=True))
        got = await client.text_document_references_async(c_params)
        assert got, "no references from C"
        assert got[0].uri == uri(refs_root / "native/buf.c")  # the asking file first
        files = sorted({g.uri for g in got})
        assert uri(refs_root / "app/users.py") in files and uri(refs_root / "data/words.txt") in files
        for g in got:
            path = Path(g.uri.removeprefix("file://"))
            text = path.read_text(encoding="utf-8").split("\n")[g.range.start.line]
            units = text.encode("utf-16-le")
            assert units[2 * g.range.start.character:2 * g.range.end.character].decode("utf-16-le") == "get"
        c_params.context = types.ReferenceContext(include_declaration=False)
        fewer = await client.text_document_references_async(c_params)
        assert len(fewer) == len(got) - 4
        py = await client.text_document_references_async(types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=uri(refs_root / "app/caller.py")),
            position=_position(refs_root, "app/caller.py", 2, "get("),
            context=types.ReferenceContext(include_declaration=True)))
        assert not py  # python: its own language server answers (navigation.skipLanguages)
        blank = await client.text_document_references_async(types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=uri(refs_root / "rb/box.rb")),
            position=types.Position(line=0, character=1),  # on the keyword "class"
            context=types.ReferenceContext(include_declaration=True)))
        assert not blank
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_sylk_references_answers_every_language_with_context(refs_root: Path, _isolated_index: Path):
    """``sylk/references`` (what :SylkRefs asks) answers in Python too, by name or at a
    position, with each occurrence's symbol and text; bad params get an error."""
    from pygls.exceptions import JsonRpcInvalidParams

    client = await start_lsp(refs_root, _isolated_index, "neovim", NO_EMBED)
    try:
        await wait_for_progress_end(client)
        by_name = await client.protocol.send_request_async("sylk/references", {"name": "get_user"})
        assert by_name.total == 4 and not by_name.truncated
        first = by_name.references[0]
        assert (first.path, first.range.start.line, first.range.start.character, first.symbol) == (
            "app/users.py", 0, 19, "")
        assert "comment" in tuple(first) and first.uri == uri(refs_root / "app/users.py")  # its "in" field
        at = await client.protocol.send_request_async("sylk/references", {
            "textDocument": {"uri": uri(refs_root / "app/caller.py")}, "position": {"line": 2, "character": 9},
            "codeOnly": True, "includeDeclaration": False, "limit": 2})
        assert at.name == "get" and at.truncated and len(at.references) == 2
        assert at.references[0].path == "app/caller.py"  # the asking file first
        assert all("code" in tuple(r) and not r.declaration for r in at.references)
        for bad in ({"name": "a b"}, {"name": "x", "limit": 0}, {"position": {"line": 0}}, []):
            with pytest.raises(JsonRpcInvalidParams):
                await client.protocol.send_request_async("sylk/references", bad)
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_references_follow_an_unsaved_buffer(refs_root: Path, _isolated_index: Path):
    """A name typed a moment ago (not saved) is found where the buffer has it; closing the
    buffer without saving brings back the file on disk."""
    import asyncio

    client = await start_lsp(refs_root, _isolated_index, "visual-studio-code", NO_EMBED)
    try:
        await wait_for_progress_end(client)
        doc = uri(refs_root / "rb/box.rb")
        text = (refs_root / "rb/box.rb").read_text()
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=doc, language_id="ruby", version=1, text=text)))
        typed = "typed_here = 1\n" + text + "puts typed_here\n"
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=doc, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=typed)]))
        params = types.ReferenceParams(text_document=types.TextDocumentIdentifier(uri=doc),
                                       position=types.Position(line=0, character=2),
                                       context=types.ReferenceContext(include_declaration=True))

        async def found(n: int) -> list:
            while True:
                got = await client.text_document_references_async(params)
                if len(got or ()) == n:
                    return got
                await asyncio.sleep(0.05)
        got = await asyncio.wait_for(found(2), 30)
        assert [(g.uri, g.range.start.line, g.range.start.character) for g in got] == [
            (doc, 0, 0), (doc, len(typed.split("\n")) - 2, 5)]
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=doc)))
        by_name = {"name": "typed_here"}

        async def gone() -> None:
            while (await client.protocol.send_request_async("sylk/references", by_name)).total:
                await asyncio.sleep(0.05)
        await asyncio.wait_for(gone(), 30)
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_references_off_is_not_registered(refs_root: Path, _isolated_index: Path):
    answers: list = []
    client = await start_lsp(refs_root, _isolated_index, "neovim", {**NO_EMBED, "navigation": {"references": False}},
                             result=answers)
    try:
        assert not answers[0].capabilities.references_provider
    finally:
        await client.shutdown_session()
        await client.stop()


def test_cli_refs(refs_root: Path):
    from test_cli import sylk

    out = sylk("refs", "get_user", str(refs_root))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "app/users.py:1:20: # get is the verb; get_user is not get",
        "app/users.py:3:12: return get_user(key) or '''get'''  (get)",
        "app/users.py:5:5: def get_user(key):  (get_user)",
        "docs/README.md:1:15: Call `get` or get_user; getter is not get.",
    ]
    rows = json.loads(sylk("refs", "get", str(refs_root), "--format", "json", "--code-only", "--no-refresh").stdout)
    assert rows and all(r["in"] == "code" for r in rows)
    assert {"path", "line", "column", "endColumn", "symbol", "text", "declaration", "call"} <= set(rows[0])
    cut = sylk("refs", "get", str(refs_root), "--limit", "2", "--no-refresh")
    assert len(cut.stdout.splitlines()) == 2 and "the first 2 of" in cut.stderr
    none = sylk("refs", "nothing_named_so", str(refs_root), "--no-refresh")
    assert none.returncode == 1 and none.stdout == ""
    bad = sylk("refs", "get(", str(refs_root), "--no-refresh")
    assert bad.returncode == 2 and "not an identifier" in bad.stderr


async def test_mcp_find_references(refs_root: Path, _isolated_index: Path):
    from conftest import mcp_call, mcp_call_error, mcp_indexed, mcp_session, mcp_wait_until, without_embedding

    async with mcp_session(without_embedding(refs_root), _isolated_index) as s:
        await mcp_wait_until(s, mcp_indexed, "the first index run")
        first = await mcp_call(s, "find_references", name="get", limit=3)
        assert first["total"] > 3 and len(first["references"]) == 3 and first["nextOffset"] == 3
        rest = await mcp_call(s, "find_references", name="get", limit=100, offset=3)
        assert len(rest["references"]) == first["total"] - 3 and rest["nextOffset"] is None
        ruby = await mcp_call(s, "find_references", name="get", path="rb/**", code_only=True)
        assert [(r["line"], r["symbol"], r["call"]) for r in ruby["references"]] == [
            (2, "Box.get", False), (6, "", True)]
        assert "name" in await mcp_call_error(s, "find_references", name="x y")


def test_a_damaged_row_costs_only_its_file(ws: Workspace, refs_root: Path, tmp_path: Path, caplog):
    import sqlite3

    before = {r.path for r in ws.find_references("get").references}
    ws.close()
    db = sqlite3.connect(tmp_path / "index" / "manifest.sqlite3")
    with db:
        db.execute("UPDATE occurrences SET data = x'01020304' WHERE path = 'app/caller.py'")
    db.close()
    again = Workspace(refs_root, Settings(index_dir=str(tmp_path / "index")))
    try:
        assert {r.path for r in again.find_references("get").references} == before - {"app/caller.py"}
        assert "app/caller.py" in caplog.text and "not used" in caplog.text
        # the next index run of that file writes it again
        (refs_root / "app/caller.py").write_text("from app.users import get\nget(1)\n", encoding="utf-8")
        again.index()
        assert "app/caller.py" in {r.path for r in again.find_references("get").references}
    finally:
        again.close()


def test_a_reader_follows_the_writers_runs(ws: Workspace, refs_root: Path, tmp_path: Path):
    """A second process on the same index (read-only) reads again only the files the
    writer's run changed, and answers as the writer does."""
    reader = Workspace(refs_root, Settings(index_dir=str(tmp_path / "index")), writable=False)
    try:
        assert not reader.find_references("followed_name").references
        before = reader.find_references("get").total
        (refs_root / "data/words.txt").write_text("followed_name get\n", encoding="utf-8")
        ws.reindex_paths(["data/words.txt"])
        assert reader.follow_writer()
        assert [(r.path, r.line) for r in reader.find_references("followed_name").references] == [
            ("data/words.txt", 0)]
        assert reader.find_references("get").total == before - 3 == ws.find_references("get").total
    finally:
        reader.close()
