"""git is run safely in a stranger's repository (issue 29 item 2).

A downloaded repository controls its ``.git/config``, its ``.gitattributes`` and its
submodules' config. The repository built here names a program for everything git can
be made to run while Sylk reads it: an fsmonitor hook, hooks for every hook name, clean,
smudge and process filters over files modified in the work tree, a pager, external diff
and textconv drivers, a merge driver, credential helpers, ssh, askpass, gpg (with a
signed commit and ``log.showSignature``), and a submodule whose own config names
another fsmonitor, hooks and filter. Each program writes a marker in a folder outside
the workspace. Sylk runs over it through the CLI, the language server over stdio and
MCP, each started inside the workspace: no marker may appear, and git's features
(author filters, commit search) still answer, so git did run. A partial clone whose
promisor remote is an ``ext::`` command shows that git fetches nothing either.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import attrs
import pytest
from conftest import (
    TIMEOUT,
    eventually,
    git_commit,
    mcp_call,
    mcp_indexed,
    mcp_session,
    mcp_wait_until,
    run_sylk,
    start_lsp,
    wait_for_progress_end,
    without_embedding,
    write_tree,
)
from sylk.ingest import gitsync

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

SERVER = Path(gitsync.__file__).resolve().parents[1]  # server/sylk

# every hook git knows (githooks(5)); the ones a status, diff or log could reach are
# post-index-change, reference-transaction and fsmonitor-watchman, but all are there
HOOKS = ("applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
         "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge",
         "pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update",
         "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate",
         "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit",
         "post-index-change")

BOB = "Bob Stone"  # the author of the last (signed) commit, and of ledger.py's last change


def marker_program(path: Path, marker: Path, body: str = "") -> str:
    """``path`` made an executable that writes ``marker`` (then runs ``body``); its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(marker))}\n{body}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def git(root: Path, *args: str, **kw: Any) -> str:
    """A git command of the test itself (not Sylk's), in ``root``."""
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          timeout=TIMEOUT, **kw).stdout


def sign_head(root: Path) -> str:
    """HEAD rewritten as a commit with a (bogus) PGP signature: ``git log`` with
    ``log.showSignature`` hands it to gpg.program. Returns the new sha."""
    text = git(root, "cat-file", "commit", "HEAD")
    header, _, message = text.partition("\n\n")
    signature = ("gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEEbogus\n"
                 " -----END PGP SIGNATURE-----")
    signed = f"{header}\n{signature}\n\n{message}"
    sha = git(root, "hash-object", "-t", "commit", "-w", "--stdin", input=signed).strip()
    git(root, "update-ref", "HEAD", sha)
    return sha


def set_config(root: Path, values: dict[str, str]) -> None:
    for key, value in values.items():
        git(root, "config", key, value)


def hostile_config(bin_dir: Path, markers: Path, hooks: Path) -> dict[str, str]:
    """Config naming a marker program (in ``bin_dir``, writing ``markers/NAME``) for
    everything git can run; hooks are in ``hooks``."""
    def prog(name: str, body: str = "") -> str:
        return marker_program(bin_dir / name, markers / name, body)

    return {
        "core.fsmonitor": prog("fsmonitor"),
        "core.hooksPath": str(hooks),
        "filter.evil.clean": prog("filter-clean", "cat"),
        "filter.evil.smudge": prog("filter-smudge", "cat"),
        "filter.evil.required": "true",
        "filter.Proc.v2.process": prog("filter-process", "exec cat"),  # a name with a dot and capitals
        "filter.Proc.v2.required": "false",  # (its handshake fails: git goes on, into the submodule)
        "diff.evil.textconv": prog("textconv", 'cat "$1"'),
        "diff.evil.command": prog("diff-command"),
        "diff.external": prog("diff-external"),
        "merge.evil.driver": prog("merge-driver"),
        "core.pager": prog("pager", "cat"),
        "pager.status": prog("pager-status", "cat"),
        "pager.log": prog("pager-log", "cat"),
        "credential.helper": "!" + prog("credential-helper"),
        "credential.https://example.com.helper": "!" + prog("credential-url-helper"),
        "core.sshCommand": prog("ssh-command"),
        "core.askPass": prog("askpass"),
        "core.alternateRefsCommand": prog("alternate-refs"),
        "log.showSignature": "true",
        "gpg.program": prog("gpg"),
        "gpg.ssh.program": prog("gpg-ssh"),
        "gpg.x509.program": prog("gpg-x509"),
        "status.submoduleSummary": "true",
        "diff.submodule": "diff",
    }


@attrs.frozen
class Hostile:
    """A repository configured to run marker programs, and where they write."""
    root: Path
    markers: Path  # outside the repository; empty until something ran


def hostile_repository(tmp_path: Path, *, hostile_top: bool = True) -> Hostile:
    """A committed repository (``tmp_path/repo``) with a submodule (``vendor/lib``), both
    configured to run marker programs (the submodule only, without ``hostile_top``), and
    work-tree files changed under the filters."""
    root, markers, bin_dir = tmp_path / "repo", tmp_path / "markers", tmp_path / "bin"
    markers.mkdir()
    # the submodule's origin
    origin = write_tree(tmp_path / "lib-origin", {
        "parse.py": "def parse_invoice_line(text):\n    return text.split(',')\n",
        ".gitattributes": "parse.py filter=subevil\n",
    })
    git(origin, "init", "-q")
    git_commit(origin, "Lib Author", "the parser")

    write_tree(root, {
        "ledger.py": "def settle_ledger_balance(entries):\n    return sum(e.amount for e in entries)  # v1\n",
        "notes.md": "# Ledger notes\n\nReconcile the quarterly ledger before closing. v1\n",
        "billing/invoice.py": "def render_invoice_total(invoice):\n    return invoice.total\n",
        ".gitattributes": "ledger.py filter=evil diff=evil merge=evil\nnotes.md filter=Proc.v2 diff=evil\n"
                          "*.py diff=evil\n",
    })
    without_embedding(root)
    git(root, "init", "-q")
    git_commit(root, "Ann Lee", "initial import")
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(origin), "vendor/lib")
    git_commit(root, "Ann Lee", "vendor the parser")
    (root / "ledger.py").write_text(
        "def settle_ledger_balance(entries):\n    return sum(e.amount for e in entries)  # v2\n")
    git_commit(root, BOB, "settle the ledger with signed amounts", "ledger.py")
    sign_head(root)

    # now hostile: hooks in both places git looks, config for both repositories
    hooks = tmp_path / "hooks"
    for name in HOOKS:
        marker_program(hooks / name, markers / f"hook-{name}")
        marker_program(root / ".git" / "hooks" / name, markers / f"default-hook-{name}")
    if hostile_top:
        set_config(root, hostile_config(bin_dir, markers, hooks))
    sub = root / "vendor" / "lib"
    set_config(sub, {"core.fsmonitor": marker_program(bin_dir / "sub-fsmonitor", markers / "sub-fsmonitor"),
                     "core.hooksPath": str(hooks),
                     "filter.subevil.clean": marker_program(bin_dir / "sub-filter-clean", markers / "sub-filter-clean",
                                                            "cat"),
                     "filter.subevil.required": "true"})
    # changed in the work tree, same sizes: git status must run them through the filters
    for path in (root / "ledger.py", root / "notes.md", sub / "parse.py"):
        path.write_text(path.read_text().replace("v2", "v3").replace("v1", "v2").replace("','", "';'"))
    assert fired(markers) == []
    return Hostile(root, markers)


def fired(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


@pytest.fixture
def hostile(tmp_path: Path) -> Hostile:
    return hostile_repository(tmp_path)


def plain_git_env() -> dict[str, str]:
    """The environment Sylk gave git before this fix."""
    return {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}


def test_the_repository_is_hostile_to_plain_git(hostile: Hostile):
    """The fixture bites: the commands Sylk runs, run plainly, start the repository's programs."""
    root, markers = hostile.root, hostile.markers
    subprocess.run(["git", "-C", str(root), "status", "--porcelain=v1", "-z", "--untracked-files=all",
                    "--no-renames", "--ignore-submodules=none", "--", "."], capture_output=True,
                   env=plain_git_env(), timeout=TIMEOUT)
    subprocess.run(["git", "-C", str(root), "log", "-z", "--name-only", "--format=%H%x1f%an", "--", "."],
                   capture_output=True, env=plain_git_env(), timeout=TIMEOUT)
    assert {"fsmonitor", "filter-clean", "gpg", "sub-fsmonitor", "sub-filter-clean"} <= set(fired(markers))


# -- end to end: each front end started inside the workspace --

def test_cli_index_search_and_status_run_nothing_the_repository_names(hostile: Hostile,
                                                                    _isolated_index: Path):
    root, markers = hostile.root, hostile.markers
    r = run_sylk("index", "--no-embed", ".", cache=_isolated_index, cwd=root)
    assert r.returncode == 0, r.stderr
    assert fired(markers) == []
    found = run_sylk("search", "--mode", "lexical", "--author", BOB, "--format", "json", "settle ledger balance",
                     ".", cache=_isolated_index, cwd=root)
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert hits and {h["path"] for h in hits} == {"ledger.py"}  # Bob's change, read from git log
    commits = run_sylk("search", "--mode", "lexical", "--type", "git_commit", "--format", "json",
                       "signed amounts", ".", cache=_isolated_index, cwd=root)
    assert commits.returncode == 0, commits.stderr
    top = json.loads(commits.stdout)["hits"][0]
    assert (top["type"], top["author"]) == ("git_commit", BOB)
    st = run_sylk("status", "--format", "json", ".", cache=_isolated_index, cwd=root)
    assert st.returncode == 0, st.stderr
    assert fired(markers) == []


async def test_the_language_server_runs_nothing_the_repository_names(hostile: Hostile,
                                                                    _isolated_index: Path):
    root, markers = hostile.root, hostile.markers
    client = await start_lsp(root, _isolated_index, "visual-studio-code", {"embedding": {"enabled": False}},
                             cwd=root)
    try:
        await wait_for_progress_end(client)
        assert fired(markers) == []  # (git status ran before the index run ended)

        async def search(params: dict[str, Any]) -> Any:
            return await client.protocol.send_request_async("sylk/search", {"mode": "lexical", **params})
        # the commit messages are read last (after each file's last commit)
        c = await eventually(lambda: search({"query": "signed amounts", "filters": {"types": ["git_commit"]}}),
                             lambda r: bool(r.hits), "the commits read from git")
        assert (c.hits[0].type, c.hits[0].author) == ("git_commit", BOB)
        r = await search({"query": "settle ledger balance", "filters": {"authors": [BOB]}})
        assert {h.path for h in r.hits} == {"ledger.py"}
    finally:
        await client.shutdown_session()
        await client.stop()
    assert fired(markers) == []


async def test_mcp_runs_nothing_the_repository_names(hostile: Hostile, _isolated_index: Path):
    root, markers = hostile.root, hostile.markers
    async with mcp_session(root, _isolated_index, cwd=root) as s:
        await mcp_wait_until(s, mcp_indexed, "the first index run")
        assert fired(markers) == []  # (git status ran before the index run ended)
        # the commit messages are read last (after each file's last commit)
        c = await eventually(lambda: mcp_call(s, "search_code", query="signed amounts", mode="lexical",
                                              types=["git_commit"]),
                             lambda r: bool(r["hits"]), "the commits read from git")
        assert (c["hits"][0]["type"], c["hits"][0]["author"]) == ("git_commit", BOB)
        r = await mcp_call(s, "search_code", query="settle ledger balance", mode="lexical", authors=[BOB])
        assert {h["path"] for h in r["hits"]} == {"ledger.py"}
    assert fired(markers) == []


def test_a_partial_clone_fetches_nothing_from_its_promisor(tmp_path: Path, _isolated_index: Path):
    """A partial clone misses old trees; git log would fetch them from the promisor remote,
    here an ``ext::`` command allowed by the repository's own protocol config."""
    markers, bin_dir = tmp_path / "markers", tmp_path / "bin"
    markers.mkdir()
    origin = write_tree(tmp_path / "origin", {"pay.py": "def refund_payment(p):\n    return p\n"})
    git(origin, "init", "-q")
    git_commit(origin, "Ann Lee", "payments")
    write_tree(origin, {"pay.py": "def refund_payment(p):\n    return -p\n",
                        "tax.py": "def tax_rate():\n    return 0\n"})
    git_commit(origin, BOB, "refunds are negative")
    git(origin, "config", "uploadpack.allowFilter", "true")
    root = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--filter=tree:0", f"file://{origin}", str(root))
    def prog(name: str) -> str:
        return marker_program(bin_dir / name, markers / name)
    set_config(root, {"remote.origin.url": f"ext::{prog('ext-transport')}", "protocol.allow": "always",
                      "protocol.ext.allow": "always", "protocol.file.allow": "always",
                      "core.sshCommand": prog("ssh-command"), "credential.helper": "!" + prog("credential-helper")})
    without_embedding(root)
    missing = git(root, "rev-list", "--objects", "--missing=print", "HEAD")
    assert re.search(r"^\?", missing, re.M)  # old trees are missing (rev-list --missing does not fetch)
    r = run_sylk("index", "--no-embed", ".", cache=_isolated_index, cwd=root)
    assert r.returncode == 0, r.stderr
    found = run_sylk("search", "--mode", "lexical", "--format", "json", "refund payment", ".",
                     cache=_isolated_index, cwd=root)
    assert json.loads(found.stdout)["hits"][0]["path"] == "pay.py"
    assert fired(markers) == []
    assert git(root, "rev-list", "--objects", "--missing=print", "HEAD") == missing  # nothing fetched


# -- the one door --

def test_git_overrides_reach_the_git_processes_git_starts(hostile: Hostile):
    """``git status --ignore-submodules=none`` runs git in each submodule: the overrides
    (GIT_CONFIG_COUNT) reach it, so the submodule's fsmonitor and hooks stay off. (Its
    filters have names only its own config lists: that is why Sylk never recurses.)"""
    root, markers = hostile.root, hostile.markers
    sub = root / "vendor" / "lib"
    git(sub, "config", "--unset", "filter.subevil.clean")
    git(sub, "config", "--unset", "filter.subevil.required")
    out = gitsync.run_git(root, "status", "--porcelain", "--ignore-submodules=none")
    assert out is not None and b" M vendor/lib" in out  # git looked into the submodule
    assert fired(markers) == []
    subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--ignore-submodules=none"],
                   capture_output=True, env=plain_git_env(), timeout=TIMEOUT)
    assert "sub-fsmonitor" in fired(markers)  # and without them, it runs


def test_git_state_never_looks_into_a_submodule(tmp_path: Path):
    """Only the submodule is hostile here, with a filter whose name only its own config
    lists: git status recursing into it would run that filter."""
    repo = hostile_repository(tmp_path, hostile_top=False)
    root, markers = repo.root, repo.markers
    git_state = gitsync.state(root)
    assert git_state is not None and git_state.opaque and "ledger.py" in git_state.dirty
    assert fired(markers) == []


def test_a_submodule_no_gitmodules_names_makes_the_work_tree_opaque(tmp_path: Path):
    root = write_tree(tmp_path / "repo", {"app.py": "def serve():\n    return 1\n"})
    git(root, "init", "-q")
    git_commit(root, "Ann Lee", "app")
    plain = gitsync.state(root)
    assert plain is not None and not plain.opaque
    embedded = write_tree(root / "embedded", {"lib.py": "def helper():\n    return 2\n"})
    git(embedded, "init", "-q")
    git_commit(embedded, "Ann Lee", "lib")
    git_commit(root, "Ann Lee", "embed lib")  # a gitlink, and no .gitmodules
    assert not (root / ".gitmodules").exists()
    linked = gitsync.state(root)
    assert linked is not None and linked.opaque and linked.dirty == ()


def test_every_git_call_goes_through_the_door_with_the_overrides(hostile: Hostile,
                                                               monkeypatch: pytest.MonkeyPatch):
    root, markers = hostile.root, hostile.markers
    old = git(root, "rev-parse", "HEAD~1").strip()
    calls: list[tuple[list[str], dict[str, str]]] = []
    real = subprocess.Popen

    def recording(argv: list[str], **kw: Any) -> Any:
        calls.append((list(argv), dict(kw["env"])))
        return real(argv, **kw)
    monkeypatch.setattr(gitsync.subprocess, "Popen", recording)

    git_state = gitsync.state(root)
    assert git_state is not None and git_state.opaque  # a submodule: git cannot see into it
    assert {"ledger.py", "notes.md"} <= set(git_state.dirty)
    assert gitsync.git_dirs(root) is not None
    assert gitsync.changed_between(root, old, git_state.head, "") == ["ledger.py"]
    assert "ledger.py" in (gitsync.tracked_files(root, "") or set())
    assert gitsync.last_commits(root, "", {"ledger.py"})["ledger.py"].author == BOB
    assert [c.author for c in gitsync.commits(root, "", None, git_state.head) or []][:1] == [BOB]
    assert gitsync.is_ancestor(root, old, git_state.head)
    assert (gitsync.run_git(None, "--version") or b"").startswith(b"git version")
    assert fired(markers) == []

    commands = {argv[argv.index("-C") + 2] if "-C" in argv else argv[2] for argv, _env in calls}
    assert {"config", "status", "rev-parse", "diff", "ls-files", "log", "merge-base", "--version"} <= commands
    for argv, env in calls:
        overrides = {env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"]
                     for i in range(int(env["GIT_CONFIG_COUNT"]))}
        assert argv[1] == "--no-pager", argv
        assert (env["GIT_ALLOW_PROTOCOL"], env["GIT_TERMINAL_PROMPT"], env["GIT_OPTIONAL_LOCKS"]) == ("", "0", "0")
        assert overrides["core.fsmonitor"] == "false" and overrides["core.hooksPath"] == "/dev/null"
        assert overrides["log.showSignature"] == "false" and overrides["protocol.allow"] == "never"
        if "-C" in argv and "config" not in argv:  # after the config was listed: the named drivers too
            assert overrides["filter.evil.clean"] == overrides["filter.Proc.v2.process"] == ""
            assert overrides["filter.evil.required"] == overrides["filter.Proc.v2.required"] == "false"
            assert overrides["diff.evil.textconv"] == overrides["diff.evil.command"] == ""
            assert overrides["credential.https://example.com.helper"] == ""
            assert overrides["merge.evil.driver"] == ""


def test_nothing_but_gitsync_starts_git():
    """The rule is written once: no other module of the server imports subprocess (or
    looks git up on PATH)."""
    starts = re.compile(r"\bimport subprocess\b|\bfrom subprocess\b|os\.(system|exec\w*|spawn\w*|posix_spawn\w*)\("
                        r"|create_subprocess_\w+|which\(\s*[\"']git[\"']")
    offenders = [str(p.relative_to(SERVER)) for p in SERVER.rglob("*.py")
                 if p.name != "gitsync.py" and starts.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_a_git_the_repository_ships_is_never_run_whatever_path_says(tmp_path: Path, _isolated_index: Path):
    """A PATH with an empty entry (a trailing colon) or ``.`` names the working directory,
    which is the workspace when an editor starts Sylk: a ``git`` the repository ships
    there is never run; the user's git is, so git's features still answer."""
    root = write_tree(tmp_path / "repo", {"ledger.py": "def balance():\n    return 0\n"})
    without_embedding(root)
    git(tmp_path, "init", "-q", str(root))
    git_commit(root, BOB, "the ledger")
    marker = tmp_path / "markers" / "shipped-git"
    marker_program(root / "git", marker, 'exec /usr/bin/env -i false "$@"')
    env = {"PATH": ":.:" + os.environ["PATH"]}
    r = run_sylk("index", ".", cache=_isolated_index, cwd=root, console_script=True, env=env)
    assert r.returncode == 0, r.stderr
    found = run_sylk("search", "balance", ".", "--author", BOB, "--mode", "lexical", "--format", "paths",
                     cache=_isolated_index, cwd=root, console_script=True, env=env)
    assert "ledger.py" in found.stdout, (found.stdout, found.stderr)
    assert not marker.exists()
