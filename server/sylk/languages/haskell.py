from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "haskell", "tree_sitter_haskell", "language", extensions=(".hs",),
    query="haskell", refs="haskell",
    comments=("--", "{-"), decorators=("{-#",),
    keywords=frozenset(
        "as case class data default deriving do else family forall foreign hiding if import in infix infixl infixr "
        "instance let mdo module newtype of pattern proc qualified rec then type where".split()),
    # the module header's export list decides; without one every top-level definition is exported
    exports=Exports(listed=True),
    imports=Imports(patterns=(r"""^import\s+(?:safe\s+)?(?:qualified\s+)?(?:"[^"]+"\s+)?([A-Z][\w']*(?:\.[A-Z][\w']*)*)""",),
                    resolve="dotted", suffixes=(".hs",)),
    doc_nodes=frozenset({"haddock"}),
    package=Package("clause", r"^module[ \t]+([A-Z][\w']*(?:\.[A-Z][\w']*)*)"),
    tests=r"[^/]+(?:Spec|Test|Tests)\.hs",  # hspec, tasty
    clauses=True,  # a function is its equations
    qualified=".",  # module Data.Aeson.Types: Types in Data.Aeson
)
