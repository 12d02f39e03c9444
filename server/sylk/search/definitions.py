"""Go to definition from the index: the definitions of the name under a cursor, nearest
first. A name match, not a type analysis: what the symbol index of every language knows,
ranked by where the definition sits from the file asking.

Nearness, best first (``Near``): the same file, a file that file imports (the import
resolution of ``agent``), the same folder, the same language, anything else. The
container decides too (``_container_matches``): on ``obj.method`` or ``Class.method`` a
definition whose container is the qualifier ranks above the rest, on ``self.method`` one
of the class around the cursor, and a bare name prefers top-level definitions and those
of the scopes around the cursor.
"""

from __future__ import annotations

import enum
import functools
import itertools
import re
from collections.abc import Callable, Sequence
from typing import Protocol

import attrs

from ..languages import BY_NAME, language_for_path
from ..text.positions import utf16_len, utf16_to_index
from . import agent
from .symbol_search import SymbolHit, SymbolTable

# definitions of a name read from the symbol table (the best-ranked of each case), besides
# every one in the asking file and the files it imports (so a name defined thousands of
# times still finds the nearby one)
CANDIDATES = 400
# definitions answered at most
LIMIT = 20

_IDENT = re.compile(r"[^\W\d]\w*|\$\w*")
# what joins a qualifier to the name: obj.name, Type::name, ptr->name
_QUALIFIED = re.compile(r"([^\W\d]\w*)\s*(?:\.|::|->)\s*$")
_SELF = frozenset({"self", "this", "cls", "Self", "super"})


class Near(enum.IntEnum):
    """Where a definition is from the asking file; lower ranks first."""
    SAME_FILE = 0
    IMPORTED = 1
    SAME_FOLDER = 2
    SAME_LANGUAGE = 3
    ELSEWHERE = 4


@attrs.frozen
class Cursor:
    """The identifier under a cursor: its name, the qualifier before it (``obj`` of
    ``obj.name``, or ""), and its UTF-16 columns on the line."""
    name: str
    qualifier: str
    start: int
    end: int


@attrs.frozen
class Origin:
    """The file a definition is asked from (folder-relative), its language, the workspace
    files and folders (ending in "/") it imports, and the qualified name of the innermost
    definition around the cursor (``Class.method``; "" at the top of the file)."""
    path: str
    language: str | None
    imports: frozenset[str] = frozenset()
    scope: str = ""


@attrs.frozen
class Definition:
    hit: SymbolHit
    near: Near
    container_match: bool


class Source(Protocol):
    """What definitions are read from: a workspace's symbol table."""

    @property
    def table(self) -> SymbolTable: ...


def cursor_at(line: str, utf16_col: int, language: str | None = None) -> Cursor | None:
    """The identifier a UTF-16 column of ``line`` is on (or just after); None on
    whitespace, punctuation or a keyword of ``language``."""
    col = utf16_to_index(line, utf16_col)
    for m in _IDENT.finditer(line):
        if m.start() <= col <= m.end():
            name = m.group(0)
            if language is not None and name in BY_NAME[language].keywords:
                return None
            q = _QUALIFIED.search(line, 0, m.start())
            start = utf16_len(line[:m.start()])
            return Cursor(name, q.group(1) if q else "", start, start + utf16_len(name))
        if m.start() > col:
            break
    return None


def origin_of(path: str, language: str | None, text: str | None, files: frozenset[str],
              scope: str = "") -> Origin:
    """The Origin of ``path`` whose text is ``text`` (None: unknown, no imports), its
    imports resolved against the workspace ``files``; ``scope``: see Origin."""
    if text is None or language is None:
        return Origin(path, language, scope=scope)
    specs = _imports(text, language)
    if not specs:
        return Origin(path, language, scope=scope)
    # (only Go's imports name folders)
    dirs = _folders(files) if BY_NAME[language].imports.resolve == "go" else frozenset()
    found = (agent.resolve_import(spec, path, language, files, dirs) for spec in specs)
    return Origin(path, language, frozenset(f for f in found if f), scope)


@functools.lru_cache(maxsize=4)
def _folders(files: frozenset[str]) -> frozenset[str]:
    """The folders of ``files``, kept while the table's file set is the same object."""
    return frozenset(f.rpartition("/")[0] for f in files)


@functools.lru_cache(maxsize=64)
def _imports(text: str, language: str) -> tuple[str, ...]:
    """``agent.imports_of``, kept for the texts asked about lately (a file is asked about
    again and again while one reads it)."""
    return tuple(agent.imports_of(text, language))


def nearness(path: str, language: str | None, origin: Origin | None) -> Near:
    if origin is None:
        return Near.ELSEWHERE
    if path == origin.path:
        return Near.SAME_FILE
    folder = path.rpartition("/")[0]
    if path in origin.imports or folder + "/" in origin.imports:
        return Near.IMPORTED
    if folder == origin.path.rpartition("/")[0]:
        return Near.SAME_FOLDER
    if language is not None and language == origin.language:
        return Near.SAME_LANGUAGE
    return Near.ELSEWHERE


def definitions(ws: Source, cursor: Cursor, origin: Origin | None) -> list[Definition]:
    """Every definition named ``cursor.name`` that ``ws`` knows (case-insensitive; the
    same case first), nearest to ``origin`` first (None: a folder other than the asking
    file's)."""
    found: dict[tuple[str, int, int], SymbolHit] = {}
    for h in ws.table.named(cursor.name, CANDIDATES):
        found.setdefault(_key(h), h)
    if origin is not None:
        near_files = [origin.path] + sorted(f for f in origin.imports if not f.endswith("/"))
        folders = {f for f in origin.imports if f.endswith("/")}  # a Go package: its folder's files
        if folders:
            near_files += [f for f in ws.table.file_set() if f.rpartition("/")[0] + "/" in folders]
        for h in ws.table.named_in(cursor.name, frozenset(near_files)):
            found.setdefault(_key(h), h)
    out = []
    for h in found.values():
        near = nearness(h.path, language_for_path(h.path), origin)
        out.append(Definition(h, near, _container_matches(h, cursor.qualifier, near, origin)))
    out.sort(key=lambda d: rank(d, cursor))
    return out


def rank(d: Definition, cursor: Cursor) -> tuple:
    """The sort key of a definition of ``cursor``'s name (lower first). A qualified name
    (``obj.name``, ``self.name``) goes by the container first (``_container_matches``),
    then nearness; a bare name by nearness first (``_near``), then the container. Then the
    same case, then by place."""
    near = _near(d, cursor)
    head = (near, not d.container_match) if not cursor.qualifier else (not d.container_match, near)
    return (*head, d.hit.symbol.name != cursor.name, d.hit.path, d.hit.symbol.selection)


def _near(d: Definition, cursor: Cursor) -> Near:
    """``d.near``, but a bare name reaches only the scopes around it and the top level: a
    definition nested elsewhere in the same file is no nearer than the folder."""
    if not cursor.qualifier and d.near == Near.SAME_FILE and not d.container_match:
        return Near.SAME_FOLDER
    return d.near


def answered(defs: Sequence[Definition], cursor: Cursor, limit: int = LIMIT) -> int:
    """How many of ``defs`` (in ``rank`` order) to answer: when the best is in the asking
    file or a file it imports, only those as near as it and as fitting (the jump is sure);
    else the ``limit`` best."""
    if not defs:
        return 0
    top = defs[0]
    if _near(top, cursor) > Near.IMPORTED:
        return min(limit, len(defs))
    head = (_near(top, cursor), top.container_match)
    same = itertools.takewhile(lambda d: (_near(d, cursor), d.container_match) == head, defs)
    return min(limit, sum(1 for _d in same))


def _key(h: SymbolHit) -> tuple[str, int, int]:
    return h.path, h.symbol.selection[0], h.symbol.selection[1]


def _container_matches(h: SymbolHit, qualifier: str, near: Near, origin: Origin | None) -> bool:
    """Whether the definition's container fits the call: ``obj.name`` or ``Class.name``, a
    container named like the qualifier; ``self.name`` (``this``...), a class around the
    cursor; a bare ``name``, a top-level definition or one of the scopes around the cursor
    (a bare call reaches no other class's member); on ``module.name`` also a definition
    in the file named like the module."""
    container = h.symbol.container
    around = near == Near.SAME_FILE and origin is not None and _within(container, origin.scope)
    if not qualifier:
        return not container or around
    if qualifier in _SELF:
        return bool(container) and around
    last = re.split(r"\.|::", container)[-1] if container else ""
    # ``widgets.make_widget``: a container so named, or the module that is the file widgets.*
    # (a Lua table, a Python, OCaml or Elixir module imported under its name)
    return qualifier.lower() in (last.lower(), _stem(h.path).lower())


def _stem(path: str) -> str:
    name = path.rpartition("/")[2]
    return name.partition(".")[0]


def _within(container: str, scope: str) -> bool:
    """Whether ``container`` is ``scope`` or one of the scopes around it (``A`` and ``A.f``
    of ``A.f.g``)."""
    return bool(container) and (scope == container or scope.startswith(container + "."))


def parse_name(text: str) -> Cursor:
    """A name as typed (``parse_config``, ``Class.method``, ``mod::func``) as a Cursor
    without a place on a line."""
    parts = re.split(r"\.|::|->", text.strip())
    name, qualifier = parts[-1], (parts[-2] if len(parts) > 1 else "")
    return Cursor(name, qualifier, 0, 0)


def lookup(ws: Source, name: str, path: str | None, read: Callable[[str], str | None]) -> list[Definition]:
    """Definitions of ``name`` (``parse_name``), ranked from the workspace file ``path``
    when given (``read`` gives its text), else by the symbol table's order."""
    cursor = parse_name(name)
    if not cursor.name:
        return []
    origin = None
    if path:
        language = language_for_path(path)
        origin = origin_of(path, language, read(path), ws.table.file_set())
    return definitions(ws, cursor, origin)
