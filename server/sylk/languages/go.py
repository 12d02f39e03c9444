from .c_family import COMMENTS
from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "go", "tree_sitter_go", "language", extensions=(".go",),
    query="go", refs="go",
    comments=COMMENTS, decorators=(),
    keywords=frozenset(
        "break case chan const continue default defer else fallthrough for func go goto if import interface map "
        "package range return select struct switch type var nil true false".split()),
    exports=Exports("go"),
    imports=Imports(patterns=(r'^\s*(?:import\s+)?(?:\w+\s+)?"([^"]+)"\s*$',), resolve="go"),
    package=Package("go"),
    tests=r"[^/]+_test\.go",
    wrappers=frozenset({"type_declaration", "const_declaration", "var_declaration"}),
    own_server=True,
)
