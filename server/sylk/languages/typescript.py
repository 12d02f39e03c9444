"""TypeScript and TSX (one grammar wheel, two grammars, one tags query)."""

import attrs

from . import javascript
from .spec import LanguageSpec

SPEC = LanguageSpec(
    "typescript", "tree_sitter_typescript", "language_typescript", extensions=(".ts", ".mts", ".cts"),
    query="typescript", refs="javascript",  # (the grammars name these nodes alike)
    comments=javascript.SPEC.comments, decorators=javascript.SPEC.decorators,
    keywords=javascript.KEYWORDS | frozenset(
        "abstract any boolean declare enum implements interface keyof namespace never number private protected "
        "public readonly string type unknown".split()),
    exports=javascript.SPEC.exports, imports=javascript.IMPORTS, package=javascript.SPEC.package,
    tests=javascript.TESTS,
    wrappers=javascript.WRAPPERS | {"ambient_declaration"},
    own_server=True,
)
TSX = attrs.evolve(SPEC, name="tsx", func="language_tsx", extensions=(".tsx",))
