from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "julia", "tree_sitter_julia", "language", extensions=(".jl",),
    query="julia", refs="julia",
    comments=("#",), decorators=("@",),
    keywords=frozenset(
        "abstract baremodule begin break catch const continue do else elseif end export false finally for function "
        "global if import in isa let local macro module mutable outer primitive public quote return struct true "
        "try type using where while".split()),
    # the module's ``export`` and ``public`` lists decide; without them, names without a leading _
    exports=Exports(listed=True, private_name=r"_"),
    # ``include("x.jl")``: a path; ``using .Widgets``: a module of the package
    imports=Imports(patterns=(r'\binclude\(\s*"([^"]+)"\s*\)',), resolve="relative"),
    doc_nodes=frozenset({"string_literal"}),
    package=Package("clause", r"^[ \t]*(?:bare)?module[ \t]+([A-Za-z_]\w*)"),
    tests=r"runtests\.jl|test_[^/]*\.jl|[^/]+_tests?\.jl",
    wrappers=frozenset({"macrocall_expression", "macro_argument_list"}),
)
