"""The ignore rules of a workspace (``IgnoreMatcher``).

Ignore rules, lowest priority first (the last matching pattern wins, as in git):

1. ``DEFAULT_EXCLUDES`` (the role git's ``core.excludesFile`` plays), so a project
   ``.gitignore`` / ``.sylkignore`` can re-include one with ``!build/``;
2. ``.git/info/exclude`` of the repository holding the root;
3. ``.gitignore`` files of the enclosing repository *above* the root, when the
   workspace is a sub-folder of a repository (shallower first);
4. ``.gitignore`` then ``.sylkignore`` of every directory in the workspace, each
   relative to its own directory, deeper overriding shallower. They are honoured
   whether or not the workspace is a git repository;
5. the user's ``exclude`` globs (gitwildmatch, relative to the root), so they win
   over everything; a ``!glob`` there re-includes.

As in git, nothing below an ignored directory can be re-included: ignored
directories are pruned and never entered. Besides the patterns, any directory
other than the root that holds a ``pyvenv.cfg`` is a virtual environment and is
ignored whatever its name (``env/``, ``.venv-3.12/``), and ``ALWAYS_EXCLUDED``
names (``.git``, ``.sylk``, ...) are never entered; those rules cannot be negated.

Patterns are turned into regexes by pathspec (``GitIgnoreSpec``'s); matching is done here so
that a pattern only decides for the path it matches itself, never through a
parent directory (git's own semantics, given that parents are pruned).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Final

import attrs
import pathspec

DEFAULT_EXCLUDES: tuple[str, ...] = (
    # version control (".git" is a file in worktrees and submodules) and our index
    ".git",
    ".hg/",
    ".svn/",
    ".jj/",
    ".sylk/",
    # dependencies and virtual environments (any dir with pyvenv.cfg too, see above)
    "node_modules/",
    "bower_components/",
    ".venv/",
    "venv/",
    "__pypackages__/",
    ".tox/",
    ".nox/",
    # caches
    "__pycache__/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".hypothesis/",
    ".ipynb_checkpoints/",
    ".gradle/",
    ".next/",
    ".nuxt/",
    ".parcel-cache/",
    ".turbo/",
    # build output
    "dist/",
    "build/",
    "target/",
    ".eggs/",
    "*.egg-info/",
    # editors and OS litter (.vscode/ stays: its settings are small and searched for)
    ".idea/",
    ".DS_Store",
    "Thumbs.db",
    "*.swp",
    # compiled artefacts
    "*.pyc",
    "*.pyo",
    "*.o",
    "*.obj",
    "*.a",
    "*.lib",
    "*.so",
    "*.dylib",
    "*.dll",
    "*.exe",
    "*.class",
    "*.jar",
    "*.wasm",
    # generated or minified text
    "*.min.js",
    "*.min.css",
    "*.map",
    # lock files: large, machine written, never what a search is after
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "Cargo.lock",
    "poetry.lock",
    "uv.lock",
    "Pipfile.lock",
    "composer.lock",
    "Gemfile.lock",
    # archives and media (load_source would reject most as binary; skip the read)
    "*.zip",
    "*.tar",
    "*.gz",
    "*.tgz",
    "*.bz2",
    "*.xz",
    "*.7z",
    "*.whl",
    "*.png",
    "*.jpg",
    "*.jpeg",
    "*.gif",
    "*.ico",
    "*.webp",
    "*.pdf",
    "*.mp3",
    "*.mp4",
    "*.woff",
    "*.woff2",
    "*.ttf",
    "*.otf",
)

# Never entered, whatever an ignore file or ``exclude`` says (a "!*/" in a
# .gitignore must not open .git): repository metadata and Sylk's own index.
ALWAYS_EXCLUDED: Final = frozenset({".git", ".hg", ".svn", ".jj", ".sylk"})


IGNORE_FILES: Final = (".gitignore", ".sylkignore")  # same directory: later wins
GIT_INFO_EXCLUDE: Final = ".git/info/exclude"  # the repository's own ignore file
VENV_MARKER: Final = "pyvenv.cfg"

# ---------------------------------------------------------------------------
# ignore rules

_Match = Callable[[str], "re.Match[str] | None"]


@attrs.frozen(slots=True)
class _Layer:
    """The patterns of one ignore file, and how to express a root-relative path
    relative to the file's directory: ``prefix + rel[strip:]``."""

    # Together they match when some pattern matches the path itself; most paths
    # match nothing and are let go after two C calls. name_rule holds the
    # patterns without a "/" (they test the last component only), path_rule
    # the others.
    name_rule: _Match
    path_rule: _Match
    # The same patterns as one alternation, last pattern first, each alternative
    # a group named r<n>: the first alternative that matches is the last matching
    # pattern of the file (git's rule), and m.lastgroup names it (the outermost
    # group closes last).
    last_rule: _Match
    ignores: tuple[bool, ...]  # the n of r<n>: True ignores, False is a "!negation"
    prefix: str = ""
    strip: int = 0


_UNANCHORED = "^(?:.+/)?"


def _self_only(regex: str) -> str:
    """pathspec's regex for a pattern, narrowed to match only the path itself.

    pathspec marks the "/" after a matched directory as ``(?P<ps_d>/)`` and lets
    anything follow, so a pattern also matches everything under a directory it
    names. Here parents are decided (and pruned) first, so only a match of the
    path itself may count: anchor the mark to the end (directories are tested
    with a trailing "/"). An unknown form only loses the anchoring."""
    regex = regex.replace("(?P<ps_d>/)", "/$").replace("(?P<ps_d>", "(?:")
    # pathspec applies its regexes with search(); anchor the unanchored ones
    # ("*/" is "/$", "*" is ".") so that everything here can use match().
    return regex if regex.startswith("^") else f"^(?s:.*?)(?:{regex})"


# The class GitIgnoreSpec builds its patterns with (it differs across pathspec versions):
# its pattern_to_regex gives a line's regex text without compiling it, which is all
# this module reads (a compile per line was a third of the rules' cost at start)
_PATTERN = type(pathspec.GitIgnoreSpec.from_lines(["x"]).patterns[0])


def _regex(line: str) -> tuple[str | None, bool | None]:
    """(pathspec's regex text, include) of one line; (None, None) for a blank line or a comment."""
    return _PATTERN.pattern_to_regex(line)


def _strictly_inside(text: str) -> str | None:
    """Regex for "X/**" (what is inside X) and "X/**/" (directories inside X).

    pathspec's regex for them also matches X itself, which makes no difference
    to pathspec but does here: git keeps X, so "X/**" + "!X/keep" keeps X/keep.
    """
    dir_only = text.endswith("/")
    text = text.rstrip("/")  # "X/**"
    inside, _ = _regex(text)
    # "X/**" is anchored (a "/" in the middle); so is "/X/", unlike "X/".
    own_dir = text[:-2] if text.startswith("/") else "/" + text[:-2]
    itself, _ = _regex(own_dir)
    if inside is None or itself is None:
        return None
    regex = f"(?!{_self_only(itself)}){_self_only(inside)}"
    return f"(?=(?s:.*)/$){regex}" if dir_only else regex


def _compile(lines: Iterable[str], *, prefix: str = "", strip: int = 0) -> _Layer | None:
    patterns: list[tuple[str, bool]] = []
    by_name: list[str] = []
    by_path: list[str] = []
    for line in lines:
        raw, include = _regex(line)
        if include is None or raw is None:
            continue
        regex = _self_only(raw)
        text = line.lstrip("!").rstrip()
        if text.endswith(("/**", "/**/")):
            regex = _strictly_inside(text) or regex
        patterns.append((regex, bool(include)))
        if regex.startswith(_UNANCHORED) and "/" not in text.rstrip("/") and "\\" not in text:
            by_name.append(regex[len(_UNANCHORED):])
        else:
            by_path.append(regex)
    if not patterns:
        return None
    patterns.reverse()
    # named, not counted: counting a pattern's inner groups took a compile of each
    # (a third of a layer's cost; every command pays it at start)
    last_rule = re.compile("|".join(f"(?P<r{n}>{r})" for n, (r, _) in enumerate(patterns))).match
    return _Layer(_union(by_name), _union(by_path), last_rule, tuple(ignore for _, ignore in patterns), prefix, strip)


def _never(_: str) -> None:
    return None


def _union(regexes: list[str]) -> _Match:
    if not regexes:
        return _never
    return re.compile("|".join(f"(?:{r})" for r in regexes)).match


def _read_ignore_file(path: str, *, prefix: str = "", strip: int = 0) -> _Layer | None:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:  # missing, a directory, unreadable: no rules
        return None
    return _compile(raw.decode("utf-8", "replace").splitlines(), prefix=prefix, strip=strip)


def decide(stack: tuple[_Layer, ...], rel: str, is_dir: bool) -> bool:
    """True if the last pattern (in priority order) matching ``rel`` itself
    ignores it. ``stack`` is ordered highest priority first."""
    name = rel[rel.rfind("/") + 1:]
    if is_dir:
        name += "/"
    for layer in stack:
        p = layer.prefix + rel[layer.strip:]
        if is_dir:
            p += "/"
        if layer.name_rule(name) is not None or layer.path_rule(p) is not None:
            m = layer.last_rule(p)
            if m is not None:
                return layer.ignores[int(m.lastgroup[1:])] if m.lastgroup else False
    return False


def find_git(root: str) -> tuple[str, str] | None:
    """(work tree top, git dir) of the repository holding ``root``, if any."""
    d = root
    while True:
        dot_git = os.path.join(d, ".git")
        if os.path.isdir(dot_git):
            return d, dot_git
        if os.path.isfile(dot_git):  # worktree / submodule: "gitdir: <path>"
            try:
                with open(dot_git, encoding="utf-8", errors="replace") as f:
                    line = f.readline().strip()
            except OSError:
                return d, dot_git
            if line.startswith("gitdir:"):
                gitdir = os.path.join(d, line[len("gitdir:"):].strip())
                common = os.path.join(gitdir, "commondir")  # worktrees share info/
                try:
                    with open(common, encoding="utf-8", errors="replace") as f:
                        gitdir = os.path.join(gitdir, f.readline().strip())
                except OSError:
                    pass
                return d, os.path.normpath(gitdir)
            return d, dot_git
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


class IgnoreMatcher:
    """Ignore rules of one workspace root: DEFAULT_EXCLUDES + user ``exclude``
    globs + ``.gitignore`` files at every depth (nested, negation, anchored
    patterns, directory-only patterns, each relative to its own directory, deeper
    files overriding shallower ones as git does) + ``.git/info/exclude`` +
    ``.sylkignore`` files (same syntax as .gitignore, at any depth).

    Ignore files are read once, on first need, and cached. A watcher that sees an
    ignore file change should build a new matcher.
    """

    def __init__(self, root: Path, exclude: Sequence[str] = ()) -> None:
        self.root = Path(root)
        self._root_s = os.path.abspath(os.fspath(root))
        user = _compile(exclude)
        self._user: tuple[_Layer, ...] = (user,) if user else ()

        base: list[_Layer] = []  # highest priority first
        git = find_git(self._root_s)
        if git is not None:
            top, gitdir = git
            above = os.path.relpath(self._root_s, top)
            prefix = "" if above == os.curdir else above.replace(os.sep, "/") + "/"
            if prefix:  # .gitignore files between the repository top and the root
                d, parts = top, above.split(os.sep)
                dirs = [top]
                for part in parts[:-1]:
                    d = os.path.join(d, part)
                    dirs.append(d)
                for d in dirs:
                    sub = os.path.relpath(self._root_s, d).replace(os.sep, "/") + "/"
                    layer = _read_ignore_file(os.path.join(d, ".gitignore"), prefix=sub)
                    if layer:
                        base.insert(0, layer)
            info = _read_ignore_file(os.path.join(gitdir, "info", "exclude"), prefix=prefix)
            if info:
                base.append(info)
        defaults = _compile(DEFAULT_EXCLUDES)
        assert defaults is not None
        base.append(defaults)
        self._base = tuple(base)

        # dir rel ("" = root) -> the full stack for entries of that directory
        self._stacks: dict[str, tuple[_Layer, ...]] = {}
        # dir rel -> holds a pyvenv.cfg
        self._venv: dict[str, bool] = {}

    # -- for the walker and the lazy path -------------------------------------

    def _stack(self, dir_rel: str, names: frozenset[str] | set[str] | None = None) -> tuple[_Layer, ...]:
        """Rules for entries directly inside ``dir_rel``. ``names`` (the dir's
        entry names, when the caller listed it) saves opening absent files."""
        stack = self._stacks.get(dir_rel)
        if stack is not None:
            return stack
        if dir_rel:
            parent = dir_rel.rpartition("/")[0]
            inherited = self._stack(parent)[len(self._user):]
            strip = len(dir_rel) + 1
        else:
            inherited = self._base
            strip = 0
        own: list[_Layer] = []
        dir_path = os.path.join(self._root_s, dir_rel) if dir_rel else self._root_s
        for fname in reversed(IGNORE_FILES):  # .sylkignore beats .gitignore
            if names is not None and fname not in names:
                continue
            layer = _read_ignore_file(os.path.join(dir_path, fname), strip=strip)
            if layer:
                own.append(layer)
        stack = self._user + tuple(own) + inherited
        self._stacks[dir_rel] = stack
        return stack

    def rules(self, dir_rel: str, names: frozenset[str] | set[str] | None = None) -> tuple[_Layer, ...]:
        """The rules for entries directly inside ``dir_rel`` (for the walker: pass them to
        ``decide``); ``names`` lists the directory's entries when the caller has them."""
        return self._stack(dir_rel, names)

    def note_venv(self, dir_rel: str, is_venv: bool) -> None:
        """The walker listed ``dir_rel``: whether it holds a ``pyvenv.cfg``."""
        self._venv[dir_rel] = is_venv

    def _is_venv(self, dir_rel: str) -> bool:
        known = self._venv.get(dir_rel)
        if known is None:
            path = os.path.join(self._root_s, dir_rel, VENV_MARKER)
            known = self._venv[dir_rel] = bool(dir_rel) and os.path.isfile(path)
        return known

    # -- public -----------------------------------------------------------------

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether the root-relative posix path ``rel`` is ignored, counting the
        rules for each of its parent directories (an ignored parent hides it)."""
        rel = rel.strip("/")
        while rel.startswith("./"):
            rel = rel[2:]
        if rel in ("", "."):
            return False
        parts = rel.split("/")
        parent = ""
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            here = f"{parent}/{part}" if parent else part
            as_dir = is_dir or not last
            if part in ALWAYS_EXCLUDED:
                return True
            if decide(self._stack(parent), here, as_dir):
                return True
            if as_dir and self._is_venv(here):
                return True
            parent = here
        return False


