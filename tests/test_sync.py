"""Start-up sync and path-limited re-indexing: the index matches the disk after changes
made by anything (git, generators, another editor), through git or a walk."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import sylk.engine.indexer as indexer_mod
import sylk.engine.planner as planner_mod
from sylk.config import Settings
from sylk.engine.workspace import Workspace

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t", *args],
                          check=True, capture_output=True, text=True).stdout


def repo(workspace: Path) -> Path:
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "init")
    return workspace


def names(ws: Workspace) -> set[str]:
    return {h.symbol.name for h in ws.search_symbols("", limit=10_000)}


def paths(ws: Workspace) -> set[str]:
    return set(ws.manifest.files())


def disk_files(ws: Workspace) -> set[str]:
    """What a fresh walk would index: the truth every sync must converge to."""
    fresh = Workspace(ws.root, Settings(index_dir=str(ws.index_dir) + "-fresh"))
    fresh.index(use_git=False)
    out = set(fresh.manifest.files())
    fresh.close()
    return out


@pytest.fixture
def counted(monkeypatch):
    """Which files the indexer parses (in this process: fixture runs are below the pool threshold)."""
    seen: list[str] = []
    real = indexer_mod.parse_file

    def parse_file(root, entry, *a, **kw):
        seen.append(entry.rel)
        return real(root, entry, *a, **kw)
    monkeypatch.setattr(indexer_mod, "parse_file", parse_file)
    return seen


def test_paths_run_sees_created_changed_deleted_and_moved(workspace: Path):
    ws = Workspace(workspace, Settings())
    ws.index()
    (workspace / "app/new_module.py").write_text("def freshly_created():\n    pass\n")
    (workspace / "app/http.py").write_text("class RewrittenPolicy:\n    pass\n")
    (workspace / "web/src/cart.js").unlink()
    (workspace / "services/geo").rename(workspace / "services/geometry")  # a folder moved: one event
    report = ws.index(paths=["app/new_module.py", "app/http.py", "web/src/cart.js", "services/geo",
                             "services/geometry"])
    assert (report.added, report.changed) == (2, 1)
    assert report.deleted == 2  # cart.js and the old services/geo/point.go
    assert {"freshly_created", "RewrittenPolicy"} <= names(ws)
    assert "HttpRetryPolicy" not in names(ws)
    assert "services/geometry/point.go" in paths(ws) and "services/geo/point.go" not in paths(ws)
    assert paths(ws) == disk_files(ws)
    ws.close()


def test_paths_run_removes_a_deleted_folder_and_ignores_ignored_paths(workspace: Path):
    ws = Workspace(workspace, Settings())
    ws.index()
    shutil.rmtree(workspace / "app")
    (workspace / "ignored_dir/more.py").write_text("def hidden_again():\n    pass\n")
    report = ws.index(paths=["app", "ignored_dir/more.py"])
    assert report.deleted == 4 and report.added == 0
    assert not any(p.startswith("app/") for p in paths(ws))
    assert "hidden_again" not in names(ws)
    ws.close()


def test_an_ignore_file_change_takes_effect(workspace: Path):
    ws = Workspace(workspace, Settings())
    ws.index()
    assert "ruby/lib/notifier.rb" in paths(ws)
    gi = workspace / ".gitignore"
    text = gi.read_text()
    gi.write_text(text + "ruby/\n!ignored_dir/\n")
    ws.index(paths=[".gitignore"])
    assert "ruby/lib/notifier.rb" not in paths(ws)
    assert "ignored_dir/secret.py" in paths(ws)
    gi.write_text(text)
    ws.index(paths=[".gitignore"])
    assert "ruby/lib/notifier.rb" in paths(ws) and "ignored_dir/secret.py" not in paths(ws)
    assert paths(ws) == disk_files(ws)
    ws.close()


def test_a_file_grown_too_large_leaves_the_index(workspace: Path):
    ws = Workspace(workspace, Settings(max_file_size=4096))
    ws.index()
    (workspace / "app/http.py").write_text("x = 1\n" * 2000)
    report = ws.index(paths=["app/http.py"])
    assert report.deleted == 1 and report.skipped["too-large"] == 1
    assert "app/http.py" not in paths(ws)
    assert ("app/http.py", "too-large") in ws.manifest.skipped()
    ws.close()


def test_binary_files_are_not_read_again_while_unchanged(workspace: Path, counted: list[str]):
    (workspace / "blob.py").write_bytes(b"\x00\x01binary" * 100)
    ws = Workspace(workspace, Settings())
    first = ws.index()
    assert first.skipped["binary"] == 1 and "blob.py" in counted
    counted.clear()
    again = ws.index(use_git=False)
    assert again.skipped["binary"] == 1 and counted == []
    (workspace / "blob.py").write_text("def no_longer_binary():\n    pass\n")
    ws.index(use_git=False)
    assert counted == ["blob.py"] and "no_longer_binary" in names(ws)
    ws.close()


@needs_git
def test_git_start_up_checks_only_what_git_reports(workspace: Path, counted: list[str]):
    root = repo(workspace)
    ws = Workspace(root, Settings())
    ws.index()
    ws.close()
    # while Sylk is not running: a commit, an edit, a new untracked file, a deletion
    (root / "app/http.py").write_text("class CommittedPolicy:\n    pass\n")
    git(root, "commit", "-qam", "change http")
    (root / "app/repository.py").write_text("def edited_not_committed():\n    pass\n")
    (root / "app/brand_new.py").write_text("def untracked_function():\n    pass\n")
    (root / "ruby/lib/notifier.rb").unlink()
    counted.clear()
    ws = Workspace(root, Settings())
    report = ws.index()
    assert sorted(counted) == ["app/brand_new.py", "app/http.py", "app/repository.py"]
    assert (report.added, report.changed, report.deleted) == (1, 2, 1)
    assert {"CommittedPolicy", "edited_not_committed", "untracked_function"} <= names(ws)
    assert "Notifier" not in names(ws)
    assert paths(ws) == disk_files(ws)
    ws.close()


@needs_git
def test_git_start_up_after_a_branch_switch_and_a_revert(workspace: Path, counted: list[str]):
    root = repo(workspace)
    git(root, "checkout", "-qb", "feature")
    (root / "app/feature.py").write_text("def feature_only():\n    pass\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "feature")
    ws = Workspace(root, Settings())
    ws.index()
    # an edit seen by the running server (a save), then reverted while it is stopped
    (root / "app/http.py").write_text("def transient_edit():\n    pass\n")
    ws.index(paths=["app/http.py"])
    assert "transient_edit" in names(ws)
    ws.close()
    git(root, "checkout", "-q", "--", "app/http.py")
    git(root, "checkout", "-q", "main")
    counted.clear()
    ws = Workspace(root, Settings())
    ws.index()
    assert sorted(counted) == ["app/http.py"]  # app/feature.py is gone: deleted, not parsed
    assert "feature_only" not in names(ws) and "transient_edit" not in names(ws)
    assert "HttpRetryPolicy" in names(ws)
    assert paths(ws) == disk_files(ws)
    ws.close()


@needs_git
def test_git_start_up_falls_back_to_a_walk_when_it_cannot_tell(workspace: Path, counted: list[str], monkeypatch):
    root = repo(workspace)
    ws = Workspace(root, Settings())
    ws.index()
    ws.close()
    (root / "app/repository.py").write_text("def changed_without_git():\n    pass\n")
    # git disappears (uninstalled, or the PATH of an editor without it): the walk finds the change
    monkeypatch.setenv("PATH", str(workspace.parent / "no-such-folder"))
    ws = Workspace(root, Settings())
    report = ws.index()
    assert report.changed == 1 and "changed_without_git" in names(ws)
    assert report.unchanged == 15  # every file was looked at
    ws.close()


@needs_git
def test_settings_change_makes_start_up_walk_the_tree(workspace: Path):
    root = repo(workspace)
    ws = Workspace(root, Settings())
    ws.index()
    ws.close()
    ws = Workspace(root, Settings(exclude=["ruby/"]))
    ws.index()
    assert "ruby/lib/notifier.rb" not in paths(ws)
    ws.close()


@needs_git
def test_a_crashed_run_means_a_walk_next_time(workspace: Path):
    root = repo(workspace)
    ws = Workspace(root, Settings())
    ws.index()
    assert ws.manifest.get_meta(planner_mod.SYNC_META)
    ws.manifest.set_meta(**{planner_mod.SYNC_META: ""})  # what a run killed mid-way leaves
    ws.close()
    (root / "app/http.py").write_text("def seen_by_the_walk():\n    pass\n")
    os.utime(root / "app/http.py", ns=(1, 1))  # even with an old mtime: a new size
    ws = Workspace(root, Settings())
    report = ws.index()
    assert report.changed == 1 and "seen_by_the_walk" in names(ws)
    ws.close()


@needs_git
def test_workspace_in_a_subfolder_of_a_repository(tmp_path: Path, workspace: Path, counted: list[str]):
    top = tmp_path / "mono"
    top.mkdir()
    shutil.move(str(workspace), top / "ws")
    (top / "other.py").write_text("def outside_the_workspace():\n    pass\n")
    repo(top)
    root = top / "ws"
    ws = Workspace(root, Settings())
    ws.index()
    ws.close()
    (top / "other.py").write_text("def still_outside():\n    pass\n")
    (root / "app/http.py").write_text("def inside_change():\n    pass\n")
    counted.clear()
    ws = Workspace(root, Settings())
    ws.index()
    assert counted == ["app/http.py"]
    assert "inside_change" in names(ws) and "still_outside" not in names(ws)
    ws.close()
