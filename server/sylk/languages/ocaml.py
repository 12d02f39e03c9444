"""OCaml: implementations (``.ml``) and interfaces (``.mli``), one wheel, two grammars, a
shared part of the tags query (``queries/_ocaml.scm``)."""

import attrs

from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "ocaml", "tree_sitter_ocaml", "language_ocaml", extensions=(".ml",),
    query="ocaml", refs="ocaml",
    comments=("(*", "*"), decorators=(),
    keywords=frozenset(
        "and as assert asr begin class constraint do done downto else end exception external false for fun function "
        "functor if in include inherit initializer land lazy let lor lsl lsr lxor match method mod module mutable "
        "new nonrec object of open or private rec sig struct then to true try type val virtual when while "
        "with".split()),
    # (a sibling .mli that leaves a definition out hides it: not followed; ``method private`` hides)
    exports=Exports(hidden=r"\bprivate\b"),
    imports=Imports(patterns=(r"^\s*open!?\s+([A-Z][\w']*(?:\.[A-Z][\w']*)*)",
                              r"^\s*include\s+([A-Z][\w']*(?:\.[A-Z][\w']*)*)"),
                    resolve="snake_dotted", suffixes=(".ml", ".mli")),
    package=Package(),
    tests=r"test_[^/]*\.mli?|[^/]+_tests?\.mli?",
    wrappers=frozenset({"value_definition", "type_definition", "module_definition", "module_type_definition",
                        "class_definition", "class_type_definition", "exception_definition"}),
)
INTERFACE = attrs.evolve(SPEC, name="ocaml_interface", func="language_ocaml_interface", extensions=(".mli",),
                         query="ocaml_interface")
