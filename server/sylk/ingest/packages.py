"""The package a file belongs to: a search dimension (``filters.packages``, ``package:``,
the ``package`` facet and group) and a field of every hit.

How, per language (``languages/<name>.py``, ``package``):

- ``go``: the import path, ``go.mod``'s module path joined with the file's folder below it;
  without a ``go.mod``, the ``package`` clause.
- ``clause``: the language's declaration (Java and Kotlin ``package a.b``, C# ``namespace
  A.B``, PHP ``namespace A\\B;``, Perl ``package A::B;``, Haskell ``module A.B``), the first one.
- ``python``: the dotted module, from the nearest folder without ``__init__.py``
  (``asyncio/tasks.py`` is ``asyncio.tasks``; ``asyncio/__init__.py`` is ``asyncio``).
- ``npm``: the ``name`` of the nearest ``package.json`` that has one.
- ``cargo``: the crate, the ``[package] name`` of the nearest ``Cargo.toml`` that has one.
- ``folder``, or when none of these is found: the folder (``.`` at the root).

A package holds the packages below it: ``asyncio`` holds ``asyncio.tasks``,
``example.com/app`` holds ``example.com/app/db`` and ``A::B`` holds ``A::B::C``
(``within``; the lexical index holds each chunk's package with its ``ancestors`` so a
filter is one term lookup).

Runs in parser workers (``parsing._parse``), so it imports little. The manifests
(``go.mod``, ``package.json``, ``Cargo.toml``) are read once per process and read again
when their stat changes.
"""

from __future__ import annotations

import functools
import json
import os
import re
import tomllib

from ..languages import BY_NAME, SPECS, Package

# what joins the parts of a package name: a.b, a/b, A\B, A::B
_SEPARATORS = re.compile(r"[./\\]|::")
_GO_CLAUSE = re.compile(rb"^[ \t]*package[ \t]+(\w+)", re.MULTILINE)
_GO_MODULE = re.compile(rb"^[ \t]*module[ \t]+\"?([^\s\"]+)", re.MULTILINE)
# the manifest file each rule reads, in the file's folder and above
_MANIFESTS = {"go": "go.mod", "npm": "package.json", "cargo": "Cargo.toml", "python": "__init__.py"}
# the files that say the package of the files of these languages in their folder and below
PACKAGE_FILES: dict[str, frozenset[str]] = {
    file: frozenset(s.name for s in SPECS if s.package.rule == rule) for rule, file in _MANIFESTS.items()}

# manifest path -> ((mtime_ns, size), what it names or None)
_read: dict[str, tuple[tuple[int, int], str | None]] = {}


def package_of(root: str, rel: str, language: str | None, data: bytes) -> str:
    """The package of the file ``rel`` (root-relative, ``/``-separated) whose bytes are ``data``."""
    folder = rel.rpartition("/")[0]
    if language is None:
        return folder or "."
    rule = BY_NAME[language].package
    found = _RULES[rule.rule](root, rel, folder, data, rule)
    return found or folder or "."


def ancestors(package: str) -> list[str]:
    """``package`` and every package holding it: ``a.b.c`` -> ``a``, ``a.b``, ``a.b.c``."""
    return [package[:m.start()] for m in _SEPARATORS.finditer(package) if m.start()] + [package]


def within(package: str, wanted: str) -> bool:
    """Whether ``package`` is ``wanted`` or one of the packages it holds."""
    if package == wanted:
        return True
    if not package.startswith(wanted):
        return False
    joint = package[len(wanted):len(wanted) + 2]
    return joint[:1] in "./\\" or joint == "::"


def _folder(root: str, rel: str, folder: str, data: bytes, rule: Package) -> str | None:
    return None


def _clause(root: str, rel: str, folder: str, data: bytes, rule: Package) -> str | None:
    return _first(_compiled(rule.clause), data)


@functools.cache
def _compiled(pattern: str) -> re.Pattern[bytes]:
    return re.compile(pattern.encode("utf-8"), re.MULTILINE)


def _first(pattern: re.Pattern[bytes], data: bytes) -> str | None:
    m = pattern.search(data)
    return m.group(1).decode("utf-8", "replace") if m else None


def _go(root: str, rel: str, folder: str, data: bytes, rule: Package) -> str | None:
    for at in _upwards(folder):
        module = _manifest(os.path.join(root, at, "go.mod"), _go_module)
        if module is not None:
            below = folder[len(at):].lstrip("/")
            return f"{module}/{below}" if below else module
    return _first(_GO_CLAUSE, data)


def _python(root: str, rel: str, folder: str, data: bytes, rule: Package) -> str:
    folder, _, name = rel.rpartition("/")
    stem = name.rpartition(".")[0] or name
    parts = [] if stem == "__init__" else [stem]
    while folder and os.path.isfile(os.path.join(root, folder, "__init__.py")):
        folder, _, part = folder.rpartition("/")
        parts.append(part)
    return ".".join(reversed(parts)) or "."  # (an __init__.py at the root)


def _npm(root: str, rel: str, folder: str, data: bytes, rule: Package) -> str | None:
    return _nearest(root, folder, "package.json", _package_json_name)


def _cargo(root: str, rel: str, folder: str, data: bytes, rule: Package) -> str | None:
    return _nearest(root, folder, "Cargo.toml", _cargo_name)


_RULES = {"folder": _folder, "clause": _clause, "go": _go, "python": _python, "npm": _npm, "cargo": _cargo}
RULES = frozenset(_RULES)  # (tests/test_languages.py: every language names one of these)


def _nearest(root: str, folder: str, name: str, read) -> str | None:
    for at in _upwards(folder):
        found = _manifest(os.path.join(root, at, name), read)
        if found is not None:
            return found
    return None


def _upwards(folder: str):
    """``folder`` and each folder above it, to the root (``""``)."""
    while True:
        yield folder
        if not folder:
            return
        folder = folder.rpartition("/")[0]


def _manifest(path: str, read) -> str | None:
    """What the manifest file at ``path`` names (``read`` of its bytes), None when there is
    no such file, it names nothing, or it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    stamp = (st.st_mtime_ns, st.st_size)
    known = _read.get(path)
    if known is not None and known[0] == stamp:
        return known[1]
    try:
        with open(path, "rb") as f:
            value = read(f.read(1 << 20))
    except (OSError, ValueError, UnicodeDecodeError):
        value = None
    _read[path] = (stamp, value)
    return value


def _go_module(data: bytes) -> str | None:
    m = _GO_MODULE.search(data)
    return m.group(1).decode("utf-8", "replace") if m else None


def _package_json_name(data: bytes) -> str | None:
    doc = json.loads(data)
    name = doc.get("name") if isinstance(doc, dict) else None
    return name if isinstance(name, str) and name else None


def _cargo_name(data: bytes) -> str | None:
    package = tomllib.loads(data.decode("utf-8")).get("package")
    name = package.get("name") if isinstance(package, dict) else None
    return name if isinstance(name, str) and name else None
