"""sylk.ingest.symbols: our tags queries per language, on small snippets."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from sylk import languages
from sylk.ingest import grammars
from sylk.ingest.symbols import KINDS, extract
from tree_sitter import Query


def triples(source: str, language: str) -> list[tuple[str, str, str]]:
    return [(s.name, s.kind, s.container) for s in extract(textwrap.dedent(source).encode(), language)]


def find(source: str, language: str, name: str):
    matches = [s for s in extract(textwrap.dedent(source).encode(), language) if s.name == name]
    assert len(matches) == 1, matches
    return matches[0]


@pytest.mark.parametrize("language", [s.name for s in languages.SPECS])
def test_query_compiles_and_uses_known_kinds(language):
    query = grammars.tags_query(language)
    assert isinstance(query, Query)
    for i in range(query.capture_count):
        cap = query.capture_name(i)
        if cap.startswith("definition."):
            assert cap[len("definition."):] in KINDS, cap


CASES = [
    pytest.param("python", """
        class Repo:
            table = "users"
            def get(self, id): ...
            by_id = lambda self, i: None
        def helper(): pass
        MAX_USERS = 10
        lower = 1
        """, [
        ("Repo", "class", ""), ("table", "field", "Repo"), ("get", "method", "Repo"),
        ("by_id", "method", "Repo"), ("helper", "function", ""), ("MAX_USERS", "constant", ""),
    ], id="python"),
    pytest.param("javascript", """
        class Cart extends Base {
          static count = 0;
          constructor(items) { this.items = items; }
          total() { return 0; }
        }
        function add(a, b) { return a + b; }
        const mul = (a, b) => a * b;
        var legacy = function () {};
        Cart.prototype.clear = function () {};
        module.exports.sum = function (xs) {};
        const api = { get() {}, post: function () {} };
        export const LIMIT = 5;
        let counter = 0;
        """, [
        ("Cart", "class", ""), ("count", "field", "Cart"), ("constructor", "constructor", "Cart"),
        ("total", "method", "Cart"), ("add", "function", ""), ("mul", "function", ""),
        ("legacy", "function", ""), ("clear", "method", "Cart"), ("sum", "function", ""),
        ("api", "constant", ""), ("get", "method", "api"), ("post", "method", "api"),
        ("LIMIT", "constant", ""), ("counter", "variable", ""),
    ], id="javascript"),
    pytest.param("typescript", """
        export interface Shape {
          area(): number;
          readonly name: string;
        }
        export type Id = string | number;
        enum Color { Red, Green = 2 }
        export abstract class Base implements Shape {
          private cache: Map<string, number> = new Map();
          constructor(public name: string) {}
          abstract area(): number;
          describe(): string { return this.name; }
        }
        export const square = (x: number): number => x * x;
        namespace Geometry { export function origin() {} }
        declare function external(a: string): void;
        """, [
        ("Shape", "interface", ""), ("area", "method", "Shape"), ("name", "property", "Shape"),
        ("Id", "type", ""), ("Color", "enum", ""), ("Red", "enum_member", "Color"),
        ("Green", "enum_member", "Color"), ("Base", "class", ""), ("cache", "property", "Base"),
        ("constructor", "constructor", "Base"), ("area", "method", "Base"),
        ("describe", "method", "Base"), ("square", "function", ""), ("Geometry", "namespace", ""),
        ("origin", "function", "Geometry"), ("external", "function", ""),
    ], id="typescript"),
    pytest.param("tsx", """
        interface Props { title: string }
        export function Header({ title }: Props) { return <h1>{title}</h1>; }
        export const Footer = () => <footer />;
        """, [
        ("Props", "interface", ""), ("title", "property", "Props"),
        ("Header", "function", ""), ("Footer", "function", ""),
    ], id="tsx"),
    pytest.param("go", """
        package geo

        type Point struct {
            X, Y int
        }
        type Shape interface {
            Area() float64
        }
        type Meters float64
        func (p *Point) Move(dx int) {}
        func (l List[T]) Len() int { return 0 }
        func Distance(a, b Point) float64 { return 0 }
        const Pi = 3.14
        var Origin Point
        """, [
        ("Point", "struct", ""), ("X", "field", "Point"), ("Y", "field", "Point"),
        ("Shape", "interface", ""), ("Area", "method", "Shape"), ("Meters", "type", ""),
        ("Move", "method", "Point"), ("Len", "method", "List"), ("Distance", "function", ""),
        ("Pi", "constant", ""), ("Origin", "variable", ""),
    ], id="go"),
    pytest.param("rust", """
        pub struct Point { x: i32 }
        pub enum Shape { Circle(f64), Empty }
        pub trait Area { fn area(&self) -> f64; }
        impl Point { pub fn new() -> Self { Point { x: 0 } } }
        impl Area for Point { fn area(&self) -> f64 { 0.0 } }
        impl<T> fmt::Display for Wrapper<T> { fn fmt(&self) {} }
        pub type Id = u64;
        const MAX: u32 = 1;
        static NAME: &str = "x";
        mod util { pub fn helper() {} }
        macro_rules! square { ($x:expr) => { $x * $x }; }
        fn main() {}
        """, [
        ("Point", "struct", ""), ("x", "field", "Point"), ("Shape", "enum", ""),
        ("Circle", "enum_member", "Shape"), ("Empty", "enum_member", "Shape"),
        ("Area", "trait", ""), ("area", "method", "Area"), ("new", "method", "Point"),
        ("area", "method", "Point"), ("fmt", "method", "Wrapper"), ("Id", "type", ""),
        ("MAX", "constant", ""), ("NAME", "variable", ""), ("util", "module", ""),
        ("helper", "function", "util"), ("square", "macro", ""), ("main", "function", ""),
    ], id="rust"),
    pytest.param("java", """
        package a;
        public class Account extends Base implements Comparable<Account> {
            public static final int LIMIT = 3;
            private long balance;
            public Account(long b) { balance = b; }
            public long balance() { return balance; }
            interface Listener { void changed(); }
        }
        enum Kind { SAVINGS, CHECKING }
        record Pair(int a, int b) {}
        @interface Audited {}
        """, [
        ("Account", "class", ""), ("LIMIT", "constant", "Account"), ("balance", "field", "Account"),
        ("Account", "constructor", "Account"), ("balance", "method", "Account"),
        ("Listener", "interface", "Account"), ("changed", "method", "Account.Listener"),
        ("Kind", "enum", ""), ("SAVINGS", "enum_member", "Kind"), ("CHECKING", "enum_member", "Kind"),
        ("Pair", "class", ""), ("a", "field", "Pair"), ("b", "field", "Pair"),
        ("Audited", "interface", ""),
    ], id="java"),
    pytest.param("c", """
        #define MAX 10
        #define SQUARE(x) ((x) * (x))
        struct point { int x; int *y; };
        typedef struct { int len; } buf_t;
        union value { int i; float f; };
        enum color { RED, GREEN };
        typedef int (*cmp_fn)(const void *, const void *);
        int prototype_only(int a);
        static int counter = 0;
        char *dup(const char *s) { return 0; }
        int main(void) { return 0; }
        """, [
        ("MAX", "macro", ""), ("SQUARE", "macro", ""), ("point", "struct", ""),
        ("x", "field", "point"), ("y", "field", "point"), ("buf_t", "type", ""),
        ("len", "field", "buf_t"), ("value", "union", ""), ("i", "field", "value"),
        ("f", "field", "value"), ("color", "enum", ""), ("RED", "enum_member", "color"),
        ("GREEN", "enum_member", "color"), ("cmp_fn", "type", ""), ("counter", "variable", ""),
        ("dup", "function", ""), ("main", "function", ""),
    ], id="c"),
    pytest.param("cpp", """
        namespace shop {
        class Cart {
         public:
          Cart();
          ~Cart();
          int size() const { return n_; }
          void add(int item);
         private:
          int n_;
        };
        }  // namespace shop
        shop::Cart::Cart() : n_(0) {}
        void shop::Cart::add(int item) {}
        template <typename T> T max_of(T a, T b) { return a; }
        using Ids = std::vector<int>;
        enum class Mode { Fast, Slow };
        """, [
        ("shop", "namespace", ""), ("Cart", "class", "shop"), ("Cart", "constructor", "shop.Cart"),
        ("~Cart", "method", "shop.Cart"), ("size", "method", "shop.Cart"), ("add", "method", "shop.Cart"),
        ("n_", "field", "shop.Cart"), ("Cart", "constructor", "Cart"), ("add", "method", "Cart"),
        ("max_of", "function", ""), ("Ids", "type", ""), ("Mode", "enum", ""),
        ("Fast", "enum_member", "Mode"), ("Slow", "enum_member", "Mode"),
    ], id="cpp"),
    pytest.param("ruby", """
        module Billing
          RATE = 0.2
          class Invoice < Base
            def total(items)
              0
            end
            def self.build; new; end
            class << self
              def load; end
            end
          end
        end
        def main; end
        """, [
        ("Billing", "module", ""), ("RATE", "constant", "Billing"), ("Invoice", "class", "Billing"),
        ("total", "method", "Billing.Invoice"), ("build", "method", "Billing.Invoice"),
        ("load", "method", "Billing.Invoice"), ("main", "function", ""),
    ], id="ruby"),
    pytest.param("csharp", """
        namespace Shop.Core
        {
            public interface IStore { void Save(); }
            public class Store : IStore
            {
                public const int Max = 5;
                private int _count;
                public string Name { get; set; }
                public Store(int count) { _count = count; }
                public void Save() {}
            }
            public struct Money { public decimal Amount; }
            public enum Currency { Eur, Usd }
            public record Order(int Id);
        }
        """, [
        ("Shop.Core", "namespace", ""), ("IStore", "interface", "Shop.Core"),
        ("Save", "method", "Shop.Core.IStore"), ("Store", "class", "Shop.Core"),
        ("Max", "constant", "Shop.Core.Store"), ("_count", "field", "Shop.Core.Store"),
        ("Name", "property", "Shop.Core.Store"), ("Store", "constructor", "Shop.Core.Store"),
        ("Save", "method", "Shop.Core.Store"), ("Money", "struct", "Shop.Core"),
        ("Amount", "field", "Shop.Core.Money"), ("Currency", "enum", "Shop.Core"),
        ("Eur", "enum_member", "Shop.Core.Currency"), ("Usd", "enum_member", "Shop.Core.Currency"),
        ("Order", "class", "Shop.Core"), ("Id", "property", "Shop.Core.Order"),
    ], id="csharp"),
    pytest.param("markdown", """
        # Guide

        Intro.

        ## Install

        ### From source

        ## Usage

        Setext title
        ------------
        """, [
        ("Guide", "heading", ""), ("Install", "heading", "Guide"),
        ("From source", "heading", "Guide.Install"), ("Usage", "heading", "Guide"),
        ("Setext title", "heading", "Guide.Usage"),
    ], id="markdown"),
]


@pytest.mark.parametrize(("language", "source", "expected"), CASES)
def test_symbols(language, source, expected):
    assert triples(source, language) == expected


@pytest.mark.parametrize(("language", "source", "name", "signature", "doc"), [
    pytest.param("python", '''
        def fetch(url: str,
                  retries: int = 3) -> bytes:
            """Download url.

            Retries on failure.
            """
        ''', "fetch", "def fetch(url: str, retries: int = 3) -> bytes", "Download url.\n\nRetries on failure.",
        id="python-docstring"),
    pytest.param("javascript", """
        /**
         * Adds two numbers.
         */
        export function add(a, b) { return a + b; }
        """, "add", "function add(a, b)", "Adds two numbers.", id="javascript-jsdoc-above-export"),
    pytest.param("typescript", """
        // Arrow doc.
        export const twice = (x: number): number => {
          return 2 * x;
        };
        """, "twice", "twice = (x: number): number =>", "Arrow doc.", id="typescript-arrow"),
    pytest.param("javascript", """
        // Empties the cart.
        Cart.prototype.clear = function () {};
        """, "clear", "Cart.prototype.clear = function ()", "Empties the cart.", id="javascript-prototype"),
    pytest.param("go", """
        package p
        type (
            // Celsius is a temperature.
            Celsius float64
        )
        """, "Celsius", "Celsius float64", "Celsius is a temperature.", id="go-grouped-type"),
    pytest.param("go", """
        package p
        // Move shifts p.
        func (p *Point) Move(dx int) {}
        """, "Move", "func (p *Point) Move(dx int)", "Move shifts p.", id="go-method"),
    pytest.param("rust", """
        /// Builds a point.
        #[inline]
        pub fn point() -> Point { todo!() }
        """, "point", "pub fn point() -> Point", "Builds a point.", id="rust-doc-above-attribute"),
    pytest.param("java", """
        class A {
            /** Opens it. */
            @Override
            public void open(int mode) throws IOException {}
        }
        """, "open", "@Override public void open(int mode) throws IOException", "Opens it.", id="java-javadoc"),
    pytest.param("cpp", """
        namespace n {
        }  // namespace n
        void g() {}
        """, "g", "void g()", "", id="cpp-trailing-comment-is-not-doc"),
    pytest.param("ruby", """
        # Says hi.
        def hi(name)
        end
        """, "hi", "def hi(name)", "Says hi.", id="ruby-comment"),
])
def test_signature_and_doc(language, source, name, signature, doc):
    sym = find(source, language, name)
    assert (sym.signature, sym.doc) == (signature, doc)


def test_ranges_are_full_definition_and_name():
    source = """\
class A:
    def run(self):
        return 1
"""
    syms = extract(source.encode(), "python")
    assert [(s.name, s.range, s.selection) for s in syms] == [
        ("A", (0, 0, 2, 16), (0, 6, 0, 7)),
        ("run", (1, 4, 2, 16), (1, 8, 1, 11)),
    ]


@pytest.mark.parametrize(("language", "line", "name", "start"), [
    # "é" is 2 UTF-8 bytes / 1 UTF-16 unit, "😀" 4 bytes / 2 units: a byte or
    # code-point column would be off.
    pytest.param("javascript", 'const s = "é😀"; function f() {}', "f", 26, id="javascript"),
    pytest.param("python", 'x = "😀"; y = "naïve"\ndef g(): pass\nGREETING = "héllo 😀"; HANDLER = 2', "HANDLER", 23,
                 id="python"),
    pytest.param("go", 'package p\nconst s = "日本😀"; func h() {}', "h", 23, id="go"),
])
def test_selection_columns_are_utf16(language, line, name, start):
    sym = find(line, language, name)
    row = line.count("\n", 0, line.index(name + ("(" if language != "python" else " ")))
    assert sym.selection == (row, start, row, start + len(name))


def test_earliest_pattern_wins_for_one_definition():
    # const f = () => {} matches the function pattern and the module-level
    # constant pattern; it is reported once, as a function.
    assert triples("const f = () => 1;\n", "javascript") == [("f", "function", "")]


def test_extract_on_broken_source_does_not_raise():
    assert ("ok", "function", "") in triples("def ok():\n    pass\ndef broken(:\n", "python")


WORKSPACE = Path(__file__).resolve().parents[1] / "fixtures" / "workspace"


@pytest.mark.parametrize(("path", "expected"), [
    pytest.param("app/repository.py", {("UserRepository", "class", ""),
                                       ("get_user_by_id", "method", "UserRepository")}, id="python"),
    pytest.param("app/http.py", {("HttpRetryPolicy", "class", ""),
                                 ("backoff_delay", "method", "HttpRetryPolicy")}, id="python-http"),
    pytest.param("services/geo/point.go", {("Point", "struct", ""), ("Translate", "method", "Point"),
                                           ("Shape", "interface", "")}, id="go"),
    pytest.param("web/src/session.ts", {("SessionStore", "interface", ""),
                                        ("InMemorySessionStore", "class", ""),
                                        ("revoke", "method", "InMemorySessionStore")}, id="typescript"),
    pytest.param("web/src/cart.js", {("ShoppingCart", "class", ""), ("clear", "method", "ShoppingCart"),
                                     ("formatPrice", "function", "")}, id="javascript"),
    pytest.param("engine/src/lib.rs", {("TokenBucket", "struct", ""), ("try_acquire", "method", "TokenBucket"),
                                       ("per_second", "macro", "")}, id="rust"),
    pytest.param("java/com/acme/billing/InvoiceService.java", {("totalWithVat", "method", "InvoiceService"),
                                                               ("InvoiceService", "constructor", "InvoiceService")},
                 id="java"),
    pytest.param("native/ring_buffer.c", {("ring_buffer_push", "function", "")}, id="c"),
    pytest.param("native/lru_cache.cpp", {("LruCache", "class", "cache"), ("put", "method", "LruCache")}, id="cpp"),
    pytest.param("ruby/lib/notifier.rb", {("Notifier", "class", "Notifications"),
                                          ("default", "method", "Notifications.Notifier")}, id="ruby"),
    pytest.param("dotnet/OrderProcessor.cs", {("AddLine", "method", "Acme.Orders.OrderProcessor")}, id="csharp"),
    pytest.param("README.md", {("Geo service", "heading", "Acme Demo Workspace.Services")}, id="markdown"),
])
def test_fixture_workspace_symbols(path, expected):
    language = languages.language_for_path(path)
    assert language is not None
    got = {(s.name, s.kind, s.container) for s in extract((WORKSPACE / path).read_bytes(), language)}
    assert expected <= got


def test_fixture_unicode_file_selection_columns():
    syms = {s.name: s.selection for s in extract((WORKSPACE / "app/unicode.py").read_bytes(), "python")}
    assert syms["EMOJI_AFTER"] == (2, 23, 2, 34)
    assert syms["LAST_ON_LINE"] == (3, 50, 3, 62)
    assert syms["special_of_the_day"] == (9, 30, 9, 48)
    assert syms["größe"] == (11, 8, 11, 13)


def test_a_function_of_several_clauses_is_one_symbol():
    """Haskell's equations and Elixir's def heads: one symbol from the first clause to the
    last; a clause of another name in between starts another."""
    hs = b"fact :: Int -> Int\nfact 0 = 1\nfact n = n * fact (n - 1)\n\nother = 2\n\nfact2 0 = 1\nfact2 n = n\n"
    got = [(s.name, s.kind, s.range[0], s.range[2]) for s in extract(hs, "haskell")]
    assert got == [("fact", "function", 1, 2), ("other", "function", 4, 4), ("fact2", "function", 6, 7)]
    ex = (b"defmodule M do\n  def f(0), do: 1\n  def f(n), do: n\n  defp g(x), do: x\n  def f(:again), do: 0\nend\n"
          b"defimpl P, for: A do\nend\ndefimpl P, for: B do\nend\n")
    got = [(s.name, s.container, s.range[0], s.range[2], s.exported) for s in extract(ex, "elixir")]
    assert got == [("M", "", 0, 5, True), ("f", "M", 1, 2, True), ("g", "M", 3, 3, False), ("f", "M", 4, 4, True),
                   ("P", "", 6, 7, True), ("P", "", 8, 9, True)]  # (two implementations: not clauses)


def test_a_qualified_definition_name_is_its_last_part_in_a_container():
    """Elixir's ``defmodule Phoenix.Channel`` is Channel in Phoenix (found as ``Channel``, as
    a Java class is), Perl's ``package LWP::UserAgent`` UserAgent in LWP."""
    ex = b"defmodule Phoenix.Channel do\n  def join(a), do: a\n  defmodule Server do\n  end\nend\n"
    assert [(s.kind, s.container, s.name) for s in extract(ex, "elixir")] == [
        ("module", "Phoenix", "Channel"), ("function", "Phoenix.Channel", "join"),
        ("module", "Phoenix.Channel", "Server")]
    pl = b"package LWP::UserAgent;\nsub new { }\nsub Other::Pkg::f { }\n"
    assert [(s.kind, s.container, s.name) for s in extract(pl, "perl")] == [
        ("module", "LWP", "UserAgent"), ("function", "", "new"), ("function", "Other::Pkg", "f")]
