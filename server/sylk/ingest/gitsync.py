"""What git says changed in a work tree: the start-up fast path.

When the workspace is (inside) a git repository, the files that can differ from
what the index saw at its last complete run are the union of

* the files changed between the commit indexed then and HEAD now
  (``git diff --name-only OLD HEAD``),
* what ``git status`` reports now (modified, added, deleted, untracked),
* what it reported then (a change since reverted is back to the committed text,
  which the index may not hold),
* what the index re-indexed since (saves and watcher events, recorded by the
  indexer before it indexes them).

Everything else is byte-for-byte what git has at both commits, so only these
paths are stat()ed, and hashed or parsed when they differ. Any doubt (no git,
no commit, the old commit gone, submodules, settings changed) means the caller
walks the whole tree instead. git runs with ``GIT_OPTIONAL_LOCKS=0`` so it never
takes the repository's index lock from under the user's own git commands.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import attrs

TIMEOUT_S = 20.0


@attrs.frozen
class GitState:
    head: str  # the commit checked out
    prefix: str  # the workspace root relative to the repository top: "" or "sub/dir/"
    dirty: tuple[str, ...]  # workspace-relative paths git status reports, sorted
    # git cannot see into these: submodules, nested repositories (untracked folders)
    opaque: bool


def _env() -> dict[str, str]:
    """git's environment: no index lock taken from the user, C messages, the root's own repository."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    return env


def _git(root: Path, *args: str) -> bytes | None:
    exe = shutil.which("git")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "-C", str(root), *args], capture_output=True, timeout=TIMEOUT_S, env=_env(),
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def _relative(paths: list[str], prefix: str) -> list[str]:
    n = len(prefix)
    return [p[n:] for p in paths if p.startswith(prefix) and len(p) > n]


def state(root: Path) -> GitState | None:
    """The work tree's state, or None when ``root`` is not in a git repository with a
    commit (or git is missing)."""
    out = _git(root, "rev-parse", "--show-toplevel", "--show-prefix", "HEAD")
    if out is None:
        return None
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) < 3 or len(lines[2]) < 40:
        return None
    top, prefix, head = lines[0], lines[1], lines[2].strip()
    status = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
                  "--ignore-submodules=none", "--", ".")
    if status is None:
        return None
    paths = [e[3:] for e in status.decode("utf-8", "surrogateescape").split("\0") if len(e) > 3]
    opaque = any(p.endswith("/") for p in paths) or os.path.exists(os.path.join(top, ".gitmodules"))
    dirty = sorted({p.rstrip("/") for p in _relative(paths, prefix)})
    return GitState(head, prefix, tuple(dirty), opaque)


@attrs.frozen
class GitDirs:
    """Where a work tree's git state lives: ``own`` holds its HEAD (a linked worktree's
    own folder), ``common`` the refs and packed-refs (the same folder outside worktrees)."""
    own: str
    common: str


def git_dirs(root: Path) -> GitDirs | None:
    """The git folders of the repository holding ``root``; None outside one (or without git)."""
    out = _git(root, "rev-parse", "--absolute-git-dir", "--git-common-dir")
    if out is None:
        return None
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) < 2 or not lines[0] or not lines[1]:
        return None
    own = lines[0]
    return GitDirs(own, os.path.normpath(os.path.join(root, lines[1])))


def changed_between(root: Path, old: str, new: str, prefix: str) -> list[str] | None:
    """Workspace-relative paths that differ between two commits; None if git cannot tell
    (e.g. the old commit was garbage-collected)."""
    if old == new:
        return []
    out = _git(root, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", old, new, "--", ".")
    if out is None:
        return None
    return _relative([p for p in out.decode("utf-8", "surrogateescape").split("\0") if p], prefix)


@attrs.frozen
class FileCommit:
    commit: str
    author: str
    time: int  # commit time, seconds since the epoch


MAX_COMMITS = 20_000  # history walked for per-file metadata; older files stay without it


def tracked_files(root: Path, prefix: str) -> set[str] | None:
    """Workspace-relative paths git tracks under ``root``."""
    out = _git(root, "ls-files", "-z", "--", ".")
    if out is None:
        return None
    # ls-files prints paths relative to the current directory (the root)
    return {p for p in out.decode("utf-8", "surrogateescape").split("\0") if p}


def last_commits(root: Path, prefix: str, wanted: set[str], max_commits: int = MAX_COMMITS) -> dict[str, FileCommit]:
    """The last commit that touched each of ``wanted`` (workspace-relative paths), from one
    ``git log`` walk that stops once all are found (or after ``max_commits``)."""
    exe = shutil.which("git")
    if exe is None or not wanted:
        return {}
    args = [exe, "-C", str(root), "log", "-z", "--no-renames", "--name-only", "--no-merges",
            f"--max-count={max_commits}", "--format=%x01%H%x1f%an%x1f%ct", "--", "."]
    found: dict[str, FileCommit] = {}
    left = set(wanted)
    try:
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                env=_env())
    except OSError:
        return {}
    assert proc.stdout is not None
    n = len(prefix)
    buf = b""

    def take(record: bytes) -> None:
        head, _, names = record.partition(b"\0")
        fields = head.decode("utf-8", "replace").split("\x1f")
        if len(fields) != 3:
            return
        try:
            info = FileCommit(fields[0], fields[1], int(fields[2]))
        except ValueError:
            return
        for raw in names.lstrip(b"\n").split(b"\0"):
            name = raw.decode("utf-8", "surrogateescape")
            if name.startswith(prefix):
                rel = name[n:]
                if rel in left:
                    left.discard(rel)
                    found[rel] = info
    try:
        while left:
            block = proc.stdout.read(1 << 16)
            if not block:
                break
            buf += block
            records = buf.split(b"\x01")
            buf = records.pop()  # possibly incomplete
            for record in records:
                if record:
                    take(record)
        if not left:
            return found
        if buf:
            take(buf)
        return found
    finally:
        proc.kill()
        proc.wait()


@attrs.frozen
class Commit:
    sha: str
    author: str
    time: int
    message: str
    files: tuple[str, ...]  # workspace-relative paths it touched


def commits(root: Path, prefix: str, since: str | None, head: str, max_commits: int = MAX_COMMITS) -> list[Commit] | None:
    """Commits reachable from ``head`` and not from ``since`` (all, up to ``max_commits``,
    when ``since`` is None) that touched the workspace, newest first; None if git cannot tell."""
    span = f"{since}..{head}" if since else head
    out = _git(root, "log", "-z", "--no-renames", "--name-only", f"--max-count={max_commits}",
               "--format=%x01%H%x1f%an%x1f%ct%x1f%B%x1d", span, "--", ".")
    if out is None:
        return None
    n = len(prefix)
    found: list[Commit] = []
    for record in out.split(b"\x01"):
        head_part, sep, names = record.partition(b"\x1d")
        if not sep:
            continue
        fields = head_part.decode("utf-8", "replace").split("\x1f", 3)
        if len(fields) != 4:
            continue
        try:
            t = int(fields[2])
        except ValueError:
            continue
        files = tuple(name[n:] for name in (raw.decode("utf-8", "surrogateescape")
                                            for raw in names.lstrip(b"\0\n").split(b"\0")) if name.startswith(prefix) and len(name) > n)
        found.append(Commit(fields[0], fields[1], t, fields[3].strip(), files))
    return found


def is_ancestor(root: Path, old: str, new: str) -> bool:
    return _git(root, "merge-base", "--is-ancestor", old, new) is not None
