"""What C, C++ and Objective-C share: comment syntax, keywords, ``#include``."""

from __future__ import annotations

from .spec import Imports

COMMENTS = ("//", "/*", "*")
KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if inline int long "
    "register restrict return short signed sizeof static struct switch typedef union unsigned void volatile "
    "while".split())
# ``#include "x.h"``: a path from the including file's folder (``<x.h>`` is the system's)
INCLUDES = Imports(patterns=(r'^\s*#\s*include\s+"([^"]+)"',), resolve="relative")
