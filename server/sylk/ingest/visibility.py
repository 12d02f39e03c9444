"""Whether a definition is exported: part of what its module, package or crate offers
to code elsewhere. Decided per language from the definition's node as the tags walk
found it (``symbols.extract_from_tree``), with no walk of its own: the bytes between
the definition's start and its name hold its modifiers (``pub``, ``public``,
``static``, ``private``), a few captures of the tags query name what a module
exports without defining it (``@exports``) or a region whose definitions stay in
the file (``@local``), and Python's ``__all__`` is found where a line starts with it
(a statement does), from the node there up.

Everywhere: nothing defined inside a function, method or constructor is exported, and
a member is exported only when its container is (rules below say where a member needs
more). Each language names its rule (``languages/<name>.py``, ``exports``). Most are
written as data (``modifiers``: words before the name that hide or show it, the default
without either, a private name pattern; see ``languages.spec.Exports``); the rules that
need the tree are written here:

* Go: a capitalised name (the language's own rule; fields and methods too).
* Python: at module level, the names ``__all__`` lists when the module assigns it a
  literal list or tuple of strings (``=``, then ``+=``, ``.extend``, ``.append``, also
  under ``if`` and ``try``); without one (or when it is computed), a name that does not
  start with ``_``. A
  class member: a name without a leading ``_``, or a dunder (``__init__``,
  ``__eq__``: public protocol); ``__x`` and ``_x`` are private.
* JavaScript, TypeScript: ``export`` (``export function``, ``export default class``,
  ``export const``), a name in an ``export { a, b as c }`` list or ``export default a``
  / ``export = a``, and CommonJS ``exports.f = ...``, ``module.exports.f = ...``,
  ``module.exports = a`` / ``{ a, b: c, d() {} }``. In a TypeScript namespace, members
  need ``export`` too. Class, interface, enum and object members are public unless
  ``private`` / ``protected`` or a ``#name``. ``Foo.prototype.m = ...`` follows ``Foo``.
* Rust: ``pub``; ``pub(crate)``, ``pub(super)`` and ``pub(in ...)`` stay inside the
  crate: not exported. A method in ``impl Type`` needs its own ``pub`` (the type's own
  visibility is not looked up); methods of ``impl Trait for Type`` cannot say ``pub``
  and are exported. Trait items and enum variants are as public as their trait or enum.
  ``macro_rules!`` under ``#[macro_export]``.
* Java: ``public``; interface and annotation members are public unless ``private``;
  enum constants and record components are public.
* C#: ``public`` (the default is private or internal); interface members are public
  unless ``private``, ``protected`` or ``internal``; enum members and record
  parameters are public; namespaces are.
* C: at file scope, anything not ``static`` (functions and variables with external
  linkage; types and macros, which have no linkage, count as exported); fields and
  enumerators as their type.
* C++: as C at namespace scope, and nothing in an anonymous namespace; class members
  follow the last ``public:`` / ``protected:`` / ``private:`` before them (a ``class``
  starts private, a ``struct`` or ``union`` public), only ``public`` counting. An
  out-of-class definition (``void Foo::bar() {}``) is exported unless ``static``: its
  access is declared in the class.
* Ruby: classes, modules, constants and top-level methods are; a method is public unless
  a bare ``private`` or ``protected`` comes before it in its class or module body (and
  no bare ``public`` after that) or it is defined ``private def ...``
  (``private :name`` lists are not followed).
* ``never``: Markdown headings are not exported (a heading is no code's API).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

from tree_sitter import Node

from ..languages import BY_NAME

FUNCTION_KINDS = frozenset({"function", "method", "constructor"})
_PUB = re.compile(rb"\bpub\b(?!\s*\()")  # pub, not pub(crate) / pub(super) / pub(in path)
_PUBLIC = re.compile(rb"\bpublic\b")
_STATIC = re.compile(rb"\bstatic\b")
_PRIVATE = re.compile(rb"\bprivate\b")
_TS_HIDDEN = re.compile(rb"\b(?:private|protected)\b")
_CS_HIDDEN = re.compile(rb"\b(?:private|protected|internal)\b")
_COMMONJS = (b"exports", b"module.exports")
_RUBY_ACCESS = (b"private", b"protected", b"public")


class Enclosing(NamedTuple):
    """A definition (or a scope: Rust ``impl``, kind ``impl``) holding the one at hand."""

    start: int  # its node's bytes
    end: int
    dotted: str  # the dotted names down to it (the container of what it holds)
    kind: str
    exported: bool
    local: bool  # inside a function: nothing in it is exported
    node: Node


class FileVisibility:
    """The export rule of one file (its tree's ``root``): ``exported`` of each definition,
    in document order. ``exports``: the nodes the tags query captured as ``@exports``;
    ``local``: the (start, end) bytes of ``@local`` regions."""

    __slots__ = ("language", "source", "marks", "_rule", "_names", "_local", "_access", "top")

    def __init__(self, language: str, root: Node, source: bytes, exports: Sequence[Node] = (),
                 local: Sequence[tuple[int, int]] = ()) -> None:
        self.language = language
        self.source = source
        self.marks = BY_NAME[language].exports
        self._rule = _RULES[self.marks.rule]
        self._names: set[str] | None = None  # what the module exports by name (None: no such list)
        if language == "python":
            self._names = _python_all(root, source) if b"__all__" in source else None
        elif exports:
            self._names = {n.text.decode("utf-8", "replace") for n in exports if n.text is not None}
        self._local = local
        self._access: dict[int, tuple[bool, list[tuple[int, bool]]]] = {}  # a body's access marks, by container
        self.top: dict[str, bool] = {}  # top-level names found so far: exported or not

    def exported(self, node: Node, name_node: Node, name: str, kind: str, container: str | None,
                 outer: Enclosing | None) -> bool:
        """Whether the definition ``node`` named ``name`` (by ``name_node``) is exported;
        ``container``: its explicit container (Go receiver, ``Foo::``, ``Foo.prototype``),
        ``outer``: the innermost definition holding it."""
        if outer is not None and (outer.local or outer.kind in FUNCTION_KINDS):
            return False
        if self._local and any(a <= node.start_byte < b for a, b in self._local):
            return False
        found = self._rule(self, node, name_node, name, kind, container, outer)
        if outer is None:
            self.top.setdefault(name, found)
        return found

    def _prefix(self, pattern: re.Pattern[bytes], node: Node, name_node: Node) -> bool:
        """Whether ``pattern`` occurs between the definition's start and its name (its
        modifiers, type and, in C, declarator so far)."""
        return pattern.search(self.source, node.start_byte, name_node.start_byte) is not None

    def _access_at(self, outer: Enclosing, at: int, marks_of: Callable[[Node], list[tuple[int, bool]]],
                   default: bool) -> bool:
        """The access in force at byte ``at`` of ``outer``'s body: its last mark before
        ``at`` (``marks_of``: (byte, public) of each, made once per container), else
        ``default``."""
        cached = self._access.get(outer.start)
        if cached is None:
            body = outer.node.child_by_field_name("body")
            cached = self._access[outer.start] = (default, marks_of(body) if body is not None else [])
        public = cached[0]
        for where, mark in cached[1]:
            if where >= at:
                break
            public = mark
        return public


_ALL = re.compile(rb"^[ \t]*(__all__)\b", re.MULTILINE)
_NOT_MODULE_LEVEL = frozenset({"function_definition", "class_definition", "lambda"})
_ADD_TO_ALL = (b"extend", b"append")


def _python_all(root: Node, source: bytes) -> set[str] | None:
    """The names of the module's ``__all__``: the literals assigned to it at module level,
    under ``if`` and ``try`` too (``=``, ``+=``, ``.extend([...])``, ``.append("x")``);
    None when it has none, when a value is not a literal list, tuple or string, or when it
    is only ever added to (the rest is imported). A statement starts a line: each line
    starting with ``__all__`` is looked at from its node up, nothing else."""
    names: set[str] = set()
    assigned = False
    for m in _ALL.finditer(source):
        node = root.descendant_for_byte_range(m.start(1), m.end(1))
        if node is None or node.type != "identifier":
            continue  # (in a string)
        parent = node.parent
        if parent is None:
            continue
        statement = parent
        if parent.type in ("assignment", "augmented_assignment"):
            value = parent.child_by_field_name("right")
            if value is None:
                continue  # __all__: list[str] (declared, not assigned)
        elif parent.type == "attribute" and parent.parent is not None and parent.parent.type == "call":
            statement = parent.parent
            method = parent.child_by_field_name("attribute")
            args = statement.child_by_field_name("arguments")
            value = args.named_children[0] if method is not None and method.text in _ADD_TO_ALL and \
                args is not None and args.named_child_count == 1 else None  # (None: .remove(), ...)
        else:
            continue  # read, not written (print(__all__) starts with print)
        if not _module_level(statement):
            continue
        if value is None:
            return None  # changed in a way not followed
        try:
            found = ast.literal_eval((value.text or b"").decode("utf-8", "replace"))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
        if isinstance(found, str) and statement.type == "call":
            names.add(found)  # .append("x")
            continue
        if not isinstance(found, (list, tuple)) or not all(isinstance(v, str) for v in found):
            return None
        names.update(found)
        assigned = assigned or parent.type == "assignment"
    return names if assigned else None


def _module_level(statement: Node) -> bool:
    """``statement`` runs when its module is imported: under no function or class."""
    if statement.parent is None or statement.parent.type != "expression_statement":
        return False
    up = statement.parent.parent
    while up is not None and up.type != "module":
        if up.type in _NOT_MODULE_LEVEL:
            return False
        up = up.parent
    return up is not None


def _never(*_args: object) -> bool:
    return False


def _private_python(name: str) -> bool:
    return name.startswith("_") and not (len(name) > 4 and name.startswith("__") and name.endswith("__"))


def _python(v: FileVisibility, node: Node, name_node: Node, name: str, kind: str, container: str | None,
            outer: Enclosing | None) -> bool:
    if outer is None:
        return name in v._names if v._names is not None else not _private_python(name)
    return outer.exported and not _private_python(name)


def _go(v: FileVisibility, node: Node, name_node: Node, name: str, kind: str, container: str | None,
        outer: Enclosing | None) -> bool:
    return name[:1].isupper()


def _js_export_statement(node: Node) -> bool:
    """``node`` is declared by an ``export`` statement (``export const x``, ``export declare ...``)."""
    parent = node.parent
    if parent is not None and parent.type in ("lexical_declaration", "variable_declaration"):
        parent = parent.parent
    if parent is not None and parent.type == "ambient_declaration":
        parent = parent.parent
    return parent is not None and parent.type == "export_statement"


def _commonjs(node: Node) -> bool:
    """``exports.f = ...`` / ``module.exports.f = ...``."""
    if node.type != "assignment_expression":
        return False
    left = node.child_by_field_name("left")
    obj = left.child_by_field_name("object") if left is not None and left.type == "member_expression" else None
    return obj is not None and obj.text in _COMMONJS


def _javascript(v: FileVisibility, node: Node, name_node: Node, name: str, kind: str, container: str | None,
                outer: Enclosing | None) -> bool:
    if container is not None:  # Foo.prototype.m = ...
        return v.top.get(container, False)
    if outer is None or outer.kind in ("namespace", "module"):
        if outer is not None and not outer.exported:
            return False
        return _js_export_statement(node) or (outer is None and (
            (v._names is not None and name in v._names) or _commonjs(node)))
    # a class, interface, enum or object member
    if not outer.exported or name_node.type == "private_property_identifier":
        return False
    return not v._prefix(_TS_HIDDEN, node, name_node)


def _rust(v: FileVisibility, node: Node, name_node: Node, name: str, kind: str, container: str | None,
          outer: Enclosing | None) -> bool:
    if outer is not None:
        if outer.kind == "trait" or kind == "enum_member":
            return outer.exported
        if outer.kind == "impl":
            return outer.node.child_by_field_name("trait") is not None or v._prefix(_PUB, node, name_node)
        if not outer.exported:
            return False
    if kind == "macro":
        sib = node.prev_sibling
        while sib is not None and sib.type == "attribute_item":
            if b"macro_export" in (sib.text or b""):
                return True
            sib = sib.prev_sibling
        return False
    return v._prefix(_PUB, node, name_node)


def _java(v: FileVisibility, node: Node, name_node: Node, name: str, kind: str, container: str | None,
          outer: Enclosing | None) -> bool:
    if outer is not None:
        if not outer.exported:
            return False
        if kind == "enum_member" or node.type == "formal_parameter":  # (a record's components)
            return True
        if outer.kind == "interface":
            return not v._prefix(_PRIVATE, node, name_node)
    return v._prefix(_PUBLIC, node, name_node)


def _csharp(v: FileVisibility, node: Node, name_node: Node, name: str, kind: str, container: str | None,
            outer: Enclosing | None) -> bool:
    if kind == "namespace":
        return outer is None or outer.exported
    if outer is not None:
        if not outer.exported:
            return False
        if kind == "enum_member" or node.type == "parameter":  # (a record's positional properties)
            return True
        if outer.kind == "interface":
            return not v._prefix(_CS_HIDDEN, node, name_node)
    return v._prefix(_PUBLIC, node, name_node)


def _c(v: FileVisibility, node: Node, name_node: Node, name: str, kind: str, container: str | None,
       outer: Enclosing | None) -> bool:
    if outer is not None:
        return outer.exported
    return not v._prefix(_STATIC, node, name_node)


def _cpp_marks(body: Node) -> list[tuple[int, bool]]:
    return [(c.start_byte, c.text == b"public") for c in body.children if c.type == "access_specifier"]


def _cpp(v: FileVisibility, node: Node, name_node: Node, name: str, kind: str, container: str | None,
         outer: Enclosing | None) -> bool:
    if outer is not None and not outer.exported:
        return False
    if container is None and outer is not None and outer.kind != "namespace":
        if outer.kind in ("class", "struct", "union"):
            return v._access_at(outer, node.start_byte, _cpp_marks, outer.node.type != "class_specifier")
        return True  # enumerators
    return not v._prefix(_STATIC, node, name_node)


def _ruby_marks(body: Node) -> list[tuple[int, bool]]:
    return [(c.start_byte, c.text == b"public") for c in body.children
            if c.type == "identifier" and c.text in _RUBY_ACCESS]


def _ruby(v: FileVisibility, node: Node, name_node: Node, name: str, kind: str, container: str | None,
          outer: Enclosing | None) -> bool:
    if outer is None:
        return True
    if not outer.exported:
        return False
    if node.type != "method":
        return True
    parent = node.parent
    if parent is not None and parent.type == "argument_list":  # private def x
        call = parent.parent
        method = call.child_by_field_name("method") if call is not None else None
        if method is not None and method.text in (b"private", b"protected"):
            return False
    return v._access_at(outer, node.start_byte, _ruby_marks, True)


def _modifiers(v: FileVisibility, node: Node, name_node: Node, name: str, kind: str, container: str | None,
               outer: Enclosing | None) -> bool:
    """The rule of most languages, as data (``languages.spec.Exports``): a private name, a
    hiding word before the name, a showing one, else the language's default."""
    marks = v.marks
    if outer is not None and not outer.exported:
        return False
    if marks.listed and kind != "module" and (outer is None or outer.kind == "module") and v._names is not None:
        return name in v._names
    if marks.private_name and _compiled(marks.private_name, False).match(name):
        return False
    if outer is not None and kind in marks.open_kinds:
        return True
    if marks.hidden and v._prefix(_compiled(marks.hidden, True), node, name_node):
        return False
    if marks.shown and v._prefix(_compiled(marks.shown, True), node, name_node):
        return True
    return marks.default


@functools.cache
def _compiled(pattern: str, as_bytes: bool) -> re.Pattern:
    return re.compile(pattern.encode("utf-8") if as_bytes else pattern)


Rule = Callable[[FileVisibility, Node, Node, str, str, "str | None", "Enclosing | None"], bool]
_RULES: dict[str, Rule] = {
    "modifiers": _modifiers,
    "never": _never,
    "python": _python,
    "go": _go,
    "javascript": _javascript,
    "rust": _rust,
    "java": _java,
    "csharp": _csharp,
    "c": _c,
    "cpp": _cpp,
    "ruby": _ruby,
}
RULES = frozenset(_RULES)  # (tests/test_languages.py: every language names one of these)
