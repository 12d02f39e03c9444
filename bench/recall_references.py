"""The references ``recall.py`` measures Sylk's symbols against, per language: universal-ctags
with the kinds that count and named filters for its own mistakes, the grammar wheel's
``tags.scm``, or a regex of definition keywords (see ``recall.py``'s docstring)."""

from __future__ import annotations

import collections
import importlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from sylk import languages  # noqa: E402
from sylk.ingest import grammars  # noqa: E402

# Our language -> ctags kinds (long names, ``--fields=+K``) that we must find.
CTAGS_KINDS: dict[str, frozenset[str]] = {
    "python": frozenset({"class", "function", "member"}),
    "javascript": frozenset({"class", "function", "method", "generator"}),
    "typescript": frozenset({"class", "function", "method", "interface", "enum", "generator"}),
    "tsx": frozenset({"class", "function", "method", "interface", "enum", "generator"}),
    "go": frozenset({"func", "struct", "interface", "type", "talias", "methodSpec"}),
    "java": frozenset({"class", "interface", "enum", "method", "annotation"}),
    "rust": frozenset({"module", "struct", "interface", "function", "enum", "typedef", "macro", "method"}),
    "c": frozenset({"function", "struct", "union", "enum", "typedef", "macro"}),
    "cpp": frozenset({"function", "class", "struct", "union", "enum", "typedef", "namespace", "macro"}),
    "ruby": frozenset({"class", "module", "method", "singletonMethod"}),
    "csharp": frozenset({"class", "interface", "struct", "enum", "method", "namespace", "property"}),
    # ctags' "function" is PHP functions and methods; "define" is define('X', ...) and
    # const; "variable" counts only inside a class-like scope (a property): ctags also
    # tags every global `$x = ...` of a script, which no one looks up as a definition.
    "php": frozenset({"class", "interface", "trait", "function", "define", "variable"}),
    # "method" is every fun; "constant" every val, "variable" every var (local ones are
    # dropped by scope, below); "package" left out (we make no symbol for it).
    "kotlin": frozenset({"class", "interface", "object", "method", "constant", "variable", "typealias"}),
    "lua": frozenset({"function"}),  # ctags' only Lua kind
    # every kind but "test" (ExUnit `test "..." do`: a string, not a name)
    "elixir": frozenset({"macro", "callback", "delegate", "exception", "function", "guard", "implementation",
                         "module", "operator", "protocol", "record", "type"}),
    "bash": frozenset({"function"}),  # not "alias" (we keep no alias), not "heredoc" (a string) or "script"
    "perl": frozenset({"subroutine", "package", "constant"}),  # not "format", "label"
    "haskell": frozenset({"function", "type", "constructor", "module"}),
    "ocaml": frozenset({"function", "module", "type", "class", "method", "val", "Exception", "Constructor",
                        "RecordField", "var"}),
    "julia": frozenset({"function", "struct", "type", "module", "macro", "constant", "field"}),
}
CTAGS_KINDS["ocaml_interface"] = CTAGS_KINDS["ocaml"]
# Objective-C (.m): not "category" (ctags 5.9 names categories with junk: `readwrite`, `nonatomic`)
CTAGS_KINDS["objc"] = frozenset({"class", "interface", "implementation", "protocol", "method", "property", "function",
                                 "struct", "enum", "typedef", "macro", "field", "var"})
# Our language -> the ctags parser forced on its files (the older languages keep
# ctags' own choice by extension, as before).
CTAGS_PARSER: dict[str, str] = {
    "php": "PHP", "kotlin": "Kotlin", "lua": "Lua", "elixir": "Elixir", "bash": "Sh", "perl": "Perl",
    "haskell": "Haskell", "ocaml": "OCaml", "ocaml_interface": "OCaml", "julia": "Julia", "objc": "ObjectiveC",
}
# Languages compared with the grammar wheel's queries/tags.scm, and with a regex.
TAGS_SCM = frozenset({"scala", "swift"})
REGEX_DEFS: dict[str, re.Pattern[str]] = {
    # Zig (tree-sitter-zig ships no tags.scm, ctags 5.9 has no Zig parser): a function
    # (`pub fn name(`, `export fn`, `extern "c" fn`, `inline fn`) or a type-making
    # constant (`const Name = struct {`, `= enum(u8) {`, `= union(enum)`, `= opaque {`,
    # `= error {`, `= packed struct`, `= extern struct`), at any indent (types nest).
    # Lines are matched from their start, so `//` comments and `\\` strings never match.
    "zig": re.compile(
        r"^\s*(?:pub\s+)?(?:(?:export|inline|noinline|extern(?:\s+\"[^\"]*\")?)\s+)*fn\s+(?P<fn>[A-Za-z_]\w*)\s*\("
        r"|^\s*(?:pub\s+)?(?:const|var)\s+(?P<ty>[A-Za-z_]\w*)\s*(?::[^=]*)?=\s*"
        r"(?:(?:extern|packed)\s+)?(?:struct|enum|union|opaque|error)\b"),
}


def reference_of(lang: str) -> str | None:
    if lang in REGEX_DEFS:
        return "regex"
    if lang in TAGS_SCM:
        return "tags.scm"
    return "ctags" if lang in CTAGS_KINDS else None


SKIP_DIRS = {".git", ".hg", ".svn"}
# Names compared by their last part too: Perl `A::B::f`, Elixir `A.B`, Lua `M.f` / `M:f` /
# `M["f"]` (ctags names a Lua function by its whole left-hand side).
QUALIFIED = {"perl": re.compile(r"::"), "elixir": re.compile(r"\."), "lua": re.compile(r"[.:]")}
LUA_KEY = re.compile(r"""\[(['"])(.*?)\1\]$""")


def last_part(lang: str, name: str) -> str:
    sep = QUALIFIED.get(lang)
    if sep is None:
        return name
    m = LUA_KEY.search(name) if lang == "lua" else None
    return m.group(2) if m else sep.split(name)[-1]


# ---------------------------------------------------------------------------
# Filters of ctags' false definitions. Each takes the tag and the file's lines
# and says whether the tag is NOT a definition; each is named in the output with
# the number of tags it dropped. They only drop what the source does not define.

Tag = tuple[str, int, str, str]  # name, line, kind, scope ("scopeKind:scope" or "")


class FileText:
    """The lines of one file (str, 1-based access) and what filters learn from them."""

    def __init__(self, path: str):
        self.path = path
        self.source = Path(path).read_bytes()
        self.lines = self.source.decode("utf-8", "replace").split("\n")
        self._tree = None
        self._heredoc: set[int] | None = None
        self._lua_long: set[int] | None = None

    def line(self, n: int) -> str:
        return self.lines[n - 1] if 0 < n <= len(self.lines) else ""

    def enclosing(self, lang: str, line: int, name: str, local: frozenset[str], member: frozenset[str],
                  parent: frozenset[str] | None = None) -> str | None:
        """Parse the file (our grammar) and walk up from `name` on `line`: "local" when a node type of
        `local` comes before one of `member`, "member" when one of `member` comes first, "error" when
        the walk meets an ERROR node first (then the tree is no judge), None when the name is not on
        the line or its node's parent is not of a type in `parent` (if given; the first occurrence of
        the name on the line whose parent is, is the one)."""
        if self._tree is None:
            import tree_sitter

            self._tree = tree_sitter.Parser(grammars.grammar(lang)).parse(self.source)
        raw = self.source.split(b"\n")[line - 1] if 0 < line <= self.source.count(b"\n") + 1 else b""
        for m in re.finditer(rb"(?<![\w$])" + re.escape(name.encode()) + rb"(?![\w$])", raw):
            node = self._tree.root_node.descendant_for_point_range((line - 1, m.start()), (line - 1, m.end()))
            if parent is not None and (node.parent is None or node.parent.type not in parent):
                continue  # another use of the name on the line: try the next
            while node is not None:
                if node.type == "ERROR":
                    return "error"
                if node.type in local:
                    return "local"
                if node.type in member:
                    return "member"
                node = node.parent
            return None
        return None

    def elixir_heredoc_lines(self) -> set[int]:
        """Lines strictly inside an Elixir heredoc (`\"\"\"` or `'''`, sigils too)."""
        if self._heredoc is None:
            inside: set[int] = set()
            delim = None
            for i, text in enumerate(self.lines, 1):
                if delim is None:
                    m = ELIXIR_HEREDOC_OPEN.search(text)
                    if m and not ELIXIR_HEREDOC_ONE_LINE.search(text):
                        delim = m.group(1)
                elif text.strip().startswith(delim):
                    delim = None
                else:
                    inside.add(i)
            self._heredoc = inside
        return self._heredoc

    def lua_long_bracket_lines(self) -> set[int]:
        """Lines after the first of a Lua long comment or string (`--[[ ... ]]`, `[==[ ... ]==]`), to its last."""
        if self._lua_long is None:
            inside: set[int] = set()
            close = None
            for i, text in enumerate(self.lines, 1):
                if close is None:
                    m = LUA_BLOCK_OPEN.search(text)
                    if m and ("]" + m.group(1) + "]") not in text[m.end():]:
                        close = "]" + m.group(1) + "]"
                else:
                    inside.add(i)
                    if close in text:
                        close = None
            self._lua_long = inside
        return self._lua_long


ELIXIR_HEREDOC_OPEN = re.compile(r"""(?:^|[\s(,=])(?:~[a-zA-Z])?("{3}|'{3})\s*$""")
ELIXIR_HEREDOC_ONE_LINE = re.compile(r'''("{3}|'{3}).*\1''')
LUA_BLOCK_OPEN = re.compile(r"\[(=*)\[")

# ctags' made-up names for anonymous functions and classes (JS/TS, PHP `new class`)
ANONYMOUS = ("AnonymousFunction", "AnonymousClass", "__anon", "<lambda>", "anonFunc")
# ctags' JavaScript/TypeScript parser calls every object literal a "class"
# (``const opts = {...}``, even nested ones and locals): those are not classes, so
# a JS/TS "class" tag counts only when its line has the ``class`` keyword.
CLASS_KEYWORD_ONLY = frozenset({"javascript", "typescript", "tsx"})
CLASS_WORD = re.compile(r"\bclass\b")

# any definition on a line: `function NAME(`, `local function NAME(`, `NAME = function(` (NAME may be
# `M.f`, `M:f`, `t["k"]`, `[0]`)
LUA_DEFINES = re.compile(r"^\s*(?:local\s+)?function\s+[\w.:]+\s*\(|(?:^|[\s{,;])[\w.:\]\[\"']+\s*=\s*function\s*\(")
LUA_PLAIN_NAME = re.compile(r"^[\w.:]+(?:\[[^\]]*\])?$|^\[[^\]]*\]$")
HASKELL_JUNK_NAMES = frozenset({"class", "deriving", "infix", "infixl", "infixr", "family", "pattern", "instance",
                                "type", "data", "newtype", "where", "default", "foreign"})
OCAML_JUNK_NAMES = frozenset({"template", "nonrec", "include", "()", "rec", "open", "_"})
OCAML_LOCAL_LET = re.compile(r"^\s+let\b.*\bin\s*$")


def f_anonymous(lang: str, tag: Tag, text: FileText) -> bool:
    """ctags invents a name (`AnonymousFunction1`, `AnonymousClass2`, `__anon...`, Kotlin `<lambda>`,
    Python `anonFunc...`) for something unnamed."""
    return tag[0].startswith(ANONYMOUS)


def f_js_object_literal(lang: str, tag: Tag, text: FileText) -> bool:
    """JS/TS: ctags calls every object literal a class; a class needs the `class` word."""
    return lang in CLASS_KEYWORD_ONLY and tag[2] == "class" and not CLASS_WORD.search(text.line(tag[1]))


def f_php_not_property(lang: str, tag: Tag, text: FileText) -> bool:
    """PHP `variable`: a property must be declared in a class (`public|protected|private|var|static|readonly ...
    $x`, promoted constructor parameters included); ctags 5.9 loses its scope after closures and
    `static` return types and tags locals and parameters of methods, and every global `$x = ...`."""
    if lang != "php" or tag[2] != "variable":
        return False
    if not tag[3].startswith(("class:", "trait:", "interface:")):
        return True
    declared = rf"\b(?:public|protected|private|var|static|readonly)\s+(?:[?\\\w|&]+\s+)?&?\${re.escape(tag[0])}\b"
    return re.search(declared, text.line(tag[1])) is None


KOTLIN_LOCAL = frozenset({"block", "function_body", "anonymous_initializer", "getter", "setter", "lambda_literal",
                          "for_statement", "when_subject"})
KOTLIN_MEMBER = frozenset({"class_body", "enum_class_body", "source_file"})
KOTLIN_VARIABLE = frozenset({"variable_declaration", "multi_variable_declaration"})


def f_kotlin_local(lang: str, tag: Tag, text: FileText) -> bool:
    """Kotlin: a `val`/`var` (or a `for (x in ...)` loop variable or `when (val x = ...)` subject, which
    ctags 5.9 calls methods or variables) inside a block, function body, getter, setter, `init` or
    lambda, before any class body, is local; ctags also loses its scope in getters and `init` blocks,
    so this is decided on the file's tree. Where the tree has an ERROR there, ctags' own scope decides
    (a `val`/`var` it scopes in a method). Local `fun`s and members of `object :` literals are
    definitions (we report them) and stay."""
    if lang != "kotlin":
        return False
    name, line, kind, scope = tag
    where = text.enclosing(lang, line, name, KOTLIN_LOCAL, KOTLIN_MEMBER, KOTLIN_VARIABLE)
    if where == "error":
        return kind in ("constant", "variable") and scope.startswith("method:")
    return where == "local"


def f_kotlin_companion(lang: str, tag: Tag, text: FileText) -> bool:
    """Kotlin: an unnamed `companion object` has no name in the source; ctags calls it `Companion`."""
    return lang == "kotlin" and tag[0] == "Companion" and not re.search(r"\bobject\s+Companion\b",
                                                                        text.line(tag[1]))


def f_lua_not_a_definition(lang: str, tag: Tag, text: FileText) -> bool:
    """Lua: ctags' parser is a line regex that tags any line with `function` in it under the name left
    of an `=` (`local res = map(function(x) ...)`, `local o = { once = true, callback = function() }`,
    `opts.f = opts.f or function() end`); the line must define ctags' name: `function NAME(` or
    `NAME = function(`. (Where ctags garbles the name, `['='] = function` -> `['`, any definition on
    the line keeps the tag: a real definition whose name ctags lost stays a miss.)"""
    if lang != "lua":
        return False
    line = text.line(tag[1])
    name = tag[0]
    if not LUA_PLAIN_NAME.match(name):
        return not LUA_DEFINES.search(line)
    n = re.escape(name)
    return re.search(rf"^\s*(?:local\s+)?function\s+{n}\s*\(|(?:^|[\s{{,;]){n}\s*=\s*function\s*\(", line) is None


def f_lua_long_bracket(lang: str, tag: Tag, text: FileText) -> bool:
    """Lua: a line inside a long comment `--[[ ... ]]` or long string `[[ ... ]]` (help text, examples);
    ctags reads through them."""
    return lang == "lua" and tag[1] in text.lua_long_bracket_lines()


def f_elixir_in_heredoc(lang: str, tag: Tag, text: FileText) -> bool:
    """Elixir: ctags tags `def`/`defmodule` inside `@moduledoc \"\"\" ... \"\"\"` / `@doc` examples and
    code-generator templates (heredoc strings), and in `#` comment lines."""
    return lang == "elixir" and (tag[1] in text.elixir_heredoc_lines() or text.line(tag[1]).lstrip().startswith("#"))


def f_bash_array(lang: str, tag: Tag, text: FileText) -> bool:
    """Bash: ctags reads an array assignment `NAME=( ... )` (`COMPREPLY=(...)`) as a function `NAME()`."""
    name = tag[0].rstrip("=")  # (`local -a arr=()` gives the name `arr=`)
    return lang == "bash" and re.search(rf"(?:^|[\s;]){re.escape(name)}\+?=\(", text.line(tag[1])) is not None


def f_empty_name(lang: str, tag: Tag, text: FileText) -> bool:
    """A tag with an empty name (Perl: ctags' `package` tag with nothing after `package`)."""
    return not tag[0].strip()


def f_haskell_keyword(lang: str, tag: Tag, text: FileText) -> bool:
    """Haskell: ctags takes a keyword (`class`, `deriving`, `infixr`, `instance` ...) for a name."""
    return lang == "haskell" and tag[0] in HASKELL_JUNK_NAMES


def f_ocaml_junk(lang: str, tag: Tag, text: FileText) -> bool:
    """OCaml: ctags takes ppx/keyword words for names: `template`, `nonrec`, `rec`, `include`, `open`, `()`,
    `_` (`let _ =`), an extension's name (`module%test _ = ...` -> `test`, `let%template`), an attribute's
    (`[@kind_set.explicit ...]`, `[@mode portable]`), `%` and `portable` where the line does not define them
    (`let ( % ) = ...` and a field or type named `portable` stay); and it tags the file's own module
    (`array.ml` -> `Array`) where no `module Array` line is."""
    if lang not in ("ocaml", "ocaml_interface"):
        return False
    name, line_no = tag[0], tag[1]
    line = text.line(line_no)
    n = re.escape(name)
    defined = re.search(rf"(?:\b(?:let|val|type|and|external|method|module|exception|class)\s+(?:rec\s+|nonrec\s+)?"
                        rf"(?:\(\s*{n}\s*\)|(?:'\w+\s+|\([^)]*\)\s*)?{n}(?![\w']))|(?:^|[{{;|])\s*(?:mutable\s+)?{n}\s*:)", line)
    if name in OCAML_JUNK_NAMES:  # keywords and `_` never name a definition
        return True
    if name in ("%", "portable"):
        return not defined
    if re.search(rf"%{n}(?![\w.])|\[@@?@?\s*(?:\w+\s+)?{n}(?![\w'])", line) and not defined:
        return True
    if tag[2] == "module" and name.lower() == os.path.basename(text.path).split(".")[0].lower():
        return not re.match(rf"\s*module\s+(?:rec\s+|type\s+)?{n}\b", line)
    return False


def f_ocaml_constraint(lang: str, tag: Tag, text: FileText) -> bool:
    """OCaml: ctags tags the types and modules of constraints and annotations as definitions: `S with type
    t := int`, `and module M = ...`, `module type of M`, `(module M : S)`, a functor's parameter `(M : S)`,
    a locally abstract type `let f : type a. a -> a`."""
    if lang not in ("ocaml", "ocaml_interface") or tag[2] not in ("type", "module"):
        return False
    line, n = text.line(tag[1]), re.escape(tag[0])
    if tag[2] == "type":
        return re.search(rf"\b(?:with|and)\s+type\s+(?:'\w+\s+|\([^)]*\)\s*)?{n}\b|\btype\s+(?:\w+\s+)*{n}\s*(?:\w+\s*)*\.",
                         line) is not None and not re.match(rf"\s*(?:type|and)\s+(?:nonrec\s+)?(?:'\w+\s+|\([^)]*\)\s*)?{n}\b", line)
    return re.search(rf"\b(?:with|and)\s+module\s+{n}\b|module type of\s+{n}\b|\(module\s+{n}\b|\(\s*{n}\s*:", line) is not None \
        and not re.match(rf"\s*(?:module|and)\s+(?:rec\s+)?{n}\b", line)


OCAML_LOCAL = frozenset({"let_expression", "fun_expression", "function_expression", "match_expression",
                         "parenthesized_expression", "sequence_expression", "let_open_expression"})
OCAML_MEMBER = frozenset({"compilation_unit", "structure", "signature", "attribute_payload", "object_expression",
                          "class_body_type"})


def f_ocaml_local_let(lang: str, tag: Tag, text: FileText) -> bool:
    """OCaml: a `let` inside an expression (`let ... in`, a `let rec loop` in a function body) is local;
    ctags tags it as a global. Decided on the file's tree (or, where it has an ERROR, by the line
    `let ... in`)."""
    if lang not in ("ocaml", "ocaml_interface") or tag[2] not in ("var", "function"):
        return False
    where = text.enclosing(lang, tag[1], tag[0], OCAML_LOCAL, OCAML_MEMBER, frozenset({"let_binding"}))
    if where in ("error", None):
        return OCAML_LOCAL_LET.match(text.line(tag[1])) is not None
    return where == "local"


def f_ocaml_polymorphic_variant(lang: str, tag: Tag, text: FileText) -> bool:
    """OCaml: a polymorphic variant `` `A `` in a type is structural (declared nowhere); ctags calls it a Constructor."""
    return lang in ("ocaml", "ocaml_interface") and tag[2] == "Constructor" and "`" + tag[0] in text.line(tag[1])


def f_objc_class_extension(lang: str, tag: Tag, text: FileText) -> bool:
    """Objective-C: `@interface Foo ()` (a class extension) and `@interface Foo (Cat)` / `@implementation Foo
    (Cat)` (a category) add to a class declared elsewhere; ctags calls them interface/implementation
    again, we make them a scope (the container of their methods), not a second definition of `Foo`."""
    return (lang == "objc" and tag[2] in ("interface", "implementation")
            and re.search(rf"@(?:interface|implementation)\s+{re.escape(tag[0])}\s*(?:<[^>]*>\s*)?\(", text.line(tag[1]))
            is not None)


FILTERS: tuple[tuple[str, Callable[[str, Tag, FileText], bool]], ...] = (
    ("anonymous", f_anonymous),
    ("js-object-literal", f_js_object_literal),
    ("php-not-a-property", f_php_not_property),
    ("kotlin-local", f_kotlin_local),
    ("kotlin-Companion", f_kotlin_companion),
    ("lua-not-a-definition", f_lua_not_a_definition),
    ("lua-in-long-bracket", f_lua_long_bracket),
    ("elixir-in-heredoc-or-comment", f_elixir_in_heredoc),
    ("bash-array", f_bash_array),
    ("empty-name", f_empty_name),
    ("haskell-keyword", f_haskell_keyword),
    ("ocaml-junk-name", f_ocaml_junk),
    ("ocaml-constraint", f_ocaml_constraint),
    ("ocaml-local-let", f_ocaml_local_let),
    ("ocaml-polymorphic-variant", f_ocaml_polymorphic_variant),
    ("objc-class-extension", f_objc_class_extension),
)

# A function written as several clauses (LanguageSpec.clauses: Haskell's equations, Elixir's
# `def f(0)` / `def f(n)` heads) is one symbol for us, from its first clause to its last;
# ctags tags each clause (Haskell: when clauses are apart, and the line of a multi-line
# signature). So a run of tags of one (name, kind), with no other counted tag between
# them, is ONE definition, found when we report the name on any of the run's lines (the
# later tags are counted as "later-clause"). A name defined twice apart (instance methods
# of two instances) makes two runs, each counted.
CLAUSE_RUNS = frozenset({"haskell", "elixir"})
# ctags keeps type parameters in a Julia name (`Array{T}(x) = ...` -> `Array{T}`): compare `Array`.
JULIA_TYPE_PARAMS = re.compile(r"\{.*\}$")


# Objective-C: ctags names a method by its whole selector (`initWithBaseURL:sessionConfiguration:`), we by
# its first part (`initWithBaseURL`); and ctags 5.9 puts a method whose header spans lines at its `{`
# line, so for objc a tag is also found when one of our symbols of that name spans its line.
SPANS = frozenset({"objc"})


OBJC_BLOCK_TYPEDEF = re.compile(r"^\s*typedef\b[^;]*\(\s*\^\s*(\w+)\s*\)")


def normalise(lang: str, tag: Tag, text: FileText | None = None) -> Tag:
    name = tag[0].strip()  # ctags 5.9's Kotlin parser keeps the blank before a name: ` Companion`, ` Key`
    if lang == "julia":
        name = JULIA_TYPE_PARAMS.sub("", name)
    if lang == "objc" and tag[2] in ("method", "class") and ":" in name:
        name = name.split(":")[0]
    if lang == "objc" and tag[2] == "typedef" and text is not None:
        # ctags 5.9 names a block typedef `typedef void (^DoneBlock)(NSError *error)` after its last
        # parameter (`error`): the definition on that line is `DoneBlock`
        m = OBJC_BLOCK_TYPEDEF.match(text.line(tag[1]))
        if m:
            name = m.group(1)
    return (name,) + tag[1:]


# ---------------------------------------------------------------------------


def files_under(root: Path, only: str | None, max_bytes: int) -> dict[str, str]:
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for fn in filenames:
            path = os.path.join(dirpath, fn)
            lang = languages.language_for_path(path)
            if lang is None or (only and lang != only) or reference_of(lang) is None:
                continue
            try:
                if os.path.getsize(path) > max_bytes or os.path.islink(path):
                    continue
            except OSError:
                continue
            out[path] = lang
    return out


def run_ctags(paths: list[str], ctags: str, force: str | None = None) -> tuple[dict[str, set[Tag]], float]:
    tags: dict[str, set[Tag]] = collections.defaultdict(set)
    cmd = [ctags, "--output-format=json", "--fields=+nKz", "--extras=-F", "-f", "-", "-L", "-"]
    if force:
        cmd.insert(1, f"--language-force={force}")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, input="\n".join(paths).encode(), capture_output=True, check=False)
    elapsed = time.perf_counter() - t0
    for line in proc.stdout.splitlines():
        try:
            tag = json.loads(line)
        except ValueError:
            continue
        if tag.get("_type") != "tag":
            continue
        scope = f'{tag.get("scopeKind", "")}:{tag.get("scope", "")}' if "scope" in tag else ""
        tags[tag["path"]].add((tag["name"], int(tag.get("line", 0)), tag.get("kind", ""), scope))
    return tags, elapsed


# ---------------------------------------------------------------------------
# tags.scm reference (Scala, Swift). What the wheel's query calls a definition
# but is not one a symbol index keeps (each is counted and printed):

SCALA_LOCAL = frozenset({"block", "function_definition", "lambda_expression", "case_block", "indented_block",
                         "for_expression", "given_definition"})
SCALA_MEMBER = frozenset({"template_body", "with_template_body", "compilation_unit"})
SCALA_VALUES = frozenset({"val_definition", "var_definition", "val_declaration", "var_declaration", "given_definition"})
SWIFT_LOCAL = frozenset({"function_body", "statements", "lambda_literal", "computed_property", "computed_getter",
                         "computed_setter", "willset_didset_block"})
SWIFT_MEMBER = frozenset({"class_body", "protocol_body", "enum_class_body", "source_file"})


def _first(node, stop: frozenset[str], local: frozenset[str]) -> str | None:
    p = node.parent
    while p is not None:
        if p.type in local:
            return "local"
        if p.type in stop:
            return "member"
        p = p.parent
    return None


def tags_scm_skip(lang: str, kind: str, definition, name) -> str | None:
    if lang == "scala":
        if definition.type == "package_clause":
            # `package a.b` names the package this file is in; it defines nothing here
            return "scala-package-clause"
        if definition.type == "class_parameter":
            # `class A(x: Int)`: a plain constructor parameter is no member (a `val`/`var`
            # parameter, or any case-class parameter, is one and stays)
            words = {c.type for c in definition.children}
            cls = definition.parent.parent if definition.parent is not None else None
            is_case = cls is not None and any(c.type == "case" for c in cls.children)
            if not words & {"val", "var"} and not is_case:
                return "scala-plain-class-parameter"
            return None
        if definition.type in SCALA_VALUES and _first(definition, SCALA_MEMBER, SCALA_LOCAL) == "local":
            # a val/var/given inside a block, a function body, a lambda or a `case` body (a local
            # `def`, `type` or class is a named definition: counted, and we report them)
            return "scala-local"
    if lang == "swift":
        if definition.type == "subscript_declaration" or (kind == "method" and name.type == "simple_identifier"
                                                           and name.parent is not None
                                                           and name.parent.type == "parameter"):
            # tags.scm names a subscript after its parameter (`subscript(index: Int)` -> `index`)
            return "swift-subscript-parameter"
        if definition.type == "property_declaration" and _first(definition, SWIFT_MEMBER, SWIFT_LOCAL) == "local":
            # `let`/`var` inside a function, closure or accessor body
            return "swift-local"
    return None


_TAGS_QUERIES: dict[str, object] = {}


SKIP = "skip:"  # a tags.scm definition marked as not one we index (the reason follows)


def run_tags_scm(paths: list[str], lang: str) -> tuple[dict[str, set[Tag]], float]:
    import tree_sitter

    spec = languages.BY_NAME[lang]
    wheel = Path(importlib.import_module(spec.module).__file__).parent
    language = grammars.grammar(lang)
    query = tree_sitter.Query(language, (wheel / "queries" / "tags.scm").read_text())
    parser = tree_sitter.Parser(language)
    tags: dict[str, set[Tag]] = collections.defaultdict(set)
    t0 = time.perf_counter()
    for path in paths:
        root = parser.parse(Path(path).read_bytes()).root_node
        seen = set()
        for _, caps in tree_sitter.QueryCursor(query).matches(root):
            kinds = [k for k in caps if k.startswith("definition.")]
            if not kinds or "name" not in caps:
                continue
            definition, name = caps[kinds[0]][0], caps["name"][0]
            key = (name.start_byte, kinds[0])
            if key in seen:
                continue
            seen.add(key)
            kind = kinds[0].removeprefix("definition.")
            why = tags_scm_skip(lang, kind, definition, name)  # kept, marked: raw recall counts it
            tags[path].add((name.text.decode("utf-8", "replace"), name.start_point[0] + 1, kind,
                            f"{SKIP}{why}" if why else ""))
    return tags, time.perf_counter() - t0


def run_regex(paths: list[str], lang: str) -> tuple[dict[str, set[Tag]], float]:
    rx = REGEX_DEFS[lang]
    tags: dict[str, set[Tag]] = collections.defaultdict(set)
    t0 = time.perf_counter()
    for path in paths:
        for i, line in enumerate(Path(path).read_bytes().decode("utf-8", "replace").split("\n"), 1):
            m = rx.match(line)
            if m:
                kind = "fn" if m.group("fn") else "type"
                tags[path].add((m.group("fn") or m.group("ty"), i, kind, ""))
    return tags, time.perf_counter() - t0


# ---------------------------------------------------------------------------
