"""The languages Sylk knows: names, file names and extensions, and which grammar wheel
parses each (data only: the settings check names against it, and ``ingest.grammars``
loads the grammars and Sylk's tags queries from it).
"""

from __future__ import annotations

from pathlib import PurePosixPath

import attrs


@attrs.frozen
class LanguageSpec:
    name: str
    module: str  # python module of the grammar wheel
    func: str = "language"  # function in that module returning the grammar pointer
    extensions: tuple[str, ...] = ()
    filenames: tuple[str, ...] = ()
    # Parent node types that wrap a definition and carry its leading comments
    # (``export class X``, ``@decorator def f``, Go ``type X struct``,
    # JS ``Foo.prototype.m = function`` statements); consulted only when the
    # definition has no comments of its own.
    wrappers: frozenset[str] = frozenset()


SPECS: tuple[LanguageSpec, ...] = (
    LanguageSpec("python", "tree_sitter_python", extensions=(".py", ".pyi", ".pyw"),
                 wrappers=frozenset({"decorated_definition"})),
    LanguageSpec("javascript", "tree_sitter_javascript",
                 extensions=(".js", ".mjs", ".cjs", ".jsx"),
                 wrappers=frozenset({"export_statement", "lexical_declaration", "variable_declaration",
                                     "expression_statement"})),
    LanguageSpec("typescript", "tree_sitter_typescript", "language_typescript",
                 extensions=(".ts", ".mts", ".cts"),
                 wrappers=frozenset({"export_statement", "lexical_declaration", "variable_declaration",
                                     "ambient_declaration", "expression_statement"})),
    LanguageSpec("tsx", "tree_sitter_typescript", "language_tsx", extensions=(".tsx",),
                 wrappers=frozenset({"export_statement", "lexical_declaration", "variable_declaration",
                                     "ambient_declaration", "expression_statement"})),
    LanguageSpec("go", "tree_sitter_go", extensions=(".go",),
                 wrappers=frozenset({"type_declaration", "const_declaration", "var_declaration"})),
    LanguageSpec("rust", "tree_sitter_rust", extensions=(".rs",)),
    LanguageSpec("java", "tree_sitter_java", extensions=(".java",)),
    LanguageSpec("c", "tree_sitter_c", extensions=(".c", ".h"),
                 wrappers=frozenset({"type_definition", "declaration"})),
    LanguageSpec("cpp", "tree_sitter_cpp",
                 extensions=(".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp"),
                 wrappers=frozenset({"template_declaration", "type_definition", "declaration"})),
    LanguageSpec("ruby", "tree_sitter_ruby", extensions=(".rb", ".rake", ".gemspec"),
                 filenames=("Rakefile", "Gemfile")),
    LanguageSpec("csharp", "tree_sitter_c_sharp", extensions=(".cs",)),
    LanguageSpec("markdown", "tree_sitter_markdown", extensions=(".md", ".markdown", ".mdx")),
)

BY_NAME: dict[str, LanguageSpec] = {s.name: s for s in SPECS}
_BY_EXT: dict[str, str] = {ext: s.name for s in SPECS for ext in s.extensions}
_BY_FILENAME: dict[str, str] = {fn: s.name for s in SPECS for fn in s.filenames}


def language_for_path(path: str) -> str | None:
    """The language name of a file path, or None if we have no grammar for it."""
    p = PurePosixPath(path)
    name = _BY_FILENAME.get(p.name)
    if name:
        return name
    return _BY_EXT.get(p.suffix.lower())
