"""``sylk/indexDocument`` and ``sylk/removeDocument``: virtual documents (notes, prompts,
responses, fetched pages) indexed beside the workspace's files (see ``documents.py``)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from ..engine import documents
from . import convert
from .handlers import feature

if TYPE_CHECKING:
    from .folders import Folder
    from .server import SylkServer

INDEX_DOCUMENT = "sylk/indexDocument"
REMOVE_DOCUMENT = "sylk/removeDocument"


def _folder(ls: SylkServer, raw: dict[str, Any]) -> Folder:
    """The folder named by ``folder`` (a workspace folder URI), else the first one."""
    from pathlib import Path

    uri = raw.get("folder")
    if uri is not None:
        fs = to_fs_path(uri) if isinstance(uri, str) else None
        folder = ls.folders.get(Path(fs).resolve()) if fs else None
        if folder is None:
            raise JsonRpcInvalidParams("folder: not one of the workspace folders")
    else:
        folder = next(iter(ls.folders.values()), None)
    if folder is None or folder.engine is None:
        raise JsonRpcInvalidParams("folder: no workspace folder is indexed yet")
    if not folder.engine.writable:
        raise JsonRpcInvalidParams("folder: its index is read-only (another Sylk process writes it)")
    return folder


async def _on_index_thread(ls: SylkServer, name: str, fn: Any, *args: Any) -> Any:
    fut = ls.submit(name, fn, *args)
    if fut is None:
        raise JsonRpcInvalidParams("the server is shutting down")
    return await asyncio.wrap_future(fut)


def setup(server: SylkServer) -> None:

    # pygls resolves the annotations of custom handlers at run time: keep them to builtins
    @feature(server, "documents", INDEX_DOCUMENT)
    async def index_document(ls: Any, params: Any) -> Any:
        raw = convert.params_dict(params)
        if not isinstance(raw, dict):
            raise JsonRpcInvalidParams("params: expected an object with id and text")
        folder = _folder(ls, raw)
        engine = folder.engine

        def run() -> documents.Document:
            return documents.index_document(
                engine, raw.get("id"), raw.get("text"), type=raw.get("type", "note"), title=raw.get("title", ""),
                tags=raw.get("tags") or (), metadata=raw.get("metadata"))
        try:
            doc = await _on_index_thread(ls, f"indexing document {raw.get('id')}", run)
        except documents.DocumentError as exc:
            raise JsonRpcInvalidParams(str(exc)) from exc
        folder.embed_soon([doc.path])
        return {**doc.summary(), "chunks": len(engine.manifest.chunk_ids([doc.path]))}

    @feature(server, "documents", REMOVE_DOCUMENT)
    async def remove_document(ls: Any, params: Any) -> Any:
        raw = convert.params_dict(params)
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
            raise JsonRpcInvalidParams("id: required, the document's id")
        folder = _folder(ls, raw)
        removed = await _on_index_thread(ls, f"removing document {raw['id']}", documents.remove_document,
                                         folder.engine, raw["id"])
        return {"id": raw["id"], "removed": removed}
