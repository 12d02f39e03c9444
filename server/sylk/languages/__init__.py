"""The languages Sylk knows, each described in one place: ``languages/<name>.py`` holds its
``LanguageSpec`` (grammar wheel, file names, tags and refs queries, comment syntax,
keywords, and its export, import, package and test-file rules; see ``spec.py``).

Data only: the settings check names against it, ``ingest.grammars`` loads the grammars and
queries from it, and each part of Sylk that applies a language's rule reads it here.
Adding a language: the README's "Adding a language".
"""

from __future__ import annotations

from . import (bash, c, cpp, csharp, elixir, go, haskell, java, javascript, julia, kotlin, lua, markdown, objc, ocaml,
               perl, php, python, ruby, rust, scala, swift, typescript, zig)
from .spec import Exports, Imports, LanguageSpec, Package

__all__ = ["BY_NAME", "SPECS", "Exports", "Imports", "LanguageSpec", "Package", "language_for_path"]

SPECS: tuple[LanguageSpec, ...] = (
    python.SPEC, javascript.SPEC, typescript.SPEC, typescript.TSX, go.SPEC, rust.SPEC, java.SPEC, c.SPEC,
    cpp.SPEC, ruby.SPEC, csharp.SPEC, markdown.SPEC,
    php.SPEC, kotlin.SPEC, scala.SPEC, lua.SPEC, elixir.SPEC, bash.SPEC, perl.SPEC, haskell.SPEC, ocaml.SPEC,
    ocaml.INTERFACE, julia.SPEC, swift.SPEC, zig.SPEC, objc.SPEC,
)

BY_NAME: dict[str, LanguageSpec] = {s.name: s for s in SPECS}
_BY_EXT: dict[str, str] = {ext: s.name for s in SPECS for ext in s.extensions}
_BY_FILENAME: dict[str, str] = {fn: s.name for s in SPECS for fn in s.filenames}


def language_for_path(path: str) -> str | None:
    """The language name of a file path, or None if we have no grammar for it."""
    name = path.rpartition("/")[2]
    found = _BY_FILENAME.get(name)
    if found:
        return found
    dot = name.rfind(".")
    return _BY_EXT.get(name[dot:].lower()) if 0 < dot < len(name) - 1 else None
