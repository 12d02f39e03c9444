"""The `sylk` command as a user runs it (a subprocess, real index on disk)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import TIMEOUT


def sylk(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sylk.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=os.environ.copy(), timeout=TIMEOUT)


def test_index_prints_a_summary_line(workspace: Path):
    r = sylk("index", str(workspace))
    assert r.returncode == 0, r.stderr
    summary, quick, embedded = r.stdout.strip().splitlines()
    assert summary.startswith(f"{workspace}: 16 files, ") and "16 added" in summary
    chunks = int(embedded.split()[1])
    assert quick.startswith(f"quick pass: {chunks} chunks searchable by meaning in ") and "static model" in quick
    assert embedded.startswith(f"embedded {chunks} chunks in ") and "all-MiniLM-L6-v2" in embedded
    assert "\r" not in r.stderr  # no progress bar without a terminal
    again = sylk("index", str(workspace))
    assert "0 added, 0 changed, 0 deleted, 16 unchanged" in again.stdout


def test_symbols_fuzzy_output(workspace: Path):
    sylk("index", str(workspace))
    r = sylk("symbols", "hrp", str(workspace))
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0].split()
    assert first[:2] == ["class", "HttpRetryPolicy"]
    assert first[2].startswith("app/http.py:")


def test_symbols_json_and_default_root(workspace: Path):
    r = sylk("symbols", "get_user_by_id", "--format", "json", cwd=workspace)
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)
    assert hits[0]["name"] == "get_user_by_id"
    assert hits[0]["container"] == "UserRepository"
    assert hits[0]["path"] == "app/repository.py"
    line = (workspace / "app/repository.py").read_text().splitlines()[hits[0]["line"] - 1]
    assert line[hits[0]["column"] - 1:].startswith("get_user_by_id")


def test_symbols_no_match_exits_1(workspace: Path):
    r = sylk("symbols", "zzqqxx", str(workspace))
    assert r.returncode == 1 and r.stdout == ""


def test_status_reports_counts_and_skips(workspace: Path):
    (workspace / "fixture.dat").write_bytes(b"\x89DAT\x00\x00\x00")
    sylk("index", str(workspace))
    r = sylk("status", str(workspace))
    assert r.returncode == 0, r.stderr
    assert "files         16" in r.stdout
    assert "python 4 files" in r.stdout
    assert "binary" in r.stdout and "fixture.dat" in r.stdout
    st = json.loads(sylk("status", str(workspace), "--format", "json").stdout)
    assert st["indexed"] is True and st["files"] == 16 and st["symbols"] > 100


def test_status_of_a_workspace_never_indexed_creates_nothing(workspace: Path, _isolated_index: Path):
    before = sorted(_isolated_index.rglob("*"))
    r = sylk("status", str(workspace))
    assert r.returncode == 1 and r.stderr == ""
    assert r.stdout.strip() == f"{workspace}: not indexed ('sylk index {workspace}' indexes it)"
    j = sylk("status", str(workspace), "--format", "json")
    assert j.returncode == 1
    st = json.loads(j.stdout)
    assert st["root"] == str(workspace) and st["indexed"] is False and st["indexDir"].startswith(str(_isolated_index))
    assert sylk("status", str(workspace), "--verify").returncode == 1
    assert sorted(_isolated_index.rglob("*")) == before and not Path(st["indexDir"]).exists()


def test_clear_removes_the_index(workspace: Path):
    sylk("index", str(workspace))
    r = sylk("clear", str(workspace))
    assert r.returncode == 0 and r.stdout.startswith("removed ")
    assert not Path(r.stdout.split(" ", 1)[1].strip()).exists()
    assert sylk("clear", str(workspace)).stdout.startswith("no index")


def test_bad_paths_fail_with_one_line(tmp_path: Path):
    missing = sylk("index", str(tmp_path / "missing"))
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"sylk: error: {tmp_path / 'missing'}: no such directory"
    f = tmp_path / "file.txt"
    f.write_text("x")
    notdir = sylk("index", str(f))
    assert notdir.returncode == 2 and notdir.stderr.strip() == f"sylk: error: {f}: not a directory"


def test_unwritable_index_folder(workspace: Path, tmp_path: Path):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    env_before = os.environ.get("SYLK_INDEX_DIR")
    os.environ["SYLK_INDEX_DIR"] = str(blocker / "idx")
    try:
        r = sylk("index", str(workspace))
    finally:
        if env_before is None:
            del os.environ["SYLK_INDEX_DIR"]
        else:
            os.environ["SYLK_INDEX_DIR"] = env_before
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sylk: error: cannot write the index folder")


def test_index_draws_a_progress_bar_on_a_terminal(workspace: Path):
    import pty

    out = bytearray()

    def read(fd: int) -> bytes:
        data = os.read(fd, 4096)
        out.extend(data)
        return data

    pid, fd = pty.fork()
    if pid == 0:  # child: stdout and stderr are the terminal
        os.execv(sys.executable, [sys.executable, "-m", "sylk.cli", "index", str(workspace)])
    try:
        while True:
            try:
                if not read(fd):
                    break
            except OSError:
                break
    finally:
        _, status = os.waitpid(pid, 0)
    text = out.decode("utf-8", "replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert "\r\x1b[K" in text                     # the bar redraws in place
    assert "16/16 files 100%" in text
    assert "0 deleted, 0 unchanged\r\n" in text                # then the summary line
    assert "/99 chunks 100%" in text and "embedded 99 chunks" in text  # then the embeddings


def test_search_takes_its_defaults_from_the_settings(workspace: Path):
    sylk("index", str(workspace), "--no-embed")
    (workspace / ".sylk.toml").write_text('[search]\nmode = "lexical"\nlimit = 2\n')
    r = sylk("search", "point", str(workspace), "--format", "json", "--no-refresh")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["mode"] == "lexical" and len(result["hits"]) == 2 and result["totalHits"] > 2
    r = sylk("search", "point", str(workspace), "--format", "json", "--no-refresh", "--limit", "3", "--mode", "hybrid")
    result = json.loads(r.stdout)
    assert result["mode"] == "hybrid" and len(result["hits"]) == 3  # the command line wins


def test_search_rejects_unknown_filter_values_listing_the_allowed_ones(workspace: Path):
    sylk("index", "--no-embed", str(workspace))
    for args, option in ((("--type", "go"), "--type"), (("--lang", "golang"), "--lang"),
                         (("--kind", "func"), "--kind")):
        r = sylk("search", "retry", str(workspace), "--mode", "lexical", *args)
        assert r.returncode == 2 and r.stdout == "", (args, r.stdout, r.stderr)
        line, = r.stderr.strip().splitlines()
        assert line.startswith(f"sylk: error: {option}: unknown ") and "; one of " in line
    r = sylk("search", "kind:func retry", str(workspace), "--mode", "lexical")
    assert r.returncode == 2 and r.stderr.startswith("sylk: error: kind: unknown kind 'func'; one of class, ")
    ok = sylk("search", "retry", str(workspace), "--mode", "lexical", "--lang", "python", "--kind", "method",
              "--type", "source_code")
    assert ok.returncode == 0 and "app/http.py" in ok.stdout


def test_search_refuses_numbers_out_of_range_as_sylk_search_does(workspace: Path):
    # (before, --limit 0 printed nothing and exited 1, --offset -1 and --context 999 were taken)
    for args, line in ((("--limit", "0"), "--limit: must be between 1 and 1000"),
                       (("--limit", "5000"), "--limit: must be between 1 and 1000"),
                       (("--offset", "-1"), "--offset: must be >= 0"),
                       (("--context", "999"), "--context: must be between 0 and 50")):
        r = sylk("search", "retry", str(workspace), "--mode", "lexical", "--no-refresh", *args)
        assert r.returncode == 2 and r.stdout == "" and r.stderr.strip() == f"sylk: error: {line}", (args, r.stderr)



def test_index_no_embed_and_a_lexical_search_never_load_faiss(workspace: Path):
    """Symbols and text need no vectors: FAISS (a third of a second to import, seconds
    under load) is loaded only when vectors are touched."""
    code = ("import sys, runpy\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'faiss':\n"
            "            raise ImportError('blocked: ' + name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "sys.argv = ['sylk'] + sys.argv[1:]\n"
            "runpy.run_module('sylk.cli', run_name='__main__')\n")
    out = []
    for args in (("index", "--no-embed", str(workspace)),
                 ("search", "retry", str(workspace), "--mode", "lexical", "--no-refresh")):
        r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                           env=os.environ.copy(), timeout=TIMEOUT)
        assert r.returncode == 0, r.stderr
        out.append(r.stdout)
    assert "16 added" in out[0]
    assert "app/http.py" in out[1]

BILLING = '''import math


def settle_invoice_ledger(total):
    """Round an invoice total down to whole cents."""
    return math.floor(total * 100) / 100


def refund_card_payment(amount):
    return -amount
'''


def test_search_without_refresh_shows_where_a_hit_is_now_or_that_it_is_stale(tmp_path: Path):
    """Lines inserted above a function after indexing: the hit shows the function's new
    line and text; a function renamed since cannot be found, and the hit says so."""
    root = tmp_path / "shop"
    root.mkdir()
    billing = root / "billing.py"
    billing.write_text(BILLING)
    assert sylk("index", "--no-embed", str(root)).returncode == 0
    billing.write_text(BILLING.replace("import math\n", "import math\n" + "".join(
        f"RATE_{i} = {i}\n" for i in range(5)), 1).replace("refund_card_payment", "reverse_card_payment"))
    lines = billing.read_text().splitlines()
    want = lines.index("def settle_invoice_ledger(total):") + 1  # 1-based, 5 below where it was indexed

    r = sylk("search", "settle_invoice_ledger", str(root), "--no-refresh", "--mode", "lexical")
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert f"billing.py:{want} " in first and "stale" not in first
    assert f"{want:>5}  def settle_invoice_ledger(total):" in r.stdout

    r = sylk("search", "settle_invoice_ledger", str(root), "--no-refresh", "--mode", "lexical", "--format", "json")
    hit = json.loads(r.stdout)["hits"][0]
    assert (hit["symbol"], hit["startLine"], hit["endLine"]) == ("settle_invoice_ledger", want, want + 2)
    assert hit["snippet"].startswith("def settle_invoice_ledger(total):") and "stale" not in hit

    r = sylk("search", "refund_card_payment", str(root), "--no-refresh", "--mode", "lexical")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if "refund_card_payment" in x)
    assert "[stale: the file changed since it was indexed" in line
    r = sylk("search", "refund_card_payment", str(root), "--no-refresh", "--mode", "lexical", "--format", "json")
    hit = next(h for h in json.loads(r.stdout)["hits"] if h["symbol"] == "refund_card_payment")
    assert hit["stale"] is True and hit["snippet"] == ""


def test_role_test_comes_from_test_files_not_from_names(tmp_path: Path):
    """issue 13 #10: `should_retry` was labelled a test (its name starts with "should_")."""
    root = tmp_path / "roles"
    (root / "app").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "app/http.py").write_text("def should_retry(status):\n    return status in (502, 503)\n\n\n"
                                      "def test_connection(host):\n    return host.ping()\n")
    (root / "tests/test_http.py").write_text("from app.http import should_retry\n\n\n"
                                             "def test_should_retry_on_503():\n    assert should_retry(503)\n")
    assert sylk("index", str(root)).returncode == 0
    hits = json.loads(sylk("search", "should_retry", str(root), "--mode", "lexical", "--format", "json").stdout)["hits"]
    roles = {(h["path"], h["symbol"]): h["roles"] for h in hits}
    assert roles[("app/http.py", "should_retry")] == []
    assert roles[("tests/test_http.py", "test_should_retry_on_503")] == ["test"]
    tests = json.loads(sylk("search", "should_retry", str(root), "--mode", "lexical", "--role", "test",
                            "--format", "json").stdout)["hits"]
    assert tests and {h["path"] for h in tests} == {"tests/test_http.py"}
    connection = json.loads(sylk("search", "test_connection", str(root), "--mode", "lexical", "--role", "test",
                                 "--format", "json").stdout)
    assert all(h["path"] != "app/http.py" for h in connection["hits"])  # a library function named test_*


def test_status_counts_skipped_files_by_reason_and_lists_them_all_on_request(binaries: Path):
    """issue 13 #11: status named every skipped file; 300 binaries made a huge answer."""
    assert sylk("index", str(binaries)).returncode == 0
    r = sylk("status", str(binaries))
    assert r.returncode == 0, r.stderr
    assert "skipped       301 files" in r.stdout
    assert "binary" in r.stdout and "300" in r.stdout and "too-large" in r.stdout and "big.py" in r.stdout
    assert r.stdout.count("blob-") <= 20 and "--skipped" in r.stdout  # says how to see them all
    st = json.loads(sylk("status", str(binaries), "--format", "json").stdout)
    assert st["skipped"]["total"] == 301 and st["skipped"]["complete"] is False
    reasons = {r["reason"]: r for r in st["skipped"]["byReason"]}
    assert [r["reason"] for r in st["skipped"]["byReason"]] == ["binary", "too-large"]  # most first
    assert reasons["binary"]["count"] == 300 and reasons["binary"]["files"] == [
        f"blobs/blob-{i:03d}.bin" for i in range(20)]
    assert reasons["too-large"] == {"reason": "too-large", "count": 1, "files": ["big.py"]}
    every = sylk("status", str(binaries), "--skipped")
    assert every.returncode == 0 and all(f"blobs/blob-{i:03d}.bin" in every.stdout for i in range(300))
    full = json.loads(sylk("status", str(binaries), "--skipped", "--format", "json").stdout)["skipped"]
    assert full["complete"] is True and full["total"] == 301
    assert {r["reason"]: len(r["files"]) for r in full["byReason"]} == {"binary": 300, "too-large": 1}
