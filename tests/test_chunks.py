"""Chunking: what a search hit can point at, and what the embedding model sees."""

from __future__ import annotations

import hashlib
import textwrap

import pytest
from sylk.ingest import symbols
from sylk.ingest.chunks import Chunk, chunk_file, window_chunk
from sylk.ingest.file_types import file_type
from sylk.languages import language_for_path


def chunks_of(path: str, source: str, **kw) -> list[Chunk]:
    lang = language_for_path(path)
    syms = symbols.extract(source.encode("utf-8"), lang) if lang else []
    return chunk_file(path, lang, source, syms, **kw)


def spans(chunks: list[Chunk]) -> list[tuple[str, str, str, str, int]]:
    """(kind, container.symbol, "start-end", part) of each chunk, compactly."""
    return [(c.kind, f"{c.container}.{c.symbol}" if c.container else c.symbol, f"{c.start_line}-{c.end_line}",
             c.type, c.part) for c in chunks]


def by_symbol(chunks: list[Chunk], name: str) -> Chunk:
    (c,) = [c for c in chunks if c.symbol == name]
    return c


def lines_of(source: str, chunk: Chunk) -> str:
    return "\n".join(source.split("\n")[chunk.start_line:chunk.end_line + 1])


PY = textwrap.dedent('''\
    """Users and where they are kept."""

    import sqlite3
    from dataclasses import dataclass

    MAX_USERS = 100


    class UserRepository(Base):
        """Stores users in SQLite."""

        table: str = "users"

        def __init__(self, db):
            self.db = db

        @property
        def size(self) -> int:
            return self.db.count()

        def get_user_by_id(self, user_id: int):
            """Fetch one user."""
            def normalise(row):
                return dict(row)
            row = self.db.fetch(user_id)
            return normalise(row)


    # Helpers.
    def connect(path):
        return sqlite3.connect(path)


    if __name__ == "__main__":
        connect(":memory:")
        print("ok")
''')


def test_python_chunks_one_per_definition_header_and_top_level_code():
    assert spans(chunks_of("app/users.py", PY)) == [
        ("file_header", "", "0-5", "source_code", 0),
        ("class", "UserRepository", "8-25", "source_code", 0),
        ("method", "UserRepository.__init__", "13-14", "source_code", 0),
        ("method", "UserRepository.size", "16-18", "source_code", 0),
        ("method", "UserRepository.get_user_by_id", "20-25", "source_code", 0),
        ("function", "UserRepository.get_user_by_id.normalise", "22-23", "source_code", 0),
        ("function", "connect", "28-30", "source_code", 0),
        ("top_level", "", "33-35", "source_code", 0),
    ]


def test_class_chunk_holds_member_signatures_not_bodies():
    cls = by_symbol(chunks_of("app/users.py", PY), "UserRepository")
    assert cls.text == textwrap.dedent('''\
        class UserRepository(Base):
            """Stores users in SQLite."""

            table: str = "users"
            def __init__(self, db)
            @property
            def size(self) -> int
            def get_user_by_id(self, user_id: int)''')
    assert "self.db.fetch" not in cls.text and "self.db.fetch" not in cls.embed_text
    assert cls.embed_text.startswith("app/users.py\nclass UserRepository (user repository)\nclass UserRepository(Base)\n"
                                     "Stores users in SQLite.\n")


def test_function_chunks_are_their_source_lines_with_decorators_and_comments_above():
    chunks = chunks_of("app/users.py", PY)
    for c in chunks:
        if c.kind != "class":
            assert c.text == lines_of(PY, c), c.symbol
    size = by_symbol(chunks, "size")
    assert size.text.splitlines()[0].strip() == "@property"
    assert by_symbol(chunks, "connect").text.startswith("# Helpers.\ndef connect(path):")
    # a nested function has its own chunk; the outer one keeps its full text
    assert "return dict(row)" in by_symbol(chunks, "get_user_by_id").text
    assert by_symbol(chunks, "normalise").text.strip().startswith("def normalise(row):")


def test_header_holds_module_docstring_imports_and_constants():
    header = chunks_of("app/users.py", PY)[0]
    assert header.kind == "file_header" and header.symbol == "" and header.container == ""
    assert header.text == PY.split("\n\n\nclass")[0]
    assert header.embed_text == ('app/users.py\n"""Users and where they are kept."""\nimport sqlite3\n'
                                 'from dataclasses import dataclass\nMAX_USERS = 100')


GO = textwrap.dedent('''\
    package store

    import (
    \t"fmt"
    )

    // User is someone who logs in.
    type User struct {
    \tName string
    \tAge  int
    }

    // Greet says hello.
    func (u *User) Greet(greeting string) string {
    \treturn fmt.Sprintf("%s %s", greeting, u.Name)
    }

    func NewUser(name string) *User {
    \treturn &User{Name: name}
    }
''')


def test_go_struct_methods_and_header():
    chunks = chunks_of("store/user.go", GO)
    assert spans(chunks) == [
        ("file_header", "", "0-4", "source_code", 0),
        ("struct", "User", "6-10", "source_code", 0),
        ("method", "User.Greet", "12-15", "source_code", 0),
        ("function", "NewUser", "17-19", "source_code", 0),
    ]
    assert by_symbol(chunks, "User").text == "// User is someone who logs in.\ntype User struct {\n\tName string\n\tAge int\n}"  # member signatures
    greet = by_symbol(chunks, "Greet")
    assert greet.language == "go"
    assert greet.embed_text == ("store/user.go\nmethod User.Greet\nfunc (u *User) Greet(greeting string) string\n"
                                "Greet says hello.\nreturn fmt.Sprintf(\"%s %s\", greeting, u.Name)")


TS = textwrap.dedent('''\
    import { Db } from "./db";

    /** Looks users up. */
    export class UserService {
      private cache: Map<string, User> = new Map();

      constructor(private db: Db) {}

      async findUser(id: string): Promise<User> {
        return this.db.get(id);
      }
    }

    export interface Named {
      name(): string;
      label: string;
    }

    export const shout = (s: string) => s.toUpperCase();
''')


def test_typescript_class_interface_and_arrow_function():
    chunks = chunks_of("src/users.ts", TS)
    assert spans(chunks) == [
        ("file_header", "", "0-0", "source_code", 0),
        ("class", "UserService", "2-11", "source_code", 0),
        ("constructor", "UserService.constructor", "6-6", "source_code", 0),
        ("method", "UserService.findUser", "8-10", "source_code", 0),
        # interface methods without a body are member lines, not chunks
        ("interface", "Named", "13-16", "source_code", 0),
        ("function", "shout", "18-18", "source_code", 0),
    ]
    assert by_symbol(chunks, "UserService").text == textwrap.dedent('''\
        /** Looks users up. */
        export class UserService {
          private cache: Map<string, User> = new Map()
          constructor(private db: Db)
          async findUser(id: string): Promise<User>
        }''')
    assert by_symbol(chunks, "Named").text == "export interface Named {\n  name(): string\n  label: string\n}"


MD = textwrap.dedent('''\
    Intro before any heading.

    # Sylk

    Local search.

    ## Install

    pip install sylk

    ### From source 🚀

    git clone

    ## Use

    sylk search
''')


def test_markdown_sections_by_heading_without_duplicated_text():
    chunks = chunks_of("docs/README.md", MD)
    assert spans(chunks) == [
        ("file_header", "", "0-0", "markdown", 0),
        ("section", "Sylk", "2-4", "markdown", 0),
        ("section", "Sylk.Install", "6-8", "markdown", 0),
        ("section", "Sylk.Install.From source 🚀", "10-12", "markdown", 0),
        ("section", "Sylk.Use", "14-16", "markdown", 0),
    ]
    seen = [line for c in chunks for line in c.text.split("\n") if line.strip()]
    assert sorted(seen) == sorted(line for line in MD.split("\n") if line.strip())  # each line exactly once
    assert by_symbol(chunks, "From source 🚀").embed_text == \
        "docs/README.md\nsection From source 🚀 (in Sylk.Install)\ngit clone"


@pytest.mark.parametrize("path, source, expected", [
    pytest.param("package.json", '{\n  "name": "x",\n  "version": "1.0",\n  "scripts": {\n    "build": "tsc",\n'
                 '    "test": "jest"\n  },\n  "dependencies": {\n    "a": "1"\n  }\n}\n',
                 [("name, version", "0-2"), ("scripts", "3-6"), ("dependencies", "7-10")], id="json"),
    pytest.param("ci.yml", "# CI\non: push\njobs:\n  build:\n    runs-on: ubuntu\n    steps:\n      - run: make\n"
                 "# cache\nenv:\n  A: 1\n  B: 2\n",
                 [("on", "0-1"), ("jobs", "2-6"), ("env", "7-10")], id="yaml"),
    pytest.param("pyproject.toml", 'title = "x"\n\n[project]\nname = "sylk"\ndeps = [\n  "a",\n]\n\n[tool.ruff]\n'
                 "line-length = 100\n\n[[tool.mypy.overrides]]\nmodule = \"x\"\n",
                 [("title", "0-0"), ("project", "2-6"), ("tool.ruff, tool.mypy.overrides", "8-12")], id="toml"),
    pytest.param("setup.cfg", "; generated\n[metadata]\nname = x\nversion = 1\n\n[options]\npackages = find:\n",
                 [("metadata", "0-3"), ("options", "5-6")], id="ini"),
    pytest.param("data.json", "[\n  1,\n  2\n]\n", [("", "0-3")], id="json-array-window"),
    pytest.param("pom.xml", "<project>\n  <name>x</name>\n</project>\n", [("", "0-2")], id="xml-window"),
])
def test_config_files_by_top_level_key(path, source, expected):
    chunks = chunks_of(path, source)
    assert [(c.symbol, f"{c.start_line}-{c.end_line}") for c in chunks] == expected
    assert {c.type for c in chunks} == {"config"}
    assert {c.kind for c in chunks} == ({"key"} if expected[0][0] else {"window"})
    for c in chunks:
        assert c.text == lines_of(source, c)


def test_plain_text_overlapping_windows():
    source = "\n".join(f"line {i}" for i in range(130)) + "\n"
    chunks = chunks_of("notes.txt", source)
    assert spans(chunks) == [("window", "", "0-59", "text", 0), ("window", "", "50-109", "text", 0),
                             ("window", "", "100-129", "text", 0)]
    assert chunks[1].text.split("\n")[0] == "line 50" and chunks[1].text.split("\n")[-1] == "line 109"
    assert chunks[0].language is None


def test_windows_skip_blank_stretches_and_trim():
    source = "a\n" + "\n" * 80 + "b\n"
    assert spans(chunks_of("notes.txt", source, window_lines=30, window_overlap=5)) == [
        ("window", "", "0-0", "text", 0), ("window", "", "81-81", "text", 0)]


def test_source_we_cannot_parse_is_windowed_as_source_code():
    source = "#!/usr/bin/env fish\n" + "echo hi\n" * 70
    chunks = chunks_of("scripts/run.fish", source)  # (fish: a shell Sylk has no grammar for)
    assert spans(chunks) == [("window", "", "0-59", "source_code", 0), ("window", "", "50-70", "source_code", 0)]


def test_long_function_splits_into_overlapping_parts():
    body = "".join(f"    x{i} = compute({i})\n" for i in range(300))
    source = "import os\n\n\ndef big(a, b):\n    \"\"\"Big one.\"\"\"\n" + body
    chunks = chunks_of("big.py", source, max_lines=120, overlap=20)
    parts = [c for c in chunks if c.symbol == "big"]
    assert [(c.part, c.start_line, c.end_line) for c in parts] == [(1, 3, 122), (2, 103, 222), (3, 203, 304)]
    for c in parts:
        assert c.text == lines_of(source, c) and c.kind == "function"
    assert parts[0].text.split("\n")[0] == "def big(a, b):"
    assert parts[1].text.split("\n")[0] == "    x98 = compute(98)"
    # the first part embeds the docstring, later parts their own lines after the name and signature
    assert parts[0].embed_text.startswith("big.py\nfunction big\ndef big(a, b)\nBig one.\nx0 = compute(0)\n")
    assert parts[1].embed_text.startswith("big.py\nfunction big\ndef big(a, b)\nx98 = compute(98)\n")


def test_long_class_summary_splits_over_its_member_lines():
    source = "class Many:\n" + "".join(f"    def m{i}(self):\n        return {i}\n" for i in range(150))
    chunks = chunks_of("many.py", source, max_lines=100, overlap=10)
    parts = [c for c in chunks if c.kind == "class"]
    assert [(c.part, c.start_line, c.end_line) for c in parts] == [(1, 0, 197), (2, 179, 300)]
    assert parts[1].text.split("\n")[0] == "    def m89(self)"
    assert len(parts[1].text.split("\n")) == 61


@pytest.mark.parametrize("budget", [80, 300, 1000])
def test_embed_text_within_budget_most_meaningful_first(budget):
    source = PY + "".join(f"    value_{i} = compute_something({i})\n" for i in range(200))
    chunks = chunks_of("app/users.py", source, embed_chars=budget)
    assert chunks and all(len(c.embed_text) <= budget for c in chunks)
    assert all(c.embed_text.startswith("app/users.py\n") for c in chunks)
    method = by_symbol(chunks, "get_user_by_id")
    expected = ("app/users.py\nmethod UserRepository.get_user_by_id (user repository get user by id)\n"
                "def get_user_by_id(self, user_id: int)\nFetch one user.\ndef normalise(row):\nreturn dict(row)\n"
                "row = self.db.fetch(user_id)\nreturn normalise(row)")
    assert method.embed_text == expected[:budget].rstrip()


def test_embed_text_caps_a_long_docstring_at_half_the_budget():
    doc = "word " * 400
    source = f'def f():\n    """{doc}"""\n    return call_me()\n'
    (c,) = chunks_of("f.py", source, embed_chars=400)
    assert len(c.embed_text) <= 400
    assert c.embed_text.endswith("\nreturn call_me()")


def test_text_hash_is_the_digest_of_embed_text_and_follows_it():
    a = chunks_of("app/users.py", PY)
    b = chunks_of("app/users.py", PY)
    assert [c.text_hash for c in a] == [c.text_hash for c in b]
    for c in a:
        assert c.text_hash == hashlib.blake2b(c.embed_text.encode(), digest_size=16).hexdigest()
    changed = chunks_of("app/users.py", PY.replace("return sqlite3.connect(path)", "return sqlite3.connect(path, 5)"))
    diff = [x.symbol for x, y in zip(a, changed) if x.text_hash != y.text_hash]
    assert diff == ["connect"]
    # a change the embedding text does not hold leaves the hash (and the cached vector) alone
    moved = chunks_of("app/users.py", PY.replace("def connect(path):", "def connect(path):  "))
    assert by_symbol(moved, "connect").text_hash == by_symbol(a, "connect").text_hash
    assert by_symbol(moved, "connect").text != by_symbol(a, "connect").text


def test_non_ascii_and_emoji_text():
    source = 'def grüße(name: str) -> str:\n    """Sagt 👋 hallo."""\n    return f"👋 {name} — ça va?"\n\n\nπ = 3.14\n'
    chunks = chunks_of("greet.py", source)
    assert spans(chunks) == [("function", "grüße", "0-2", "source_code", 0), ("top_level", "", "5-5", "source_code", 0)]
    f = chunks[0]
    assert f.text == source.split("\n\n\n")[0]
    assert f.embed_text == 'greet.py\nfunction grüße\ndef grüße(name: str) -> str\nSagt 👋 hallo.\nreturn f"👋 {name} — ça va?"'
    assert len(f.text_hash) == 32


def test_crlf_line_endings_do_not_leak_into_chunks():
    source = "import os\r\n\r\ndef f():\r\n    return 1\r\n"
    chunks = chunks_of("crlf.py", source)
    assert spans(chunks) == [("file_header", "", "0-0", "source_code", 0), ("function", "f", "2-3", "source_code", 0)]
    assert chunks[1].text == "def f():\n    return 1"


@pytest.mark.parametrize("path", ["a.py", "a.md", "a.json", "a.txt", "a.go"])
@pytest.mark.parametrize("source", ["", "\n", "  \n\t\n\n"], ids=["empty", "newline", "blank"])
def test_empty_or_blank_file_has_no_chunks(path, source):
    assert chunks_of(path, source) == []


@pytest.mark.parametrize("path, language, expected", [
    pytest.param("a/b.py", "python", "source_code", id="python"),
    pytest.param("run.sh", None, "source_code", id="shell"),
    pytest.param("Makefile", None, "source_code", id="makefile"),
    pytest.param("README.md", "markdown", "markdown", id="markdown"),
    pytest.param("README.md", None, "markdown", id="markdown-unparsed"),
    pytest.param("tsconfig.json", None, "config", id="json"),
    pytest.param(".github/ci.YML", None, "config", id="yaml-upper"),
    pytest.param("Pipfile", None, "config", id="pipfile"),
    pytest.param("notes.txt", None, "text", id="text"),
    pytest.param("LICENSE", None, "text", id="license"),
])
def test_file_type(path, language, expected):
    assert file_type(path, language) == expected


def test_markdown_without_headings_is_windowed():
    assert spans(chunks_of("a.md", "just\ntext\n")) == [("window", "", "0-1", "markdown", 0)]


def test_window_chunk_for_lines_no_chunk_holds():
    c = window_chunk("a/b.txt", None, "text", 4, 5, "  hello\n  world")
    assert (c.kind, c.symbol, c.start_line, c.end_line, c.part) == ("window", "", 4, 5, 0)
    assert c.embed_text == "a/b.txt\nhello\nworld"
    assert c.text_hash == hashlib.blake2b(c.embed_text.encode(), digest_size=16).hexdigest()


def test_an_elixir_doc_heredoc_joins_the_function_below_it():
    source = ('defmodule M do\n  @doc """\n  Joins a channel.\n  """\n  @spec join(term) :: term\n'
              '  def join(a), do: a\nend\n')
    chunks = chunks_of("lib/m.ex", source)
    join = next(c for c in chunks if c.symbol == "join")
    assert join.start_line == 1 and "Joins a channel." in join.text
