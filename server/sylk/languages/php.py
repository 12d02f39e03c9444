from .c_family import COMMENTS
from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "php", "tree_sitter_php", "language_php", extensions=(".php",),  # (PHP mixed with HTML)
    query="php", refs="php",
    comments=COMMENTS + ("#",), decorators=("#[",),
    keywords=frozenset(
        "abstract and array as break callable case catch class clone const continue declare default do echo else "
        "elseif empty enddeclare endfor endforeach endif endswitch endwhile enum eval exit extends false final "
        "finally fn for foreach function global goto if implements include include_once instanceof insteadof "
        "interface isset list match mixed namespace new null or parent print private protected public readonly "
        "require require_once return self static switch throw trait true try unset use var void while xor yield "
        "__CLASS__ __DIR__ __FILE__ __FUNCTION__ __LINE__ __METHOD__ __NAMESPACE__ __TRAIT__".split()),
    # top-level definitions are public (PHP has no file privacy); members unless private or protected
    exports=Exports(hidden=r"\b(?:private|protected)\b"),
    # ``use App\Widgets\WidgetBox;`` (PSR-4: a file ending in App/Widgets/WidgetBox.php; at the
    # start of a line: an indented ``use`` is a trait's), ``require_once __DIR__ . '/x.php'``
    imports=Imports(patterns=(r"^use\s+(?:function\s+|const\s+)?\\?([A-Za-z_][\w\\]*)",
                              r"""\b(?:require|include)(?:_once)?\s*\(?\s*(?:__DIR__\s*\.\s*)?['"]([^'"]+)['"]"""),
                    resolve="dotted", separator="\\", suffixes=(".php",)),
    package=Package("clause", r"^(?:<\?php)?[ \t]*namespace[ \t]+\\?([A-Za-z_][\w\\]*)[ \t]*[;{]"),
    tests=r"[^/]+Test\.php",  # PHPUnit, Pest
    wrappers=frozenset({"const_declaration", "property_declaration"}),
)
