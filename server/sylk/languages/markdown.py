"""Markdown: headings are its symbols; it has no code rules (nothing exported, imported,
tested or reserved)."""

from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "markdown", "tree_sitter_markdown", "language", extensions=(".md", ".markdown", ".mdx"),
    query="markdown", refs="",
    comments=(), decorators=(),
    keywords=frozenset(),
    exports=Exports("never"), imports=Imports(), package=Package(),
    tests="",
)
