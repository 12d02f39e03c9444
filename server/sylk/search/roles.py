"""What a piece of code is for, told from names and places alone: cheap, and reliable
where naming conventions hold (they do in most code bases).

Roles: ``test``, ``repository``, ``service``, ``handler``, ``command``, ``query``,
``entity``.

``test`` comes from where the code lives, as each language's test runner finds tests:
test folders (``tests/``, ``__tests__/``, ``spec/``, ``idle_test/``, Go's
``testdata/``), test files (``test_*.py``, ``*_test.py``, ``tests.py``,
``conftest.py``, ``*_test.go``, ``*.test.ts``, ``*.spec.js``, ``*_spec.rb``,
``FooTest.java``, ``FooTests.cs``). A name decides only where the language puts tests
beside other code under a fixed name: a class named ``*Test``/``*Tests``/``*TestCase``
in Java, Kotlin, Scala, Groovy and C#, and Rust's ``mod tests``. Elsewhere a name like
``test_jpeg`` (imghdr's detector), ``TestCase`` (unittest itself), ``TypeSpec`` or
``should_retry`` says nothing about being a test.

The other roles come from a type's last word (``UserRepository``, ``OrderService``);
its members take its role (``UserRepository.save`` is repository code); a function's
first word tells handlers and commands (``handle_webhook``, ``cmd_push``). Constants,
variables, fields and headings get a role only from their owner, never from their own
name (``DLT_JUNIPER_SERVICES`` is not a service).
"""

from __future__ import annotations

import re

from ..languages import SPECS

_TEST_DIR = r"(?:tests?|__tests__|__test__|specs?|testdata|[^/]+_tests?)"
# each language's test files (``languages/<name>.py``, ``tests``), and Groovy's (Spock), which
# Sylk does not parse
_UNPARSED_TESTS = r"[^/]+(?:Test|Tests|TestCase|IT|Spec)\.groovy"
_TEST_FILE = "|".join([s.tests for s in SPECS if s.tests] + [_UNPARSED_TESTS])
_TEST_PATH = re.compile(rf"(?:^|/){_TEST_DIR}/|(?:^|/)(?:{_TEST_FILE})$")
# languages where a test class may sit in a file of another name, and how it is named
_CLASS_TEST_LANGUAGES = re.compile("(?:{})$".format("|".join(
    [re.escape(e) for s in SPECS if s.test_classes for e in s.extensions] + [r"\.groovy"])))
_TEST_CLASS = re.compile(r"(?:Test|Tests|TestCase)$")
_RUST_TEST_MODULE = frozenset({"test", "tests"})

# kinds whose own name tells a role (a type's); members take their owner's
_TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "type", "module", "namespace"})
_MEMBER_KINDS = frozenset({"method", "constructor", "field", "property"})
# suffix of a type (or container) name -> role; checked on the last word of the name
_SUFFIX: dict[str, str] = {
    "repository": "repository", "repo": "repository", "dao": "repository", "store": "repository",
    "service": "service", "services": "service",
    "handler": "handler", "controller": "handler", "resolver": "handler", "endpoint": "handler",
    "middleware": "handler", "listener": "handler", "consumer": "handler",
    "command": "command", "cmd": "command", "cli": "command",
    "query": "query", "queries": "query", "finder": "query", "specification": "query",
    "entity": "entity", "model": "entity", "record": "entity", "dto": "entity",
}
_FUNC_PREFIX: dict[str, str] = {"handle": "handler", "on": "handler", "cmd": "command", "command": "command"}
_LAST_WORD = re.compile(r"(?:[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+)$")


def _last_word(name: str) -> str:
    name = name.rstrip("_")
    if "_" in name:
        name = name.rsplit("_", 1)[1]
    m = _LAST_WORD.search(name)
    return (m.group(0) if m else name).lower()


def _first_word(name: str) -> str:
    name = name.lstrip("_")
    m = re.match(r"[A-Za-z][a-z]*", name)
    return m.group(0).lower() if m else ""


def is_test_path(path: str) -> bool:
    """Whether ``path`` (relative, ``/``-separated) is in a test folder or is a test file."""
    return bool(path) and _TEST_PATH.search(path) is not None


def _is_test_by_name(kind: str, name: str, container: str, path: str) -> bool:
    if _CLASS_TEST_LANGUAGES.search(path):
        owners = container.split(".") if container else []
        return any(_TEST_CLASS.search(n) for n in owners + ([name] if kind in _TYPE_KINDS else []))
    if path.endswith(".rs"):
        return bool(container) and any(part in _RUST_TEST_MODULE for part in re.split(r"\.|::", container))
    return False


def roles_of(kind: str, name: str, container: str, path: str) -> tuple[str, ...]:
    """The roles of a symbol (or chunk) named ``name`` in ``container`` at ``path``."""
    path = path or ""
    out: list[str] = []
    if is_test_path(path) or _is_test_by_name(kind, name, container, path):
        out.append("test")
    owner = container.rpartition(".")[2] if container else ""
    candidates = ([name] if kind in _TYPE_KINDS else []) + ([owner] if kind in _MEMBER_KINDS | {"function"} else [])
    for candidate in candidates:
        role = _SUFFIX.get(_last_word(candidate)) if candidate else None
        if role and role not in out:
            out.append(role)
    if kind in ("function", "method") and name:
        role = _FUNC_PREFIX.get(_first_word(name))
        if role and role not in out and len(name) > len(_first_word(name)) + 1:
            out.append(role)
    return tuple(out)
