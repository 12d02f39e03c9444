"""The record describing one language (``LanguageSpec``) and the records of its rules.

Each field is read by one part of Sylk; the rules that need code (Python's ``__all__``,
Go's module paths) are written once in that part and named here by a string, and the
part keeps a table of them that a test checks against every language
(``tests/test_languages.py``): a language that names no rule, or one that is not written,
fails there, not silently at run time.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Exports:
    """How the language marks what a module offers to code elsewhere (``ingest.visibility``).

    ``rule``: ``"modifiers"`` (the words below decide), ``"never"`` (nothing is exported:
    Markdown), or the name of a rule written in ``ingest.visibility`` (``"python"``,
    ``"go"``, ...). For ``"modifiers"``: the bytes between a definition's start and its name
    are searched for ``hidden`` (a regular expression: ``private``, ``local``, ``defp``),
    then ``shown`` (``pub``, ``public``); without either the definition is exported when
    ``default`` is. A name matching ``private_name`` (``^_``) is not exported; kinds in
    ``open_kinds`` (fields of a Zig struct) follow their container alone. ``listed``: where
    the module lists its exports (the tags query's ``@exports``: Haskell's export list,
    Julia's ``export``), a top-level name is exported when it is listed, and only then."""

    rule: str = "modifiers"
    hidden: str = ""
    shown: str = ""
    default: bool = True
    private_name: str = ""
    open_kinds: frozenset[str] = frozenset()
    listed: bool = False


@attrs.frozen
class Imports:
    """What a file imports (``search.agent``; navigation ranks the imported files' definitions
    first). ``patterns``: regular expressions (``re.M``) whose group 1 is the module or path;
    ``resolve`` names how it maps to a workspace file: ``"none"`` (it cannot be told),
    ``"relative"`` (a path from the importing file's folder; ``suffixes`` tried after it),
    ``"relative_dot"`` (the same, only for names starting with ``.``: others are packages),
    ``"dotted"`` (``a.b.C`` is a file ending in ``a/b/C`` + a suffix; ``separator`` is the
    language's ``.``, ``\\`` or ``::``), or a rule written in ``search.agent``
    (``"python"``, ``"go"``, ``"rust"``, ``"ruby"``)."""

    patterns: tuple[str, ...] = ()
    resolve: str = "none"
    suffixes: tuple[str, ...] = ()
    separator: str = "."


@attrs.frozen
class Package:
    """The package a file belongs to (``ingest.packages``). ``rule``: ``"folder"`` (the
    language has none: the folder), ``"clause"`` (the first match of ``clause``, a bytes
    regular expression whose group 1 is the name: ``package a.b``, ``namespace A\\B;``),
    or a rule written in ``ingest.packages`` (``"go"``, ``"python"``, ``"npm"``,
    ``"cargo"``)."""

    rule: str = "folder"
    clause: str = ""


@attrs.frozen
class LanguageSpec:
    name: str
    module: str  # the Python module of the grammar wheel
    func: str  # the function in that module returning the grammar
    extensions: tuple[str, ...]
    # Sylk's tags query (``ingest/queries/<query>.scm``; a line ``; include: _part`` stands for
    # ``queries/_part.scm``, a part several languages share) and refs query
    # (``queries/refs/<refs>.scm``: comments, strings, call sites; "" for none)
    query: str
    refs: str
    # line prefixes of the comments, and of the decorators or attributes, that join the
    # definition below them (its chunk, its doc)
    comments: tuple[str, ...]
    decorators: tuple[str, ...]
    # the language's reserved words: never an identifier to look up (Go to Definition)
    keywords: frozenset[str]
    exports: Exports
    imports: Imports
    package: Package
    # a regular expression on a file's name (the last part of its path) telling a test file
    tests: str
    filenames: tuple[str, ...] = ()
    # Parent node types that wrap a definition and carry its leading comments
    # (``export class X``, ``@decorator def f``, Go ``type X struct``,
    # JS ``Foo.prototype.m = function`` statements); consulted only when the
    # definition has no comments of its own.
    wrappers: frozenset[str] = frozenset()
    # node types above a definition that document it besides comments (Haskell's haddock,
    # Julia's docstring literal)
    doc_nodes: frozenset[str] = frozenset()
    # most editors run the language's own server for it (pyright, gopls, rust-analyzer, ...):
    # there Sylk gives the editor no definitions, references or calls by default
    # (``navigation.skipLanguages``)
    own_server: bool = False
    # a test class may sit in a file of another name (JUnit, NUnit): a type named
    # ``...Test``, ``...Tests`` or ``...TestCase`` is a test
    test_classes: bool = False
    # a function is written as several clauses (Haskell's equations, Elixir's ``def`` heads):
    # consecutive functions, methods or macros of one name, kind and container are one
    # symbol, from the first clause to the last
    clauses: bool = False
    # what joins the parts of a qualified definition name (Elixir's ``defmodule Phoenix.Channel``,
    # Perl's ``package LWP::UserAgent``): the last part is the symbol's name, the rest joins
    # its container ("": names are never qualified)
    qualified: str = ""
