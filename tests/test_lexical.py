"""Code-aware tokens in the Tantivy index (on disk)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sylk.ingest.lexical_docs import chunk_json_rest
from sylk.store.lexical import LexicalIndex
from sylk.text.words import code_words


@pytest.mark.parametrize(("text", "words"), [
    pytest.param("getUserById", "get User By Id", id="camel"),
    pytest.param("HTTPServer", "HTTP Server", id="acronym"),
    pytest.param("utf8Decode", "utf 8 Decode", id="digits"),
    pytest.param("get_user_by_id", "get_user_by_id", id="snake-left-to-tokenizer"),
    pytest.param("a b", "a b", id="plain"),
])
def test_code_words(text: str, words: str):
    assert code_words(text) == words


PATHS: dict[int, str] = {}


def add(lx: LexicalIndex, cid: int, path: str, text: str, kind: str = "window", symbol: str = "",
        name_words: str = "") -> None:
    PATHS[cid] = path
    lines = text.count("\n")
    lx.add_chunks([(cid, chunk_json_rest(path, None, "source_code", kind, symbol, 0, lines, code_words(text),
                                         name_words))])


def search_paths(lx: LexicalIndex, text: str) -> set[str]:
    hits, _total = lx.search_chunks(lx.build_query(text), 50)
    return {PATHS[h.id] for h in hits}


@pytest.fixture
def index(tmp_path: Path) -> LexicalIndex:
    lx = LexicalIndex(tmp_path / "tantivy", tmp_path / "grams")
    add(lx, 1, "a.js", "function getUserById(id) { return HTTPServer.fetch(id); }")
    add(lx, 2, "b.py", "def parse_config_file(path):\n    return load(path)\n")
    add(lx, 3, "c.css", ".main-header { color: red }")
    add(lx, 4, "d.c", "int utf8_decode(char *s);  int sha256Sum;")
    add(lx, 9, "e.py", "class HttpRetryPolicy: pass", "class", "HttpRetryPolicy", "http retry policy")
    add(lx, 10, "f.py", "def parse_url(text):\n    # reconnects when the connection drops\n", "function", "parse_url",
        "parse url")
    add(lx, 11, "g.ts", "function parseUrl(text) { return text; }", "function", "parseUrl", "parse Url")
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
    pytest.param("HttpRetryPolicy", {"e.py"}, id="symbol-name-original"),
    pytest.param("httpretrypolicy", {"e.py"}, id="symbol-name-whole"),
    pytest.param("reconnecting connections", {"f.py"}, id="english-stemmed"),
    pytest.param("HttpRetryPolciy", {"e.py"}, id="identifier-with-a-typo"),
    pytest.param("parse_ulr", {"f.py", "g.ts"}, id="snake-typo-meets-every-spelling"),
    pytest.param("the retry", {"e.py"}, id="stop-word-dropped"),
])
def test_code_aware_search(index: LexicalIndex, query: str, paths: set[str]):
    assert search_paths(index, query) == paths


def test_delete_by_path(index: LexicalIndex):
    index.delete_paths(["a.js"])
    index.commit()
    assert search_paths(index, "user") == set()


def test_second_writer_is_refused(index: LexicalIndex):
    from sylk.store.lexical import LexicalIndexLocked

    with pytest.raises(LexicalIndexLocked):
        LexicalIndex(index.folder, index.folder.parent / "grams")


def test_short_and_long_word_splitting_agree():
    """Short texts take a regex, long ones a vectorised pass: same words either way."""
    from sylk.text.words import SHORT_TEXT, code_words_utf8

    sample = "getHTTPResponse2 utf8Decode XMLHttpRequest café_ÜberClass 😀x9Y snake_case kebab-case\n"
    long_text = sample * (SHORT_TEXT // len(sample) + 2)
    assert code_words(long_text) == code_words_utf8(long_text.encode())
    assert code_words(sample) * (SHORT_TEXT // len(sample) + 2) == code_words(long_text)


def test_words_written_apart_find_the_identifier_first(index: LexicalIndex):
    for query in ("parse url", "parseurl"):
        hits, _total = index.search_chunks(index.build_query(query), 10)
        assert {PATHS[h.id] for h in hits[:2]} == {"f.py", "g.ts"}, query


def test_exact_name_outranks_a_name_one_typo_away(index: LexicalIndex):
    hits, _total = index.search_chunks(index.build_query("HttpRetryPolicy"), 10)
    typo, _total = index.search_chunks(index.build_query("HttpRetryPolciy"), 10)
    assert hits[0].score > typo[0].score  # a typo is found, but never ranks like the name itself


def test_typos_need_five_letters(index: LexicalIndex):
    assert search_paths(index, "utf9") == set()


def test_writer_threads_follow_the_cores():
    """One indexing thread per few parser workers (one worker per core): a small machine
    gets one (its segments need no merging), a large one several, never more than 8."""
    from sylk.store.lexical import writer_threads

    assert [writer_threads(n) for n in (1, 2, 4, 6, 16, 64)] == [1, 1, 1, 2, 5, 8]
