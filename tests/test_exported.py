"""Exported or not (issue 17, item 2): each language's rule on small sources, the flag
through the index (symbols, chunks), workspace/symbol's order and the ``exported``
filter over stdio, and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import TIMEOUT, start, symbols, wait_for_progress_end, write_tree
from sylk.ingest.chunks import chunk_file
from sylk.ingest.symbols import decode_symbols, encode_symbols, extract
from sylk.search.frozen_symbols import FrozenSymbols
from sylk.params import request_from_params
from sylk.search.values import QueryError
from sylk.search.inline import parse_inline
from sylk.search.symbol_search import SymbolFilter, SymbolTable
from sylk.store.manifest import FileSymbolData


def exported(source: str, language: str) -> dict[str, bool]:
    """Each symbol's qualified name -> exported (a name defined twice must agree)."""
    out: dict[str, bool] = {}
    for s in extract(textwrap.dedent(source).encode(), language):
        assert out.setdefault(s.qualified_name, s.exported) == s.exported, s
    return out


def public(source: str, language: str) -> set[str]:
    return {name for name, yes in exported(source, language).items() if yes}


# --- the rules, per language ------------------------------------------------------

def test_go_capitalised_names_are_exported():
    src = """
        package p
        type Server struct { Addr string; conn int }
        type state int
        func (s *state) Reset() {}
        func (s *Server) close() {}
        func Listen() { type Local struct{} }
        func dial() {}
        const Max = 1
        var min = 2
        """
    assert public(src, "go") == {"Server", "Server.Addr", "state.Reset", "Listen", "Max"}


PY_NO_ALL = """
    def load(): pass
    def _cache(): pass
    def __getattr__(name): pass
    LIMIT = 3
    _DEFAULT = 4
    class Reader:
        size = 0
        _buffer = None
        def __init__(self): pass
        def read(self): pass
        def _fill(self): pass
        def __mangled(self): pass
        class Inner:
            def deep(self): pass
    class _Private:
        def read(self): pass
        def __len__(self): pass
    def outer():
        def inner(): pass
        class Local:
            def m(self): pass
    """


def test_python_without_all_leading_underscore_is_private_and_dunders_are_protocol():
    assert public(PY_NO_ALL, "python") == {
        "load", "__getattr__", "LIMIT", "Reader", "Reader.size", "Reader.__init__", "Reader.read", "Reader.Inner",
        "Reader.Inner.deep", "outer"}  # (not what is defined inside outer)


@pytest.mark.parametrize("listing", [
    pytest.param('__all__ = ["load", "_cache"]', id="list"),
    pytest.param("__all__ = ('load', '_cache')", id="tuple"),
    pytest.param('__all__: list[str] = ["load"]\n__all__ += ["_cache"]', id="annotated-and-added"),
    pytest.param('__all__ = ["load"]\n__all__.extend(["_cache"])', id="extend"),
    pytest.param('__all__ = []\n__all__.append("load")\n__all__.append("_cache")', id="append"),
    pytest.param('"""Docs.\n__all__ = ["unlisted"]\n"""\n__all__: list[str]\n__all__ = ["load", "_cache"]\n'
                 'print(__all__)', id="docstring-and-declaration"),
    pytest.param('__all__ = ["load"]\nif True:\n    __all__ += ["_cache"]\ndef f():\n    __all__.append("unlisted")',
                 id="conditional"),
])
def test_python_all_decides_at_module_level(listing: str):
    src = listing + "\n" + textwrap.dedent("""
        def load(): pass
        def _cache(): pass
        def unlisted(): pass
        class Reader:
            def read(self): pass
        class Listed:
            pass
        """)
    found = exported(src, "python")
    assert {n for n, yes in found.items() if yes} == {"load", "_cache"}
    # a class not in __all__ is private, and so are its members
    assert found["Reader"] is False and found["Reader.read"] is False


@pytest.mark.parametrize("listing", [
    pytest.param('__all__ = ["load"] + other.__all__', id="computed"),
    pytest.param('__all__ += ["load"]', id="only-added-to"),
    pytest.param('__all__ = ["load"]\n__all__.remove("load")', id="removed-from"),
])
def test_python_an_all_we_cannot_read_falls_back_to_the_underscore_rule(listing: str):
    src = listing + "\ndef load(): pass\ndef helper(): pass\ndef _hidden(): pass\n"
    assert public(src, "python") == {"load", "helper"}


def test_typescript_export_and_member_access():
    src = """
        export function run() {}
        function helper() {}
        function listed() {}
        const renamed = () => 1;
        export { listed, renamed as alias };
        export const LIMIT = 1, OTHER = 2;
        const HIDDEN = 3;
        export default class Cart { #secret = 1; private priv() {} protected prot = 2; public pub() {} plain() {} }
        class Internal { m() {} }
        export interface Shape { area(): number; name: string }
        export enum Color { Red }
        export namespace NS { export function inner() {} function hidden() {} }
        namespace Closed { export function shut() {} }
        export type Id = string;
        function outer() { function nested() {} }
        """
    assert public(src, "typescript") == {
        "run", "listed", "renamed", "LIMIT", "OTHER", "Cart", "Cart.pub", "Cart.plain", "Shape", "Shape.area",
        "Shape.name", "Color", "Color.Red", "NS", "NS.inner", "Id"}


def test_typescript_export_assignment():
    assert public("class Api { get() {} }\nexport = Api;\n", "typescript") == {"Api", "Api.get"}


def test_javascript_es_modules_and_commonjs():
    src = """
        function Legacy() {}
        Legacy.prototype.run = function () {};
        function Shared() {}
        Shared.prototype.go = function () {};
        exports.direct = function () {};
        module.exports.alsoDirect = () => {};
        function viaObject() {}
        const aliased = () => {};
        function notExported() {}
        module.exports = { viaObject, name: aliased, inline() {}, Shared };
        export const api = { get() {} };
        class Widget { #hidden() {} shown() {} }
        export { Widget };
        """
    found = exported(src, "javascript")
    assert {n for n, yes in found.items() if yes} == {
        "Shared", "Shared.go", "direct", "alsoDirect", "viaObject", "aliased", "inline", "api", "api.get", "Widget",
        "Widget.shown"}
    assert found["Legacy.run"] is False and found["notExported"] is False


def test_rust_pub_and_its_limits():
    src = """
        #[macro_export]
        macro_rules! shout { () => {} }
        macro_rules! whisper { () => {} }
        pub(crate) fn crate_only() {}
        pub fn open() { fn nested() {} }
        pub struct Conn { pub addr: u32, fd: i32 }
        struct Hidden { pub x: i32 }
        impl Conn { pub fn send(&self) {} fn flush(&self) {} }
        impl Drop for Conn { fn drop(&mut self) {} }
        pub trait Transport { fn connect(); }
        trait Private { fn p(); }
        pub enum State { Open, Closed }
        pub mod net { pub fn resolve() {} fn cache() {} }
        mod util { pub fn helper() {} }
        """
    assert public(src, "rust") == {
        "shout", "open", "Conn", "Conn.addr", "Conn.send", "Conn.drop", "Transport", "Transport.connect", "State",
        "State.Open", "State.Closed", "net", "net.resolve"}


def test_java_public_and_implicit_members():
    src = """
        class PackagePrivate { public void visible() {} }
        public class Service {
            @Override public String toString() { return ""; }
            void internal() {}
            protected void sub() {}
            public static final int MAX = 1;
            private int count;
            public class Inner { public void run() {} }
        }
        public interface Port { void send(); int SIZE = 1; private void helper() {} }
        public enum Mode { ON, OFF; public void flip() {} }
        public record Point(int x) {}
        """
    assert public(src, "java") == {
        "Service", "Service.toString", "Service.MAX", "Service.Inner", "Service.Inner.run", "Port", "Port.send",
        "Port.SIZE", "Mode", "Mode.ON", "Mode.OFF", "Mode.flip", "Point", "Point.x"}


def test_csharp_public_and_defaults():
    src = """
        namespace Shop {
            public class Cart { public void Add() {} void Clear() {} public int Count { get; } internal int Id; }
            class Hidden { public void Run() {} }
            public interface IStore { void Save(); }
            public enum Kind { Book }
            public record Item(string Name);
        }
        """
    assert public(src, "csharp") == {
        "Shop", "Shop.Cart", "Shop.Cart.Add", "Shop.Cart.Count", "Shop.IStore", "Shop.IStore.Save", "Shop.Kind",
        "Shop.Kind.Book", "Shop.Item", "Shop.Item.Name"}


def test_c_static_is_file_local():
    src = """
        static int helper(void) { return 0; }
        int api(void) { return 1; }
        static int counter = 0;
        int shared;
        struct point { int x; };
        #define LIMIT 3
        """
    assert public(src, "c") == {"api", "shared", "point", "point.x", "LIMIT"}


def test_cpp_access_specifiers_and_anonymous_namespaces():
    src = """
        static int helper() { return 0; }
        int api() { return 1; }
        class Conn { int fd; public: void send(); int size() { return 0; } private: int state; };
        struct Point { int x; private: int secret; };
        namespace { void local() {} }
        namespace net { void resolve() {} static void cache() {} }
        void Conn::send() {}
        """
    assert public(src, "cpp") == {
        "api", "Conn", "Conn.send", "Conn.size", "Point", "Point.x", "net", "net.resolve"}


def test_ruby_private_sections():
    src = """
        class Account
          def balance; end
          private
          def secret; end
          public
          def deposit; end
          private def hidden; end
          def self.open; end
          protected
          def compare; end
          LIMIT = 3
        end
        def top_level; end
        """
    assert public(src, "ruby") == {
        "Account", "Account.balance", "Account.deposit", "Account.open", "Account.LIMIT", "top_level"}


def test_markdown_headings_are_not_exported():
    assert public("# Title\n\n## Usage\n", "markdown") == set()


# --- the flag through the index --------------------------------------------------

def test_the_flag_survives_encoding_and_the_frozen_snapshot():
    syms = extract(b"def load(): pass\ndef _cache(): pass\n", "python")
    data = encode_symbols(syms)
    assert [(s.name, s.exported) for s in decode_symbols(data)] == [("load", True), ("_cache", False)]
    frozen = FrozenSymbols.build([FileSymbolData("m.py", "1", data)])
    table = SymbolTable(frozen)
    assert [(h.symbol.name, h.symbol.exported) for h in table.search("load")] == [("load", True)]
    assert [(h.symbol.name, h.symbol.exported) for h in table.search("_cache")] == [("_cache", False)]


def _table(frozen: bool) -> SymbolTable:
    # the private ``parse`` is shallower and a class (both rank first otherwise)
    files = {
        "parse.py": extract(b"__all__ = []\nclass parse: pass\n", "python"),
        "pkg/deep/er/lib.py": extract(b"def parse(): pass\n", "python"),
    }
    if frozen:
        return SymbolTable(FrozenSymbols.build([FileSymbolData(p, "1", encode_symbols(s)) for p, s in files.items()]))
    table = SymbolTable()
    table.replace_all(files)
    return table


@pytest.mark.parametrize("frozen", [False, True], ids=["live", "frozen"])
def test_an_exported_definition_ranks_above_a_private_one_in_its_tier(frozen: bool):
    table = _table(frozen)
    assert [h.path for h in table.search("parse")] == ["pkg/deep/er/lib.py", "parse.py"]
    assert [h.path for h in table.search("pars")] == ["pkg/deep/er/lib.py", "parse.py"]  # prefix tier
    assert [h.path for h in table.search("")] == ["pkg/deep/er/lib.py", "parse.py"]  # the top symbols


@pytest.mark.parametrize("frozen", [False, True], ids=["live", "frozen"])
def test_symbol_filter_keeps_kinds_and_one_side(frozen: bool):
    table = _table(frozen)
    assert [h.path for h in table.search("parse", only=SymbolFilter(exported=False))] == ["parse.py"]
    assert [h.path for h in table.search("parse", only=SymbolFilter(exported=True))] == ["pkg/deep/er/lib.py"]
    assert [h.path for h in table.search("parse", only=SymbolFilter(frozenset({"class"})))] == ["parse.py"]
    assert table.search("parse", only=SymbolFilter(frozenset({"class"}), True)) == []


def test_a_filtered_search_looks_past_the_first_page():
    table = SymbolTable()
    files = {f"m{i:03}.py": extract(b"def _run(): pass\n", "python") for i in range(300)}
    files["z/last.py"] = extract(b"def run_all(): pass\n", "python")
    table.replace_all(files)
    hits = table.search("run", 5, SymbolFilter(exported=True))
    assert [(h.path, h.symbol.name) for h in hits] == [("z/last.py", "run_all")]


def test_chunks_carry_the_flag_of_the_definition_they_hold():
    src = ("import os\n\ndef load():\n    return 1\n\ndef _cache():\n    return 2\n\n"
           "class Reader:\n    def read(self):\n        pass\n")
    chunks = chunk_file("m.py", "python", src, extract(src.encode(), "python"))
    assert {(c.kind, c.symbol): c.exported for c in chunks} == {
        ("file_header", ""): False, ("function", "load"): True, ("function", "_cache"): False,
        ("class", "Reader"): True, ("method", "read"): True}


# --- the filter's syntax -------------------------------------------------------------

def test_filters_exported_in_params_and_inline():
    assert request_from_params({"query": "x", "filters": {"exported": True}}).filters.exported is True
    assert request_from_params({"query": "x", "filters": {"exported": False}}).filters.exported is False
    assert request_from_params({"query": "x", "filters": {"exported": None}}).filters.exported is None
    assert request_from_params({"query": "x"}).filters.exported is None
    assert parse_inline("is:exported retry")[1].exported is True
    assert parse_inline("retry exported:false")[1].exported is False
    assert parse_inline("exported:yes retry")[0] == "retry"


@pytest.mark.parametrize(("params", "field"), [
    ({"query": "x", "filters": {"exported": "yes"}}, "filters.exported"),
    ({"query": "x", "filters": {"exported": 1}}, "filters.exported"),
    ({"query": "exported:maybe x"}, "exported"),
    ({"query": "is:public x"}, "is"),
])
def test_a_non_boolean_exported_is_an_error_naming_the_field(params: dict, field: str):
    with pytest.raises(QueryError) as err:
        request_from_params(params)
    assert err.value.field == field


# --- end to end ------------------------------------------------------------------------

FILES = {
    # the private parse is shallower and a class: without the flag it would rank first
    "parse.py": "__all__ = ['tokenize']\n\nclass parse:\n    '''Parse privately.'''\n\n\n"
                "def tokenize(text):\n    return text.split()\n",
    "pkg/deep/er/lib.py": "def parse(text):\n    '''Parse publicly.'''\n    return text\n",
}


@pytest.fixture
def exports_tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "ws", FILES)


async def test_workspace_symbol_and_search_filter_over_stdio(exports_tree: Path, _isolated_index: Path):
    client = await start(exports_tree, _isolated_index, "visual-studio-code")
    try:
        await wait_for_progress_end(client)
        found = await symbols(client, "parse")
        assert [(s.name, s.location.uri.rsplit("/ws/", 1)[1]) for s in found] == [
            ("parse", "pkg/deep/er/lib.py"), ("parse", "parse.py")]

        async def search(**filters: object) -> list:
            result = await client.protocol.send_request_async("sylk/search", {
                "query": "parse", "mode": "lexical", "filters": filters})
            return [(h.path, h.symbol, h.exported) for h in result.hits]

        assert await search(exported=True) == [("pkg/deep/er/lib.py", "parse", True)]
        assert ("parse.py", "parse", False) in await search(exported=False)
        assert all(not exported for _p, _s, exported in await search(exported=False))
        everything = await search()
        assert {("pkg/deep/er/lib.py", "parse", True), ("parse.py", "parse", False)} <= set(everything)
        with pytest.raises(Exception, match="filters.exported"):
            await search(exported="yes")
    finally:
        await client.shutdown_session()
        await client.stop()


def sylk(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sylk.cli", *args], capture_output=True, text=True,
                          env=os.environ.copy(), timeout=TIMEOUT)


def test_cli_symbols_and_search_filter_by_exported(exports_tree: Path):
    assert sylk("index", "--no-embed", str(exports_tree)).returncode == 0
    r = sylk("symbols", "parse", str(exports_tree), "--no-refresh")
    assert r.returncode == 0, r.stderr
    assert [line.split()[2].split(":")[0] for line in r.stdout.splitlines()] == ["pkg/deep/er/lib.py", "parse.py"]

    def names(*flags: str) -> list[tuple[str, str, bool]]:
        r = sylk("symbols", "", str(exports_tree), "--no-refresh", "--format", "json", *flags)
        return [(s["path"], s["name"], s["exported"]) for s in json.loads(r.stdout)]

    assert names("--exported") == [("parse.py", "tokenize", True), ("pkg/deep/er/lib.py", "parse", True)]
    assert names("--no-exported") == [("parse.py", "parse", False)]
    assert names("--no-exported", "--kind", "function") == []
    r = sylk("symbols", "parse", str(exports_tree), "--no-refresh", "--exported", "--kind", "class")
    assert r.returncode == 1 and r.stdout == ""

    def hits(query: str, *flags: str) -> list[tuple[str, str, bool]]:
        r = sylk("search", query, str(exports_tree), "--mode", "lexical", "--no-refresh", "--format", "json", *flags)
        assert r.returncode in (0, 1), r.stderr
        return [(h["path"], h["symbol"], h["exported"]) for h in json.loads(r.stdout)["hits"]]

    assert hits("parse", "--exported") == [("pkg/deep/er/lib.py", "parse", True)]
    assert hits("is:exported parse") == [("pkg/deep/er/lib.py", "parse", True)]
    assert ("parse.py", "parse", False) in hits("parse", "--no-exported")
    r = sylk("search", "exported:perhaps parse", str(exports_tree), "--no-refresh")
    assert r.returncode == 2 and "exported" in r.stderr


async def test_exported_and_kind_through_mcp(tmp_path: Path, _isolated_index: Path):
    """search_symbol takes kind and exported; search_code takes exported (false too)."""
    from conftest import mcp_call, mcp_call_error, mcp_indexed, mcp_session, mcp_wait_until, without_embedding

    root = write_tree(tmp_path / "mcpx", {
        "lib.go": "package lib\n\nfunc Parse() {}\n\nfunc parse() {}\n\ntype Parser struct{}\n",
    })
    async with mcp_session(without_embedding(root), _isolated_index) as s:
        await mcp_wait_until(s, mcp_indexed, "the first index run")
        both = await mcp_call(s, "search_symbol", query="parse")
        assert {(x["name"], x["exported"]) for x in both["symbols"]} >= {("Parse", True), ("parse", False)}
        public = await mcp_call(s, "search_symbol", query="parse", exported=True, kind=["function"])
        assert [(x["name"], x["kind"]) for x in public["symbols"]] == [("Parse", "function")]
        private = await mcp_call(s, "search_code", query="parse", mode="lexical", exported=False)
        assert {h["symbol"] for h in private["hits"]} == {"parse"}
        assert "kind" in await mcp_call_error(s, "search_symbol", query="parse", kind=["funktion"])
