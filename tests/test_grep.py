"""Exact and regex search (issue 16): line-level hits from the trigram index, kept fresh
through disk changes, saves and unsaved buffers, with paging, filters, the enclosing
symbol and UTF-16 columns; over stdio (``sylk/search`` modes exact and regex, a
``/regex/`` query), the CLI (``sylk grep``) and MCP (``grep``). The randomized
comparison with rg is tests/test_grep_rg.py; the pattern analysis tests/test_pattern.py."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TIMEOUT, start_lsp, uri, wait_for_progress_end, write_tree
from lsprotocol import types
from sylk.config import Settings
from sylk.engine.workspace import Workspace
from sylk.errors import FieldError
from sylk.ingest import grams
from sylk.search.query import Filters, GrepRequest

FILES = {
    "app/users.py": "class UserStore:\n    def get(self, key):\n        return self.rows.get(key)  # TODO(alice)\n\n"
                    "    def get_user(self, uid):\n        return self.get(uid)\n",
    "app/http.py": 'HEADERS = {"Content-Type": "application/json"}\n\n\ndef fetch(url):\n'
                   '    return session.get(url, headers=HEADERS)\n',
    "native/buf.c": "int get(struct buf *b) {\n    return b->data[b->pos];\n}\n",
    "web/greet.ts": "export function greet(name: string) {\n  return `👋 héllo ${name}`; // Exportable\n}\n",
    "docs/notes.md": "# Notes\n\nThe CONTENT-TYPE header, and content-type in lower case.\n",
}
NO_EMBED = {"embedding": {"enabled": False}}


@pytest.fixture
def grep_root(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "grep", FILES)


@pytest.fixture
def ws(grep_root: Path, tmp_path: Path):
    w = Workspace(grep_root, Settings(index_dir=str(tmp_path / "index")))
    w.index()
    yield w
    w.close()


def lines(ws: Workspace, pattern: str, **kw) -> list[tuple[str, int]]:
    return [(h.path, h.line) for h in ws.grep(GrepRequest(pattern, limit=None, **kw)).hits]


def test_exact_strings_with_punctuation(ws: Workspace):
    assert lines(ws, "b->data[", mode="exact") == [("native/buf.c", 1)]
    assert lines(ws, '"Content-Type"', mode="exact") == [("app/http.py", 0)]
    assert lines(ws, "TODO(alice)", mode="exact") == [("app/users.py", 2)]
    hit = ws.grep(GrepRequest("TODO(alice)", "exact")).hits[0]
    assert (hit.symbol, hit.container, hit.kind) == ("get", "UserStore", "method")
    assert hit.text == "        return self.rows.get(key)  # TODO(alice)"
    assert hit.matches == ((hit.text.index("TODO"), len(hit.text)),)


def test_case_modes_and_whole_words(ws: Workspace):
    # smart: insensitive for a lower-case pattern, sensitive once it holds an upper-case letter
    assert lines(ws, "content-type", mode="exact") == [("app/http.py", 0), ("docs/notes.md", 2)]
    assert lines(ws, "Content-Type", mode="exact") == [("app/http.py", 0)]
    assert lines(ws, "Content-Type", mode="exact", case=False) == [("app/http.py", 0), ("docs/notes.md", 2)]
    assert lines(ws, "content-type", mode="exact", case=True) == [("docs/notes.md", 2)]
    # whole words: get, not get_user (nor Export inside Exportable)
    assert lines(ws, "get", whole_word=True) == [
        ("app/http.py", 4), ("app/users.py", 1), ("app/users.py", 2), ("app/users.py", 5), ("native/buf.c", 0)]
    assert ("app/users.py", 4) in lines(ws, "get")
    assert lines(ws, "export", whole_word=True, case=False) == [("web/greet.ts", 0)]
    assert lines(ws, "Export.*", case=True) == [("web/greet.ts", 1)]


def test_regex_and_utf16_columns(ws: Workspace):
    hits = ws.grep(GrepRequest(r"h.llo \$\{\w+\}", limit=None)).hits
    assert [(h.path, h.line) for h in hits] == [("web/greet.ts", 1)]
    text = hits[0].text
    start, end = hits[0].matches[0]
    units = text.encode("utf-16-le")
    assert units[2 * start:2 * end].decode("utf-16-le") == "héllo ${name}"
    assert start == len(text[:text.index("h")].encode("utf-16-le")) // 2  # the emoji counts two units
    assert lines(ws, r"def \w+_user\(") == [("app/users.py", 4)]
    assert lines(ws, r"^\s+return (self|b)") == [("app/users.py", 2), ("app/users.py", 5), ("native/buf.c", 1)]


def test_every_match_on_a_line_paging_and_totals(ws: Workspace):
    hit = ws.grep(GrepRequest("get", whole_word=True, filters=Filters(paths=("app/users.py",)))).hits[1]
    assert hit.line == 2 and hit.matches == ((25, 28),)
    two = ws.grep(GrepRequest("return", limit=2))
    assert two.total_hits == 5 and not two.lower_bound and len(two.hits) == 2
    rest = ws.grep(GrepRequest("return", limit=2, offset=2))
    everything = [(h.path, h.line) for h in ws.grep(GrepRequest("return", limit=None)).hits]
    assert [(h.path, h.line) for h in two.hits + rest.hits] == everything[:4]
    assert everything == sorted(everything)  # files in path order, lines in order


def test_filters(ws: Workspace):
    assert lines(ws, "return", filters=Filters(languages=("c",))) == [("native/buf.c", 1)]
    assert lines(ws, "content", filters=Filters(types=("markdown",))) == [("docs/notes.md", 2)]
    assert lines(ws, "return", filters=Filters(paths=("app/**",), kinds=("function",))) == [("app/http.py", 4)]
    assert lines(ws, "return", filters=Filters(kinds=("method",))) == [("app/users.py", 2), ("app/users.py", 5)]


def test_no_literal_scans_and_a_time_limit_gives_a_marked_partial_answer(ws: Workspace):
    every = ws.grep(GrepRequest(r"\w+", limit=None))
    assert every.scanned and every.files_searched == len(FILES) and "every indexed file" in every.message
    selective = ws.grep(GrepRequest("rows.get", mode="exact"))
    assert not selective.scanned and selective.files_searched == 1
    cut = ws.grep(GrepRequest(r"\w+", time_limit_s=0.0))
    assert cut.partial and cut.lower_bound and "partial" in cut.message


def test_bad_patterns_are_refused_clearly(ws: Workspace):
    for pattern, words in (("a(", "position 1"), ("", "empty"), ("a\nb", "line break"),
                           ("[[:alpha:]]+", "POSIX classes such as [:alpha:]")):
        with pytest.raises(FieldError) as err:
            ws.grep(GrepRequest(pattern))
        assert words in str(err.value), (pattern, str(err.value))


def test_disk_changes_and_deletions(ws: Workspace, grep_root: Path):
    (grep_root / "app/http.py").write_text("def fetch(url):\n    return retry_with_backoff(url)\n", encoding="utf-8")
    (grep_root / "native/buf.c").unlink()
    ws.index()
    assert lines(ws, "retry_with_backoff(", mode="exact") == [("app/http.py", 1)]
    assert lines(ws, "Content-Type", mode="exact") == []
    assert lines(ws, "b->data", mode="exact") == []
    assert grams.path_key("native/buf.c") not in ws.lexical.file_keys()
    assert len(ws.lexical.file_keys()) == len(FILES) - 1


def test_unsaved_buffers_and_saves(ws: Workspace, grep_root: Path):
    typed = FILES["app/users.py"] + "\ndef typed_a_moment_ago():\n    pass\n"
    ws.set_unsaved("app/users.py", typed.encode())
    assert lines(ws, "typed_a_moment_ago", mode="exact") == [("app/users.py", 7)]
    ws.set_unsaved("app/users.py", None)  # closed without saving: the disk again
    assert lines(ws, "typed_a_moment_ago", mode="exact") == []
    # saved: found at once (from the buffer until the re-index is over), then from the index
    ws.set_unsaved("app/users.py", typed.encode())
    (grep_root / "app/users.py").write_text(typed, encoding="utf-8")
    ws.keep_unsaved("app/users.py")
    assert lines(ws, "typed_a_moment_ago", mode="exact") == [("app/users.py", 7)]
    ws.reindex_paths(["app/users.py"])
    assert not ws.lines._buffers  # the index answers for the file now
    assert lines(ws, "typed_a_moment_ago", mode="exact") == [("app/users.py", 7)]
    # a new file, not saved yet, is searched too
    ws.set_unsaved("app/new.py", b"brand_new_text = 1\n")
    assert lines(ws, "brand_new_text", mode="exact") == [("app/new.py", 0)]


def test_a_reader_follows_the_writer(ws: Workspace, grep_root: Path, tmp_path: Path):
    reader = Workspace(grep_root, Settings(index_dir=str(tmp_path / "index")), writable=False)
    try:
        assert lines(reader, "followed_text", mode="exact") == []
        (grep_root / "docs/more.md").write_text("followed_text here\n", encoding="utf-8")
        ws.index()
        assert reader.follow_writer()
        assert lines(reader, "followed_text", mode="exact") == [("docs/more.md", 0)]
    finally:
        reader.close()


# A writer process killed (os._exit(9): no close, no flush) in the middle of an index run
# that adds, changes and deletes files: before its text commit (what it wrote is lost) or
# between the text commit and the manifest's (the trigram index holds documents the
# manifest does not know). The kill is made from inside the run, at that point.
KILLED_RUN = """
import os, sys
from pathlib import Path
sys.path.insert(0, {server!r})
from sylk.config import Settings
from sylk.engine.workspace import Workspace
root, index, at = Path({root!r}), {index!r}, {at!r}
ws = Workspace(root, Settings(index_dir=index))
ws.index(workers=1)
(root / "late.txt").write_text("late_words here\\n")
users = root / "app/users.py"
users.write_text(users.read_text().replace("TODO(alice)", "TODO(bob)"))
(root / "docs/notes.md").unlink()

def killed(*args, **kwargs):
    os._exit(9)

if at == "before the text commit":
    ws.stores.lexical.commit = killed
else:
    ws.stores.apply = killed  # called right after the text commit
ws.index(workers=1)
sys.exit(3)  # not reached: the run was killed in its middle
"""


@pytest.mark.parametrize("at", [
    "before the text commit",
    "between the text and the manifest commits",
])
def test_the_trigram_index_reopens_after_a_kill_in_the_middle_of_a_run(grep_root: Path, tmp_path: Path, at: str):
    """Opened again and brought up to date, the index of a writer killed mid-run answers
    exact search as the disk reads: the added file once, the changed line's new text and
    not its old, nothing of the deleted file; its file documents and manifest agree."""
    index = tmp_path / "killed"
    code = KILLED_RUN.format(server=str(Path(__file__).parents[1] / "server"), root=str(grep_root),
                             index=str(index), at=at)
    child = subprocess.run([sys.executable, "-c", code], check=False, timeout=TIMEOUT, capture_output=True, text=True)
    assert child.returncode == 9, child.stderr  # killed in the middle of its second run
    again = Workspace(grep_root, Settings(index_dir=str(index)))
    try:
        again.index()
        assert lines(again, "late_words", mode="exact") == [("late.txt", 0)]
        assert lines(again, "TODO(bob)", mode="exact") == [("app/users.py", 2)]
        assert lines(again, "TODO(alice)", mode="exact") == []
        assert lines(again, "CONTENT-TYPE header", mode="exact") == []
        assert sorted(again.lexical.file_keys()) == sorted(grams.path_key(p) for p in again.manifest.files())
        assert len(again.lexical.file_keys()) == len(FILES)  # 5 files, one deleted, one added
    finally:
        again.close()


def test_a_file_without_its_trigram_document_is_indexed_again_on_open(grep_root: Path, tmp_path: Path):
    index = tmp_path / "lost"
    import tantivy
    from sylk.store.lexical import build_grams_schema

    ws = Workspace(grep_root, Settings(index_dir=str(index)))
    ws.index()
    ws.close()
    grams_index = tantivy.Index(build_grams_schema(), path=str(index / "grams"))
    writer = grams_index.writer(heap_size=15_000_000, num_threads=1)
    writer.delete_documents_by_term("path", "native/buf.c")  # lost (damage from outside)
    writer.commit()
    writer.wait_merging_threads()
    again = Workspace(grep_root, Settings(index_dir=str(index)))
    try:
        assert "1 file again (no trigram document)" in (again.repair_note or "")
        assert lines(again, "b->data", mode="exact") == [("native/buf.c", 1)]
    finally:
        again.close()


def test_file_grams_hold_every_literal_of_the_text():
    text = "Straße ΣΊΣΥΦΟΣ İstanbul 👋 x\r\ny->z"
    held = set(grams.file_grams(text).split())
    for literal in ("strasse", "ΣΊΣΥΦΟΣ", "σίσυφος", "istanbul", "İstanbul", "👋 x", "y->z", "\r"):
        assert set(grams.literal_grams(literal)) <= held or len(literal.encode()) < 3, literal
    assert not any("0a" in (g[:2], g[2:4], g[4:]) for g in held)  # no trigram across a line break


def test_a_workers_table_finds_the_same_trigrams_as_a_sort(monkeypatch: pytest.MonkeyPatch):
    import numpy as np

    texts = [FILES[k] for k in sorted(FILES)] + ["aaaa aaaa\nabcabc", "İı ß", "ab", ""]
    sorted_ = [sorted(grams.file_grams(t).split()) for t in texts]
    monkeypatch.setattr(grams, "_table", np.full(1 << 24, 7, np.int32))  # stale values must not matter
    assert [sorted(grams.file_grams(t, t.encode()).split()) for t in texts] == sorted_


# -- over stdio, the CLI and MCP ------------------------------------------------------------------

async def _search(client, params: dict) -> dict:
    return await client.protocol.send_request_async("sylk/search", params)


async def test_line_search_over_stdio(grep_root: Path, _isolated_index: Path):
    """Modes exact and regex and a /regex/ query answer with line hits (URI, ranges of every
    match, the enclosing symbol); a bad pattern is InvalidParams; a saved edit is found at once."""
    from pygls.exceptions import JsonRpcInvalidParams

    client = await start_lsp(grep_root, _isolated_index, "visual-studio-code", NO_EMBED)
    try:
        await wait_for_progress_end(client)
        got = await _search(client, {"query": "get(", "mode": "exact", "wholeWord": False, "limit": 2})
        assert got.mode == "exact" and got.totalHits == 5 and len(got.hits) == 2 and not got.totalHitsLowerBound
        first = got.hits[0]
        assert (first.uri, first.line, first.symbol, first.containerName) == (
            uri(grep_root / "app/http.py"), 4, "fetch", "")
        assert [(m.start.character, m.end.character) for m in first.matches] == [(19, 23)]
        inline = await _search(client, {"query": "lang:c /b->\\w+\\[/"})
        assert inline.mode == "regex" and [(h.path, h.line) for h in inline.hits] == [("native/buf.c", 1)]
        for bad in ({"query": "a(", "mode": "regex"}, {"query": "x", "mode": "exact", "caseSensitive": "yes"},
                    {"query": "x", "mode": "exact", "filters": {"roles": ["test"]}}):
            with pytest.raises(JsonRpcInvalidParams):
                await _search(client, bad)
        # freshness: saved, then searched at once
        doc = uri(grep_root / "docs/notes.md")
        text = FILES["docs/notes.md"] + "\nsaved_just_now (with parens)\n"
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=doc, language_id="markdown", version=1, text=FILES["docs/notes.md"])))
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=doc, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        (grep_root / "docs/notes.md").write_text(text, encoding="utf-8")
        client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(
            uri=doc)))

        async def found() -> list:
            while not (hits := (await _search(client, {"query": "just_now (with", "mode": "exact"})).hits):
                await asyncio.sleep(0.02)
            return hits
        hits = await asyncio.wait_for(found(), 30)
        assert [(h.path, h.line) for h in hits] == [("docs/notes.md", 4)]
    finally:
        await client.shutdown_session()
        await client.stop()


def _sylk(*args: str, env_index: Path, cwd: Path) -> subprocess.CompletedProcess:
    import os

    exe = Path(sys.executable).parent / "sylk"
    return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "SYLK_INDEX_DIR": str(env_index), "NO_COLOR": "1"}, timeout=TIMEOUT)


def test_cli_grep(grep_root: Path, tmp_path: Path):
    index = tmp_path / "cli-index"
    out = _sylk("grep", "-F", "TODO(alice)", str(grep_root), env_index=index, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "app/users.py:3:38:        return self.rows.get(key)  # TODO(alice)\n"
    counted = _sylk("grep", "-c", "-w", "get", str(grep_root), env_index=index, cwd=tmp_path)
    assert counted.stdout.splitlines() == ["app/http.py:1", "app/users.py:3", "native/buf.c:1"]
    # rg's default: case-sensitive; -i and -S as rg
    assert _sylk("grep", "content-type", str(grep_root), env_index=index, cwd=tmp_path).stdout.count("\n") == 1
    assert _sylk("grep", "-i", "content-type", str(grep_root), env_index=index, cwd=tmp_path).stdout.count("\n") == 2
    as_json = json.loads(_sylk("grep", "--json", "--lang", "typescript", "héllo", str(grep_root),
                               env_index=index, cwd=tmp_path).stdout)
    assert as_json["totalHits"] == 1 and as_json["hits"][0]["line"] == 2
    none = _sylk("grep", "no_such_text_anywhere", str(grep_root), env_index=index, cwd=tmp_path)
    assert none.returncode == 1 and none.stdout == ""
    bad = _sylk("grep", "a(", str(grep_root), env_index=index, cwd=tmp_path)
    assert bad.returncode == 2 and "position 1" in bad.stderr
    # sylk search: a /regex/ query is a line search (smart case), inline filters and all
    slashed = _sylk("search", "lang:python /def \\w+_user/", str(grep_root), env_index=index, cwd=tmp_path)
    assert slashed.returncode == 0 and slashed.stdout == "app/users.py:5:5:    def get_user(self, uid):\n"
    assert _sylk("search", "/HEADERS/", str(grep_root), "--format", "paths", env_index=index,
                 cwd=tmp_path).stdout == "app/http.py\n"


async def test_mcp_grep(grep_root: Path, _isolated_index: Path):
    from conftest import mcp_call, mcp_call_error, mcp_indexed, mcp_session, mcp_wait_until, without_embedding

    async with mcp_session(without_embedding(grep_root), _isolated_index) as s:
        await mcp_wait_until(s, mcp_indexed, "the first index run")
        first = await mcp_call(s, "grep", pattern="return", limit=2)
        assert first["totalHits"] == 5 and len(first["hits"]) == 2 and first["nextOffset"] == 2
        exact = await mcp_call(s, "grep", pattern="b->data[b->pos]", exact=True)
        assert [(h["path"], h["line"], h["matches"]) for h in exact["hits"]] == [
            ("native/buf.c", 2, [{"start": 12, "end": 27}])]
        words = await mcp_call(s, "grep", pattern="GET", case="insensitive", whole_word=True, kinds=["method"])
        assert {(h["path"], h["line"]) for h in words["hits"]} == {("app/users.py", 2), ("app/users.py", 3),
                                                                   ("app/users.py", 6)}
        assert "pattern" in await mcp_call_error(s, "grep", pattern="a(")


def test_inline_prefix_and_phrase_on_the_lexical_side(ws: Workspace):
    """``Exp*`` finds what starts with Exp (a name or a word); a quoted phrase with
    punctuation stays a phrase; ``/Export.*/`` is a regex (tested over stdio above)."""
    from sylk.search.query import SearchRequest

    def paths(query: str) -> list[str]:
        return [h.path for h in ws.search(SearchRequest(query, "lexical", context_lines=0)).hits]

    assert paths("Exp*") == ["web/greet.ts"]  # "export function greet", "Exportable"
    assert paths("Exp") == []  # without the star, a whole word
    assert "app/users.py" in paths("get_us*")  # the name get_user (its key getuser)
    assert paths('"content-type in lower"') == ["docs/notes.md"]
    assert paths('"content-type in upper"') == []


RG_CLASSES = ("x = '¹' + '㊀'\ny = 'a' # ½ off\nz = 'é' and 'e\u0301'\nf\u0305o\u0305o\u0305 = ²foo\nfoo‿bar Ⓐ1\n"
              "a\x1cb\nplain ascii line\nsep\u200dx\n")


@pytest.mark.parametrize("pattern", [r"'\w'", r"\bfoo\b", r"\w\W\w", r"^\w+\s", r"a\sb", r"\S+\s=", r"o\B",
                                     r"[\w]+\s*=", r"[^\W\d]\d", r"\b\w{3}\b"])
def test_word_and_space_classes_are_rgs(tmp_path: Path, pattern: str):
    """Python's \\w takes ², ½ and ㊀ and leaves out combining marks, ‿ and Ⓐ; its \\s takes
    U+001C; rg's do the opposite. Lines that are not ASCII are matched as rg matches them."""
    root = write_tree(tmp_path / "classes", {"u.txt": RG_CLASSES})
    ws = Workspace(root, Settings(index_dir=str(tmp_path / "index")))
    try:
        ws.index()
        mine = lines(ws, pattern, case=True)
    finally:
        ws.close()
    out = subprocess.run(["rg", "-n", "--no-heading", "-s", "--color", "never", pattern, "u.txt"], cwd=root,
                         capture_output=True, text=True, check=False)
    assert out.returncode in (0, 1), out.stderr
    rows = [row for row in out.stdout.split("\n") if row]  # (splitlines would break at U+001C)
    assert mine == [("u.txt", int(row.split(":", 1)[0]) - 1) for row in rows], pattern
