"""Integrity: the Merkle root, `sylk status --verify` counting each kind of drift between
the manifest, Tantivy, FAISS and the disk, `sylk index --repair` and the repair at open
fixing it, and the writer lock (a second process serves read-only and says so).

The stores are damaged with their own classes or read back with SQLite, Tantivy and
FAISS directly, never through integrity.py, so a wrong check fails here."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import attrs
import faiss
import numpy as np
import pytest
from conftest import WORKSPACE
from sylk.config import Settings
from sylk.engine.workspace import Workspace
from sylk.store.damage import WriterLock
from sylk.store.layout import LOCK_FILE
from sylk.store.lexical import LexicalIndex
from sylk.store.manifest import Manifest, merkle_root
from sylk.store.vectors import VectorIndex

# --- a workspace with its index, built once and copied per test -------------------------


@attrs.frozen
class Site:
    """A workspace, its index folder (SYLK_INDEX_DIR) and the cache holding the model."""

    root: Path
    index: Path
    cache: Path

    def env(self) -> dict[str, str]:
        return {**os.environ, "XDG_CACHE_HOME": str(self.cache), "SYLK_INDEX_DIR": str(self.index),
                "HF_HUB_OFFLINE": "1"}

    def sylk(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "sylk.cli", *args], capture_output=True, text=True,
                              env=self.env(), timeout=timeout)

    def open(self, writable: bool = True) -> Workspace:
        return Workspace(self.root, Settings(index_dir=str(self.index)), writable=writable)

    def messages(self, proc: subprocess.CompletedProcess[str]) -> list[str]:
        """The lines sylk says to the user on stderr (not progress, not search footers)."""
        return [line for line in proc.stderr.splitlines() if line.startswith("sylk:")]


def build_site(base: Path, source: Path = WORKSPACE, embed: bool = True) -> Site:
    site = Site(base / "workspace", base / "index", base / "cache")
    shutil.copytree(source, site.root, symlinks=True)
    r = site.sylk("index", str(site.root), *([] if embed else ["--no-embed"]))
    assert r.returncode == 0, r.stderr
    return site


def copy_site(site: Site, dest: Path) -> Site:
    """A private copy; copytree keeps mtimes, so the copy's index matches its files."""
    new = Site(dest / "workspace", dest / "index", site.cache)
    shutil.copytree(site.root, new.root, symlinks=True)
    shutil.copytree(site.index, new.index, symlinks=True)
    return new


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return build_site(tmp_path_factory.mktemp("golden"))


@pytest.fixture
def site(golden: Site, tmp_path: Path) -> Site:
    return copy_site(golden, tmp_path)


# --- the stores read directly ------------------------------------------------------------


def manifest_chunks(index: Path) -> dict[int, tuple[str, int]]:
    """chunk id -> (path, embedded), straight from SQLite."""
    db = sqlite3.connect(index / "manifest.sqlite3")
    try:
        return {i: (p, e) for i, p, e in db.execute("SELECT id, path, embedded FROM chunks")}
    finally:
        db.close()


def manifest_files(index: Path) -> dict[str, str]:
    db = sqlite3.connect(index / "manifest.sqlite3")
    try:
        return dict(db.execute("SELECT path, hash FROM files"))
    finally:
        db.close()


def manifest_dump(index: Path) -> list[str]:
    db = sqlite3.connect(index / "manifest.sqlite3")
    try:
        return list(db.iterdump())
    finally:
        db.close()


def tantivy_ids(index: Path) -> list[int]:
    lexical = LexicalIndex(index / "tantivy", index / "grams", writable=False)
    return sorted(lexical.chunk_ids())


def faiss_ids(index: Path) -> set[int]:
    path = index / "vectors" / "vectors.faiss"
    if not path.exists():
        return set()
    index = faiss.read_index(str(path))  # kept alive while its id map is read
    return set(faiss.vector_to_array(index.id_map).tolist())


def disk_hashes(root: Path) -> dict[str, str]:
    """What the index must hold: every fixture text file (blake2b-128 of its bytes), minus
    what the fixture's ignore rules and built-in excludes leave out."""
    out = {}
    for p in root.rglob("*"):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(("ignored_dir/", "node_modules/")):
            out[rel] = hashlib.blake2b(p.read_bytes(), digest_size=16).hexdigest()
    return out


def search_json(site: Site, query: str, *extra: str) -> dict:
    r = site.sylk("search", query, str(site.root), "--format", "json", "--limit", "50", *extra)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


# --- the Merkle root ---------------------------------------------------------------------


def _node(entries: list[str]) -> str:
    return hashlib.sha256("".join(entries).encode()).hexdigest()


def test_merkle_root_hashes_the_folder_tree():
    rows = [("a.py", "h1"), ("lib/b.py", "h2"), ("lib/sub/c.py", "h3"), ("z.md", "h4")]
    sub = _node(["f c.py\0h3\n"])
    lib = _node(["f b.py\0h2\n", f"d sub\0{sub}\n"])
    assert merkle_root(rows) == _node(["f a.py\0h1\n", f"d lib\0{lib}\n", "f z.md\0h4\n"])
    assert merkle_root([]) == hashlib.sha256(b"").hexdigest()
    # any change of a path or a hash moves the root; the same state gives the same root
    assert merkle_root([("a.py", "h1"), ("lib/b.py", "hX"), ("lib/sub/c.py", "h3"), ("z.md", "h4")]) != merkle_root(rows)
    assert merkle_root([("a.py", "h1"), ("lib/b2.py", "h2"), ("lib/sub/c.py", "h3"), ("z.md", "h4")]) != merkle_root(rows)
    assert merkle_root([("lib/a.py", "h1"), ("lib/b.py", "h2"), ("lib/sub/c.py", "h3"), ("z.md", "h4")]) != merkle_root(rows)
    assert merkle_root(list(rows)) == merkle_root(rows)


def test_merkle_root_follows_the_files_and_is_kept_in_the_manifest(site: Site):
    def expected() -> str:
        return merkle_root(sorted(disk_hashes(site.root).items()))

    st = json.loads(site.sylk("status", str(site.root), "--format", "json").stdout)
    assert st["merkleRoot"] == expected()
    text = site.sylk("status", str(site.root)).stdout
    assert f"merkle root   {expected()}" in text
    first = st["merkleRoot"]

    target = site.root / "app/http.py"
    original = target.read_bytes()
    target.write_bytes(original + b"\n# one more line\n")
    assert site.sylk("index", str(site.root), "--no-embed").returncode == 0
    changed = json.loads(site.sylk("status", str(site.root), "--format", "json").stdout)["merkleRoot"]
    assert changed == expected() != first
    db = sqlite3.connect(site.index / "manifest.sqlite3")
    assert db.execute("SELECT value FROM meta WHERE key='merkle_root'").fetchone()[0] == changed
    db.close()

    target.write_bytes(original)  # the same content again: the same state, the same root
    assert site.sylk("index", str(site.root), "--no-embed").returncode == 0
    assert json.loads(site.sylk("status", str(site.root), "--format", "json").stdout)["merkleRoot"] == first


# --- verify ------------------------------------------------------------------------------


def test_verify_is_clean_after_an_index_run(site: Site):
    r = site.sylk("status", str(site.root), "--verify")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verify        clean: the manifest, the text index, the vectors and the disk agree" in r.stdout
    check = json.loads(site.sylk("status", str(site.root), "--verify", "--format", "json").stdout)["verify"]
    assert check["clean"] is True and not any(check["drift"].values()) and check["damage"] == []
    assert check["merkleRoot"]["manifest"] == check["merkleRoot"]["disk"]


def inject_drift(site: Site) -> dict[str, int]:
    """Damage every store and the disk in a known way (the index closed); returns the
    drift `sylk status --verify` must count."""
    chunks = manifest_chunks(site.index)
    by_path: dict[str, list[int]] = {}
    for cid, (path, _embedded) in sorted(chunks.items()):
        by_path.setdefault(path, []).append(cid)
    lexical = LexicalIndex(site.index / "tantivy", site.index / "grams")
    lexical.delete_paths(["app/http.py"])  # its documents are lost
    lexical.add_chunks([(10**6, ',"path":"ghost.py","doc_type":"chunk","content":"ghostword"}'),
                        (10**6 + 1, ',"path":"ghost.py","doc_type":"chunk","content":"ghostword again"}'),
                        (by_path["services/geo/point.go"][0],
                         ',"path":"services/geo/point.go","doc_type":"chunk","content":"dupword"}')])
    lexical.commit()
    lexical.close()
    meta = json.loads((site.index / "vectors/vectors.json").read_text())
    vectors = VectorIndex.open(site.index / "vectors", meta["model_id"], meta["dim"])
    assert vectors.rebuilt_reason is None
    vectors.remove(by_path["web/src/cart.js"][:2])
    vectors.add([10**6 + 5], np.full((1, meta["dim"]), 0.05, dtype=np.float32))
    vectors.save()
    manifest = Manifest(site.index / "manifest.sqlite3")
    manifest.set_embedded(by_path["README.md"][:3], False)
    manifest.close()
    (site.root / "app/new_module.py").write_text("def brand_new_function():\n    return 42\n")
    (site.root / "ruby/lib/notifier.rb").unlink()
    with (site.root / "engine/src/lib.rs").open("a") as f:
        f.write("\n// a line added while Sylk was not looking\n")
    return {"filesNotIndexed": 1, "filesGone": 1, "filesChanged": 1,
            "chunksWithoutDocument": len(by_path["app/http.py"]), "orphanDocuments": 2,
            "duplicateDocuments": 1, "vectorsWithoutChunk": 1, "vectorsNotEmbedded": 3,
            "embeddedWithoutVector": 2, "staleMerkleRoot": 0}


def test_verify_counts_each_kind_of_drift(site: Site):
    expected = inject_drift(site)
    r = site.sylk("status", str(site.root), "--verify", "--format", "json")
    assert r.returncode == 1, r.stderr
    check = json.loads(r.stdout)["verify"]
    assert check["drift"] == expected
    assert check["clean"] is False and check["damage"] == []
    assert check["samples"]["filesNotIndexed"] == ["app/new_module.py"]
    assert check["samples"]["filesGone"] == ["ruby/lib/notifier.rb"]
    assert check["samples"]["filesChanged"] == ["engine/src/lib.rs"]
    assert check["merkleRoot"]["disk"] != check["merkleRoot"]["manifest"]
    text = site.sylk("status", str(site.root), "--verify")
    assert text.returncode == 1
    assert "verify        drift found ('sylk index --repair' fixes it)" in text.stdout
    assert any(line.split() == ["orphan", "text", "documents", "2"] for line in text.stdout.splitlines())
    # verify reads only: the drift is still there, nothing was repaired
    assert 10**6 in tantivy_ids(site.index)


def test_repair_fixes_all_drift_without_a_rebuild(site: Site):
    expected = inject_drift(site)
    before = manifest_chunks(site.index)
    r = site.sylk("index", str(site.root), "--repair")
    assert r.returncode == 0, r.stderr
    assert "repair" in r.stdout
    after_check = site.sylk("status", str(site.root), "--verify", "--format", "json")
    assert after_check.returncode == 0, after_check.stdout
    assert not any(json.loads(after_check.stdout)["verify"]["drift"].values())
    # not a rebuild: chunks of files that were fine keep their ids
    after = manifest_chunks(site.index)
    kept = [cid for cid, (path, _e) in before.items() if path == "app/repository.py"]
    assert kept and all(cid in after for cid in kept)
    # the stores agree exactly, with the disk too
    ids = tantivy_ids(site.index)
    assert len(ids) == len(set(ids)) and set(ids) == set(after)
    assert {cid for cid, (_p, e) in after.items() if e} == faiss_ids(site.index) == set(after)
    assert manifest_files(site.index) == disk_hashes(site.root)
    assert expected["chunksWithoutDocument"] > 0


def test_search_after_repair_finds_lost_documents_once(site: Site):
    expected = inject_drift(site)
    # any writer repairs the text index when it opens it (the counts differ), and says so once
    r = site.sylk("search", "backoff_delay", str(site.root), "--mode", "lexical", "--format", "json",
                  "--no-refresh")
    assert r.returncode == 0, r.stderr
    assert site.messages(r) == [
        "sylk: repaired the index on open: deleted 2 orphan text documents; deleted the 2 documents of "
        f"1 duplicated chunk; indexed 2 files again ({expected['chunksWithoutDocument']} chunks had no "
        "text document)"]
    assert [h["path"] for h in json.loads(r.stdout)["hits"]][:1] == ["app/http.py"]
    hits = search_json(site, "point distance retry policy user", "--mode", "lexical", "--no-refresh")["hits"]
    spans = Counter((h["path"], h["startLine"], h["endLine"]) for h in hits)
    assert spans and max(spans.values()) == 1  # no duplicate hits
    for word in ("ghostword", "dupword"):
        gone = search_json(site, word, "--mode", "lexical", "--no-refresh")
        assert gone["totalHits"] == 0 and gone["hits"] == []
    # the vectors and the disk: `sylk index --repair`
    assert site.sylk("index", str(site.root), "--repair").returncode == 0
    assert site.sylk("status", str(site.root), "--verify").returncode == 0
    new = search_json(site, "brand_new_function", "--mode", "lexical", "--no-refresh")
    assert new["hits"][0]["path"] == "app/new_module.py"
    assert "Notifications" not in site.sylk("symbols", "Notifications", str(site.root), "--no-refresh").stdout
    semantic = search_json(site, "wait longer between attempts after a failure", "--mode", "semantic",
                           "--no-refresh")
    assert semantic["index"]["pending"] == 0 and semantic["hits"]
    assert len({h["path"] + str(h["startLine"]) for h in semantic["hits"]}) == len(semantic["hits"])


def test_open_repairs_orphans_a_kill_left_between_the_text_commit_and_the_manifest(site: Site):
    """A file added while the last writer was killed after Tantivy's commit and before the
    manifest's: its documents are orphans, and indexing it again would double them."""
    (site.root / "app/late.py").write_text("def late_arrival_marker():\n    pass\n")
    lexical = LexicalIndex(site.index / "tantivy", site.index / "grams")
    lexical.add_chunks([(10**6, ',"path":"app/late.py","doc_type":"chunk","name":"late_arrival_marker",'
                                '"content":"late arrival marker","lines":2}')])
    lexical.commit()
    lexical.close()
    (site.index / LOCK_FILE).write_text("open 12345\n")  # the killed writer's lock file
    ws = site.open()
    try:
        assert ws.repair_note is not None
        assert ws.repair_note.startswith("repaired the index after an unclean shutdown: deleted 1 orphan text document")
        ws.index()
    finally:
        ws.close()
    hits = search_json(site, "late_arrival_marker", "--mode", "lexical", "--no-refresh")
    assert [h["path"] for h in hits["hits"]] == ["app/late.py"] and hits["totalHits"] == 1
    assert (site.index / LOCK_FILE).read_text() == "closed\n"


def test_a_clean_open_runs_no_repair(site: Site):
    ws = site.open()
    try:
        assert ws.repair_note is None and ws.rebuilt_reason is None
    finally:
        ws.close()
    r = site.sylk("search", "HttpRetryPolicy", str(site.root), "--mode", "lexical", "--format", "paths")
    assert r.returncode == 0 and site.messages(r) == []


# --- one writer --------------------------------------------------------------------------


def test_writer_lock_records_a_clean_close(tmp_path: Path):
    lock = WriterLock.acquire(tmp_path)
    assert lock is not None and not lock.unclean
    assert (tmp_path / LOCK_FILE).read_text().startswith("open ")
    assert WriterLock.acquire(tmp_path) is None  # held, also within one process
    lock.release()
    assert (tmp_path / LOCK_FILE).read_text() == "closed\n"
    again = WriterLock.acquire(tmp_path)
    assert again is not None and not again.unclean
    again.release(clean=False)  # as if killed: the file still says open
    after_kill = WriterLock.acquire(tmp_path)
    assert after_kill is not None and after_kill.unclean
    after_kill.release()


def test_a_second_process_serves_read_only_and_says_so(site: Site):
    writer = site.open()  # this test process holds the index
    try:
        stamp = (site.index / LOCK_FILE).read_text()
        manifest_before = manifest_dump(site.index)
        r = site.sylk("search", "HttpRetryPolicy", str(site.root), "--mode", "lexical", "--format", "paths")
        assert r.returncode == 0 and r.stdout.splitlines()[0] == "app/http.py"
        assert site.messages(r) == ["sylk: another Sylk process is indexing this workspace; serving its index "
                                    "read-only; it may lag behind the disk"]
        idx = site.sylk("index", str(site.root))
        assert idx.returncode == 1
        assert idx.stderr.strip().splitlines() == [
            "sylk: error: another Sylk process (a language server or 'sylk index') is writing this workspace's "
            "index; run this again when it is done"]
        check = site.sylk("status", str(site.root), "--verify")
        assert "another Sylk process is writing this index" in check.stdout
        reader = site.open()
        assert not reader.writable and "read-only" in (reader.read_only_reason or "")
        reader.close()
        # the readers changed nothing: the writer's lock and the manifest are as they were
        assert (site.index / LOCK_FILE).read_text() == stamp
        assert manifest_dump(site.index) == manifest_before
    finally:
        writer.close()
    assert site.sylk("index", str(site.root), "--no-embed").returncode == 0
