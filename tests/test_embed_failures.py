"""Embedding that survives a bad batch: a batch the model fails on is halved and tried
again, a chunk that fails alone is left out and counted (``embedFailures``), and the pass
goes on. Injected failures: a fake encoder, the real model's encoder monkeypatched, and
through real servers (`sylk index`/`sylk status`, the language server, the MCP server) the
test hook SYLK_FAULT_EMBED. What is asserted is what a user reads: the status, the log,
what semantic search finds."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import TIMEOUT, WORKSPACE, eventually, mcp_session, start_lsp
from sylk.config import EmbeddingSettings, Settings
from sylk.embed import onnx_encoder
from sylk.embed.embedder import FAULT_ENV, Embedder, embed_cached
from sylk.engine.workspace import Workspace
from sylk.search.query import SearchRequest

MARKER = "QUARANTINE_MARKER_7F3A"
BAD_FILE = "app/quarantine.py"
BAD_CODE = f'''def parse_quarantined_record(line):
    """{MARKER}: the model is made to fail on this chunk."""
    return line.split(",")
'''
# shares no word with services/geo/point.go's Distance, which it finds by meaning
BY_MEANING = "how far apart are two locations on a plane"


@pytest.fixture
def poisoned(tmp_path: Path) -> Path:
    """A few files of the fixture workspace (few chunks: the model runs fast) and BAD_FILE."""
    root = tmp_path / "poisoned"
    for rel in ("app/http.py", "app/repository.py", "services/geo/point.go", "README.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(WORKSPACE / rel, root / rel)
    (root / BAD_FILE).write_text(BAD_CODE, encoding="utf-8")
    return root


# --- halving, with a fake encoder ---------------------------------------------------------

class FakeEncoder:
    """Ten tokens a text; fails on any batch holding MARKER, as onnxruntime would."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    def limit_tokens(self, max_tokens: int) -> int:
        return max_tokens

    def token_counts(self, texts: list[str]) -> list[int]:
        return [10] * len(texts)

    def encode(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        self.batches.append(len(texts))
        if any(MARKER in t for t in texts):
            raise RuntimeError("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Failed to allocate memory")
        return np.stack([np.full(4, len(t), dtype=np.float32) + 1 for t in texts])


def test_a_failing_batch_is_halved_down_to_the_one_text_that_fails() -> None:
    encoder = FakeEncoder()
    embedder = Embedder(encoder, "fake", max_tokens=128, batch_size=8, source="test")
    encoder.batches.clear()  # (the probe at load)
    texts = {f"h{i}": f"def f{i}(): pass" for i in range(8)}
    texts["h0"] = f"def bad(): '{MARKER}'"
    failures: dict[str, str] = {}
    progress: list[tuple[int, int]] = []
    found = embed_cached(embedder, None, texts, lambda done, total: progress.append((done, total)),
                         failed=lambda h, exc: failures.setdefault(h, str(exc)))
    assert set(found) == set(texts) - {"h0"}
    assert list(failures) == ["h0"] and "Failed to allocate memory" in failures["h0"]
    # 8 fails, then halves: 4 fails, 2 fails, 1 fails alone; its neighbours go through
    assert encoder.batches == [8, 4, 2, 1, 1, 2, 4]
    assert progress[-1] == (8, 8)  # the failed text counts as done: the pass is not stuck
    with pytest.raises(RuntimeError, match="allocate"):
        embedder.embed([texts["h0"]])


# --- the real model, its encoder made to fail ---------------------------------------------

def test_the_pass_goes_on_and_the_chunk_is_counted_and_tried_once_per_run(
        poisoned: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = onnx_encoder.OnnxEncoder.encode
    tried: list[int] = []  # batches holding the marker the model was run on

    def failing(self: Any, texts: list[str], *, query: bool = False) -> np.ndarray:
        if any(MARKER in t for t in texts):
            tried.append(len(texts))
            raise RuntimeError("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : bad allocation")
        return real(self, texts, query=query)

    monkeypatch.setattr(onnx_encoder.OnnxEncoder, "encode", failing)
    settings = Settings(index_dir=str(tmp_path / "idx"), embedding=EmbeddingSettings(batch_size=4))
    ws = Workspace(poisoned, settings)
    try:
        ws.index()
        assert ws.load_semantic() is None
        embedded = ws.embed_pending()
        st = ws.status()
        assert (st.embed_failures, st.pending, st.embedded) == (1, 0, st.chunks - 1) and embedded == st.chunks - 1
        assert tried[-1] == 1 and len(tried) > 1  # halved down to the chunk alone
        hits = ws.search(SearchRequest(BY_MEANING, "semantic", limit=3)).hits
        assert (hits[0].symbol, hits[0].path) == ("Distance", "services/geo/point.go")
        result = ws.search(SearchRequest("parse_quarantined_record", "hybrid"))
        assert result.index.ready and result.index.pending == 0
        bad = [h for h in result.hits if h.path == BAD_FILE]
        assert bad and bad[0].lexical_rank == 1  # still found by its words,
        # and by meaning through its quick-pass vector, which stays where the model failed
        assert bad[0].semantic_rank is not None and result.index.quick == 1 and result.semantic_quick == 1
        # the next pass does not try it again
        tried.clear()
        assert ws.embed_pending() == 0 and tried == []
        assert ws.verify(disk=False).clean  # a chunk left out is not drift
    finally:
        ws.close()

    ws = Workspace(poisoned, settings)  # the next run: one more try, and it still fails
    try:
        ws.load_semantic()
        ws.embed_pending()
        assert tried and ws.status().embed_failures == 1
    finally:
        ws.close()

    monkeypatch.setattr(onnx_encoder.OnnxEncoder, "encode", real)  # the cause went away
    ws = Workspace(poisoned, settings)
    try:
        ws.load_semantic()
        assert ws.embed_pending() == 1
        st = ws.status()
        assert (st.embed_failures, st.pending, st.embedded) == (0, 0, st.chunks)
    finally:
        ws.close()


# --- through real processes, with the test hook SYLK_FAULT_EMBED --------------------------

def sylk(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sylk.cli", *args], capture_output=True, text=True,
                          env=os.environ.copy(), timeout=TIMEOUT)


def test_sylk_index_goes_on_and_sylk_status_counts_the_chunk(poisoned: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULT_ENV, MARKER)
    r = sylk("index", str(poisoned))
    assert r.returncode == 0, r.stderr
    assert "sylk: 1 chunk could not be embedded" in r.stderr
    assert f"could not embed {BAD_FILE}:1-3 (injected failure" in r.stderr
    assert any(line.startswith("embedded ") for line in r.stdout.splitlines())  # the rest went on
    status = sylk("status", str(poisoned))
    assert status.returncode == 0, status.stderr
    chunks = next(line for line in status.stdout.splitlines() if line.startswith("chunks"))
    assert chunks.endswith("0 pending, 1 could not be embedded)"), chunks
    as_json = json.loads(sylk("status", str(poisoned), "--format", "json").stdout)
    assert (as_json["embedFailures"], as_json["pending"]) == (1, 0)
    assert as_json["embedded"] == as_json["chunks"] - 1


async def test_the_language_server_reports_the_chunk_and_searches_the_rest(
        poisoned: Path, _isolated_index: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULT_ENV, MARKER)
    client = await start_lsp(poisoned, _isolated_index, "visual-studio-code", None)
    try:
        async def status() -> Any:
            return await client.protocol.send_request_async("sylk/status", {})

        st = await eventually(status, lambda s: s.ready and s.semantic.state == "ready" and s.pending == 0
                              and s.embedded > 0, "the embedding pass")
        assert st.embedFailures == 1 and st.embedded == st.chunks - 1
        await eventually(status, lambda _st: any("1 could not be embedded" in m.message for m in client.log_messages),
                         "the embedding pass's log line")
        result = await client.protocol.send_request_async("sylk/search", {"query": BY_MEANING, "mode": "semantic",
                                                                          "limit": 3})
        assert (result.hits[0].symbol, result.hits[0].path) == ("Distance", "services/geo/point.go")
        assert result.index.ready is True and result.index.pending == 0
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_the_mcp_status_tool_reports_the_chunk(poisoned: Path, _isolated_index: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULT_ENV, MARKER)
    async with mcp_session(poisoned, _isolated_index) as s:
        async def call(tool: str, **args: Any) -> dict[str, Any]:
            result = await s.call_tool(tool, args)
            assert not result.is_error, result.content
            return json.loads(result.content[0].text)  # type: ignore[union-attr]

        st = await eventually(lambda: call("get_status"),
                              lambda st: st["state"] == "ready" and st["embedding"]["state"] == "ready"
                              and st["pending"] == 0 and st["embedded"] > 0, "the embedding pass")
        assert st["embedFailures"] == 1 and st["embedded"] == st["chunks"] - 1
        found = await call("search_code", query=BY_MEANING, mode="semantic", limit=3)
        assert (found["hits"][0]["symbol"], found["hits"][0]["path"]) == ("Distance", "services/geo/point.go")
        assert found["semantic"]["complete"] is True
