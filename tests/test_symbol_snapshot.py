"""The symbol table's snapshot beside the index (issue 14 #7): written by an index run,
opened on the next start instead of rebuilding the table, brought up to date with the
files changed since, and rebuilt when damaged. The answers are always those of a
table built from the manifest."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from sylk.config import Settings
from sylk.engine import symbol_index
from sylk.engine.workspace import Workspace
from sylk.search.frozen_symbols import KIND
from sylk.search.symbol_search import SymbolTable
from sylk.store.array_file import ArrayFile, ArrayFileError, read_array_file, write_array_file
from sylk.store.layout import SYMBOLS_FILE

QUERIES = ["", "hrp", "HttpRetryPolicy", "point", "dist", "cart", "get", "Policy.retry", "zz", "fresh_name"]


def open_ws(root: Path, **kw) -> Workspace:
    return Workspace(root, Settings(), **kw)


def answers(ws: Workspace) -> dict[str, list]:
    return {q: [(h.path, h.symbol, h.tier) for h in ws.search_symbols(q, 500)] for q in QUERIES}


def from_manifest(ws: Workspace) -> dict[str, list]:
    """The same queries on a table built from the manifest alone, without a snapshot."""
    table = SymbolTable()
    table.replace_all(ws.manifest.symbols_by_path())
    return {q: [(h.path, h.symbol, h.tier) for h in table.search(q, 500)] for q in QUERIES}


def test_an_index_run_writes_the_snapshot_and_a_reopen_serves_from_it(workspace: Path):
    ws = open_ws(workspace)
    ws.index()
    before = answers(ws)
    ws.close()
    assert (ws.index_dir / SYMBOLS_FILE).is_file()
    again = open_ws(workspace, load_symbols=True)
    table = again.table
    assert table.base is not None and len(table.base) > 100 and table.live_count == 0
    assert answers(again) == before == from_manifest(again)
    again.close()


def test_files_changed_since_the_snapshot_answer_as_they_are_now(workspace: Path):
    ws = open_ws(workspace)
    ws.index()
    ws.close()
    (workspace / "app/http.py").write_text("def fresh_name():\n    pass\n")
    (workspace / "web/src/cart.js").unlink()
    ws = open_ws(workspace)
    ws.index()  # two files: the snapshot is not written again
    ws.close()
    reopened = open_ws(workspace, load_symbols=True)
    assert reopened.table.live_count == 1  # fresh_name, from the manifest row
    got = answers(reopened)
    assert [h[1].name for h in got["fresh_name"]] == ["fresh_name"]
    assert not any(path == "web/src/cart.js" for q in QUERIES for path, _s, _t in got[q])
    assert not any(s.name == "HttpRetryPolicy" for _p, s, _t in got["hrp"])
    assert got == from_manifest(reopened)
    reopened.close()


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "empty"])
def test_a_damaged_snapshot_is_rebuilt_and_loses_nothing(workspace: Path, damage: str):
    ws = open_ws(workspace)
    ws.index()
    before = answers(ws)
    ws.close()
    path = ws.index_dir / SYMBOLS_FILE
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x40
    elif damage == "truncate":
        data = data[: len(data) // 3]
    elif damage == "garbage":
        data = bytearray(os.urandom(len(data)))
    else:
        data = bytearray()
    path.write_bytes(bytes(data))
    with pytest.raises(ArrayFileError):
        read_array_file(path, KIND)
    reopened = open_ws(workspace, load_symbols=True)
    assert answers(reopened) == before
    reopened.close()
    read_array_file(path, KIND)  # the writer saved a good one again


def test_a_buffer_keeps_its_symbols_when_the_snapshot_is_written_again(workspace: Path,
                                                                      monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(symbol_index, "COMPACT_FILES", 0)
    ws = open_ws(workspace, load_symbols=True)
    ws.index()
    ws.set_unsaved("app/http.py", b"def typed_not_saved():\n    pass\n")
    first = ws.table.base
    for p in ["services/geo/point.go", "web/src/cart.js"]:
        (workspace / p).write_text((workspace / p).read_text() + "\n")
    ws.index()  # every change counts past the limit (0): a new snapshot
    assert ws.table.base is not first
    assert [h.symbol.name for h in ws.search_symbols("typed_not_saved")] == ["typed_not_saved"]
    assert not any(h.symbol.name == "HttpRetryPolicy" for h in ws.search_symbols("HttpRetryPolicy"))
    ws.set_unsaved("app/http.py", None)  # closed without saving: the file on disk again
    assert [h.symbol.name for h in ws.search_symbols("HttpRetryPolicy")][:1] == ["HttpRetryPolicy"]
    assert ws.search_symbols("typed_not_saved") == []
    ws.close()


def test_a_reader_follows_the_writers_snapshot(workspace: Path):
    writer = open_ws(workspace)
    writer.index()
    reader = open_ws(workspace, writable=False, load_symbols=True)
    assert reader.search_symbols("fresh_name") == []
    (workspace / "app/extra.py").write_text("def fresh_name():\n    pass\n")
    writer.index()
    assert reader.follow_writer()
    assert [h.symbol.name for h in reader.search_symbols("fresh_name")] == ["fresh_name"]
    assert answers(reader) == answers(writer)
    reader.close()
    writer.close()


def test_array_file_round_trip_and_errors(tmp_path: Path):
    path = tmp_path / "a.bin"
    arrays = {"ints": np.arange(10, dtype=np.int64), "bytes": np.frombuffer(b"h\xc3\xa9llo", dtype=np.uint8),
              "empty": np.zeros(0, dtype=np.int32), "grid": np.arange(12, dtype=np.int32).reshape(3, 4)}
    write_array_file(path, ArrayFile("test/1", {"n": 3}, arrays))
    back = read_array_file(path, "test/1")
    assert back.meta == {"n": 3}
    for name, a in arrays.items():
        assert back.arrays[name].dtype == a.dtype and np.array_equal(back.arrays[name], a), name
    with pytest.raises(ArrayFileError, match="holds 'test/1'"):
        read_array_file(path, KIND)
    with pytest.raises(ArrayFileError, match="cannot read"):
        read_array_file(tmp_path / "missing.bin", "test/1")
    assert not list(tmp_path.glob("*.tmp"))
