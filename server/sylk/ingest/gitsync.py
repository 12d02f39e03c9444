"""What git says changed in a work tree: the start-up fast path; and the one door
through which Sylk runs git at all (``run_git``, ``open_git``).

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

A repository is data from a stranger: its ``.git/config`` and ``.gitattributes`` can
name programs for git to run (an fsmonitor hook, hooks, clean/smudge/process filters,
diff drivers, a pager, gpg to check signatures, credential helpers, ssh, remote
helpers fetching a partial clone's missing objects). ``open_git`` runs every git
command with all of them switched off at command scope, above every config file,
through ``GIT_CONFIG_COUNT`` (which git hands on to the git processes it starts
itself), and with every transport refused (``GIT_ALLOW_PROTOCOL`` empty), so git
never runs a program a repository names and never touches the network. Nothing
else in Sylk starts git.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

TIMEOUT_S = 20.0


@attrs.frozen
class ConfigOverride:
    """One config variable set at command scope (where it beats every config file)."""
    key: str
    value: str


# What a repository's config can make Sylk's git commands run, each set to a value
# that runs nothing. An empty program makes git fail to start "" (no program runs);
# a feature switched off never gets that far.
NOTHING_RUNS = (
    ConfigOverride("core.fsmonitor", "false"),  # a hook program git runs before status
    ConfigOverride("core.hooksPath", "/dev/null"),  # no folder holds a hook (post-index-change, ...)
    ConfigOverride("core.pager", "cat"),  # git's own "no pager" (--no-pager also beats pager.<cmd>)
    ConfigOverride("diff.external", ""),
    ConfigOverride("log.showSignature", "false"),  # git log would run gpg on a signed commit
    ConfigOverride("gpg.program", ""),
    ConfigOverride("gpg.openpgp.program", ""),
    ConfigOverride("gpg.x509.program", ""),
    ConfigOverride("gpg.ssh.program", ""),
    ConfigOverride("credential.helper", ""),  # an empty value empties the list of helpers
    ConfigOverride("core.askPass", ""),
    ConfigOverride("core.sshCommand", ""),
    ConfigOverride("core.alternateRefsCommand", ""),
    ConfigOverride("protocol.allow", "never"),  # (GIT_ALLOW_PROTOCOL also beats protocol.<name>.allow)
)


@attrs.frozen
class DriverOverrides:
    """Variables of a section whose entries are named (``filter.<name>.clean``): for every
    name any config file defines, ``values`` (variable -> value) set at command scope."""
    section: str
    values: Mapping[str, str]

    def overrides(self, key: str) -> list[ConfigOverride]:
        """What to set for one listed config key (``section.name.variable``); none when
        the key is not a named entry of this section."""
        section, dot, rest = key.partition(".")
        name, dot2, _variable = rest.rpartition(".")
        if section.lower() != self.section or not dot or not dot2 or not name:
            return []
        return [ConfigOverride(f"{self.section}.{name}.{var}", value) for var, value in self.values.items()]


# Named entries that run programs. Filters: an empty clean/process runs nothing, and
# ``required`` false keeps git from failing the file for it.
NAMED_DRIVERS = (
    DriverOverrides("filter", {"clean": "", "smudge": "", "process": "", "required": "false"}),
    DriverOverrides("diff", {"command": "", "textconv": ""}),
    DriverOverrides("merge", {"driver": ""}),
    DriverOverrides("credential", {"helper": ""}),  # credential.<url>.helper
    DriverOverrides("protocol", {"allow": "never"}),  # protocol.<name>.allow beats protocol.allow
)


def git_executable() -> str | None:
    """The git program Sylk runs (the one on PATH), or None without git. Only the absolute
    folders of PATH are searched: an empty or relative entry ("", ".", "bin") names a
    folder of the working directory, which is the workspace when an editor starts Sylk,
    and a repository could ship a ``git`` there."""
    folders = [d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(d)]
    return shutil.which("git", path=os.pathsep.join(folders))


# The user's git variables that only say where their own config is and where the search
# for a repository stops: kept. Every other GIT_* variable of the user's shell (GIT_DIR,
# GIT_INDEX_FILE, a pager, an external diff, an ssh command, -c settings) is not.
USER_GIT_VARIABLES = ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_CEILING_DIRECTORIES")


def _environment(overrides: Iterable[ConfigOverride]) -> dict[str, str]:
    """git's environment: the user's, less their GIT_* variables (but USER_GIT_VARIABLES),
    plus ``overrides`` at command scope; no index lock taken from the user, C messages, no
    prompt and no transport."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in USER_GIT_VARIABLES}
    env.update(GIT_OPTIONAL_LOCKS="0", LC_ALL="C", GIT_TERMINAL_PROMPT="0",
               GIT_ALLOW_PROTOCOL="",  # an empty list of allowed transports: every fetch is refused
               GIT_NO_LAZY_FETCH="1")  # (git 2.45 and later) a partial clone fetches nothing missing
    listed = list(overrides)
    env["GIT_CONFIG_COUNT"] = str(len(listed))
    for i, o in enumerate(listed):
        env[f"GIT_CONFIG_KEY_{i}"] = o.key
        env[f"GIT_CONFIG_VALUE_{i}"] = o.value
    return env


def _start(argv: list[str], overrides: Iterable[ConfigOverride]) -> subprocess.Popen[bytes] | None:
    try:
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                env=_environment(overrides))
    except (OSError, ValueError):
        return None


def _output(proc: subprocess.Popen[bytes] | None, timeout: float) -> bytes | None:
    """What ``proc`` wrote when it succeeded within ``timeout``; None otherwise."""
    if proc is None:
        return None
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.SubprocessError:
        proc.kill()
        proc.wait()
        return None
    return out if proc.returncode == 0 else None


def _named_overrides(listing: bytes) -> list[ConfigOverride]:
    """The overrides for every named driver in ``git config --list --name-only -z``."""
    keys = listing.decode("utf-8", "surrogateescape").split("\0")
    found = {o.key: o for key in keys for rule in NAMED_DRIVERS for o in rule.overrides(key)}
    return list(found.values())


def open_git(root: Path | None, *args: str) -> subprocess.Popen[bytes] | None:
    """``git ARGS`` started in ``root`` (None: no repository, e.g. ``--version``) with
    what a repository's config can execute switched off (see the module's docstring):
    the one way Sylk starts git. Its stdout is a pipe; None without git, or when its
    config cannot be listed (then what to switch off is unknown)."""
    exe = git_executable()
    if exe is None:
        return None
    where = [] if root is None else ["-C", str(root)]
    overrides = list(NOTHING_RUNS)
    if root is not None:
        # filters and diff drivers have names: list every config key git sees here
        listing = _output(_start([exe, "--no-pager", *where, "config", "--list", "--name-only", "-z"], overrides),
                          TIMEOUT_S)
        if listing is None:
            return None
        overrides += _named_overrides(listing)
    return _start([exe, "--no-pager", *where, *args], overrides)


def run_git(root: Path | None, *args: str, timeout: float = TIMEOUT_S) -> bytes | None:
    """The output of ``git ARGS`` run in ``root`` through ``open_git``; None when git is
    missing, fails or takes longer than ``timeout`` seconds."""
    return _output(open_git(root, *args), timeout)


@attrs.frozen
class GitState:
    head: str  # the commit checked out
    prefix: str  # the workspace root relative to the repository top: "" or "sub/dir/"
    dirty: tuple[str, ...]  # workspace-relative paths git status reports, sorted
    # git cannot see into these: submodules, nested repositories (untracked folders)
    opaque: bool


def _relative(paths: list[str], prefix: str) -> list[str]:
    n = len(prefix)
    return [p[n:] for p in paths if p.startswith(prefix) and len(p) > n]


def state(root: Path) -> GitState | None:
    """The work tree's state, or None when ``root`` is not in a git repository with a
    commit (or git is missing)."""
    out = run_git(root, "rev-parse", "--show-toplevel", "--show-prefix", "HEAD")
    if out is None:
        return None
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) < 3 or len(lines[2]) < 40:
        return None
    top, prefix, head = lines[0], lines[1], lines[2].strip()
    # git never looks into a submodule's work tree (it would run git there, under the
    # submodule's own config, whose filters have names only it lists; "dirty" still shows
    # a submodule added or moved to another commit): a work tree holding one is opaque
    status = run_git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
                     "--ignore-submodules=dirty", "--", ".")
    if status is None:
        return None
    paths = [e[3:] for e in status.decode("utf-8", "surrogateescape").split("\0") if len(e) > 3]
    nested = any(p.endswith("/") for p in paths) or os.path.exists(os.path.join(top, ".gitmodules"))
    opaque = nested or _holds_submodule(root)
    if opaque is None:
        return None
    dirty = sorted({p.rstrip("/") for p in _relative(paths, prefix)})
    return GitState(head, prefix, tuple(dirty), opaque)


def _holds_submodule(root: Path) -> bool | None:
    """Whether HEAD holds a submodule (a gitlink) under ``root``, one that no .gitmodules
    names included; None when git cannot tell."""
    out = run_git(root, "ls-tree", "-r", "-d", "-z", "HEAD", "--", ".")  # -d: the folders and gitlinks only
    if out is None:
        return None
    return any(entry.startswith(b"160000 ") for entry in out.split(b"\0"))


@attrs.frozen
class GitDirs:
    """Where a work tree's git state lives: ``own`` holds its HEAD (a linked worktree's
    own folder), ``common`` the refs and packed-refs (the same folder outside worktrees)."""
    own: str
    common: str


def git_dirs(root: Path) -> GitDirs | None:
    """The git folders of the repository holding ``root``; None outside one (or without git)."""
    out = run_git(root, "rev-parse", "--absolute-git-dir", "--git-common-dir")
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
    out = run_git(root, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", old, new, "--", ".")
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
    out = run_git(root, "ls-files", "-z", "--", ".")
    if out is None:
        return None
    # ls-files prints paths relative to the current directory (the root)
    return {p for p in out.decode("utf-8", "surrogateescape").split("\0") if p}


def last_commits(root: Path, prefix: str, wanted: set[str], max_commits: int = MAX_COMMITS) -> dict[str, FileCommit]:
    """The last commit that touched each of ``wanted`` (workspace-relative paths), from one
    ``git log`` walk that stops once all are found (or after ``max_commits``)."""
    if not wanted:
        return {}
    proc = open_git(root, "log", "-z", "--no-renames", "--name-only", "--no-merges", f"--max-count={max_commits}",
                    "--format=%x01%H%x1f%an%x1f%ct", "--", ".")
    if proc is None:
        return {}
    found: dict[str, FileCommit] = {}
    left = set(wanted)
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
    out = run_git(root, "log", "-z", "--no-renames", "--name-only", f"--max-count={max_commits}",
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
    return run_git(root, "merge-base", "--is-ancestor", old, new) is not None
