from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "ruby", "tree_sitter_ruby", "language", extensions=(".rb", ".rake", ".gemspec"),
    filenames=("Rakefile", "Gemfile"),
    query="ruby", refs="ruby",
    comments=("#",), decorators=(),
    keywords=frozenset(
        "BEGIN END alias and begin break case class def defined? do else elsif end ensure false for if in module "
        "next nil not or redo rescue retry return self super then true undef unless until when while yield".split()),
    exports=Exports("ruby"),
    imports=Imports(patterns=(r"""^\s*require(?:_relative)?\s+['"]([^'"]+)['"]""",), resolve="ruby",
                    suffixes=(".rb",)),
    package=Package(),
    tests=r"[^/]+_(?:spec|test)\.rb|test_[^/]*\.rb",  # rspec, minitest
)
