"""The one way a Sylk handler is registered: ``feature`` and ``command`` wrap it so that a
failing feature is contained. A handler that raises is logged as
``Error in '<feature>.<method>'`` with its traceback; a request is answered with a
JSON-RPC InternalError (-32603) whose message is that line and the exception's, a
notification just logs. JSON-RPC errors a handler raises on purpose (InvalidParams for a
bad request) pass through unchanged. No request goes unanswered, the server stays up.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError

from ..errors import describe
from ..jobs import FOREGROUND

if TYPE_CHECKING:
    from .server import SylkServer

log = logging.getLogger("sylk")
F = TypeVar("F", bound=Callable[..., Any])


def is_notification(method: str) -> bool:
    """An LSP notification (no answer expected); Sylk's own methods are all requests."""
    known = types.METHOD_TO_TYPES.get(method)
    return known is not None and known[1] is None


def contained(feature: str, method: str, fn: F, *, foreground: bool = True) -> F:
    """``fn`` with its failures contained (see the module docstring); while it answers a
    request (``foreground``), the background embedding waits (jobs.Foreground)."""
    where = f"{feature}.{method}"
    notification = is_notification(method)

    def failed(exc: Exception) -> None:
        log.error("Error in '%s'", where, exc_info=exc)
        if not notification:
            raise JsonRpcInternalError(f"Error in '{where}': {describe(exc)}") from None

    answering = FOREGROUND.request if foreground and not notification else contextlib.nullcontext

    if asyncio.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            try:
                with answering():
                    return await fn(*args, **kwargs)
            except JsonRpcException:
                raise
            except Exception as exc:
                return failed(exc)
        return run_async  # type: ignore[return-value]

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            with answering():
                return fn(*args, **kwargs)
        except JsonRpcException:
            raise
        except Exception as exc:
            return failed(exc)
    return run  # type: ignore[return-value]


def feature(server: SylkServer, name: str, method: str, options: Any = None, *,
            thread: bool = False, foreground: bool = True) -> Callable[[F], F]:
    """Register ``fn`` for ``method`` as part of the feature ``name``; ``thread``: run it on
    pygls' thread pool (a sync handler that reads files or parses); ``foreground=False``:
    a request the background embedding need not wait for (a status poll)."""
    def register(fn: F) -> F:
        wrapped = contained(name, method, fn, foreground=foreground)
        if thread:
            server.thread()(wrapped)  # marked before registration, so pygls runs it in a thread
        server.feature(method, options)(wrapped)
        return wrapped
    return register


def command(server: SylkServer, name: str, command_name: str) -> Callable[[F], F]:
    """Register ``fn`` for ``workspace/executeCommand`` of ``command_name``."""
    def register(fn: F) -> F:
        wrapped = contained(name, f"{types.WORKSPACE_EXECUTE_COMMAND}:{command_name}", fn)
        server.command(command_name)(wrapped)
        return wrapped
    return register
