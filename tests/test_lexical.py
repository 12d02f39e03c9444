"""Code-aware tokens in the Tantivy index (on disk)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sylk.lexical import LexicalIndex
from sylk.words import code_words, name_words
from sylk.symbols import Symbol


@pytest.mark.parametrize(("text", "words"), [
    pytest.param("getUserById", "get User By Id", id="camel"),
    pytest.param("HTTPServer", "HTTP Server", id="acronym"),
    pytest.param("utf8Decode", "utf 8 Decode", id="digits"),
    pytest.param("get_user_by_id", "get_user_by_id", id="snake-left-to-tokenizer"),
    pytest.param("a b", "a b", id="plain"),
])
def test_code_words(text: str, words: str):
    assert code_words(text) == words


@pytest.fixture
def index(tmp_path: Path) -> LexicalIndex:
    lx = LexicalIndex(tmp_path / "tantivy")
    docs = {
        "a.js": "function getUserById(id) { return HTTPServer.fetch(id); }",
        "b.py": "def parse_config_file(path):\n    return load(path)\n",
        "c.css": ".main-header { color: red }",
        "d.c": "int utf8_decode(char *s);  int sha256Sum;",
    }
    for path, text in docs.items():
        lx.add_file(path, None, code_words(text), text.count("\n") + 1, [], "")
    symbols = [Symbol("HttpRetryPolicy", "class", "", (0, 0, 1, 0), (0, 6, 0, 21))]
    lx.add_file("e.py", "python", "", 1, [s.name for s in symbols], name_words(symbols))
    lx.commit()
    yield lx
    lx.close()


@pytest.mark.parametrize(("query", "paths"), [
    pytest.param("getUserById", {"a.js"}, id="camel-original"),
    pytest.param("user", {"a.js"}, id="camel-part"),
    pytest.param("server", {"a.js"}, id="acronym-part"),
    pytest.param("parse_config_file", {"b.py"}, id="snake-original"),
    pytest.param("config", {"b.py"}, id="snake-part"),
    pytest.param("header", {"c.css"}, id="kebab-part"),
    pytest.param("main-header", {"c.css"}, id="kebab-original"),
    pytest.param("256", {"d.c"}, id="digits-split"),
    pytest.param("utf8", {"d.c"}, id="digits-original"),
    pytest.param("retry", {"e.py"}, id="symbol-name-word"),
    pytest.param("httpretrypolicy", {"e.py"}, id="symbol-name-whole"),
])
def test_code_aware_search(index: LexicalIndex, query: str, paths: set[str]):
    assert {h.path for h in index.search_text(query)} == paths


def test_delete_by_path(index: LexicalIndex):
    index.delete_paths(["a.js"])
    index.commit()
    assert index.search_text("user") == []


def test_second_writer_is_refused(index: LexicalIndex):
    from sylk.lexical import LexicalIndexLocked

    with pytest.raises(LexicalIndexLocked):
        LexicalIndex(index.folder)
