"""Every indexable file is indexed, every time (issue 29 item 6).

A folder shaped like the one that lost files at random (Dapper's library folder: about
60 files of equal mtime, one of them large) is indexed from scratch many times, and
each time the index must hold every file on disk. A parser process that dies costs
only the files it held, which the run names (skipped, with the reason) and the next
run indexes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_sylk, start_lsp, status, symbols, wait_for_progress_end, without_embedding

FILES = 60
RUNS = 10
WORKER_FAILED = "error: the parser process failed"


def equal_mtimes(root: Path, files: int = FILES) -> set[str]:
    """``files`` C# and Python files (one of them large) with one mtime, as a checkout or an
    unpacked archive leaves them; returns their root-relative paths."""
    root.mkdir(parents=True, exist_ok=True)
    without_embedding(root)
    for i in range(files):
        if i % 6 == 0:
            body = "".join(f"def helper_{i}_{j}(x):\n    return x * {j}\n\n" for j in range(2500 if i == 0 else 8))
            (root / f"Module{i:03d}.py").write_text(body, encoding="utf-8")
        else:
            body = (f"namespace Lib {{\n  public class Type{i:03d} {{\n"
                    + "".join(f"    public int Method{j}(int x) {{ return x + {j}; }}\n" for j in range(12))
                    + "  }\n}\n")
            (root / f"Type{i:03d}.cs").write_text(body, encoding="utf-8")
    rels = {p.name for p in root.iterdir()}
    for name in rels:
        os.utime(root / name, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    return rels


def indexed(cache: Path, root: Path) -> dict:
    r = run_sylk("status", "--format", "json", "--skipped", str(root), cache=cache)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_fresh_cli_index_holds_every_file_every_time(tmp_path: Path):
    root = tmp_path / "lib"
    rels = equal_mtimes(root)
    for run in range(RUNS):
        cache = tmp_path / f"cache-{run}"
        r = run_sylk("index", "--no-embed", "--workers", "2", str(root), cache=cache)
        assert r.returncode == 0, r.stderr
        assert f"{len(rels)} added" in r.stdout, (run, r.stdout)
        st = indexed(cache, root)
        assert (st["files"], st["skipped"]["total"]) == (len(rels), 0), (run, st["skipped"])
        # the tail of the order is where files went missing
        last = run_sylk("symbols", "Type059", str(root), "--no-refresh", cache=cache)
        assert "Type059.cs" in last.stdout, (run, last.stdout, last.stderr)


@pytest.mark.parametrize("run", range(3))
async def test_a_fresh_server_index_holds_every_file_every_time(tmp_path: Path, run: int):
    root = tmp_path / "lib"
    rels = equal_mtimes(root)
    cache = tmp_path / "cache"
    client = await start_lsp(root, cache, "visual-studio-code", {"embedding": {"enabled": False}})
    try:
        end = await wait_for_progress_end(client)
        st = await status(client)
        assert (st.files, st.skipped.total) == (len(rels), 0), end.message
        assert f"{len(rels)} added" in end.message
        found = await symbols(client, "Type059")
        assert [s.name for s in found][:1] == ["Type059"]
    finally:
        await client.shutdown_session()


def test_a_parser_process_that_dies_costs_only_its_files_which_the_run_names_and_the_next_indexes(tmp_path: Path):
    root = tmp_path / "lib"
    rels = equal_mtimes(root, files=200)  # past the files parsed in this process while workers start
    cache = tmp_path / "cache"
    # the parser process given Type199.cs (a small file: among the last batches) dies
    r = run_sylk("index", "--no-embed", "--workers", "2", str(root), cache=cache,
                 env={"SYLK_FAULT_PARSE": "Type199.cs"})
    assert r.returncode == 0, r.stderr
    st = indexed(cache, root)
    failed = st["skipped"]["byReason"]
    assert [f["reason"] for f in failed] == [WORKER_FAILED], failed
    lost = set(failed[0]["files"])
    assert "Type199.cs" in lost
    # every file is accounted for: indexed, or named as skipped with the reason
    assert st["files"] + len(lost) == len(rels)
    assert f"skipped: {len(lost)} {WORKER_FAILED}" in r.stdout
    assert "a parser process failed" in r.stderr

    again = run_sylk("index", "--no-embed", "--workers", "2", str(root), cache=cache)
    assert again.returncode == 0, again.stderr
    assert f"{len(lost)} added" in again.stdout
    st = indexed(cache, root)
    assert (st["files"], st["skipped"]["total"]) == (len(rels), 0)
