"""Workspace discovery (ignore rules, limits, symlinks, special files) and
safe file loading, on small trees built in tmp_path."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import TIMEOUT
from sylk.ingest import ignore, scan
from sylk.ingest.ignore import IgnoreMatcher
from sylk.ingest.scan import (
    BINARY_SNIFF,
    ScanResult,
    SkipFile,
    content_hash,
    load_source,
    scan_workspace,
)

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_symlinks = pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")


def make_tree(root: Path, spec: dict[str, str | bytes]) -> Path:
    """Create files from {"rel/path": content}; a key ending in "/" is an empty dir."""
    for rel, content in spec.items():
        path = root / rel
        if rel.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def rels(result: ScanResult) -> list[str]:
    return [f.rel for f in result.files]


def skipped(result: ScanResult) -> dict[str, str]:
    return {s.rel: s.reason for s in result.skipped}


# ---------------------------------------------------------------------------
# ignore rules


def test_nested_gitignore_negation_anchored_and_dir_only(tmp_path: Path) -> None:
    make_tree(tmp_path, {
        ".gitignore": "*.log\n!important.log\n/top.txt\nlogs/\ngen/**\n!gen/keep.py\n",
        "app.py": "",
        "top.txt": "",  # anchored: only at the root
        "other/top.txt": "",
        "debug.log": "",
        "important.log": "",
        "logs/a.txt": "",  # dir-only pattern: the directory is ignored
        "pkg/logs": "a file named logs is not a directory",
        "gen/x.py": "",
        "gen/keep.py": "",
        "pkg/.gitignore": "*.txt\n!keep.txt\n/local.py\nsub/deep.py\n",
        "pkg/keep.txt": "",
        "pkg/other.txt": "",
        "pkg/local.py": "",  # anchored to pkg/
        "pkg/inner/local.py": "",
        "pkg/sub/deep.py": "",  # slash in the middle: relative to pkg/
        "pkg/inner/sub/deep.py": "",
        "pkg/inner/.gitignore": "!*.log\n!other.txt\n",  # deeper file overrides
        "pkg/inner/trace.log": "",
        "pkg/inner/other.txt": "",
        "pkg/inner/more.txt": "",
    })
    result = scan_workspace(tmp_path)
    assert rels(result) == [
        ".gitignore",
        "app.py",
        "gen/keep.py",
        "important.log",
        "other/top.txt",
        "pkg/.gitignore",
        "pkg/inner/.gitignore",
        "pkg/inner/local.py",
        "pkg/inner/other.txt",
        "pkg/inner/sub/deep.py",
        "pkg/inner/trace.log",
        "pkg/keep.txt",
        "pkg/logs",
    ]
    assert result.skipped == []  # ignored paths are silent


def test_excluded_directory_cannot_be_reincluded(tmp_path: Path) -> None:
    make_tree(tmp_path, {
        ".gitignore": "out/\n!out/keep.py\nlib/*\n!lib/keep.py\n",
        "out/keep.py": "",
        "lib/keep.py": "",
        "lib/drop.py": "",
    })
    assert rels(scan_workspace(tmp_path)) == [".gitignore", "lib/keep.py"]


def test_git_info_exclude_and_sylkignore(tmp_path: Path) -> None:
    make_tree(tmp_path, {
        ".git/info/exclude": "secret.py\n",
        ".git/HEAD": "ref: refs/heads/main\n",
        ".gitignore": "*.gen.py\n",
        ".sylkignore": "fixtures/\n!wanted.gen.py\n",  # beats .gitignore beside it
        "main.py": "",
        "secret.py": "",
        "a.gen.py": "",
        "wanted.gen.py": "",
        "fixtures/big.json": "",
        "sub/.sylkignore": "*.md\n",
        "sub/notes.md": "",
        "sub/code.py": "",
        "readme.md": "",
    })
    assert rels(scan_workspace(tmp_path)) == [
        ".gitignore", ".sylkignore", "main.py", "readme.md", "sub/.sylkignore", "sub/code.py", "wanted.gen.py",
    ]


def test_gitignore_overrides_info_exclude(tmp_path: Path) -> None:
    make_tree(tmp_path, {".git/info/exclude": "*.py\n", ".gitignore": "!keep.py\n", "keep.py": "", "drop.py": ""})
    assert rels(scan_workspace(tmp_path)) == [".gitignore", "keep.py"]


def test_default_excludes(tmp_path: Path) -> None:
    make_tree(tmp_path, {
        "src/app.py": "",
        ".git/config": "",
        "sub/.git": "gitdir: ../.git/modules/sub\n",  # a submodule's .git file
        "node_modules/left-pad/index.js": "",
        "web/node_modules/x/index.js": "",
        "src/__pycache__/app.cpython-311.pyc": "",
        "stray.pyc": "",
        "venv/lib/site.py": "",
        ".venv/lib/site.py": "",
        "env/pyvenv.cfg": "home = /usr/bin\n",  # any dir holding pyvenv.cfg
        "env/lib/site.py": "",
        "tools/env/script.py": "",  # an env/ that is no virtualenv stays
        "dist/app.tar.gz": "",
        "package-lock.json": "{}",
        "static/app.min.js": "",
        ".DS_Store": "",
        ".sylk/index.db": "",
        ".vscode/settings.json": "{}",
    })
    result = scan_workspace(tmp_path)
    assert rels(result) == [".vscode/settings.json", "src/app.py", "tools/env/script.py"]
    assert result.skipped == []


def test_gitignore_can_reinclude_a_default_but_never_dot_git(tmp_path: Path) -> None:
    make_tree(tmp_path, {
        ".gitignore": "!build/\n!*/\n!.git\n",
        "build/gen.py": "",
        ".git/config": "",
        ".sylk/index.db": "",
    })
    assert rels(scan_workspace(tmp_path)) == [".gitignore", "build/gen.py"]


def test_user_exclude_globs_win(tmp_path: Path) -> None:
    make_tree(tmp_path, {
        ".gitignore": "!*.snap\n",
        "src/a.py": "",
        "src/a_test.py": "",
        "docs/x.md": "",
        "tests/docs/y.md": "",
        "a.snap": "",
        "vendor/lib.py": "",
        "node_modules/m/index.js": "",
    })
    result = scan_workspace(tmp_path, exclude=["*_test.py", "/docs/", "*.snap", "vendor", "!node_modules/"])
    assert rels(result) == [".gitignore", "node_modules/m/index.js", "src/a.py", "tests/docs/y.md"]


@pytest.mark.parametrize(
    ("rel", "is_dir", "expected"),
    [
        pytest.param("src/app.py", False, False, id="plain-file"),
        pytest.param("build", True, True, id="default-dir"),
        pytest.param("build", False, False, id="file-named-like-dir-only-pattern"),
        pytest.param("build/x.py", False, True, id="under-ignored-dir"),
        pytest.param("a/node_modules/m/i.js", False, True, id="nested-default"),
        pytest.param("debug.log", False, True, id="root-gitignore"),
        pytest.param("pkg/keep.log", False, False, id="nested-negation"),
        pytest.param("pkg/other.log", False, True, id="nested-inherits"),
        pytest.param("pkg/gen", True, True, id="nested-anchored-dir"),
        pytest.param("gen", True, False, id="anchored-elsewhere"),
        pytest.param("pkg/gen/keep.py", False, True, id="no-reinclude-under-ignored-dir"),
        pytest.param("notes.tmp", False, True, id="sylkignore"),
        pytest.param("private.py", False, True, id="info-exclude"),
        pytest.param("x_test.py", False, True, id="user-exclude"),
        pytest.param(".git", True, True, id="dot-git"),
        pytest.param(".git/config", False, True, id="in-dot-git"),
        pytest.param("env/lib/site.py", False, True, id="in-virtualenv"),
        pytest.param("./src/app.py", False, False, id="dot-slash"),
        pytest.param("", True, False, id="root"),
    ],
)
def test_ignore_matcher_single_paths(tmp_path: Path, rel: str, is_dir: bool, expected: bool) -> None:
    make_tree(tmp_path, {
        ".gitignore": "*.log\n",
        ".sylkignore": "*.tmp\n",
        ".git/info/exclude": "private.py\n",
        "pkg/.gitignore": "!keep.log\n/gen/\n!gen/keep.py\n",
        "env/pyvenv.cfg": "",
    })
    matcher = IgnoreMatcher(tmp_path, exclude=["*_test.py"])
    assert matcher.ignored(rel, is_dir) is expected


def test_ignore_matcher_reads_each_ignore_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path, {".gitignore": "*.log\n", "a/.gitignore": "*.txt\n"})
    matcher = IgnoreMatcher(tmp_path)
    reads: list[str] = []
    real_read = ignore._read_ignore_file
    monkeypatch.setattr(ignore, "_read_ignore_file", lambda path, **kw: reads.append(path) or real_read(path, **kw))
    assert matcher.ignored("a/b/x.txt", False)
    assert matcher.ignored("a/b/y.log", False)
    assert not matcher.ignored("a/b/z.py", False)
    assert sorted(os.path.relpath(p, tmp_path) for p in reads) == sorted([
        ".gitignore", ".sylkignore", os.path.join("a", ".gitignore"), os.path.join("a", ".sylkignore"),
        os.path.join("a", "b", ".gitignore"), os.path.join("a", "b", ".sylkignore"),
    ])


def test_workspace_inside_a_repository_uses_parent_gitignore(tmp_path: Path) -> None:
    make_tree(tmp_path, {
        ".git/info/exclude": "/server/local.py\n",
        ".gitignore": "*.log\n/server/gen/\n",
        "server/app.py": "",
        "server/debug.log": "",
        "server/local.py": "",
        "server/gen/x.py": "",
    })
    assert rels(scan_workspace(tmp_path / "server")) == ["app.py"]


# ---------------------------------------------------------------------------
# limits and special entries


def test_size_limit(tmp_path: Path) -> None:
    make_tree(tmp_path, {"small.py": "x" * 100, "exact.py": "x" * 1000, "big.py": "x" * 1001})
    result = scan_workspace(tmp_path, max_file_size=1000)
    assert rels(result) == ["exact.py", "small.py"]
    assert skipped(result) == {"big.py": "too-large"}
    assert {f.rel: f.size for f in result.files} == {"exact.py": 1000, "small.py": 100}


def test_file_entry_carries_size_and_mtime(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": "print(1)\n"})
    os.utime(tmp_path / "a.py", ns=(1_600_000_000_000_000_000, 1_600_000_000_123_456_789))
    (entry,) = scan_workspace(tmp_path).files
    assert (entry.rel, entry.size, entry.mtime_ns) == ("a.py", 9, 1_600_000_000_123_456_789)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_is_skipped_without_blocking(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": ""})
    os.mkfifo(tmp_path / "pipe")
    done: list[ScanResult] = []
    worker = threading.Thread(target=lambda: done.append(scan_workspace(tmp_path)), daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert done, "scan_workspace blocked on a FIFO"
    assert rels(done[0]) == ["a.py"]
    assert skipped(done[0]) == {"pipe": "special-file"}
    with pytest.raises(SkipFile) as err:  # load_source must not block either
        load_source(tmp_path / "pipe")
    assert err.value.reason == "special-file"


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no unix sockets here")
def test_socket_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    if len(os.fsencode(path)) > 100:
        pytest.skip("tmp path too long for a unix socket")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(os.fspath(path))
        assert skipped(scan_workspace(tmp_path)) == {"s.sock": "special-file"}


def test_unreadable_directory_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Runs as root too (chmod cannot lock root out): os.scandir fails instead.
    make_tree(tmp_path, {"ok/a.py": "", "locked/b.py": ""})
    real_scandir = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if os.path.basename(path) == "locked":
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(scan.os, "scandir", scandir)
    result = scan_workspace(tmp_path)
    assert rels(result) == ["ok/a.py"]
    assert skipped(result) == {"locked": "unreadable"}


# What the chmod 000 test runs, in a process of its own: root reads a chmod 000 file anyway
# (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), so as root the child starts without those two
# capabilities and meets the permission errors a user meets.
CHMOD_PROBE = """
import json, sys
from pathlib import Path
from sylk.ingest.scan import SkipFile, load_source, scan_workspace
root = Path(sys.argv[1])
result = scan_workspace(root)
try:
    load_source(root / "secret.py")
    refused = None
except SkipFile as err:
    refused = err.reason
print(json.dumps({"files": [f.rel for f in result.files],
                  "skipped": {s.rel: s.reason for s in result.skipped}, "refused": refused}))
"""


def _drop_root_read_override() -> None:
    """In the child before exec: take CAP_DAC_OVERRIDE (1) and CAP_DAC_READ_SEARCH (2) out of
    its bounding set (prctl PR_CAPBSET_DROP), so the program it runs cannot have them."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):
        if libc.prctl(24, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), f"prctl(PR_CAPBSET_DROP, {cap})")


@pytest.mark.skipif(sys.platform == "win32", reason="chmod 000 does not lock a file on Windows")
def test_chmod_000_directory_and_file(tmp_path: Path) -> None:
    make_tree(tmp_path, {"ok.py": "", "locked/b.py": "", "secret.py": "x"})
    os.chmod(tmp_path / "locked", 0)
    os.chmod(tmp_path / "secret.py", 0)
    try:
        probe = subprocess.run([sys.executable, "-c", CHMOD_PROBE, str(tmp_path)], capture_output=True, text=True,
                               timeout=TIMEOUT, preexec_fn=_drop_root_read_override if IS_ROOT else None)
    finally:
        os.chmod(tmp_path / "locked", 0o755)
        os.chmod(tmp_path / "secret.py", 0o644)
    assert probe.returncode == 0, probe.stderr
    seen = json.loads(probe.stdout)
    # scan does not open files: secret.py is listed, load_source refuses it
    assert seen == {"files": ["ok.py", "secret.py"], "skipped": {"locked": "unreadable"}, "refused": "unreadable"}


def test_missing_root_is_reported_not_raised(tmp_path: Path) -> None:
    result = scan_workspace(tmp_path / "nope")
    assert result.files == []
    assert skipped(result) == {".": "unreadable"}


# ---------------------------------------------------------------------------
# symlinks


@needs_symlinks
def test_symlink_loop_to_parent_finishes_and_is_reported(tmp_path: Path) -> None:
    make_tree(tmp_path, {"pkg/a.py": "", "pkg/sub/b.py": ""})
    (tmp_path / "pkg" / "sub" / "up").symlink_to("..", target_is_directory=True)
    (tmp_path / "root_link").symlink_to(tmp_path, target_is_directory=True)
    result = scan_workspace(tmp_path)
    assert rels(result) == ["pkg/a.py", "pkg/sub/b.py"]
    assert skipped(result) == {"pkg/sub/up": "symlink-loop", "root_link": "symlink-loop"}


@needs_symlinks
def test_self_referencing_symlink_chain(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    result = scan_workspace(tmp_path)
    assert result.files == []
    assert skipped(result) == {"a": "symlink-loop", "b": "symlink-loop"}


@needs_symlinks
def test_symlinks_outside_the_workspace_are_not_followed(tmp_path: Path) -> None:
    outside = make_tree(tmp_path / "outside", {"secret.py": "", "lib/mod.py": ""})
    ws = make_tree(tmp_path / "ws", {"main.py": ""})
    (ws / "lib").symlink_to(outside / "lib", target_is_directory=True)
    (ws / "secret.py").symlink_to(outside / "secret.py")
    result = scan_workspace(ws)
    assert rels(result) == ["main.py"]
    assert skipped(result) == {"lib": "symlink-outside", "secret.py": "symlink-outside"}


@needs_symlinks
def test_symlinks_inside_the_workspace(tmp_path: Path) -> None:
    make_tree(tmp_path, {
        "src/app.py": "x = 1\n",
        ".gitignore": "generated/\n",
        "generated/api/client.py": "",
    })
    (tmp_path / "app_link.py").symlink_to("src/app.py")  # a file: listed under its link path
    (tmp_path / "api").symlink_to("generated/api", target_is_directory=True)  # target ignored, link not
    (tmp_path / "src_again").symlink_to("src", target_is_directory=True)  # would duplicate src/
    result = scan_workspace(tmp_path)
    assert rels(result) == [".gitignore", "api/client.py", "app_link.py", "src/app.py"]
    assert skipped(result) == {"src_again": "symlink-loop"}
    assert {f.rel: f.size for f in result.files}["app_link.py"] == 6


@needs_symlinks
def test_broken_symlink_is_unreadable(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": ""})
    (tmp_path / "dangling.py").symlink_to("does-not-exist.py")
    result = scan_workspace(tmp_path)
    assert rels(result) == ["a.py"]
    assert skipped(result) == {"dangling.py": "unreadable"}


@needs_symlinks
def test_ignored_symlinks_are_silent(tmp_path: Path) -> None:
    make_tree(tmp_path, {".gitignore": "links/\n", "a.py": ""})
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "out").symlink_to("/", target_is_directory=True)
    result = scan_workspace(tmp_path)
    assert rels(result) == [".gitignore", "a.py"]
    assert result.skipped == []


# ---------------------------------------------------------------------------
# load_source


def test_load_source_plain_utf8(tmp_path: Path) -> None:
    raw = "def héllo():\n    return '🦀'\n".encode()
    (tmp_path / "a.py").write_bytes(raw)
    src = load_source(tmp_path / "a.py")
    assert src.text == "def héllo():\n    return '🦀'\n"
    assert src.data == raw
    assert src.replaced is False
    assert src.content_hash == content_hash(raw) and len(src.content_hash) == 32


def test_load_source_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    raw = b"name = 'caf\xe9'\nok = 1\n"  # latin-1 byte
    (tmp_path / "a.py").write_bytes(raw)
    src = load_source(tmp_path / "a.py")
    assert src.text == "name = 'caf\ufffd'\nok = 1\n"
    assert src.data == src.text.encode("utf-8")
    assert src.replaced is True
    assert src.content_hash == content_hash(raw)


def test_load_source_strips_bom_but_hashes_raw_bytes(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbfx = 1\n"
    (tmp_path / "a.py").write_bytes(raw)
    src = load_source(tmp_path / "a.py")
    assert (src.text, src.data, src.replaced) == ("x = 1\n", b"x = 1\n", False)
    assert src.content_hash == content_hash(raw) != content_hash(b"x = 1\n")


def test_load_source_binary(tmp_path: Path) -> None:
    (tmp_path / "blob.py").write_bytes(b"abc\x00def")
    (tmp_path / "late_nul.txt").write_bytes(b"a" * BINARY_SNIFF + b"\x00")
    with pytest.raises(SkipFile) as err:
        load_source(tmp_path / "blob.py")
    assert err.value.reason == "binary"
    # a NUL past the sniff window is text (with a NUL in it)
    assert load_source(tmp_path / "late_nul.txt").text.endswith("\x00")


def test_load_source_too_large_and_unreadable(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("x" * 101)
    (tmp_path / "dir.py").mkdir()
    for path, limit, reason in [
        (tmp_path / "big.py", 100, "too-large"),
        (tmp_path / "missing.py", 100, "unreadable"),
        (tmp_path / "dir.py", 100, "unreadable"),
    ]:
        with pytest.raises(SkipFile) as err:
            load_source(path, max_file_size=limit)
        assert err.value.reason == reason
    assert load_source(tmp_path / "big.py", max_file_size=101).text == "x" * 101


def test_load_source_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_bytes(b"")
    src = load_source(tmp_path / "empty.py")
    assert (src.data, src.text, src.replaced) == (b"", "", False)


# ---------------------------------------------------------------------------
# against git itself


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_agrees_with_git(tmp_path: Path) -> None:
    make_tree(tmp_path, {
        ".gitignore": "*.log\n!important.log\n/top.txt\nlogs/\ndocs/**/z.md\nfoo/**\n!foo/keep\n*.tmp\n!*/\n",
        "a/.gitignore": "c/\n!c/\n*.md\n!/README.md\n",
        "a/b/.gitignore": "x.py\n",
        "top.txt": "", "a/top.txt": "", "x.log": "", "important.log": "", "logs/important.log": "",
        "a/b/c/f.py": "", "a/b/x.py": "", "a/x.py": "", "a/README.md": "", "a/b/README.md": "",
        "docs/x/y/z.md": "", "docs/z.md": "", "foo/keep": "", "foo/other": "", "foo/bar/keep": "",
        "sub/deep/top.txt": "", "sub/a.tmp": "", "a/b/c/x.py": "",
    })
    subprocess.run(["git", "init", "-q", os.fspath(tmp_path)], check=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("sub/deep/\n")
    git = subprocess.run(
        ["git", "-c", "core.excludesFile=/dev/null", "ls-files", "--others", "--exclude-standard"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    ).stdout.split()
    assert rels(scan_workspace(tmp_path)) == sorted(git)
