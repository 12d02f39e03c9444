"""The core engine on a real on-disk index: incremental runs, versions, errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from sylk.config import Settings
from sylk.engine.workspace import Workspace
from sylk.errors import IndexError_
from sylk.store.layout import META_FILE


def open_ws(root: Path, **settings) -> Workspace:
    return Workspace(root, Settings(**settings))


def test_cold_index_then_nothing_to_do(workspace: Path):
    ws = open_ws(workspace)
    first = ws.index()
    assert (first.added, first.changed, first.deleted) == (16, 0, 0)
    assert first.symbols > 100
    again = ws.index()
    assert (again.added, again.changed, again.deleted, again.unchanged) == (0, 0, 0, 16)
    ws.close()


def test_only_changed_added_and_deleted_files_are_processed(workspace: Path):
    ws = open_ws(workspace)
    ws.index()
    (workspace / "app/http.py").write_text("def replaced_everything():\n    pass\n")
    (workspace / "app/extra.py").write_text("class Extra:\n    pass\n")
    (workspace / "web/src/cart.js").unlink()
    touched = workspace / "services/geo/point.go"
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 10**9))  # same content
    report = ws.index()
    assert (report.added, report.changed, report.deleted) == (1, 1, 1)
    assert report.unchanged == 14  # including the touched-but-identical file
    names = {h.symbol.name for h in ws.search_symbols("", limit=1000)}
    assert "replaced_everything" in names and "Extra" in names
    assert "HttpRetryPolicy" not in names
    assert ws.search_paths("replaced_everything")[0] == "app/http.py"
    assert "app/http.py" not in ws.search_paths("HttpRetryPolicy")
    ws.close()


def test_index_survives_reopen(workspace: Path):
    ws = open_ws(workspace)
    ws.index()
    ws.close()
    again = open_ws(workspace)
    # symbols come back from the manifest before any indexing
    assert again.search_symbols("HttpRetryPolicy")[0].path == "app/http.py"
    again.close()


def test_schema_version_mismatch_rebuilds_cleanly_and_keeps_the_embedding_cache(workspace: Path):
    import numpy as np
    from sylk.store.embedding_cache import EmbeddingCache

    ws = open_ws(workspace)
    ws.index()
    folder = ws.index_dir
    ws.close()
    with EmbeddingCache.open(folder) as cache:
        cache.put_many("some-model", {"a" * 64: np.ones(4, dtype=np.float32)})
    (folder / META_FILE).write_text(json.dumps({"schema": -1}))
    rebuilt = open_ws(workspace)
    assert rebuilt.rebuilt_reason and "schema" in rebuilt.rebuilt_reason
    assert rebuilt.search_symbols("HttpRetryPolicy") == []
    report = rebuilt.index()
    assert report.added == 16
    rebuilt.close()
    with EmbeddingCache.open(folder) as cache:  # an upgrade does not embed everything again
        assert cache.count("some-model") == 1


def test_garbage_version_stamp_rebuilds(workspace: Path):
    ws = open_ws(workspace)
    ws.index()
    ws.close()
    (ws.index_dir / META_FILE).write_bytes(b"\x00garbage")
    again = open_ws(workspace)
    assert again.rebuilt_reason is not None and "unreadable" in again.rebuilt_reason
    assert again.index().added == 16
    again.close()


def test_index_dir_setting_and_env(workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    target = tmp_path / "custom-index"
    ws = open_ws(workspace, index_dir=str(target))
    assert ws.index_dir == target
    ws.index()
    assert (target / META_FILE).exists()
    ws.close()


def test_unwritable_index_dir_is_a_clear_error(workspace: Path, tmp_path: Path):
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    with pytest.raises(IndexError_, match="cannot write the index folder"):
        open_ws(workspace, index_dir=str(blocker / "index"))


def test_second_writer_gets_read_only_index(workspace: Path):
    writer = open_ws(workspace)
    writer.index()
    reader = open_ws(workspace)
    assert not reader.writable
    assert reader.read_only_reason is not None and "read-only" in reader.read_only_reason
    assert reader.search_symbols("HttpRetryPolicy")[0].symbol.name == "HttpRetryPolicy"
    with pytest.raises(IndexError_):
        reader.index()
    reader.close()
    writer.close()


def test_bad_files_are_counted_not_fatal(workspace: Path):
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    (workspace / "latin1.py").write_bytes(b"def caf\xe9_latin1():\n    pass\n\ndef after_bad_bytes():\n    pass\n")
    (workspace / "huge.py").write_text("x = 1\n" * 400_000)
    ws = open_ws(workspace)
    report = ws.index()
    assert report.skipped["binary"] == 1
    assert report.skipped["too-large"] == 1
    assert report.replaced_utf8 == 1
    assert ws.search_symbols("after_bad_bytes")[0].path == "latin1.py"
    skipped = ws.status().skipped
    reasons = {path: r.reason for r in skipped.by_reason for path in r.files}
    assert reasons == {"blob.bin": "binary", "huge.py": "too-large"}
    assert skipped.total == 2 and skipped.complete
    ws.close()


def test_status_names_the_first_skipped_files_of_each_reason(workspace: Path):
    for i in range(25):
        (workspace / f"blob{i:02d}.bin").write_bytes(b"\x00\x01" * 50)
    (workspace / "huge.py").write_text("x = 1\n" * 400_000)
    ws = open_ws(workspace)
    ws.index()
    sample = ws.status().skipped
    assert (sample.total, sample.complete) == (26, False)
    assert [(r.reason, r.count, r.files) for r in sample.by_reason] == [
        ("binary", 25, tuple(f"blob{i:02d}.bin" for i in range(20))), ("too-large", 1, ("huge.py",))]
    every = ws.status(skipped_limit=None).skipped
    assert every.complete and [len(r.files) for r in every.by_reason] == [25, 1]
    ws.close()


def test_max_file_size_setting(workspace: Path):
    ws = open_ws(workspace, max_file_size=200)
    report = ws.index()
    assert report.skipped["too-large"] > 0
    assert report.files < 16
    ws.close()


def test_languages_setting_limits_symbol_extraction(workspace: Path):
    ws = open_ws(workspace, languages=["python"])
    ws.index()
    kinds = {h.path.rsplit(".", 1)[-1] for h in ws.search_symbols("", limit=1000)}
    assert kinds == {"py"}
    # other files are still searchable as text
    assert "services/geo/point.go" in ws.search_paths("Translate")
    ws.close()


def test_status_counts(workspace: Path):
    ws = open_ws(workspace)
    ws.index()
    st = ws.status()
    assert st.files == 16
    langs = {l.language: l.files for l in st.languages}
    assert langs["python"] == 4 and langs["markdown"] == 1
    assert st.index_bytes > 0 and st.last_indexed is not None
    ws.close()


def test_reindex_paths_updates_one_file(workspace: Path):
    ws = open_ws(workspace)
    ws.index()
    (workspace / "app/http.py").write_text("def just_saved():\n    pass\n")
    ws.reindex_paths(["app/http.py"])
    assert ws.search_symbols("just_saved")[0].path == "app/http.py"
    assert ws.search_symbols("HttpRetryPolicy") == []
    (workspace / "app/http.py").unlink()
    ws.reindex_paths(["app/http.py"])
    assert ws.search_symbols("just_saved") == []
    assert ws.index().deleted == 0  # the manifest already knows
    ws.close()


def test_cancelling_a_running_index_keeps_what_it_did_and_a_later_run_finishes(tmp_path: Path):
    """Cancelled in the middle of a run (from its progress callback, once 64 of 200 files
    are indexed: the point is the same on any machine), the run says it was cancelled and
    what it did; the files it indexed are kept, the index reopens without a repair or a
    rebuild, and the next run indexes the rest and nothing twice."""
    import threading

    total = 200
    root = tmp_path / "src"
    for i in range(total):  # past POOL_THRESHOLD: parsed by worker processes, as in a real tree
        (root / f"pkg{i // 50}").mkdir(parents=True, exist_ok=True)
        (root / f"pkg{i // 50}" / f"mod{i}.py").write_text(f"def cancel_probe_{i}(x):\n    return x + {i}\n")
    ws = open_ws(root)
    cancel = threading.Event()
    seen: list[tuple[str, int, int]] = []

    def progress(p) -> None:
        seen.append((p.phase, p.done, p.total))
        if p.phase == "index" and p.done >= 64:  # the first progress after some files: the run is running
            cancel.set()

    report = ws.index(progress=progress, cancel=cancel, workers=2)
    assert ("index", 64, total) in seen, seen  # cancelled mid-run, not before it started
    assert report.cancelled
    assert report.summary().endswith("; cancelled")
    assert (report.added, report.files) == (64, 64)  # stopped right after the 64th file
    assert seen[-1] == ("done", 64, total)  # the last word: 64 of 200 done
    ws.close()

    again = open_ws(root)
    try:
        assert again.rebuilt_reason is None and again.repair_note is None  # a clean stop: nothing to repair
        assert again.status().files == 64
        rest = again.index()
        assert not rest.cancelled
        assert (rest.added, rest.changed, rest.deleted, rest.unchanged) == (total - 64, 0, 0, 64)
        names = {s.name for syms in again.manifest.symbols_by_path().values() for s in syms}
        assert names == {f"cancel_probe_{i}" for i in range(total)}
        assert [h.path for h in again.search_symbols("cancel_probe_199")] == ["pkg3/mod199.py"]
        last = again.index()
        assert (last.added, last.changed, last.deleted, last.unchanged) == (0, 0, 0, total)  # converged
    finally:
        again.close()


def test_the_parse_pool_indexes_every_file_once_whatever_the_order_they_finish(tmp_path: Path):
    """Past POOL_THRESHOLD files the parsing goes to worker processes a few batches at a
    time and results are taken as they finish: the index must hold the same files and
    symbols as a run in this process."""
    from sylk.engine.indexer import BATCH_FILES, BATCHES_AHEAD

    n = 2 * BATCH_FILES * BATCHES_AHEAD * 2 + 7  # more batches than are ever queued at once
    for i in range(n):
        body = "\n".join(f"def f{i}_{j}(x):\n    return x + {j}\n" for j in range(1 + (i * 7) % 40))
        (tmp_path / "src" / f"m{i // 50}").mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / f"m{i // 50}" / f"mod{i}.py").write_text(body)
    answers = []
    for workers in (1, 2):
        ws = Workspace(tmp_path / "src", Settings(index_dir=str(tmp_path / f"index-{workers}")))
        report = ws.index(workers=workers)
        assert (report.added, report.files) == (n, n)
        answers.append(sorted((s.name, path) for path, syms in ws.manifest.symbols_by_path().items() for s in syms))
        ws.close()
    assert answers[0] == answers[1]
    assert len(answers[0]) == sum(1 + (i * 7) % 40 for i in range(n))


def test_a_symbol_search_during_the_first_run_misses_nothing_when_the_run_ends(workspace: Path):
    """The symbol table of a workspace opened without it is loaded on first use. Loaded
    in the middle of a run, it reads the manifest (what was flushed) and the files parsed
    since, and the rest of the run keeps it current."""
    ws = open_ws(workspace)
    early: list[int] = []

    def progress(p) -> None:
        if p.phase == "index" and p.done >= 3 and not early:
            early.append(len(ws.search_symbols("", 10_000)))

    ws.index(progress=progress, workers=1)
    assert early and 0 < early[0]  # files parsed before the first flush were already there
    names = sorted(h.symbol.name for h in ws.search_symbols("", 10_000))
    ws.close()
    fresh = open_ws(workspace)
    assert names == sorted(h.symbol.name for h in fresh.search_symbols("", 10_000))
    fresh.close()


def test_the_most_recently_modified_files_are_searchable_first(tmp_path: Path):
    """A cold index parses the files the user touched last first: their symbols answer
    while the rest of the tree is still being read."""
    root = tmp_path / "src"
    root.mkdir()
    n = 70  # progress comes every 64 files
    for i in range(n):
        p = root / f"mod{i:02d}.py"
        p.write_text(f"def fn{i}():\n    return {i}\n")
        os.utime(p, (1_700_000_000 + (i * 37) % n, 1_700_000_000 + (i * 37) % n))  # mtimes out of name order
    by_age = sorted(root.iterdir(), key=lambda p: p.stat().st_mtime)
    ws = Workspace(root, Settings(index_dir=str(tmp_path / "index")))
    seen: list[set[str]] = []

    def progress(p) -> None:
        if p.phase == "index" and p.done == 64:
            seen.append({h.path for h in ws.search_symbols("", 10_000)})

    ws.index(progress=progress, workers=1)
    ws.close()
    assert seen == [{p.name for p in by_age[n - 64:]}]  # the 64 newest, none of the 6 oldest


def test_progress_says_what_is_searchable_so_far():
    from sylk.engine.indexer import Progress
    from sylk.steps import progress_text

    assert progress_text(Progress("index", 12, 40, "", committed=8)) == ("12/40 files, text searchable in 8", 30)
    assert progress_text(Progress("index", 40, 40, "", committed=8)) == ("40/40 files", 100)
    assert progress_text(Progress("embed", 5, 10)) == ("5/10 chunks", 50)


def test_a_search_during_an_index_run_says_how_much_is_not_searchable_yet(workspace: Path):
    from sylk.search.query import SearchRequest

    ws = open_ws(workspace)
    during = []

    def progress(p) -> None:
        if p.phase == "index" and not during:  # all 16 parsed, the last commit still to come
            during.append((p.total - p.committed, ws.search(SearchRequest("retry", "lexical"))))

    ws.index(progress=progress, workers=1)
    after = ws.search(SearchRequest("retry", "lexical"))
    ws.close()
    ((pending, mid),) = during
    assert pending > 0 and mid.index.indexing and mid.index.files_pending == pending
    assert mid.message == f"indexing: {pending} files are not searchable yet"
    assert not after.index.indexing and after.index.files_pending == 0 and after.message is None
    assert after.hits


def test_a_file_of_a_language_added_since_it_was_indexed_is_parsed_again(tmp_path: Path):
    """An index an older Sylk wrote holds the files of a language it did not know as text:
    the next run parses them, though their content did not change."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "widgets.zig").write_text("pub fn makeWidget() void {}\n")
    (root / "notes.py").write_text("def note():\n    pass\n")
    ws = open_ws(root)
    ws.index()
    assert [h.path for h in ws.search_symbols("makeWidget")] == ["widgets.zig"]
    # as the older Sylk left it: no language, no symbols
    ws.manifest._db.execute("UPDATE files SET lang=NULL, symbols=0, symbol_data='[]' WHERE path='widgets.zig'")
    ws.close()
    again = open_ws(root)
    assert again.search_symbols("makeWidget") == []
    report = again.index()
    assert (report.added, report.changed, report.unchanged) == (0, 1, 1)
    assert [h.path for h in again.search_symbols("makeWidget")] == ["widgets.zig"]
    again.close()
