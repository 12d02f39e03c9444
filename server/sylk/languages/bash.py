from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "bash", "tree_sitter_bash", "language", extensions=(".sh", ".bash", ".bats"),
    filenames=(".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile", "bashrc"),
    query="bash", refs="bash",
    comments=("#",), decorators=(),
    keywords=frozenset(
        "if then else elif fi case esac for select while until do done in function time coproc declare typeset "
        "local export readonly unset return exit break continue source eval exec shift trap".split()),
    # every function of a sourced file can be called; a leading _ marks the internal ones
    exports=Exports(private_name=r"_"),
    # ``source "${BASH_SOURCE%/*}/../lib/x.sh"``, ``. ./x.sh``: from the sourcing file's folder
    imports=Imports(patterns=(r"""^[ \t]*(?:source|\.)[ \t]+["']?(?:\$\{[^}]*\}/|\$\([^)]*\)/|\$\w+/)?([^"'\s;|&$()]+)""",),
                    resolve="relative", suffixes=(".sh", ".bash")),
    package=Package(),
    tests=r"[^/]+\.bats|test_[^/]*\.sh|[^/]+_test\.sh",  # bats, shunit2
)
