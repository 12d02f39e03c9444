"""tree-sitter parse -> Symbols.

Our tags queries (``queries/<language>.scm``) follow one capture convention:

``@definition.<kind>``
    the whole definition node (its range is the symbol's full range);
    kind is one of KINDS below.
``@name``
    the node whose text is the symbol name (its range is the selection range).
``@doc``
    optional: a docstring node (Python); otherwise the comments directly above
    the definition (or above the wrapper holding it, see LanguageSpec.wrappers)
    are its doc.
``@container``
    optional: text naming the container explicitly (Go receiver type, C++
    ``Foo::bar``). A function with an explicit container is a method.
``@scope`` (with ``@name``)
    a node that contains definitions and names their container without being a
    symbol itself (Rust ``impl Foo``).
``@exports`` (alone)
    a node naming what the module exports without defining it there (JS
    ``export { a, b }``, ``module.exports = a``); see ``visibility``.
``@local`` (alone)
    a region whose definitions stay in the file (a C++ anonymous namespace).

Captures starting with ``_`` only serve predicates (``#eq? @_proto "prototype"``).
When several patterns match the same definition node with the same name node,
the earliest pattern in the file wins, so a query lists specific patterns
(``const f = () => {}`` as a function) before general ones (module-level
``const`` as a constant).

Containers are otherwise derived from nesting: a definition inside another gets
the dotted chain of enclosing names as container, and a function directly
inside a class-like definition becomes a method.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Sequence

import attrs
from tree_sitter import Node, Parser, QueryCursor

from .. import languages
from ..model import SYMBOL_KINDS
from ..text.positions import LineIndex
from . import grammars
from .occurrences import Marks
from .visibility import FUNCTION_KINDS, Enclosing, FileVisibility

KINDS = SYMBOL_KINDS  # model.py lists them, with the chunks' own kinds
# Definitions whose direct function children are methods.
# Kinds that define a type; a function inside one is a method (and so inside an ``impl``).
TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "union"})
CLASS_LIKE = TYPE_KINDS | {"impl"}
MAX_SIGNATURE = 200
# what a language may write as several clauses (LanguageSpec.clauses): functions; two
# Elixir ``defimpl P, for: T`` in a row are two modules
_CLAUSE_KINDS = frozenset({"function", "method", "macro"})
MAX_DOC = 1000


@attrs.frozen(slots=True)
class Symbol:
    name: str
    kind: str
    container: str
    # (start_line, start_character, end_line, end_character), 0-based, UTF-16 columns
    range: tuple[int, int, int, int]
    selection: tuple[int, int, int, int]
    signature: str = ""
    doc: str = ""
    # part of what its module, package or crate offers to other code (visibility.py)
    exported: bool = False

    @property
    def qualified_name(self) -> str:
        return f"{self.container}.{self.name}" if self.container else self.name


# A Parser and a QueryCursor keep state between calls: one of each per thread and
# language (the indexing thread, a search finding hits in changed files, the editor's
# unsaved buffers may parse at the same time). Grammars and queries are shared.
_per_thread = threading.local()


def _parser(language: str) -> Parser:
    parsers = _per_thread.__dict__.setdefault("parsers", {})
    if language not in parsers:
        parsers[language] = Parser(grammars.grammar(language))
    return parsers[language]


def _cursor(language: str, marks: bool = False) -> QueryCursor:
    """A cursor over the tags query, or with ``marks`` over the tags and refs queries."""
    cursors = _per_thread.__dict__.setdefault("cursors", {})
    key = (language, marks)
    if key not in cursors:
        cursors[key] = QueryCursor(grammars.file_query(language)[0] if marks else grammars.tags_query(language))
    return cursors[key]


def extract_for_path(path: str, source: bytes) -> list[Symbol]:
    """Symbols of a file named ``path`` (its language from the name); [] when we have no grammar."""
    language = languages.language_for_path(path)
    return extract(source, language) if language is not None else []


def extract(source: bytes, language: str) -> list[Symbol]:
    """All symbols of ``source`` in document order."""
    tree = _parser(language).parse(source)
    return extract_from_tree(tree.root_node, source, language)


def extract_marked(source: bytes, language: str) -> tuple[list[Symbol], Marks]:
    """``extract``, and the comments, strings and call sites of ``source`` (for
    ``occurrences.extract``) from the same walk of its tree."""
    tree = _parser(language).parse(source)
    marks = Marks()
    return extract_from_tree(tree.root_node, source, language, marks), marks


@attrs.define(slots=True)
class _Def:
    node: Node
    start: int  # the node's bytes (read once: each Node property call builds objects)
    end: int
    name_node: Node
    kind: str  # "" for a scope
    doc_node: Node | None
    container: str | None


@attrs.define(slots=True)
class _Found:
    """What the tags query found in a file: its definitions and scopes, in document
    order, and the ``@exports`` nodes and ``@local`` regions (visibility.py)."""
    defs: list[_Def]
    exports: list[Node]
    local: list[tuple[int, int]]


def _collect(root: Node, language: str, marks: Marks | None) -> _Found:
    # (node start, node end, name start) -> (pattern index, position in defs):
    # when several patterns match the same definition, the earliest pattern wins.
    seen: dict[tuple[int, int, int], tuple[int, int]] = {}
    defs: list[_Def] = []
    exports: list[Node] = []
    local: list[tuple[int, int]] = []
    tags = grammars.file_query(language)[1] if marks is not None else sys.maxsize
    if marks is not None:  # (the refs captures are most of the matches: no call per capture)
        call, comments, strings = marks.calls.append, marks.comments.append, marks.strings.append
    for pattern, caps in _cursor(language, marks is not None).matches(root):
        if pattern >= tags:  # a refs pattern: one capture of one node (Marks)
            capture, nodes = caps.popitem()
            node = nodes[0]
            if capture == "call":
                call(node.start_byte)
            else:
                add = comments if capture == "comment" else strings
                add(node.start_byte)
                add(node.end_byte)
            continue
        names = caps.get("name")
        if not names:
            if "exports" in caps:
                exports.extend(caps["exports"])
            elif "local" in caps:
                region = caps["local"][0]
                local.append((region.start_byte, region.end_byte))
            continue
        node = kind = None
        for cap, nodes in caps.items():
            if cap.startswith("definition."):
                node, kind = nodes[0], cap[11:]
                break
            if cap == "scope":
                node, kind = nodes[0], ""
                break
        if node is None:
            continue
        name_node = names[0]
        start, end = node.start_byte, node.end_byte
        key = (start, end, name_node.start_byte)
        prev = seen.get(key)
        if prev is not None and prev[0] <= pattern:
            continue
        docs = caps.get("doc")
        cont = caps.get("container")
        d = _Def(node, start, end, name_node, kind, docs[0] if docs else None,
                 cont[0].text.decode("utf-8", "replace") if cont else None)
        if prev is None:
            seen[key] = (pattern, len(defs))
            defs.append(d)
        else:
            seen[key] = (pattern, prev[1])
            defs[prev[1]] = d
    defs.sort(key=lambda d: (d.start, -d.end))
    return _Found(defs, exports, local)


def extract_from_tree(root: Node, source: bytes, language: str, marks: Marks | None = None) -> list[Symbol]:
    found = _collect(root, language, marks)
    if not found.defs:
        return []
    lines = LineIndex(source)
    spec = languages.BY_NAME[language]
    wrappers = spec.wrappers
    visibility = FileVisibility(language, root, source, found.exports, found.local)
    out: list[Symbol] = []
    # (spec.clauses) the enclosing definition's start (-1: the top) -> the last symbol in it
    last: dict[int, int] = {}
    # the enclosing definitions and scopes; one node naming several symbols (Go
    # ``X, Y int``) nests none of them.
    stack: list[Enclosing] = []
    for d in found.defs:
        start, end = d.start, d.end
        while stack and (stack[-1].end <= start or (stack[-1].start == start and stack[-1].end == end)):
            stack.pop()
        outer = stack[-1] if stack else None
        name = _node_text(d.name_node).strip()
        local = outer is not None and (outer.local or outer.kind in FUNCTION_KINDS)
        if not d.kind:
            stack.append(Enclosing(start, end, f"{outer.dotted}.{name}" if outer else name, "impl", True, local,
                                   d.node))
            continue
        kind = d.kind
        if d.container is not None:
            container = d.container
            if kind == "function":
                kind = "method"
        else:
            container = outer.dotted if outer else ""
            if kind == "function" and outer and outer.kind in CLASS_LIKE:
                kind = "method"
        if not name:
            continue
        dotted = f"{outer.dotted}.{name}" if outer else name
        if spec.qualified and spec.qualified in name:
            head, _, tail = name.rpartition(spec.qualified)
            if head and tail:  # Phoenix.Channel: Channel in Phoenix
                name, container = tail, f"{container}.{head}" if container else head
                dotted = f"{container}.{name}"
        if spec.clauses and kind in _CLAUSE_KINDS:
            level = outer.start if outer else -1
            k = last.get(level)
            if k is not None and (out[k].name, out[k].kind, out[k].container) == (name, kind, container):
                # another clause of the same function: the symbol reaches to its end
                first = out[k]
                out[k] = attrs.evolve(first, range=(*first.range[:2], *_range(d.node, lines)[2:]))
                stack.append(Enclosing(start, end, dotted, kind, first.exported, local, d.node))
                continue
            last[level] = len(out)
        exported = visibility.exported(d.node, d.name_node, name, kind, d.container, outer)
        out.append(Symbol(
            name=name,
            kind=kind,
            container=container,
            range=_range(d.node, lines),
            selection=_range(d.name_node, lines),
            signature=_signature(d.node, start, end, source),
            doc=_docstring(d.doc_node) if d.doc_node is not None else _leading_comments(d.node, wrappers, spec.doc_nodes),
            exported=exported,
        ))
        stack.append(Enclosing(start, end, dotted, kind, exported, local, d.node))
    return out


def _node_text(node: Node) -> str:
    text = node.text
    return text.decode("utf-8", "replace") if text is not None else ""


def _range(node: Node, lines: LineIndex) -> tuple[int, int, int, int]:
    (sr, sc), (er, ec) = node.start_point, node.end_point
    return (sr, lines.utf16_column(sr, sc), er, lines.utf16_column(er, ec))


def _signature(node: Node, start: int, node_end: int, source: bytes) -> str:
    """The definition's text up to its body, whitespace runs as one space (``node`` spans
    ``start:node_end`` of ``source``)."""
    body = node.child_by_field_name("body")
    if body is None:
        # (Kotlin's grammar names no body field: its body is a child of its own type)
        body = next((c for c in node.named_children if c.type in _BODIES), None)
    if body is None:
        # const f = () => {...}: the body belongs to the assigned value.
        value = node.child_by_field_name("value")
        if value is None:
            value = node.child_by_field_name("right")
        if value is not None:
            body = value.child_by_field_name("body")
    end = node_end
    if body is not None:
        body_start = body.start_byte
        if body_start > start:
            end = body_start
    nl = source.find(b"\n", start, end)
    # A signature may span lines (long parameter lists) but never more than a few.
    if nl != -1 and (body is None or source.count(b"\n", start, end) > 4):
        end = nl
    # str.split() and strip() know the same whitespace as the regex ``\s``
    text = " ".join(source[start:end].decode("utf-8", "replace").split()).rstrip("{:=;").rstrip()
    if len(text) > MAX_SIGNATURE:
        text = text[: MAX_SIGNATURE - 1] + "…"
    return text


_PY_QUOTES = re.compile(r'[rRbBuUfF]*("""|\'\'\'|"|\')')  # a string's prefix letters and opening quotes
# a doc comment line's marker: // /// //! /** * */ # -- --- -- | {- {-| (* (**
_DOC_PREFIX = re.compile(r"^\s*(?:///?!?|/\*\*?|\*/|\*|#+!?|-{2,}(?:\s?[|^])?|\{-\|?|\(\*\*?)\s?")
# and the end of a block comment: */ -} *)
_DOC_END = re.compile(r"\s*(?:\*/|-\}|\*\))$")
_BODIES = frozenset({"function_body", "class_body", "enum_class_body"})


def _docstring(node: Node) -> str:
    text = _node_text(node)
    if "string" in node.type:
        # a string node (Python's, Julia's): drop prefix letters and quotes.
        m = _PY_QUOTES.match(text)
        if m:
            q = m.group(1)
            text = text[m.end():]
            if text.endswith(q):
                text = text[: -len(q)]
    return _clean_doc(text)


def _clean_doc(text: str) -> str:
    import inspect

    text = inspect.cleandoc(text)
    if len(text) > MAX_DOC:
        text = text[: MAX_DOC - 1] + "…"
    return text


def _leading_comments(node: Node, wrappers: frozenset[str], doc_nodes: frozenset[str]) -> str:
    """Comments directly above ``node``, or else above the wrappers holding it; besides
    comments, the language's ``doc_nodes`` (a Julia docstring: its text without quotes)."""
    anchor: Node | None = node
    parts: list[Node] = []
    while anchor is not None:
        parts = _comments_above(anchor, doc_nodes)
        if parts:
            break
        parent = anchor.parent
        anchor = parent if parent is not None and parent.type in wrappers else None
    if not parts:
        return ""
    parts.reverse()
    lines = []
    for part in parts:
        if "string" in part.type:
            lines.append(_docstring(part))
            continue
        for line in _node_text(part).splitlines():
            if line.startswith("#!"):
                continue  # a script's shebang line, not its first function's doc
            line = _DOC_END.sub("", _DOC_PREFIX.sub("", line, count=1).rstrip())
            lines.append(line)
    return _clean_doc("\n".join(lines).strip())


# what may sit between a definition and its comments: attributes, decorators, annotations,
# and Haskell's type signature and pragmas above a function's first equation
_ABOVE_DEFINITIONS = frozenset({"attribute_item", "attribute", "decorator", "annotation", "marker_annotation",
                                "signature", "pragma"})


def _last_descendant(node: Node) -> Node:
    while node.child_count:
        node = node.children[-1]
    return node


def _comments_above(anchor: Node, doc_nodes: frozenset[str]) -> list[Node]:
    """The comments (and ``doc_nodes``) directly above ``anchor``, nearest first."""
    parts: list[Node] = []
    row = anchor.start_point[0]
    sib = anchor.prev_sibling
    if sib is None and anchor.parent is not None and anchor.parent.start_point[0] == row:
        sib = anchor.parent.prev_sibling
    while sib is not None:
        t = sib.type
        if "comment" in t or t in doc_nodes:
            if sib.end_point[0] < row - 1:
                break
            before = sib.prev_sibling
            if before is not None and before.end_point[0] == sib.start_point[0]:
                break  # trails the code before it: ``}  // namespace ns``
            parts.append(sib)
            row = sib.start_point[0]
        elif t in _ABOVE_DEFINITIONS:
            row = sib.start_point[0]
        else:
            last = _last_descendant(sib)
            if last is sib or not ("comment" in last.type or last.type in doc_nodes) or last.end_point[0] != row - 1:
                break
            sib = last  # a comment the node before swallowed (Scala's indented bodies, Haskell's imports)
            continue
        at, sib = sib, sib.prev_sibling
        if sib is None and at.parent is not None and at.parent.start_point[0] == row:
            sib = at.parent.prev_sibling  # the first in a list that starts on its line (Haskell's declarations)
    return parts


_intern = sys.intern


# A symbol as one row of ``encode_symbols``: name, kind, container, the range's four
# numbers, the selection's four, signature, doc, exported (1 or 0).
ROW_NAME, ROW_KIND, ROW_CONTAINER, ROW_RANGE, ROW_SELECTION, ROW_SIGNATURE, ROW_DOC = 0, 1, 2, 3, 7, 11, 12
ROW_EXPORTED = 13


def symbol_row(s: Symbol) -> list:
    return [s.name, s.kind, s.container, *s.range, *s.selection, s.signature, s.doc, int(s.exported)]


def encode_symbols(symbols: Sequence[Symbol]) -> str:
    """A file's symbols as compact JSON (done in the parsing workers)."""
    return json.dumps([symbol_row(s) for s in symbols], ensure_ascii=False, separators=(",", ":"))


def symbol_rows(data: str) -> list[list]:
    """The rows (``symbol_row``) of ``encode_symbols``."""
    return json.loads(data)


def decode_symbols(data: str) -> list[Symbol]:
    """The symbols of ``encode_symbols``. Names, kinds and containers repeat across a
    workspace (``__init__``, ``method``, a class's name on each of its members): they are
    interned, one string each: 9 MB less for the stdlib's 83k symbols (of 108 MB)."""
    return [Symbol(_intern(r[0]), _intern(r[1]), _intern(r[2]), (r[3], r[4], r[5], r[6]), (r[7], r[8], r[9], r[10]),
                   r[11], r[12], r[13] == 1)
            for r in symbol_rows(data)]
