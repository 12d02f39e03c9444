"""Every request with an id gets exactly one response, whatever its body (issue 13):
the three defects measured over stdio, and the lifecycle and framing rules around them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import hold_index, raw_until

OPTIONS = {"embedding": {"enabled": False}}


def symbols(server: Any, query: str) -> list[dict[str, Any]]:
    """workspace/symbol's answer once the index has the file (a bounded poll)."""
    def found(answer: dict[str, Any]) -> bool:
        assert "error" not in answer, answer
        return bool(answer["result"])

    return raw_until(server, "workspace/symbol", {"query": query}, found, f"a symbol matching {query!r}",
                     ids=f"symbols-{query}")["result"]


def test_a_body_that_is_not_json_gets_a_parse_error(raw_lsp: Any, tiny: Path):
    server = raw_lsp()
    server.initialize(tiny, OPTIONS)
    server.frame(b'{"jsonrpc": "2.0", "id": 7, "method": ')
    got = server.wait_for(lambda r: any(m.get("error", {}).get("code") == -32700 for m in r), "a parse error")
    error = next(m for m in got if m.get("error", {}).get("code") == -32700)
    assert error["id"] is None and "Parse error" in error["error"]["message"]
    assert symbols(server, "hello")[0]["name"] == "hello_world"  # and the server keeps serving


def test_a_param_of_the_wrong_type_gets_invalid_params_naming_it(raw_lsp: Any, tiny: Path):
    server = raw_lsp()
    server.initialize(tiny, OPTIONS)
    answer = server.request(1, "workspace/symbol", {"query": 123})
    assert answer["error"]["code"] == -32602
    assert "$.params.query" in answer["error"]["message"] and "expected str" in answer["error"]["message"]
    answer = server.request(2, "textDocument/documentSymbol", {"textDocument": {"uri": 5}})
    assert answer["error"]["code"] == -32602 and "$.params.textDocument.uri" in answer["error"]["message"]


def test_a_request_without_params_gets_invalid_params(raw_lsp: Any, tiny: Path):
    server = raw_lsp()
    server.initialize(tiny, OPTIONS)
    answer = server.request(1, "workspace/symbol")
    assert answer["error"]["code"] == -32602 and "$.params" in answer["error"]["message"]
    answer = server.request(2, "workspace/symbol", 42)
    assert answer["error"]["code"] == -32602


def test_requests_before_initialize_and_after_shutdown_are_refused(raw_lsp: Any, tiny: Path):
    server = raw_lsp()
    assert server.request(1, "workspace/symbol", {"query": "x"})["error"]["code"] == -32002
    assert server.request(2, "sylk/status")["error"]["code"] == -32002
    server.initialize(tiny, OPTIONS)
    assert server.request(3, "initialize", {"capabilities": {}})["error"]["code"] == -32600
    assert server.request(4, "no/such/method", {})["error"]["code"] == -32601
    assert server.request(5, "shutdown")["result"] is None
    answer = server.request(6, "workspace/symbol", {"query": "x"})
    assert answer["error"]["code"] == -32600 and "after shutdown" in answer["error"]["message"]
    assert server.close() == 0


def test_invalid_request_objects_get_invalid_request(raw_lsp: Any, tiny: Path):
    server = raw_lsp()
    server.initialize(tiny, OPTIONS)
    assert server.request(1, 5, {})["error"]["code"] == -32600  # a method that is not a string
    server.frame({"jsonrpc": "1.0", "id": 2, "method": "workspace/symbol", "params": {"query": "x"}})
    assert server.answer(2)["error"]["code"] == -32600
    server.frame([1, 2])
    server.frame({"jsonrpc": "2.0", "id": [3], "method": "workspace/symbol", "params": {"query": "x"}})
    got = server.wait_for(lambda r: sum(m.get("id", 0) is None for m in r) >= 2, "two errors with id null")
    assert [m["error"]["code"] for m in got if m.get("id", 0) is None] == [-32600, -32600]


def test_the_reader_finds_the_next_message_after_a_wrong_content_length(raw_lsp: Any, tiny: Path):
    server = raw_lsp()
    server.initialize(tiny, OPTIONS)
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "sylk/status"}'
    server.send(b"Content-Length: %d\r\n\r\n" % (len(body) - 10) + body)  # too short
    assert server.request(2, "sylk/status")["result"]["folders"]
    server.send(b"Content-Length: %d\r\n\r\n" % (len(body) + 30) + body)  # too long: swallows the next
    assert server.request(3, "sylk/status")["result"]["folders"]
    server.send(b"Content-Length: 99999999999\r\n\r\n" + body)  # over the limit: skipped
    assert server.request(4, "sylk/status")["result"]["folders"]
    server.frame(b'{"jsonrpc": "2.0", "id": 5, "method": "\xff\xfe"}')  # not UTF-8
    assert server.request(6, "sylk/status")["result"]["folders"]
    assert not any(m.get("id") == 1 for m in server.received)  # id 1 was never a whole frame
    codes = [m["error"]["code"] for m in server.received if "error" in m]
    assert codes == [-32700] * 3  # too short, too long, not UTF-8; the oversized header is only logged


def test_exit_without_shutdown_ends_the_process_with_1(raw_lsp: Any, tiny: Path):
    server = raw_lsp()
    server.initialize(tiny, OPTIONS)
    assert server.close() == 1


def test_searches_sent_while_the_index_is_cleared_all_get_answers(raw_lsp: Any, tiny: Path, tmp_path: Path):
    """sylk.clearIndex closes the index under searches in flight: each one is answered
    (hits, or 'being rebuilt'), never an internal error; and searches sent while the
    rebuild runs (held after its first file by the server's test hook) are answered
    during it, from what it has indexed so far."""
    hold, env = hold_index(tmp_path, held=False)
    server = raw_lsp(env)
    server.initialize(tiny, OPTIONS)
    symbols(server, "hello")
    raw_until(server, "sylk/status", {}, lambda a: a["result"]["ready"] and not a["result"]["indexing"],
              "the end of the first index run")
    hold.touch()  # the rebuild stops after its first file (greet.py, the only one) while this exists
    search = {"query": "hello world", "mode": "lexical"}
    server.frame({"jsonrpc": "2.0", "id": "clear", "method": "workspace/executeCommand",
                  "params": {"command": "sylk.clearIndex"}})
    ids = [f"s{i}" for i in range(60)]
    for i in ids:
        server.frame({"jsonrpc": "2.0", "id": i, "method": "sylk/search", "params": search})
    cleared = server.answer("clear")
    assert "error" not in cleared, cleared
    assert cleared["result"]["indexing"] is True and cleared["result"]["cleared"][0]["removed"], cleared
    answers = [server.answer(i) for i in ids]
    assert [a for a in answers if "error" in a] == []
    assert all(isinstance(a["result"]["hits"], list) for a in answers)

    # the rebuild is under way (held): the searches are answered, and each answer says so
    def during_the_rebuild(answer: dict[str, Any]) -> bool:
        assert "error" not in answer, answer
        return answer["result"]["index"]["indexing"] and bool(answer["result"]["hits"])

    raw_until(server, "sylk/search", search, during_the_rebuild, "a search answered with hits during the rebuild")
    during = [server.request(server.new_id("during"), "sylk/search", search) for _ in range(20)]
    assert [a for a in during if "error" in a] == []
    assert all(a["result"]["index"]["indexing"] for a in during), during[-1]
    assert all(a["result"]["hits"][0]["path"] == "greet.py" for a in during), during[-1]
    assert server.request("still", "sylk/status", {})["result"]["indexing"] is True  # the run had not ended
    hold.unlink()
    raw_until(server, "sylk/status", {}, lambda a: a["result"]["ready"] and not a["result"]["indexing"],
              "the end of the rebuild")
    assert symbols(server, "hello")[0]["name"] == "hello_world"  # and the new index serves


def test_the_log_does_not_carry_the_messages(raw_lsp: Any, tiny: Path, tmp_path: Path):
    """stderr is the editor's log: what the server did, not every answer's body (pygls logs
    each one at INFO; a big symbol list in one line stalled a reader that gave up on it, and
    the server then blocked writing to the full pipe)."""
    server = raw_lsp()
    server.initialize(tiny, OPTIONS)
    assert symbols(server, "hello")[0]["name"] == "hello_world"
    assert server.request(90, "shutdown")["result"] is None
    assert server.close() == 0
    log = (tmp_path / "server-0.log").read_text(encoding="utf-8", errors="replace")
    assert "hello_world" not in log and "Sending data" not in log
