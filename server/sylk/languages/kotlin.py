from .c_family import COMMENTS
from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "kotlin", "tree_sitter_kotlin", "language", extensions=(".kt", ".kts"),
    query="kotlin", refs="kotlin",
    comments=COMMENTS, decorators=("@",),
    keywords=frozenset(
        "as break class continue do else false for fun if in interface is null object package return super this "
        "throw true try typealias typeof val var when while".split()),
    # public unless private, protected or internal (the module's alone)
    exports=Exports(hidden=r"\b(?:private|protected|internal)\b"),
    # ``import a.b.C``: a file ending in a/b/C.kt when the folders follow the package
    imports=Imports(patterns=(r"^\s*import\s+([\w.`]+?)(?:\.\*)?(?:\s+as\s+[\w`]+)?\s*;?\s*$",),
                    resolve="dotted", suffixes=(".kt",)),
    package=Package("clause", r"^[ \t]*package[ \t]+([\w.`]+)"),
    tests=r"[^/]+(?:Test|Tests|TestCase|Spec|IT)\.kts?",  # JUnit, Kotest
    test_classes=True,
)
