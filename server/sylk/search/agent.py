"""What agents ask of a search beyond the hits: expanded terms, groups, the files the
hits import, suggested refinements and a summary.

Pure functions over hits (``Hit`` records) and plain values that return records, so
every front end can share them and merged results of several workspace folders get
the same treatment; the front ends' wire modules turn the records into JSON.
"""

from __future__ import annotations

import functools
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import PurePosixPath

import attrs

from ..languages import BY_NAME, Imports
from ..model import is_virtual
from ..text.words import split_words
from .results import Hit

# A small table of words that name the same idea in code. Both directions are looked up.
SYNONYMS: dict[str, tuple[str, ...]] = {
    word: tuple(others.split())
    for word, _, others in (line.partition(":") for line in """
delete: remove drop erase
remove: delete drop
create: make new build add
get: fetch load read find
fetch: get load download
find: search lookup get
search: find query lookup
update: modify change set
save: store write persist
load: read open get
retry: backoff attempt again
error: exception err failure
exception: error raise
config: settings configuration options
settings: config options preferences
auth: authentication login credentials
login: auth signin authenticate
user: account member
db: database sql store
database: db sql store
init: initialize setup constructor
start: begin run launch
stop: end halt shutdown cancel
test: spec check assert
parse: decode read tokenize
serialize: encode dump marshal
cache: memo memoize lru
log: logger logging trace
http: request client url
send: post emit dispatch
wait: sleep delay timeout
delay: wait sleep backoff
count: number total size
distance: length norm metric
sort: order rank
validate: check verify
convert: transform map cast
""".strip().splitlines())
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


@attrs.frozen
class Group:
    """Hits that share a key: ``hits`` are indexes into the hits grouped."""

    value: str | None
    count: int
    hits: tuple[int, ...]


@attrs.frozen
class Summary:
    """Counts over the returned hits, and the total the query matched."""

    total_hits: int
    returned: int
    files: int
    top_files: dict[str | None, int]  # path -> hits, most first (at most 5)
    languages: dict[str, int]  # most first
    kinds: dict[str, int]


@attrs.frozen
class FollowUp:
    """A refinement worth trying: a ready query, the options to add, and why."""

    query: str
    options: str
    reason: str


@attrs.frozen
class RelatedFile:
    """A file the hits' files import: ``path`` a workspace file (a folder for a Go
    package) or None for a library; ``module`` the import as written."""

    path: str | None
    module: str
    imported_by: tuple[str, ...]


def _path(h: Hit) -> str | None:
    return h.path or None  # a commit that touched no file has none


def _language(h: Hit) -> str:
    return "text" if h.commit is not None else h.language or "text"  # a commit message has no language


def _folder(path: str | None) -> str:
    return path.split("/", 1)[0] if path and "/" in path else "."


_KEYS: dict[str, Callable[[Hit], str | None]] = {
    "file": _path,
    "language": _language,
    "folder": lambda h: _folder(h.path),
    "kind": lambda h: h.kind or "",
    "package": lambda h: h.package or "(none)",
    "author": lambda h: h.author or "(no git metadata)",
}


def group(hits: Sequence[Hit], by: str) -> list[Group]:
    """Groups of hits by a key, in the order of each group's best hit."""
    key = _KEYS[by]
    groups: dict[str | None, list[int]] = {}
    for i, h in enumerate(hits):
        groups.setdefault(key(h), []).append(i)
    return [Group(v, len(ix), tuple(ix)) for v, ix in groups.items()]


def summary(hits: Sequence[Hit], total: int) -> Summary:
    """Counts over the returned hits, and the total the query matched."""
    files = Counter(_path(h) for h in hits)
    return Summary(total, len(hits), len(files), dict(files.most_common(5)),
                   dict(Counter(_language(h) for h in hits).most_common()),
                   dict(Counter(h.kind or "" for h in hits).most_common()))


def follow_ups(query: str, mode: str, facets: Mapping[str, Sequence[tuple[str, int]]], total: int,
               semantic_ready: bool, expanded: bool) -> list[FollowUp]:
    """Refinements worth trying next, each with a ready query and why."""
    out: list[FollowUp] = []
    q = query.strip()

    def top(name: str) -> tuple[str, int, int]:
        values = facets.get(name) or []
        if not values:
            return "", 0, 0
        value, count = values[0]
        return str(value), int(count), sum(int(c) for _v, c in values)
    if q and total == 0:
        if not expanded:
            out.append(FollowUp(q, "expand", "nothing matched: add identifier parts and synonyms"))
        if mode == "lexical" and semantic_ready:
            out.append(FollowUp(q, "mode=semantic", "nothing matched by words: search by meaning"))
        out.append(FollowUp(q, "fuzzy", "nothing matched: allow typos"))
        return out
    lang, n, all_ = top("language")
    if lang and n < all_ and "lang:" not in q:
        out.append(FollowUp(f"lang:{lang} {q}", "", f"{n} of {all_} candidates are {lang}"))
    folder, n, all_ = top("folder")
    if folder and folder != "." and n < all_ and "path:" not in q:
        out.append(FollowUp(f"path:{folder}/** {q}", "", f"{n} of {all_} candidates are under {folder}/"))
    kinds = {str(v): int(c) for v, c in facets.get("kind") or []}
    for kind in ("function", "method", "class"):
        if kinds.get(kind) and len(kinds) > 1 and "kind:" not in q:
            out.append(FollowUp(f"kind:{kind} {q}", "", f"{kinds[kind]} candidates are {kind}s"))
            break
    if mode == "lexical" and semantic_ready:
        out.append(FollowUp(q, "mode=hybrid", "also rank by meaning"))
    if mode != "lexical" and not semantic_ready:
        out.append(FollowUp(q, "mode=lexical", "the semantic side is not ready yet: words only for now"))
    return out


# imports ---------------------------------------------------------------------
@functools.cache
def _import_patterns(language: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.M) for p in BY_NAME[language].imports.patterns)


def imports_of(text: str, language: str) -> list[str]:
    """Module names or paths a source file imports, in order, without repeats."""
    found: dict[str, None] = {}
    for pattern in _import_patterns(language):
        for m in pattern.finditer(text):
            found[m.group(1)] = None
    return list(found)


def resolve_import(spec: str, importer: str, language: str, files: AbstractSet[str],
                   dirs: AbstractSet[str]) -> str | None:
    """The workspace path an import names, when it can be told; else None (a library).
    How: the language's ``imports.resolve`` (``languages.spec.Imports``)."""
    rule = BY_NAME[language].imports
    return _RESOLVE[rule.resolve](spec, PurePosixPath(importer).parent, rule, files, dirs)


def _first(candidates: Iterable[str], files: AbstractSet[str]) -> str | None:
    return next((c for c in candidates if c in files), None)


def _none(spec: str, base: PurePosixPath, rule: Imports, files: AbstractSet[str],
          dirs: AbstractSet[str]) -> str | None:
    return None


def _relative(spec: str, base: PurePosixPath, rule: Imports, files: AbstractSet[str],
              dirs: AbstractSet[str]) -> str | None:
    """A path from the importing file's folder, as written or with one of the suffixes."""
    stem = os.path.normpath((base / spec).as_posix())
    return _first((stem + e for e in ("",) + rule.suffixes), files)


def _relative_dot(spec: str, base: PurePosixPath, rule: Imports, files: AbstractSet[str],
                  dirs: AbstractSet[str]) -> str | None:
    """``./x``, ``../x``: relative; a bare name is a package (``node_modules``)."""
    return _relative(spec, base, rule, files, dirs) if spec.startswith(".") else None


def _dotted(spec: str, base: PurePosixPath, rule: Imports, files: AbstractSet[str],
            dirs: AbstractSet[str]) -> str | None:
    """``a.b.C`` (``a\\b\\C``, ``a::b::C``): a file whose path ends in ``a/b/C`` and a
    suffix (its root folder is not known), the nearest."""
    if "/" in spec:  # a path (PHP's ``require __DIR__ . '/x.php'``), not a name
        return _relative(spec.lstrip("/"), base, rule, files, dirs)
    return _ending_in(spec.strip(rule.separator).replace(rule.separator, "/"), rule.suffixes, files, base)


def _ending_in(stem: str, suffixes: tuple[str, ...], files: AbstractSet[str], base: PurePosixPath) -> str | None:
    """The file whose path ends in ``stem`` and a suffix; of several, the one nearest the
    importing folder ``base`` (the longest shared folder), then by the order of the
    suffixes, then the first in sorted order."""
    here = base.as_posix().split("/")
    found = [(-_shared(f.split("/")[:-1], here), k, f) for k, suffix in enumerate(suffixes)
             for f in files if f == stem + suffix or f.endswith("/" + stem + suffix)]
    return min(found)[2] if found else None


def _shared(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def _snake_dotted(spec: str, base: PurePosixPath, rule: Imports, files: AbstractSet[str],
                  dirs: AbstractSet[str]) -> str | None:
    """A module named after its file in snake case: Elixir's ``Phoenix.Router.Route`` is a
    file ending in ``phoenix/router/route.ex``, OCaml's ``Foo_bar`` one named ``foo_bar.ml``
    (anywhere); else the first part alone (the top module's file)."""
    parts = [_CAMEL.sub("_", p).lower() for p in spec.split(rule.separator) if p]
    for stem in dict.fromkeys(["/".join(parts), parts[0]] if parts else []):
        found = _ending_in(stem, rule.suffixes, files, base)
        if found is not None:
            return found
    return None


def _python(spec: str, base: PurePosixPath, rule: Imports, files: AbstractSet[str],
            dirs: AbstractSet[str]) -> str | None:
    dots = len(spec) - len(spec.lstrip("."))
    mod = spec.lstrip(".").replace(".", "/")
    if dots:
        root = base
        for _ in range(dots - 1):
            root = root.parent
        stem = (root / mod).as_posix() if mod else root.as_posix()
        return _first((stem + e for e in rule.suffixes), files)
    cands = [mod + e for e in rule.suffixes] + [f"{p}/{mod}{e}" for p in ("src", "lib") for e in rule.suffixes]
    return _first(cands, files)


def _ruby(spec: str, base: PurePosixPath, rule: Imports, files: AbstractSet[str],
          dirs: AbstractSet[str]) -> str | None:
    """``require_relative "x"`` or ``require "./x"``: relative; ``require "a/b"``: from
    the importing folder or the gem's ``lib/``."""
    stems = [os.path.normpath((base / spec).as_posix())]
    if not spec.startswith("."):
        stems.append("lib/" + spec)
    return _first((s + e for s in stems for e in ("",) + rule.suffixes), files)


def _go(spec: str, base: PurePosixPath, rule: Imports, files: AbstractSet[str],
        dirs: AbstractSet[str]) -> str | None:
    """An import path names a package folder; the workspace holds it when a folder ends
    with it (the first of those in sorted order)."""
    parts = spec.split("/")
    found = [d for d in ("/".join(parts[i:]) for i in range(len(parts))) if d and d in dirs]
    return min(found) + "/" if found else None


def _rust(spec: str, base: PurePosixPath, rule: Imports, files: AbstractSet[str],
          dirs: AbstractSet[str]) -> str | None:
    parts = spec.replace("crate::", "").replace("self::", "").split("::")
    for n in range(len(parts), 0, -1):
        stem = "/".join(parts[:n])
        for c in (f"src/{stem}.rs", f"src/{stem}/mod.rs", (base / f"{stem}.rs").as_posix()):
            if c in files:
                return c
    return None


Resolver = Callable[[str, PurePosixPath, Imports, AbstractSet[str], AbstractSet[str]], "str | None"]
_RESOLVE: dict[str, Resolver] = {
    "none": _none, "relative": _relative, "relative_dot": _relative_dot, "dotted": _dotted,
    "snake_dotted": _snake_dotted,
    "python": _python, "ruby": _ruby, "go": _go, "rust": _rust,
}
RESOLVERS = frozenset(_RESOLVE)  # (tests/test_languages.py: every language names one of these)


def related_files(hits: Sequence[Hit], read: Callable[[str], str | None],
                  files: Iterable[str], limit: int = 30) -> list[RelatedFile]:
    """The files the hits' files import, the workspace's first, then the most imported.
    Commit messages and virtual documents have no file to read imports from: skipped."""
    all_files = set(files)
    dirs = {f.rpartition("/")[0] for f in all_files}
    seen: dict[tuple[str | None, str], list[str]] = {}
    # (a file of no language Sylk parses, "text", imports nothing it can tell)
    for path, language in dict.fromkeys((h.path, h.language) for h in hits
                                        if h.commit is None and h.path and not is_virtual(h.path)
                                        and h.language in BY_NAME):
        text = read(path)
        if text is None:
            continue
        for spec in imports_of(text, language):
            target = resolve_import(spec, path, language, all_files, dirs)
            if target == path:
                continue
            seen.setdefault((target, spec), []).append(path)
    ordered = sorted(seen.items(), key=lambda e: (e[0][0] is None, -len(e[1])))
    return [RelatedFile(target, spec, tuple(by)) for (target, spec), by in ordered[:limit]]
