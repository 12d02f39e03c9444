"""What a piece of code is for, told from names and places alone: cheap, and reliable
where naming conventions hold (they do in most code bases).

Roles: ``test``, ``repository``, ``service``, ``handler``, ``command``, ``query``,
``entity``. A method takes its class's role (``UserRepository.save`` is repository
code); tests are also told by their file (``test_*.py``, ``*_test.go``,
``*.spec.ts``, a ``tests/`` folder).
"""

from __future__ import annotations

import re

ROLES = ("test", "repository", "service", "handler", "command", "query", "entity")

_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec|specs)/|(^|/)test_[^/]*$|_test\.[a-z]+$|\.(test|spec)\.[a-z]+$|(^|/)[^/]*Tests?\.[a-z]+$")
_TEST_NAME = re.compile(r"^(test_?|Test[A-Z_]|it_|should_)|(Test|Tests|Spec|_test)$")
# suffix of a type (or container) name -> role; checked on the last word of the name
_SUFFIX: dict[str, str] = {
    "repository": "repository", "repo": "repository", "dao": "repository", "store": "repository",
    "storage": "repository",
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


def roles_of(kind: str, name: str, container: str, path: str) -> tuple[str, ...]:
    """The roles of a symbol (or chunk) named ``name`` in ``container`` at ``path``."""
    out: list[str] = []
    if _TEST_PATH.search(path) or (name and _TEST_NAME.search(name)) or \
            (container and _TEST_NAME.search(container.rpartition(".")[2])):
        out.append("test")
    owner = container.rpartition(".")[2] if container else ""
    for candidate in (name if kind not in ("function", "method", "constructor") else "", owner):
        role = _SUFFIX.get(_last_word(candidate)) if candidate else None
        if role and role not in out:
            out.append(role)
    if kind in ("function", "method") and name:
        role = _FUNC_PREFIX.get(_first_word(name))
        if role and role not in out and len(name) > len(_first_word(name)) + 1:
            out.append(role)
    return tuple(out)
