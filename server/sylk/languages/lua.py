from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "lua", "tree_sitter_lua", "language", extensions=(".lua", ".rockspec"),
    query="lua", refs="lua",
    comments=("--",), decorators=(),
    keywords=frozenset(
        "and break do else elseif end false for function goto if in local nil not or repeat return then true "
        "until while".split()),
    # ``local function f`` stays in the file; what a module table holds is reachable
    exports=Exports(hidden=r"\blocal\b"),
    # ``require("a.b")``: a file ending in a/b.lua or a/b/init.lua (Neovim keeps modules under lua/)
    imports=Imports(patterns=(r"""\brequire\s*\(?\s*["']([\w.\-/]+)["']""",), resolve="dotted",
                    suffixes=(".lua", "/init.lua")),
    package=Package(),
    tests=r"[^/]+_(?:spec|test)\.lua|test_[^/]*\.lua",  # busted, mini.test
    wrappers=frozenset({"variable_declaration"}),
)
