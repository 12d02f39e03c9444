import keyword

from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "python", "tree_sitter_python", "language", extensions=(".py", ".pyi", ".pyw"),
    query="python", refs="python",
    comments=("#",), decorators=("@",),
    keywords=frozenset(keyword.kwlist + keyword.softkwlist),
    exports=Exports("python"),
    imports=Imports(patterns=(r"^\s*from\s+(\.*[\w.]*)\s+import\s", r"^\s*import\s+([\w.]+)"),
                    resolve="python", suffixes=(".py", "/__init__.py")),
    package=Package("python"),
    tests=r"test_[^/]*\.py|[^/]+_test\.py|tests?\.py|conftest\.py",  # pytest, unittest, Django
    wrappers=frozenset({"decorated_definition"}),
    own_server=True,
)
