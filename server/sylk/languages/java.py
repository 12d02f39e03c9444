from .c_family import COMMENTS
from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "java", "tree_sitter_java", "language", extensions=(".java",),
    query="java", refs="java",
    comments=COMMENTS, decorators=("@",),
    keywords=frozenset(
        "abstract assert boolean break byte case catch char class const continue default do double else enum "
        "extends final finally float for goto if implements import instanceof int interface long native new null "
        "package private protected public return short static strictfp super switch synchronized this throw throws "
        "transient true false try var void volatile while".split()),
    exports=Exports("java"),
    imports=Imports(patterns=(r"^\s*import\s+(?:static\s+)?([\w.]+)\s*;",), resolve="dotted", suffixes=(".java",)),
    package=Package("clause", r"^[ \t]*package[ \t]+([\w.]+)[ \t]*;"),
    tests=r"[^/]+(?:Test|Tests|TestCase|IT|Spec)\.java",  # JUnit
    own_server=True,
    test_classes=True,
)
