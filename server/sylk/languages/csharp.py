from .c_family import COMMENTS
from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "csharp", "tree_sitter_c_sharp", "language", extensions=(".cs",),
    query="csharp", refs="csharp",
    comments=COMMENTS, decorators=("[",),
    keywords=frozenset(
        "abstract as base bool break byte case catch char checked class const continue decimal default delegate do "
        "double else enum event explicit extern false finally fixed float for foreach goto if implicit in int "
        "interface internal is lock long namespace new null object operator out override params private protected "
        "public readonly ref return sbyte sealed short sizeof stackalloc static string struct switch this throw "
        "true try typeof uint ulong unchecked unsafe ushort using var virtual void volatile while".split()),
    exports=Exports("csharp"),
    imports=Imports(patterns=(r"^\s*using\s+([\w.]+)\s*;",), resolve="dotted", suffixes=(".cs",)),
    package=Package("clause", r"^[ \t]*namespace[ \t]+([\w.]+)"),
    tests=r"[^/]+(?:Test|Tests|TestCase|IT|Spec)\.cs",  # NUnit, xUnit
    own_server=True,
    test_classes=True,
)
