"""The ``sylk/search`` request (and ``workspace/executeCommand sylk.search``): the params
read into a request, over_folders answers it, the answer converted to the protocol's."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from .. import over_folders
from ..config import Settings
from .. import wire as shared
from ..errors import FieldError
from ..params import line_request_from_params, request_from_params, wants_lines
from . import convert, wire
from .handlers import command, feature

if TYPE_CHECKING:
    from .server import SylkServer

SEARCH = "sylk/search"
CMD_SEARCH = "sylk.search"
OPENING = "the index is still opening"


async def run(ls: SylkServer, params: Any) -> dict[str, Any]:
    """A ranked search, or the lines of a line search (``wants_lines``): the params read
    with each folder's settings, answered by over_folders on a worker thread. Malformed
    params (a folder's settings making them so, a line search's pattern) are InvalidParams."""
    raw = convert.params_dict(params)
    lines = isinstance(raw, dict) and wants_lines(raw)
    read = line_request_from_params if lines else request_from_params

    def build(settings: Settings) -> Any:  # with each folder's settings
        return read(raw, settings.search)
    folders = [f for f, _e in ls.engines()]
    try:
        req = build(ls.settings)
        if not folders:
            raise over_folders.NoAnswer(OPENING)
        over = over_folders.grep if lines else over_folders.search
        answered = await asyncio.get_running_loop().run_in_executor(ls.thread_pool, over, folders, build)
    except FieldError as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc
    except over_folders.NoAnswer as exc:
        return wire.no_answer_to_wire(req, raw.get("query", ""), str(exc))
    result = answered.merged.result
    where = answered.folder_of_hits()
    if lines:
        return shared.line_result_json(result, [wire.line_hit_to_wire(f.root, h)
                                                for h, f in zip(result.hits, where, strict=True)])
    out = shared.result_json(result, [wire.hit_to_wire(f.root, h, wire.documents_of(f.engine))
                                      for h, f in zip(result.hits, where, strict=True)])
    if req.related_files:
        several = len(answered.folders) > 1
        out["relatedFiles"] = [wire.related_file_to_wire(r, f.root if several else None) for f, r in answered.related]
    out.update(shared.agent_json(over_folders.prepared(req), result, semantic_ready=answered.semantic_ready))
    return out


def setup(server: SylkServer) -> None:
    # pygls resolves the annotations of custom handlers at run time: keep them to builtins
    @feature(server, "search", SEARCH)
    async def sylk_search(ls: Any, params: Any) -> Any:
        return await run(ls, params)

    @command(server, "search", CMD_SEARCH)
    async def cmd_search(ls: Any, *args: Any) -> Any:
        params = args[0] if len(args) == 1 else (args[0][0] if args and isinstance(args[0], list) and args[0] else {})
        return await run(ls, params)
