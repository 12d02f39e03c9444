from .c_family import COMMENTS
from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "swift", "tree_sitter_swift", "language", extensions=(".swift",),
    query="swift", refs="swift",
    comments=COMMENTS, decorators=("@",),
    keywords=frozenset(
        "associatedtype class deinit enum extension fileprivate func import init inout internal let operator "
        "precedencegroup private protocol public rethrows static struct subscript typealias var break case catch "
        "continue default defer do else fallthrough for guard if in repeat return throw switch where while Any as "
        "await false is nil self Self super throws true try".split()),
    # internal (no word) is the module's: other files of the target see it; private and
    # fileprivate stay in the file (``private(set)`` hides only the setter)
    exports=Exports(hidden=r"\b(?:private|fileprivate)\b(?!\s*\(\s*set\s*\))"),
    # ``import Foundation``, ``@testable import Alamofire``, ``import struct Foo.Bar``: a
    # module (a target), not a file
    imports=Imports(patterns=(
        r"^\s*(?:@\w+\s+)*import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?([\w.]+)",),
        resolve="none"),
    package=Package("folder"),
    tests=r"[^/]+(?:Tests?|Spec)\.swift",  # XCTest, Swift Testing, Quick
    test_classes=True,
)
