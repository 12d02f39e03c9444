"""A client that goes away without saying so (an editor killed or crashed, an agent's
pipe closed) ends the server at once, mid-embedding too: the process does not linger
for the rest of an embedding pass (an hour on a large tree) holding the index."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from conftest import TIMEOUT, raw_until, server_env, sylk_command

HOLD_EMBED = "SYLK_HOLD_EMBED"  # the server's test hook (sylk.engine.embedding.HOLD_ENV)


def test_the_language_server_stops_mid_embedding_when_stdin_closes(raw_lsp: Any, workspace: Path,
                                                                    tmp_path: Path) -> None:
    hold = tmp_path / "hold-embed"
    # the first embedding pass waits after its first batch while this exists: without the
    # stop, a server would wait for it at exit until the test gives up
    hold.touch()
    server = raw_lsp({HOLD_EMBED: str(hold)})
    server.initialize(workspace)
    raw_until(server, "sylk/status", {},
              lambda m: (m["result"].get("semantic") or {}).get("state") == "ready"
              and bool(m["result"].get("embedding") or m["result"].get("embedded")),
              "the embedding pass (under way, or holding after its first batch)")
    assert server.process.stdin is not None
    server.process.stdin.close()  # no shutdown, no exit: the client is simply gone
    try:
        server.process.wait(TIMEOUT)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the server was still running {TIMEOUT:.0f} s after its client went away, "
                             "waiting for the embedding pass") from None
    assert hold.exists()  # it stopped the pass; nothing let the pass go on


def test_the_mcp_server_stops_mid_embedding_when_stdin_closes(workspace: Path, tmp_path: Path,
                                                              _isolated_index: Path) -> None:
    hold = tmp_path / "hold-embed"
    hold.touch()
    proc = subprocess.Popen(sylk_command("mcp"), cwd=workspace, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env={**server_env(_isolated_index), HOLD_EMBED: str(hold)})
    assert proc.stdin is not None and proc.stdout is not None
    ids = iter(range(1, 1_000_000))

    def call(method: str, params: dict[str, Any]) -> dict[str, Any]:
        n = next(ids)
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params}).encode() + b"\n")
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            assert line, "the MCP server closed stdout"
            message = json.loads(line)
            if message.get("id") == n:
                return message

    try:
        call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "raw", "version": "0"}})
        proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        proc.stdin.flush()
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = call("tools/call", {"name": "get_status", "arguments": {}})
            status = json.loads(reply["result"]["content"][0]["text"])
            if status.get("state") == "embedding" or status.get("embeddedChunks"):
                break
            assert time.monotonic() < deadline, f"no embedding pass within {TIMEOUT:.0f} s: {status}"
            time.sleep(0.2)
        proc.stdin.close()
        try:
            proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the MCP server was still running {TIMEOUT:.0f} s after its client went "
                                 "away, waiting for the embedding pass") from None
        assert hold.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
