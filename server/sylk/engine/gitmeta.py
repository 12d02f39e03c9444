"""Per-file git metadata (last commit, author, commit time) kept in the manifest.

Refreshed when HEAD moves: only the files changed between the commit seen last and
HEAD are looked up, with one ``git log`` walk that stops once all are found
(gitsync.last_commits). Without git, outside a repository, or in an untrusted
workspace (``settings.trusted`` false: git never runs there), there is none and every
git filter and facet is simply absent.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..ingest import gitsync
from ..ingest.ignore import find_git
from ..store.annotations import GIT_META_HEAD

if TYPE_CHECKING:
    from .workspace import Workspace

META_HEAD = GIT_META_HEAD
COMMITS_HEAD = "git_commits_head"


def folders(root: Path, trusted: bool) -> tuple[str, ...]:
    """The git folders whose HEAD, refs and packed-refs say where HEAD is (a watcher
    follows them); none outside a repository, without git, or untrusted (``trusted``
    false: git is not run)."""
    if not trusted:
        return ()
    dirs = gitsync.git_dirs(root)
    return () if dirs is None else tuple(dict.fromkeys((dirs.own, dirs.common)))


def update(ws: Workspace) -> int:
    """Bring the metadata up to date with HEAD; returns how many files were looked up."""
    if not ws.writable or not ws.settings.trusted or find_git(str(ws.root)) is None:
        return 0
    git = gitsync.state(ws.root)
    if git is None:
        return 0
    manifest = ws.manifest
    old = manifest.get_meta(META_HEAD)
    if old == git.head:
        return 0
    tracked = gitsync.tracked_files(ws.root, git.prefix)
    if tracked is None:
        return 0
    indexed = set(manifest.files())
    known = manifest.git_files()
    candidates = tracked & indexed
    changed = gitsync.changed_between(ws.root, old, git.head, git.prefix) if old else None
    replace_all = changed is None
    if replace_all:
        wanted = candidates
    else:  # what HEAD changed, and what was indexed since without metadata
        wanted = (set(changed) & candidates) | (candidates - set(known))
    found = gitsync.last_commits(ws.root, git.prefix, wanted)
    manifest.set_git_files(((p, c.commit, c.author, c.time) for p, c in found.items()), replace_all=replace_all)
    update_commits(ws, git)
    manifest.set_meta(**{META_HEAD: git.head})
    return len(wanted)


def update_commits(ws: Workspace, git: gitsync.GitState) -> int:
    """Index the messages of the commits since the last run (``git_commit`` documents); all
    of them again when history was rewritten (the old HEAD is no longer an ancestor)."""
    manifest = ws.manifest
    old = manifest.get_meta(COMMITS_HEAD)
    if old == git.head:
        return 0
    fresh = not old or not gitsync.is_ancestor(ws.root, old, git.head)
    found = gitsync.commits(ws.root, git.prefix, None if fresh else old, git.head)
    if found is None:
        return 0
    rows = ((c.sha, c.author, c.time, c.message, "\n".join(c.files)) for c in found)
    if manifest.add_commits(rows, replace_all=fresh):
        manifest.set_meta(**{COMMITS_HEAD: git.head})
    return len(found)


def commit(ws: Workspace, sha: str) -> gitsync.Commit | None:
    """The indexed commit ``sha`` (its full sha), or None when its message is not indexed."""
    row = ws.manifest.commit(sha)
    if row is None:
        return None
    return gitsync.Commit(row.sha, row.author, int(row.time), row.message, tuple(f for f in row.files.split("\n") if f))
