"""What agents ask of a search beyond the hits: expanded terms, groups, the files the
hits import, suggested refinements and a summary.

Pure functions over hits as ``sylk/search`` returns them (dicts with ``path``,
``language``, ``kind``, ``symbol``, ``containerName`` ...) and plain values, so the
language server, the CLI and MCP share them, and merged results of several
workspace folders get the same treatment.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from ..text.words import split_words

GROUP_BY = ("file", "language", "folder", "kind", "author")

# A small table of words that name the same idea in code. Both directions are looked up.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "delete": ("remove", "drop", "erase"),
    "remove": ("delete", "drop"),
    "create": ("make", "new", "build", "add"),
    "get": ("fetch", "load", "read", "find"),
    "fetch": ("get", "load", "download"),
    "find": ("search", "lookup", "get"),
    "search": ("find", "query", "lookup"),
    "update": ("modify", "change", "set"),
    "save": ("store", "write", "persist"),
    "load": ("read", "open", "get"),
    "retry": ("backoff", "attempt", "again"),
    "error": ("exception", "err", "failure"),
    "exception": ("error", "raise"),
    "config": ("settings", "configuration", "options"),
    "settings": ("config", "options", "preferences"),
    "auth": ("authentication", "login", "credentials"),
    "login": ("auth", "signin", "authenticate"),
    "user": ("account", "member"),
    "db": ("database", "sql", "store"),
    "database": ("db", "sql", "store"),
    "init": ("initialize", "setup", "constructor"),
    "start": ("begin", "run", "launch"),
    "stop": ("end", "halt", "shutdown", "cancel"),
    "test": ("spec", "check", "assert"),
    "parse": ("decode", "read", "tokenize"),
    "serialize": ("encode", "dump", "marshal"),
    "cache": ("memo", "memoize", "lru"),
    "log": ("logger", "logging", "trace"),
    "http": ("request", "client", "url"),
    "send": ("post", "emit", "dispatch"),
    "wait": ("sleep", "delay", "timeout"),
    "delay": ("wait", "sleep", "backoff"),
    "count": ("number", "total", "size"),
    "distance": ("length", "norm", "metric"),
    "sort": ("order", "rank"),
    "validate": ("check", "verify"),
    "convert": ("transform", "map", "cast"),
}
MAX_EXPANDED = 12


def expand_terms(query: str) -> tuple[str, ...]:
    """Terms to add to the words of ``query`` for the lexical side: the words inside its
    identifiers (``getUserById`` -> get, user, by, id) and synonyms of its words, in that
    order, without the query's own words; at most MAX_EXPANDED."""
    own = [t.lower() for t in re.findall(r"\w+", query)]
    seen = set(own)
    out: list[str] = []

    def add(term: str) -> None:
        if term not in seen and len(term) > 1:
            seen.add(term)
            out.append(term)
    words: list[str] = []
    for token in re.findall(r"\w+", query):
        parts = [p.lower() for p in split_words(token)]
        words.extend(parts)
        if len(parts) > 1:
            for p in parts:
                add(p)
    for w in words:
        for syn in SYNONYMS.get(w, ()):
            add(syn)
    return tuple(out[:MAX_EXPANDED])


def _folder(path: str) -> str:
    return path.split("/", 1)[0] if "/" in path else "."


_KEYS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "file": lambda h: h["path"],
    "language": lambda h: h.get("language") or "text",
    "folder": lambda h: _folder(h["path"]),
    "kind": lambda h: h.get("kind") or "",
    "author": lambda h: h.get("author") or "(no git metadata)",
}


def group(hits: Sequence[Mapping[str, Any]], by: str) -> list[dict[str, Any]]:
    """Groups of hits by a key, in the order of each group's best hit: ``value``, ``count``
    and ``hits`` (indexes into ``hits``)."""
    key = _KEYS[by]
    groups: dict[str, list[int]] = {}
    for i, h in enumerate(hits):
        groups.setdefault(key(h), []).append(i)
    return [{"value": v, "count": len(ix), "hits": ix} for v, ix in groups.items()]


def summary(hits: Sequence[Mapping[str, Any]], total: int) -> dict[str, Any]:
    """Counts over the returned hits, and the total the query matched."""
    files = Counter(h["path"] for h in hits)
    return {
        "totalHits": total,
        "returned": len(hits),
        "files": len(files),
        "topFiles": [{"path": p, "hits": n} for p, n in files.most_common(5)],
        "languages": dict(Counter(h.get("language") or "text" for h in hits).most_common()),
        "kinds": dict(Counter(h.get("kind") or "" for h in hits).most_common()),
    }


def follow_ups(query: str, mode: str, facets: Mapping[str, Sequence[Mapping[str, Any]]], total: int,
               semantic_ready: bool, expanded: bool) -> list[dict[str, str]]:
    """Refinements worth trying next, each with a ready query and why."""
    out: list[dict[str, str]] = []
    q = query.strip()

    def top(name: str) -> tuple[str, int, int]:
        values = facets.get(name) or []
        if not values:
            return "", 0, 0
        return str(values[0]["value"]), int(values[0]["count"]), sum(int(v["count"]) for v in values)
    if q and total == 0:
        if not expanded:
            out.append({"query": q, "options": "expand", "reason": "nothing matched: add identifier parts and synonyms"})
        if mode == "lexical" and semantic_ready:
            out.append({"query": q, "options": "mode=semantic", "reason": "nothing matched by words: search by meaning"})
        out.append({"query": q, "options": "fuzzy", "reason": "nothing matched: allow typos"})
        return out
    lang, n, all_ = top("language")
    if lang and n < all_ and "lang:" not in q:
        out.append({"query": f"lang:{lang} {q}", "options": "",
                    "reason": f"{n} of {all_} candidates are {lang}"})
    folder, n, all_ = top("folder")
    if folder and folder != "." and n < all_ and "path:" not in q:
        out.append({"query": f"path:{folder}/** {q}", "options": "",
                    "reason": f"{n} of {all_} candidates are under {folder}/"})
    kinds = {str(v["value"]): int(v["count"]) for v in facets.get("kind") or []}
    for kind in ("function", "method", "class"):
        if kinds.get(kind) and len(kinds) > 1 and "kind:" not in q:
            out.append({"query": f"kind:{kind} {q}", "options": "",
                        "reason": f"{kinds[kind]} candidates are {kind}s"})
            break
    if mode == "lexical" and semantic_ready:
        out.append({"query": q, "options": "mode=hybrid", "reason": "also rank by meaning"})
    if mode != "lexical" and not semantic_ready:
        out.append({"query": q, "options": "mode=lexical",
                    "reason": "the semantic side is not ready yet: words only for now"})
    return out


# imports ---------------------------------------------------------------------
_IMPORTS: dict[str, list[re.Pattern[str]]] = {
    "python": [re.compile(r"^\s*from\s+(\.*[\w.]*)\s+import\s", re.M), re.compile(r"^\s*import\s+([\w.]+)", re.M)],
    "javascript": [re.compile(r"""(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]"""),
                   re.compile(r"""require\(\s*['"]([^'"]+)['"]\s*\)"""), re.compile(r"""^\s*import\s+['"]([^'"]+)['"]""", re.M)],
    "go": [re.compile(r'^\s*(?:import\s+)?(?:\w+\s+)?"([^"]+)"\s*$', re.M)],
    "rust": [re.compile(r"^\s*(?:pub\s+)?(?:use|mod)\s+((?:crate|self|super)?(?:::)?[\w:]+)", re.M)],
    "java": [re.compile(r"^\s*import\s+(?:static\s+)?([\w.]+)\s*;", re.M)],
    "c": [re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)],
    "ruby": [re.compile(r"""^\s*require(?:_relative)?\s+['"]([^'"]+)['"]""", re.M)],
    "csharp": [re.compile(r"^\s*using\s+([\w.]+)\s*;", re.M)],
}
_IMPORTS["typescript"] = _IMPORTS["tsx"] = _IMPORTS["javascript"]
_IMPORTS["cpp"] = _IMPORTS["c"]
_EXTS = {
    "python": (".py", "/__init__.py"), "javascript": (".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", "/index.js", "/index.ts"),
    "go": (), "rust": (".rs", "/mod.rs"), "java": (".java",), "c": ("",), "ruby": (".rb",), "csharp": (".cs",),
}
_EXTS["typescript"] = _EXTS["tsx"] = _EXTS["javascript"]
_EXTS["cpp"] = _EXTS["c"]


def imports_of(text: str, language: str) -> list[str]:
    """Module names or paths a source file imports, in order, without repeats."""
    found: dict[str, None] = {}
    for pattern in _IMPORTS.get(language, ()):
        for m in pattern.finditer(text):
            found[m.group(1)] = None
    return list(found)


def resolve_import(spec: str, importer: str, language: str, files: set[str], dirs: dict[str, list[str]]) -> str | None:
    """The workspace path an import names, when it can be told; else None (a library)."""
    base = PurePosixPath(importer).parent
    cands: list[str] = []
    if language == "python":
        dots = len(spec) - len(spec.lstrip("."))
        mod = spec.lstrip(".").replace(".", "/")
        if dots:
            root = base
            for _ in range(dots - 1):
                root = root.parent
            stem = (root / mod).as_posix() if mod else root.as_posix()
            cands = [stem + e for e in _EXTS["python"]]
        else:
            cands = [mod + e for e in _EXTS["python"]]
            cands += [f"{p}/{mod}{e}" for p in ("src", "lib") for e in _EXTS["python"]]
    elif language in ("javascript", "typescript", "tsx", "c", "cpp", "ruby"):
        if language == "ruby" and not spec.startswith("."):
            stems = [os.path.normpath((base / spec).as_posix()), "lib/" + spec]
        elif spec.startswith(".") or language in ("c", "cpp"):
            stems = [os.path.normpath((base / spec).as_posix())]
        else:
            return None  # a package
        cands = [s + e for s in stems for e in ("",) + _EXTS.get(language, ())]
    elif language in ("java", "csharp"):
        suffix = spec.replace(".", "/") + (".java" if language == "java" else ".cs")
        tail = "/" + suffix
        return next((f for f in sorted(files) if f == suffix or f.endswith(tail)), None)
    elif language == "go":
        # an import path names a package folder; the workspace holds it when a folder ends with it
        for d in sorted(dirs):
            if d and (spec == d or spec.endswith("/" + d)):
                return d + "/"
        return None
    elif language == "rust":
        parts = spec.replace("crate::", "").replace("self::", "").split("::")
        for n in range(len(parts), 0, -1):
            stem = "/".join(parts[:n])
            for c in (f"src/{stem}.rs", f"src/{stem}/mod.rs", (base / f"{stem}.rs").as_posix()):
                if c in files:
                    return c
        return None
    return next((c for c in cands if c in files), None)


def related_files(hits: Sequence[Mapping[str, Any]], read: Callable[[str], str | None],
                  files: Iterable[str], limit: int = 30) -> list[dict[str, Any]]:
    """The files the hits' files import: ``path`` (a workspace file, or a folder for Go
    packages) or None for a library, ``module`` (the import as written) and ``importedBy``."""
    all_files = set(files)
    dirs: dict[str, list[str]] = {}
    for f in all_files:
        dirs.setdefault(f.rpartition("/")[0], []).append(f)
    seen: dict[tuple[str | None, str], dict[str, Any]] = {}
    for path, language in dict.fromkeys((h["path"], h.get("language") or "") for h in hits):
        text = read(path)
        if text is None:
            continue
        for spec in imports_of(text, language):
            target = resolve_import(spec, path, language, all_files, dirs)
            if target == path:
                continue
            entry = seen.setdefault((target, spec), {"path": target, "module": spec, "importedBy": []})
            entry["importedBy"].append(path)
    ordered = sorted(seen.values(), key=lambda e: (e["path"] is None, -len(e["importedBy"])))
    return ordered[:limit]
