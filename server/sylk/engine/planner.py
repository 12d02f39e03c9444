"""What an index run must do: which files to parse (and their known hash), which to
delete, which stay skipped. Three ways to find out: a walk of the whole tree with a
stat() of each file against the manifest (``full``); only given files or folders (a
save, the file watcher: ``paths``); and at start-up in a git work tree, only what git
says changed since the last complete run (``from_git``, see ingest.gitsync), plus the
files re-indexed since (``note_touched`` records them before they are indexed).
"""

from __future__ import annotations

import bisect
import json
import os
import stat as stat_mod
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from ..config import Settings
from ..ingest import gitsync, scan
from ..ingest.ignore import GIT_INFO_EXCLUDE, IGNORE_FILES, IgnoreMatcher, find_git
from ..ingest.packages import PACKAGE_FILES, package_of
from ..ingest.parsing import ERROR_SKIP
from ..languages import BY_NAME, language_for_path
from ..model import is_virtual
from ..store.layout import SCHEMA_VERSION
from ..store.manifest import FileRecord, Manifest
from ..store.stores import Stores

SYNC_META = "sync_state"  # the git state at the last complete run (gitsync), JSON
MAX_TOUCHED = 5000  # past this many files re-indexed since, the next start walks the tree


@attrs.define
class Plan:
    """What an index run does: files to parse (with their known hash), to delete, skipped."""
    known: dict[str, FileRecord]
    todo: list[tuple[scan.FileEntry, str | None]] = attrs.Factory(list)
    deleted: list[str] = attrs.Factory(list)
    skipped: list[tuple] = attrs.Factory(list)  # (rel, reason[, size, mtime_ns])
    unchanged: int = 0
    full: bool = False  # the whole tree was walked
    git: gitsync.GitState | None = None  # the git state to record at the end


def _repackage(root: Path, plan: Plan) -> None:
    """Files whose package (ingest.packages) an added, changed or deleted ``go.mod``,
    ``package.json``, ``Cargo.toml`` or ``__init__.py`` changed, parsed again: those of
    its language in its folder and below whose package, found now, is not the one
    indexed (an edit that keeps the name, a docstring in an ``__init__.py``, costs a
    stat or two per file and parses nothing)."""
    moved = [rel for rel in [e.rel for e, _h in plan.todo] + plan.deleted if rel.rpartition("/")[2] in PACKAGE_FILES]
    if not moved:
        return
    queued = {e.rel for e, _h in plan.todo} | set(plan.deleted)
    for manifest in moved:
        folder, _, name = manifest.rpartition("/")
        prefix = folder + "/" if folder else ""
        languages = PACKAGE_FILES[name]
        for rel, rec in plan.known.items():
            if rel in queued or not rel.startswith(prefix) or rec.lang not in languages:
                continue
            # (Go's package clause is in the text, read only without a go.mod: then it differs)
            if package_of(str(root), rel, rec.lang, b"") == rec.package:
                continue
            plan.todo.append((scan.FileEntry(rel, rec.size, rec.mtime_ns), None))  # (no hash: parsed again)
            queued.add(rel)
            if plan.full:  # (counted unchanged by the walk)
                plan.unchanged -= 1


class Planner:
    """Plans index runs of the workspace at ``root`` against its manifest. ``settings``
    may be replaced between runs (the workspace's settings changed)."""

    def __init__(self, root: Path, stores: Stores, settings: Settings) -> None:
        self.root = root
        self.stores = stores
        self.settings = settings
        self._ignore: IgnoreMatcher | None = None

    @property
    def manifest(self) -> Manifest:
        return self.stores.manifest  # read each time: a repair may open a fresh one

    def forget_sync_state(self) -> None:
        """The next start walks the tree (a run is under way that a crash could cut short)."""
        self.manifest.set_meta(**{SYNC_META: ""})

    def settings_key(self) -> str:
        """What the git fast path must find unchanged since the last run; the languages Sylk
        knows too (a new one: the walk finds its files, indexed before as text)."""
        s = self.settings
        return json.dumps([SCHEMA_VERSION, sorted(s.exclude), s.max_file_size, sorted(s.languages), sorted(BY_NAME)])

    def matcher(self) -> IgnoreMatcher:
        if self._ignore is None:
            self._ignore = IgnoreMatcher(self.root, self.settings.exclude)
        return self._ignore

    def _info_exclude_mtime(self) -> int:
        found = find_git(str(self.root))
        if found is None:
            return 0
        try:
            return os.stat(os.path.join(found[1], "info", "exclude")).st_mtime_ns
        except OSError:
            return 0

    def full(self) -> Plan:
        # (an untrusted workspace: git never runs, settings.trusted)
        git = gitsync.state(self.root) if self.settings.trusted and find_git(str(self.root)) is not None else None
        self._ignore = None  # ignore files are read afresh
        result = scan.scan_workspace(self.root, exclude=self.settings.exclude,
                                     max_file_size=self.settings.max_file_size, matcher=self.matcher())
        plan = self._compare(result.files, self.manifest.files())
        on_disk = {f.rel for f in result.files}
        # virtual documents (documents.py) live in the manifest, not on disk
        plan.deleted = [p for p in plan.known if p not in on_disk and not is_virtual(p)]
        plan.skipped = [(s.rel, s.reason) for s in result.skipped] + plan.skipped
        plan.full, plan.git = True, git
        _repackage(self.root, plan)
        return plan

    def _compare(self, files: Iterable[scan.FileEntry], known: dict[str, FileRecord]) -> Plan:
        """Files whose size or mtime differ from the manifest's (or that are new) are to do;
        files skipped for their content last time and unchanged stay skipped unread."""
        plan = Plan(known=known)
        skip_stats = self.manifest.skipped_stats()
        for f in files:
            rec = known.get(f.rel)
            if rec is not None and rec.size == f.size and rec.mtime_ns == f.mtime_ns:
                if rec.lang == language_for_path(f.rel):
                    plan.unchanged += 1
                    continue
                # a language Sylk did not know when the file was indexed (an older Sylk): parsed
                # again, its content the same (no hash)
                plan.todo.append((f, None))
                continue
            if rec is None:
                was = skip_stats.get(f.rel)
                if was is not None and was[:2] == (f.size, f.mtime_ns):
                    plan.skipped.append((f.rel, was[2], f.size, f.mtime_ns))
                    continue
            plan.todo.append((f, rec.hash if rec is not None else None))
        return plan

    def from_git(self) -> Plan | None:
        """The start-up fast path (see gitsync), or None to walk the tree (always in an
        untrusted workspace: git never runs there)."""
        raw = self.manifest.get_meta(SYNC_META)
        if not raw or not self.settings.trusted:
            return None
        try:
            saved = json.loads(raw)
            old_head, old_dirty, touched = saved["head"], saved["dirty"], saved["touched"]
            if saved["settings"] != self.settings_key() or saved["info_exclude"] != self._info_exclude_mtime():
                return None
        except (ValueError, KeyError, TypeError):
            return None
        git = gitsync.state(self.root)
        if git is None or git.opaque or git.prefix != saved.get("prefix"):
            return None
        committed = gitsync.changed_between(self.root, old_head, git.head, git.prefix)
        if committed is None:
            return None
        # and the files a run could not parse (a parser process failed): they are tried again
        failed = {rel for rel, reason in self.manifest.skipped() if reason.startswith(ERROR_SKIP)}
        candidates = set(committed) | set(git.dirty) | set(old_dirty) | set(touched) | failed
        plan = self.paths(sorted(candidates))
        if plan.full:  # an ignore file changed: the walk was done instead
            return plan
        plan.git = git
        # the rest is as the last run left it
        plan.unchanged = len(plan.known) - len(plan.deleted) - sum(1 for e, _h in plan.todo if e.rel in plan.known)
        return plan

    def paths(self, rels: Sequence[str]) -> Plan:
        """The plan for these root-relative files or folders only (added, changed, deleted,
        newly ignored); the whole tree when one of them is an ignore file."""
        norm = sorted({r.strip("/") for r in rels if r.strip("/") not in ("", ".")
                       and not is_virtual(r)})
        if any(r.rpartition("/")[2] in IGNORE_FILES or r == GIT_INFO_EXCLUDE for r in norm):
            return self.full()
        known = self.manifest.files()
        known_sorted = sorted(known)
        matcher, max_size = self.matcher(), self.settings.max_file_size
        real_root = os.path.realpath(self.root)
        entries: dict[str, scan.FileEntry] = {}
        skipped: list[tuple] = []
        gone: set[str] = set()

        def under(rel: str) -> list[str]:
            lo = bisect.bisect_left(known_sorted, rel + "/")
            hi = bisect.bisect_left(known_sorted, rel + "0")  # "0" follows "/"
            return known_sorted[lo:hi]

        done_dirs: list[str] = []
        for rel in norm:
            if any(rel.startswith(d + "/") for d in done_dirs):
                continue
            path = self.root / rel
            try:
                st = path.stat()
            except OSError:
                st = None
            is_dir = st is not None and stat_mod.S_ISDIR(st.st_mode)
            if st is None or matcher.ignored(rel, is_dir):
                gone.add(rel)
                gone.update(under(rel))
                continue
            if path.is_symlink():
                target = os.path.realpath(path)
                if not target.startswith(real_root + os.sep):
                    skipped.append((rel, "symlink-outside"))
                    gone.add(rel)
                    continue
            if is_dir:
                done_dirs.append(rel)
                result = scan.scan_workspace(self.root, exclude=self.settings.exclude, max_file_size=max_size,
                                             start=rel, matcher=matcher)
                present = {f.rel for f in result.files}
                for f in result.files:
                    entries[f.rel] = f
                skipped.extend((s.rel, s.reason) for s in result.skipped)
                gone.update(p for p in under(rel) if p not in present)
            elif stat_mod.S_ISREG(st.st_mode):
                if st.st_size > max_size:
                    skipped.append((rel, "too-large"))
                    gone.add(rel)
                else:
                    entries[rel] = scan.FileEntry(rel, st.st_size, st.st_mtime_ns)
            else:
                skipped.append((rel, "special-file"))
                gone.add(rel)
        plan = self._compare(entries.values(), known)
        plan.deleted = sorted(p for p in gone if p in known and p not in entries)
        plan.skipped = skipped + plan.skipped
        _repackage(self.root, plan)
        return plan

    def save_sync_state(self, git: gitsync.GitState | None) -> None:
        if git is None:
            self.manifest.set_meta(**{SYNC_META: ""})
            return
        self.manifest.set_meta(**{SYNC_META: json.dumps({
            "head": git.head, "prefix": git.prefix, "dirty": list(git.dirty), "touched": [],
            "settings": self.settings_key(), "info_exclude": self._info_exclude_mtime()})})

    def note_touched(self, rels: Iterable[str]) -> None:
        """Record paths about to be re-indexed outside a full run, before they are: the git
        fast path must look at them again at the next start (an edit reverted while Sylk
        was not running is not in git's diff or status)."""
        raw = self.manifest.get_meta(SYNC_META)
        if not raw:
            return
        try:
            saved = json.loads(raw)
            touched = set(saved["touched"]) | set(rels)
        except (ValueError, KeyError, TypeError):
            self.manifest.set_meta(**{SYNC_META: ""})
            return
        if len(touched) > MAX_TOUCHED:  # cheaper to walk the tree next time
            self.manifest.set_meta(**{SYNC_META: ""})
            return
        saved["touched"] = sorted(touched)
        self.manifest.set_meta(**{SYNC_META: json.dumps(saved)})
