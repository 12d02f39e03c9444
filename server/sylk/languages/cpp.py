from .c_family import COMMENTS, INCLUDES, KEYWORDS
from .spec import Exports, LanguageSpec, Package

SPEC = LanguageSpec(
    "cpp", "tree_sitter_cpp", "language",
    extensions=(".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp"),
    query="cpp", refs="cpp",
    comments=COMMENTS, decorators=("template", "[["),
    keywords=KEYWORDS | frozenset(
        "bool catch class constexpr delete explicit false friend mutable namespace new noexcept nullptr operator "
        "override private protected public template this throw true try typename using virtual".split()),
    exports=Exports("cpp"), imports=INCLUDES, package=Package(),
    tests=r"[^/]+_(?:unit)?test\.(?:cc|cpp|cxx)",  # googletest
    wrappers=frozenset({"template_declaration", "type_definition", "declaration"}),
)
