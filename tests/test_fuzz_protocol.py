"""A seeded fuzz of `sylk serve --stdio` over real pipes (issue 13): broken frames, wrong
types in every param of every method Sylk serves, unknown methods, requests before
initialize and after shutdown, cancellations of unknown ids and huge queries. Every
well-framed request must be answered exactly once, and workspace/symbol must still
answer correctly afterwards.

``SYLK_FUZZ_SEED`` replays a run (the seed is in the failure message);
``SYLK_FUZZ_COUNT`` sets how many messages the main phase sends (2,000 by default).
"""

from __future__ import annotations

import copy
import json
import os
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from conftest import eventually_blocking

SEED = int(os.environ.get("SYLK_FUZZ_SEED", "1313"))
COUNT = int(os.environ.get("SYLK_FUZZ_COUNT", "2000"))
OPTIONS = None  # the defaults: every optional request (sylk/similar) registered
CODES = {-32700, -32600, -32601, -32602, -32603, -32002, -32800}
WRONG = [123, -1, 1.5, True, None, "text", "", [], [1, "x"], {}, {"k": 1}, "é🎉" * 20]


def templates(doc: str) -> dict[str, Any]:
    """Valid params of every method Sylk serves (requests and notifications). A document
    that is not on disk, so an edit never hides the symbols the final check looks for."""
    text_doc = {"uri": doc}
    position = {"line": 0, "character": 4}
    span = {"start": position, "end": {"line": 1, "character": 8}}
    item = {"name": "hello", "kind": 12, "uri": doc, "range": span, "selectionRange": span}
    return {
        "workspace/symbol": {"query": "hello"},
        "textDocument/documentSymbol": {"textDocument": text_doc},
        "textDocument/hover": {"textDocument": text_doc, "position": position},
        "workspace/executeCommand": {"command": "sylk.status", "arguments": []},
        "sylk/status": {},
        "sylk/search": {"query": "hello", "mode": "lexical", "limit": 5, "offset": 0,
                        "filters": {"languages": ["python"], "paths": ["*.py"], "minLines": 1},
                        "fuzzy": False, "highlight": True, "contextLines": 1},
        "sylk/similar": {"uri": doc, "position": position, "limit": 3},
        "sylk/indexDocument": {"id": "note-1", "text": "a note about hello", "type": "note", "title": "t",
                               "tags": ["x"]},
        "sylk/removeDocument": {"id": "note-1"},
        "sylk/documentText": {"uri": "sylk://document/note-1"},
        "sylk/references": {"name": "hello", "textDocument": text_doc, "includeDeclaration": True,
                            "codeOnly": False, "limit": 5},
        "textDocument/definition": {"textDocument": text_doc, "position": position},
        "textDocument/references": {"textDocument": text_doc, "position": position,
                                    "context": {"includeDeclaration": False}},
        "textDocument/prepareCallHierarchy": {"textDocument": text_doc, "position": position},
        "callHierarchy/incomingCalls": {"item": item},
        "callHierarchy/outgoingCalls": {"item": item},
        "textDocument/didOpen": {"textDocument": {"uri": doc, "languageId": "python", "version": 1,
                                                  "text": "def fuzzed():\n    pass\n"}},
        "textDocument/didChange": {"textDocument": {"uri": doc, "version": 2},
                                   "contentChanges": [{"text": "def changed():\n    pass\n"}]},
        "textDocument/didSave": {"textDocument": text_doc},
        "textDocument/didClose": {"textDocument": text_doc},
        "workspace/didChangeConfiguration": {"settings": {"sylk": {"symbols": {"limit": 50}}}},
        "workspace/didChangeWorkspaceFolders": {"event": {"added": [], "removed": []}},
        "$/setTrace": {"value": "off"},
    }


NOTIFICATIONS = {"textDocument/didOpen", "textDocument/didChange", "textDocument/didSave", "textDocument/didClose",
                 "workspace/didChangeConfiguration", "workspace/didChangeWorkspaceFolders", "$/setTrace"}


def leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every value inside ``value`` (containers too, the root excluded)."""
    if path:
        yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from leaves(item, (*path, i))


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    out = copy.deepcopy(value)
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return out


def removed(value: Any, path: tuple[Any, ...]) -> Any:
    out = copy.deepcopy(value)
    target = out
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return out


class Fuzz:
    """The messages of one run: bytes to send, and which ids must (or may) be answered."""

    def __init__(self, rng: random.Random, doc: str) -> None:
        self.rng = rng
        self.templates = templates(doc)
        self.must: list[Any] = []  # well-framed requests: exactly one answer each
        self.may: list[Any] = []  # requests in broken frames: at most one answer
        self.count = 0  # messages generated, the fillers not counted
        self.fillers = 0
        self._ids = 0

    def new_id(self) -> Any:
        self._ids += 1
        return self._ids if self._ids % 3 else f"fz-{self._ids}"

    def frame(self, body: bytes) -> bytes:
        self.count += 1
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    def request(self, method: Any, params: Any = ..., *, broken: bool = False) -> bytes:
        msg_id = self.new_id()
        (self.may if broken else self.must).append(msg_id)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not ...:
            message["params"] = params
        return json.dumps(message).encode()

    def notification(self, method: str, params: Any = ...) -> bytes:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not ...:
            message["params"] = params
        return json.dumps(message).encode()

    def filler(self, at_least: int) -> bytes:
        """Well-formed notifications (unknown, ignored) of at least ``at_least`` bytes: what
        a wrong Content-Length swallows is always followed by more."""
        out = b""
        while len(out) <= at_least:
            body = self.notification("$/sylkFuzzFiller", {"pad": "p" * 120})
            out += b"Content-Length: %d\r\n\r\n" % len(body) + body
            self.fillers += 1
        return out

    # one message of each kind ------------------------------------------------------
    def wrong_type(self) -> bytes:
        method = self.rng.choice(sorted(self.templates))
        params = self.templates[method]
        paths = list(leaves(params))
        roll = self.rng.random()
        if paths and roll < 0.75:
            path = self.rng.choice(paths)
            params = replaced(params, path, self.rng.choice(WRONG))
        elif paths and roll < 0.85:
            params = removed(params, self.rng.choice(paths))
        elif roll < 0.92:
            params = self.rng.choice([None, 5, "params", [params], True])
        else:
            params = ...
        if method in NOTIFICATIONS and self.rng.random() < 0.8:
            return self.frame(self.notification(method, params))
        return self.frame(self.request(method, params))

    def sweep(self) -> bytes:
        """A wrong type in every param of every method (and each method without params)."""
        out = []
        for method, params in sorted(self.templates.items()):
            for path in leaves(params):
                out.append(self.frame(self.request(method, replaced(params, path, self.rng.choice(WRONG)))))
            out.append(self.frame(self.request(method)))
        return b"".join(out)

    def valid(self) -> bytes:
        method = self.rng.choice(sorted(self.templates))
        if method in NOTIFICATIONS:
            return self.frame(self.notification(method, self.templates[method]))
        return self.frame(self.request(method, self.templates[method]))

    def unknown(self) -> bytes:
        method = self.rng.choice(["sylk/nope", "textDocument/nope", "$/nope", "", "x" * 300, "initialize"])
        if self.rng.random() < 0.3:
            return self.frame(self.notification(method, {}))
        return self.frame(self.request(method, {}))

    def cancel(self) -> bytes:
        target = self.rng.choice([10**9 + self.rng.randrange(1000), "no-such-id", [1], None, {"x": 1}])
        body = self.notification("$/cancelRequest", {"id": target})
        if self.must and self.rng.random() < 0.3:  # a request that exists, maybe still running
            body = self.notification("$/cancelRequest", {"id": self.rng.choice(self.must[-5:])})
        return self.frame(body)

    def huge(self) -> bytes:
        words = " ".join(self.rng.choice(["hello", "world", "def", "x" * 50, "é"]) for _ in range(8000))
        if self.rng.random() < 0.5:
            return self.frame(self.request("workspace/symbol", {"query": words}))
        if self.rng.random() < 0.5:
            return self.frame(self.request("sylk/search", {"query": words, "mode": "lexical", "limit": 3}))
        return self.frame(self.request("workspace/symbol", {"query": "hello", "pad": "z" * 2_000_000}))

    def envelope(self) -> bytes:
        """Well-framed JSON that is not a valid request object."""
        choice = self.rng.randrange(7)
        if choice == 0:
            return self.frame(json.dumps(self.rng.choice([[1, 2], "str", 42, None, []])).encode())
        if choice == 1:
            return self.frame(json.dumps({"jsonrpc": "2.0", "id": self.rng.choice([1.5, [1], {"a": 1}, True]),
                                          "method": "sylk/status"}).encode())
        if choice == 2:
            msg_id = self.new_id()
            self.must.append(msg_id)
            return self.frame(json.dumps({"jsonrpc": "1.0", "id": msg_id, "method": "sylk/status"}).encode())
        if choice == 3:
            msg_id = self.new_id()
            self.must.append(msg_id)
            return self.frame(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": 7}).encode())
        if choice == 4:  # a request method sent as a notification, and the other way round
            return self.frame(self.notification("workspace/symbol", {"query": "x"}))
        if choice == 5:
            return self.frame(self.request("textDocument/didClose", self.templates["textDocument/didClose"]))
        return self.frame(json.dumps({"jsonrpc": "2.0", "id": 10**12, "result": None}).encode())  # an unasked answer

    def broken(self) -> bytes:
        """A frame whose bytes or header are wrong, then enough filler to resynchronise."""
        body = self.request("sylk/status", {}, broken=True)
        choice = self.rng.randrange(8)
        over = 0
        if choice == 0:  # Content-Length too short
            out = b"Content-Length: %d\r\n\r\n" % self.rng.randrange(1, len(body)) + body
        elif choice == 1:  # too long
            over = self.rng.randrange(1, 200)
            out = b"Content-Length: %d\r\n\r\n" % (len(body) + over) + body
        elif choice == 2:  # truncated: the rest never comes
            cut = self.rng.randrange(1, len(body))
            out, over = b"Content-Length: %d\r\n\r\n" % len(body) + body[:cut], len(body) - cut
        elif choice == 3:  # not UTF-8
            bad = body.replace(b"sylk/status", b"sylk/\xff\xfe\xc3")
            out = b"Content-Length: %d\r\n\r\n" % len(bad) + bad
        elif choice == 4:  # not JSON
            junk = bytes(self.rng.randrange(32, 127) for _ in range(self.rng.randrange(1, 300))).replace(b":", b";")
            out = b"Content-Length: %d\r\n\r\n" % len(junk) + junk
        elif choice == 5:  # garbage between frames, no header at all
            out = bytes(self.rng.choice(b"abc{}[] \r\n\"") for _ in range(self.rng.randrange(1, 100)))
        elif choice == 6:  # a Content-Length no one could send
            out = b"Content-Length: %d\r\n\r\n" % (10**12 + self.rng.randrange(1000)) + body
        else:  # an empty body, then a header with no length
            out = b"Content-Length: 0\r\n\r\nContent-Type: x\r\n\r\n" + body
        self.count += 1
        return out + self.filler(over + 50)

    def one(self) -> bytes:
        kinds = [(self.wrong_type, 50), (self.valid, 12), (self.unknown, 8), (self.cancel, 8),
                 (self.envelope, 8), (self.broken, 12), (self.huge, 1)]
        pick = self.rng.choices([k for k, _ in kinds], weights=[w for _, w in kinds])[0]
        return pick()


def answers(received: list[dict[str, Any]]) -> Counter[Any]:
    """How many responses each id got (server-to-client messages have a method)."""
    return Counter(json.dumps(m.get("id")) for m in received if "method" not in m)


def test_every_request_is_answered_exactly_once(raw_lsp: Any, tiny: Path):
    rng = random.Random(SEED)
    fuzz = Fuzz(rng, (tiny / "unsaved.py").resolve().as_uri())
    server = raw_lsp()
    where = f"(replay with SYLK_FUZZ_SEED={SEED} SYLK_FUZZ_COUNT={COUNT})"

    # before initialize: requests are refused with -32002, nothing else happens
    before = fuzz.must[:]
    server.send(b"".join(rng.choice([fuzz.wrong_type, fuzz.valid, fuzz.broken, fuzz.cancel])()
                         for _ in range(100)))
    refused = fuzz.must[len(before):]
    capabilities = server.initialize(tiny, OPTIONS)["result"]["capabilities"]
    own = set(capabilities["experimental"]["sylk"]["requests"])
    assert own and own <= set(fuzz.templates), f"a request with no params to fuzz: {own - set(fuzz.templates)}"

    # the main phase
    server.send(fuzz.sweep() + b"".join(fuzz.one() for _ in range(COUNT)) + fuzz.filler(3000))
    check = fuzz.new_id()
    fuzz.must.append(check)
    server.send(fuzz.frame(json.dumps({"jsonrpc": "2.0", "id": check, "method": "workspace/symbol",
                                       "params": {"query": "hello"}}).encode()))
    server.answer(check)
    assert server.process.poll() is None, f"the server died {where}"

    # a normal request still answers correctly (asked until the index has the file, bounded)
    probe = 0

    def ask() -> dict[str, Any]:
        nonlocal probe
        probe += 1
        return server.request(f"probe-{probe}", "workspace/symbol", {"query": "hello_world"})

    def found(answer: dict[str, Any]) -> bool:
        assert "error" not in answer, f"{answer} {where}"
        return bool(answer["result"])

    answer = eventually_blocking(ask, found, f"workspace/symbol to find hello_world after the fuzz {where}")
    assert answer["result"][0]["name"] == "hello_world"

    # after shutdown: requests are refused with -32600
    assert server.request("bye", "shutdown")["result"] is None
    after = len(fuzz.must)
    server.send(b"".join(rng.choice([fuzz.wrong_type, fuzz.valid, fuzz.broken])() for _ in range(100))
                + fuzz.filler(3000))
    late = fuzz.must[after:]
    server.send(fuzz.frame(fuzz.request("sylk/status", {})))
    server.wait_for(lambda r: all(json.dumps(i) in answers(r) for i in fuzz.must), f"every answer {where}")

    got = answers(server.received)
    by_id = {json.dumps(m.get("id")): m for m in server.received if "method" not in m}
    twice = [i for i in fuzz.must + fuzz.may if got[json.dumps(i)] > 1]
    assert not twice, f"answered more than once: {twice[:10]} {where}"
    sent = {json.dumps(i) for i in fuzz.must + fuzz.may} | {"null", json.dumps("init")} | \
        {json.dumps(f"probe-{n}") for n in range(1, probe + 1)} | {json.dumps("bye")}
    assert set(got) <= sent, f"answers to ids never sent: {sorted(set(got) - sent)[:10]} {where}"
    for message in server.received:
        if "method" not in message:
            assert ("result" in message) != ("error" in message), f"{message} {where}"
            assert "error" not in message or message["error"]["code"] in CODES, f"{message} {where}"
    assert all(by_id[json.dumps(i)]["error"]["code"] in (-32002, -32600, -32602) for i in refused), where
    assert all(by_id[json.dumps(i)]["error"]["code"] in (-32600, -32602) for i in late), where
    assert fuzz.count >= 2000 or COUNT < 2000
    assert server.close() == 0, f"exit after shutdown must return 0 {where}"
    codes = Counter(m["error"]["code"] for m in server.received if "error" in m)
    print(f"fuzz seed {SEED}: {fuzz.count} messages (and {fuzz.fillers} fillers), {len(fuzz.must)} requests "
          f"answered once, {len(fuzz.may)} in broken frames; error codes {dict(codes)}")
