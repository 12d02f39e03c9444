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


def _git(root: Path, *args: str) -> bytes | None:
    exe = shutil.which("git")
    if exe is None:
        return None
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    try:
        out = subprocess.run([exe, "-C", str(root), *args], capture_output=True, timeout=TIMEOUT_S, env=env,
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


def changed_between(root: Path, old: str, new: str, prefix: str) -> list[str] | None:
    """Workspace-relative paths that differ between two commits; None if git cannot tell
    (e.g. the old commit was garbage-collected)."""
    if old == new:
        return []
    out = _git(root, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", old, new, "--", ".")
    if out is None:
        return None
    return _relative([p for p in out.decode("utf-8", "surrogateescape").split("\0") if p], prefix)
