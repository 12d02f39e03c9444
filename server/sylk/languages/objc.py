from .c_family import COMMENTS, KEYWORDS
from .spec import Exports, Imports, LanguageSpec, Package

SPEC = LanguageSpec(
    "objc", "tree_sitter_objc", "language", extensions=(".m",),
    query="objc", refs="objc",
    comments=COMMENTS, decorators=(),
    keywords=KEYWORDS | frozenset("self super nil Nil YES NO id instancetype _cmd".split()),
    # C's rule: ``static`` stays in the file; classes, methods and the rest are offered
    exports=Exports(hidden=r"\bstatic\b"),
    # ``#import "AFHTTPSessionManager.h"`` / ``#include "x.h"``: a path from the importing
    # file's folder (``#import <UIKit/UIKit.h>`` and ``@import UIKit;`` are the system's)
    imports=Imports(patterns=(r'^\s*#\s*(?:import|include)\s+"([^"]+)"',), resolve="relative"),
    package=Package("folder"),
    tests=r"[^/]+Tests?\.m",  # XCTest
    # a method definition sits in an implementation_definition, its comments beside that
    wrappers=frozenset({"implementation_definition"}),
    test_classes=True,
)
