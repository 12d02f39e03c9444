from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "zig", "tree_sitter_zig", "language", extensions=(".zig",),
    query="zig", refs="zig",
    comments=("//",), decorators=(),
    keywords=frozenset(
        "addrspace align allowzero and anyframe anytype asm break callconv catch comptime const continue defer else "
        "enum errdefer error export extern fn for if inline linksection noalias noinline opaque or orelse packed "
        "pub return struct switch test threadlocal try union unreachable var volatile while "
        "true false null undefined".split()),
    # ``pub`` (or ``export``, the C ABI) offers a declaration; without it the file keeps it;
    # a struct's fields and an enum's members are as visible as their container
    exports=Exports(shown=r"\b(?:pub|export)\b", default=False, open_kinds=frozenset({"field", "enum_member"})),
    # ``@import("x.zig")``: a path from the importing file's folder (``@import("std")`` is a
    # module named in build.zig: not resolved)
    imports=Imports(patterns=(r'@import\(\s*"([^"]+\.zig)"\s*\)',), resolve="relative"),
    package=Package("folder"),
    tests=r"(?:tests?|test_[^/]*|[^/]+_tests?)\.zig",  # (tests are mostly ``test`` blocks in any file)
)
