from .c_family import COMMENTS
from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "rust", "tree_sitter_rust", "language", extensions=(".rs",),
    query="rust", refs="rust",
    comments=COMMENTS, decorators=("#[",),
    keywords=frozenset(
        "as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod "
        "move mut pub ref return self Self static struct super trait true type unsafe use where while".split()),
    exports=Exports("rust"),
    imports=Imports(patterns=(r"^\s*(?:pub\s+)?(?:use|mod)\s+((?:crate|self|super)?(?:::)?[\w:]+)",),
                    resolve="rust"),
    package=Package("cargo"),
    tests=r"[^/]+_tests?\.rs",  # (and a ``tests`` module, and the crate's tests/ folder)
    own_server=True,
)
