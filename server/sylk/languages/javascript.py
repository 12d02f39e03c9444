"""JavaScript; TypeScript (``typescript.py``) shares its keywords, imports and exports."""

from .c_family import COMMENTS
from .spec import Exports, Imports, LanguageSpec, Package

KEYWORDS = frozenset(
    "async await break case catch class const continue debugger default delete do else export extends false "
    "finally for function if import in instanceof let new null return static super switch this throw true try "
    "typeof undefined var void while with yield".split())
IMPORTS = Imports(
    patterns=(r"""(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]""",
              r"""require\(\s*['"]([^'"]+)['"]\s*\)""",
              r"""^\s*import\s+['"]([^'"]+)['"]"""),
    resolve="relative_dot",
    suffixes=(".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", "/index.js", "/index.ts"))
TESTS = r"[^/]+\.(?:test|spec)\.[cm]?[jt]sx?"  # jest, vitest, mocha, jasmine
WRAPPERS = frozenset({"export_statement", "lexical_declaration", "variable_declaration", "expression_statement"})

SPEC = LanguageSpec(
    "javascript", "tree_sitter_javascript", "language", extensions=(".js", ".mjs", ".cjs", ".jsx"),
    query="javascript", refs="javascript",
    comments=COMMENTS, decorators=("@",),
    keywords=KEYWORDS,
    exports=Exports("javascript"), imports=IMPORTS, package=Package("npm"),
    tests=TESTS,
    wrappers=WRAPPERS,
    own_server=True,
)
