from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "perl", "tree_sitter_perl", "language", extensions=(".pl", ".pm", ".t", ".psgi"),
    filenames=("cpanfile",),
    query="perl", refs="perl",
    comments=("#",), decorators=(),
    keywords=frozenset(
        "my our local state sub package use no require if elsif else unless while until for foreach do last next "
        "redo goto return and or not xor eq ne lt gt le ge cmp x q qq qw qr m s tr y BEGIN END INIT CHECK "
        "UNITCHECK __PACKAGE__ __FILE__ __LINE__ __SUB__ __DATA__ __END__ class method field ADJUST".split()),
    # every sub can be called as Pkg::sub; a leading _ marks the internal ones
    exports=Exports(private_name=r"_"),
    # ``use LWP::UserAgent;``: a file ending in LWP/UserAgent.pm (pragmas are lower case);
    # ``require "x.pl"``: a path
    imports=Imports(patterns=(r"^\s*(?:use|require)\s+([A-Z]\w*(?:::\w+)*)",
                              r"""^\s*(?:require|do)\s+["']([^"']+\.p[lm])["']"""),
                    resolve="dotted", separator="::", suffixes=(".pm",)),
    package=Package("clause", r"^[ \t]*package[ \t]+([A-Za-z_]\w*(?:::\w+)*)"),
    tests=r"[^/]+\.t",  # Test::More
    qualified="::",  # package LWP::UserAgent: UserAgent in LWP
)
