"""The parse worker's rows: every chunk's text index document, built from the file's
words escaped once (not once per chunk)."""

from __future__ import annotations

import gc
import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sylk
from sylk.ingest import scan, symbols
from sylk.ingest.chunks import CONTAINER_KINDS, chunk_file, split_lines
from sylk.ingest.lexical_docs import quote, quoted_lines
from sylk.ingest.parsing import chunk_rows, parse_batch, parse_file
from sylk.languages import language_for_path
from sylk.text.words import code_words, code_words_utf8

PY = textwrap.dedent('''\
    """Module doc with "quotes" and a back\\\\slash."""
    import os

    class HTTPServerBase:
        """Serves getUserByID requests.\tTabbed."""
        maxRetries2 = 3

        @property
        def baseURL(self) -> str:
            return "http://x"

        def handleRequest(self, reqID: int) -> None:
            print("\\x07 bell")

    # a comment between
    runServer = HTTPServerBase()
    if __name__ == "__main__":
        runServer.handleRequest(1)
    ''')


def documents(path: str, source: str) -> list[dict]:
    lang = language_for_path(path)
    data = source.encode("utf-8")
    rows = chunk_rows(path, lang, source, code_words_utf8(data), symbols.extract(data, lang) if lang else [])
    return [json.loads('{"chunk_id":1' + r.lexical_doc) for r in rows]


def expected_content(path: str, source: str) -> list[str]:
    """The rule, written naively: a class chunk's words are code_words of its summary text,
    any other chunk's are its lines' words, lower-cased; lines no chunk holds come last as
    windows."""
    lang = language_for_path(path)
    chunks = chunk_file(path, lang, source, symbols.extract(source.encode("utf-8"), lang) if lang else [])
    lines = source.split("\n")
    out = [(code_words(c.text) if c.kind in CONTAINER_KINDS
            else code_words("\n".join(lines[c.start_line:c.end_line + 1]))).lower() for c in chunks]
    held = {k for c in chunks for k in range(c.start_line, c.end_line + 1)}
    assert all(k in held for k, line in enumerate(lines) if line.strip()), "this source leaves no gap"
    return out


def test_each_chunk_document_holds_its_words():
    docs = documents("srv/http.py", PY)
    assert [d["content"] for d in docs] == expected_content("srv/http.py", PY)
    assert all(d["prose"] == d["content"] for d in docs)
    cls = next(d for d in docs if d["kind"] == "class")
    assert "http server base" in cls["content"] and "base url" in cls["content"]
    assert cls["name_words"] == "http server base" and cls["name"] == "httpserverbase"
    method = next(d for d in docs if d["name"] == "handlerequest")
    assert method["name_words"] == "handle request http server base"
    assert method["lines"] == 2


def test_windows_dos_line_ends_give_the_same_words():
    """In a file with "\\r\\n" line ends the lines carry their "\\r" into the words; a class
    summary (built from lines without it) takes the slower way and still says the same."""
    crlf = PY.replace("\n", "\r\n")
    docs = documents("srv/http.py", crlf)
    lf = documents("srv/http.py", PY)
    assert [d["kind"] for d in docs] == [d["kind"] for d in lf]
    for d, e in zip(docs, lf, strict=True):
        if d["kind"] in CONTAINER_KINDS:
            assert d["content"] == e["content"]
        else:
            assert d["content"].replace("\r", "") == e["content"]
    assert any("\r" in d["content"] for d in docs if d["kind"] not in CONTAINER_KINDS)


def test_lines_outside_definitions_are_chunks_too():
    source = "def f():\n    return 1\n\n\nx = [\n    someValue,\n]\n"
    lang = language_for_path("m.py")
    data = source.encode()
    rows = chunk_rows("m.py", lang, source, code_words_utf8(data), symbols.extract(data, lang))
    assert [(r.kind, r.start_line, r.end_line) for r in rows] == [("function", 0, 1), ("top_level", 4, 6)]
    assert json.loads('{"chunk_id":1' + rows[1].lexical_doc)["content"] == "x = [\n    some value,\n]"


_ALPHABET = ['a', 'B', '1', ' ', '"', '\\', '\t', '\r', '\n', '\x00', '\x1f', '\x7f', 'é', '\u2028', '\ufeff', '😀']


@pytest.mark.parametrize("seed", range(300))
def test_quoted_lines_join_to_the_quoted_text(seed):
    rng = random.Random(seed)
    # mostly texts the fast way takes (no control character but tab, CR and newline), some not
    alphabet = _ALPHABET if seed % 3 == 0 else [c for c in _ALPHABET if c not in "\x00\x1f\x7f\u2028\ufeff"]
    text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(40)))
    lines = text.split("\n")
    out = quoted_lines(text)
    assert len(out) == len(lines)
    for a in range(len(lines) + 1):
        for b in range(a, len(lines) + 1):
            assert '"' + "\\n".join(out[a:b]) + '"' == quote("\n".join(lines[a:b]))


def test_split_lines_and_words_lines_agree():
    """What the row builder relies on: a file line's words are that line of the file's words."""
    text = "class HTTPServer:\n    getUser2ID = 1\n\ttabbedName\n"
    words = code_words_utf8(text.encode()).split("\n")
    for k, line in enumerate(split_lines(text)):
        assert code_words(line) == words[k]


def test_a_batch_parses_each_file_as_alone_and_leaves_the_collector_on(tmp_path):
    (tmp_path / "a.py").write_text(PY, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("plain words\n", encoding="utf-8")
    entries = [scan.FileEntry(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(tmp_path.iterdir())]
    batch = parse_batch(str(tmp_path), [(e, None) for e in entries], 1 << 20, frozenset())
    assert batch == [parse_file(str(tmp_path), e, None, 1 << 20, frozenset()) for e in entries]
    assert [p.symbol_count > 0 for p in batch] == [True, False]
    assert gc.isenabled()


def test_a_parse_worker_imports_no_index_settings_or_ignore_rules():
    # a spawned worker imports this module first; what it pulls in, every worker pays at start
    code = ("import sys, sylk.ingest.parsing; "
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('tantivy', 'faiss', 'pathspec', 'cattrs', 'pygls') "
            "or m in ('sylk.config', 'sylk.ingest.scan', 'sylk.ingest.ignore'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(Path(sylk.__file__).parent.parent)})
    assert out.stdout.split() == []
