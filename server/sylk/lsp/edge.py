"""Sylk's edge of the wire: every request with an id gets exactly one response.

pygls 2 drops a body that is not JSON, a request whose params fail to structure, and
every request after ``shutdown``, without answering; its header reader also loses the
stream for good after one wrong ``Content-Length``. So Sylk reads the stream itself:

- ``Frames`` cuts the byte stream into bodies. A header line counts when it *ends* in
  ``Content-Length: N``, so the header of a good message that follows garbage on the
  same line is still found. A body that does not parse is pushed back and scanned as
  header lines, so messages a too-long ``Content-Length`` swallowed are found again.
  A ``Content-Length`` over ``MAX_BODY`` is ignored (its bytes are skipped as garbage).
- ``EdgeProtocol.receive`` checks one body before pygls sees it and answers what pygls
  would drop: -32700 (not JSON or not UTF-8; id null), -32600 (not a JSON-RPC request
  object, or any request after shutdown), -32002 (a request before initialize), -32602
  (params of the wrong shape; the message names the field, camelCase as on the wire).
  pygls answers the rest: -32601 for an unknown method, -32603 for a failing handler.
  A notification that fails the same checks is logged and dropped.
- ``strict_converter`` makes lsprotocol's converter refuse ``123`` for a string (cattrs
  would turn it into ``"123"``), ``"1"`` or ``true`` for an integer.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import cattrs
from cattrs.errors import ClassValidationError, IterableValidationError
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, LanguageServerProtocol, default_converter

log = logging.getLogger("sylk")

MAX_BODY = 64 * 1024 * 1024  # a bigger Content-Length is taken for garbage
HEADER = re.compile(rb"content-length:[ \t]*(\d+)[ \t]*$", re.IGNORECASE)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002


def strict_converter() -> cattrs.Converter:
    """pygls' converter, with strings, integers and booleans taken only as themselves."""
    converter = default_converter()

    def strict(kind: type) -> Callable[[Any, Any], Any]:
        def structure(value: Any, _: Any) -> Any:
            if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
                raise ValueError(f"expected {kind.__name__}, got {type(value).__name__}")
            return value
        return structure

    for kind in (str, int, bool):
        converter.register_structure_hook(kind, strict(kind))
    return converter


class Frames:
    """Message bodies from a byte stream framed by ``Content-Length`` headers (see the
    module docstring for how it resynchronises). ``read`` returns the next bytes
    available, ``b""`` at the end of the stream."""

    def __init__(self, read: Callable[[], Awaitable[bytes]]) -> None:
        self._read = read
        self._buffer = bytearray()

    async def _fill(self) -> bool:
        chunk = await self._read()
        self._buffer += chunk
        return bool(chunk)

    async def _line(self) -> bytes | None:
        start = 0
        while (end := self._buffer.find(b"\n", start)) < 0:
            start = len(self._buffer)
            if start > MAX_BODY:  # a newline-free flood: keep only what could end in a header
                del self._buffer[:-64]
                start = len(self._buffer)
            if not await self._fill():
                return None
        line = bytes(self._buffer[:end + 1])
        del self._buffer[:end + 1]
        return line

    def unread(self, data: bytes) -> None:
        """Scan ``data`` again, before the rest of the stream."""
        self._buffer[:0] = data

    async def next(self) -> bytes | None:
        """The next body (None at the end of the stream)."""
        length: int | None = None
        while True:
            line = await self._line()
            if line is None:
                return None
            text = line.rstrip(b"\r\n")
            if not text:
                if length is not None:
                    break
                continue
            if (match := HEADER.search(text)) is not None:
                length = int(match.group(1))
                if length > MAX_BODY:
                    log.warning("ignoring a Content-Length of %d bytes (over %d)", length, MAX_BODY)
                    length = None
        while len(self._buffer) < length:
            if not await self._fill():
                return None
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        return body


def valid_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def camel_path(message: str) -> str:
    """cattrs' ``@ $.params.text_document`` as the wire spells it: ``$.params.textDocument``."""
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), message)


class EdgeProtocol(LanguageServerProtocol):
    """A LanguageServerProtocol that checks each body at Sylk's edge (``receive``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.initialize_seen = False

    def send_error(self, msg_id: Any, code: int, message: str) -> None:
        """A JSON-RPC error response; plain JSON, so that an id of null is written out."""
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def _send_response(self, msg_id: Any, result: Any | None = None, error: Any = None) -> None:
        """A result that is already JSON (the custom requests' dicts, workspace/symbol's
        list of dicts) goes out as it is: pygls would first walk all of it with cattrs,
        2 ms of a 30 ms sylk/search answer with 20 hits, for the same bytes. Everything
        else (lsprotocol records) as pygls does."""
        if error is None and (isinstance(result, dict) or (
                isinstance(result, list) and result and all(isinstance(x, dict) for x in result))):
            self._result_types.pop(msg_id, None)
            self._send_data({"jsonrpc": "2.0", "id": msg_id, "result": result})
            return
        super()._send_response(msg_id, result, error)

    def receive(self, body: bytes) -> bool:
        """Check one body and hand it to pygls, or answer it; False if it is not JSON."""
        try:
            data = json.loads(body)
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
            log.warning("not a JSON body (%d bytes): %s", len(body), exc)
            self.send_error(None, PARSE_ERROR, f"Parse error: {exc}")
            return False
        try:
            self._receive(data)
        except Exception as exc:  # never lose the reader to one message
            log.exception("Error in 'edge.receive'")
            msg_id = data.get("id") if isinstance(data, dict) else None
            if isinstance(data, dict) and "method" in data and valid_id(msg_id):
                self.send_error(msg_id, INTERNAL_ERROR, f"Internal error: {exc}")
        return True

    def _receive(self, data: Any) -> None:
        if not isinstance(data, dict):
            what = "a batch (an array)" if isinstance(data, list) else f"a {type(data).__name__}"
            self.send_error(None, INVALID_REQUEST, f"Invalid request: expected a JSON object, got {what}")
            return
        has_id = "id" in data
        msg_id = data.get("id")
        if has_id and not valid_id(msg_id):
            self.send_error(None, INVALID_REQUEST, f"Invalid request: 'id' must be a string or an integer, "
                                                   f"got {json.dumps(msg_id)[:40]}")
            return
        answer = msg_id if has_id else None
        if data.get("jsonrpc") != "2.0":
            self._refuse(has_id, answer, INVALID_REQUEST, "Invalid request: 'jsonrpc' must be \"2.0\"")
            return
        if "method" not in data:
            if has_id and ("result" in data or "error" in data):
                self._structured(data, None)  # a response to one of our requests
            else:
                self._refuse(has_id, answer, INVALID_REQUEST, "Invalid request: no 'method'")
            return
        method = data["method"]
        if not isinstance(method, str):
            self._refuse(has_id, answer, INVALID_REQUEST, "Invalid request: 'method' must be a string")
            return
        if "params" in data and not isinstance(data["params"], (dict, list, type(None))):
            self._refuse(has_id, answer, INVALID_PARAMS, "Invalid params: $.params must be an object or an array")
            return
        if method == types.CANCEL_REQUEST and not (isinstance(data.get("params"), dict)
                                                   and valid_id(data["params"].get("id"))):
            self._refuse(has_id, answer, INVALID_PARAMS, "Invalid params: $.params.id must be a string or an "
                                                         "integer")  # lsprotocol lets a list through
            return
        if method == types.EXIT:
            self._structured(data, method)
            return
        if self._shutdown:
            self._refuse(has_id, answer, INVALID_REQUEST, f"Invalid request: '{method}' after shutdown")
            return
        if not self.initialize_seen and method != types.INITIALIZE:
            self._refuse(has_id, answer, SERVER_NOT_INITIALIZED, f"Server not initialized: '{method}' before "
                                                                   "initialize")
            return
        if method == types.INITIALIZE and self.initialize_seen:
            self._refuse(has_id, answer, INVALID_REQUEST, "Invalid request: initialize was sent already")
            return
        if method == types.INITIALIZE and has_id:
            if self._structured(data, method):
                self.initialize_seen = True
            return
        self._structured(data, method)

    def _refuse(self, has_id: bool, msg_id: Any, code: int, message: str) -> None:
        """Answer a request with an error; log a notification that would have had it."""
        if has_id:
            self.send_error(msg_id, code, message)
        else:
            log.warning("dropping a notification: %s", message)

    def _structured(self, data: dict[str, Any], method: str | None) -> bool:
        """Structure ``data`` as its method's message type and hand it to pygls; answer
        InvalidParams (naming the fields) if it does not fit. True if handed over."""
        if method is None:
            try:
                message = self.structure_message(data)
            except Exception as exc:
                log.warning("a response to %r that does not fit its type: %s", data["id"], exc)
                waiting = self._request_futures.pop(data["id"], None)
                if waiting is not None and not waiting.done():  # whoever sent the request must not wait forever
                    waiting.set_exception(JsonRpcInvalidParams(f"the client's answer does not fit: {exc}"))
                return False
            self.handle_message(message)
            return True
        is_request = "id" in data
        fallback = JsonRPCRequestMessage if is_request else JsonRPCNotification
        message_type = self.get_message_type(method) or fallback
        if message_type is fallback:
            data = {**data, "params": data.get("params")}  # JSON-RPC lets a request leave params out
        if is_request and message_type is not fallback and "id" not in attr_names(message_type):
            self.send_error(data["id"], INVALID_REQUEST, f"Invalid request: '{method}' is a notification")
            return False
        if not is_request and message_type is not fallback and "id" in attr_names(message_type):
            log.warning("dropping '%s' without an id: it is a request", method)
            return False
        try:
            message = self._converter.structure(data, message_type)
        except (ClassValidationError, IterableValidationError) as exc:
            problems = "; ".join(camel_path(p) for p in cattrs.transform_error(exc, path="$"))
            self._refuse(is_request, data.get("id"), INVALID_PARAMS, f"Invalid params for '{method}': {problems}")
            return False
        except Exception as exc:
            self._refuse(is_request, data.get("id"), INVALID_PARAMS, f"Invalid params for '{method}': {exc}")
            return False
        self.handle_message(message)
        return True


def attr_names(cls: type) -> set[str]:
    return {a.name for a in getattr(cls, "__attrs_attrs__", ())}


async def serve(protocol: EdgeProtocol, read: Callable[[], Awaitable[bytes]], stop: threading.Event) -> None:
    """Read bodies until the stream ends (or ``stop`` is set) and hand each to ``receive``."""
    frames = Frames(read)
    while not stop.is_set():
        body = await frames.next()
        if body is None:
            log.info("the client closed the stream")
            return
        if not protocol.receive(body):
            frames.unread(body)  # it may hold good messages a wrong Content-Length swallowed
        await asyncio.sleep(0)  # let handlers and responses run between messages


def stream_reader(stream: Any) -> Callable[[], Awaitable[bytes]]:
    """``read`` for ``serve`` from a blocking binary stream (stdin). A daemon thread reads
    it, so a read that blocks never holds up the event loop, pygls' thread pool, or the
    process's exit. It reads the file descriptor itself: a daemon thread blocked inside
    a BufferedReader holds its lock, and the interpreter aborts at exit (SIGABRT)."""
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()
    try:
        fd = stream.fileno()
        read: Callable[[int], bytes] = lambda n: os.read(fd, n)  # noqa: E731
    except (AttributeError, OSError, ValueError):  # not a file (a test's BytesIO)
        read = getattr(stream, "read1", None) or stream.read

    def pump() -> None:
        while True:
            try:
                chunk = read(65536)
            except (OSError, ValueError):
                chunk = b""
            try:
                loop.call_soon_threadsafe(chunks.put_nowait, chunk)
            except RuntimeError:  # the loop is closed
                return
            if not chunk:
                return

    threading.Thread(target=pump, name="sylk-stdin", daemon=True).start()
    return chunks.get


async def serve_stream(protocol: EdgeProtocol, stream: Any, stop: threading.Event) -> None:
    await serve(protocol, stream_reader(stream), stop)
