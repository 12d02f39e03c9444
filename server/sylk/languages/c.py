from .c_family import COMMENTS, INCLUDES, KEYWORDS
from .spec import Exports, LanguageSpec, Package

SPEC = LanguageSpec(
    "c", "tree_sitter_c", "language", extensions=(".c", ".h"),
    query="c", refs="c",
    comments=COMMENTS, decorators=(),
    keywords=KEYWORDS,
    exports=Exports("c"), imports=INCLUDES, package=Package(),
    tests=r"[^/]+_(?:unit)?test\.c",
    wrappers=frozenset({"type_definition", "declaration"}),
)
