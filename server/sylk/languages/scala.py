from .c_family import COMMENTS
from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "scala", "tree_sitter_scala", "language", extensions=(".scala", ".sc"),
    query="scala", refs="scala",
    comments=COMMENTS, decorators=("@",),
    keywords=frozenset(
        "abstract case catch class def do else enum export extends false final finally for forSome given if "
        "implicit import lazy macro match new null object override package private protected return sealed super "
        "then this throw trait true try type val var while with yield".split()),
    # public unless private or protected (also private[pkg], protected[this])
    exports=Exports(hidden=r"\b(?:private|protected)\b"),
    imports=Imports(patterns=(r"^\s*import\s+([\w.`]+?)(?:\.(?:_|\*|given|\{[^}]*\}))?\s*$",),
                    resolve="dotted", suffixes=(".scala",)),
    # (the first clause: chained ``package a`` / ``package b`` lines are not joined)
    package=Package("clause", r"^[ \t]*package[ \t]+(?!object\b)([\w.`]+)[ \t]*$"),
    tests=r"[^/]+(?:Test|Tests|Spec|Suite|Props|Laws)\.scala|[^/]+\.test\.scala",  # ScalaTest, MUnit, scala-cli
    test_classes=True,
)
