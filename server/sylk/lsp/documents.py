"""``sylk/indexDocument`` and ``sylk/removeDocument``: virtual documents (notes, prompts,
responses, fetched pages) indexed beside the workspace's files (see ``documents.py``).
``sylk/documentText``: the text behind a ``sylk:`` URI (lsp/uris.py), which the editors
show for a hit that has no file: a virtual document's, or a commit's message and files."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from ..engine import documents, gitmeta
from ..ingest.gitsync import Commit
from . import convert, uris
from .handlers import feature

if TYPE_CHECKING:
    from ..engine.workspace import Workspace
    from .folders import Folder
    from .server import SylkServer

INDEX_DOCUMENT = "sylk/indexDocument"
REMOVE_DOCUMENT = "sylk/removeDocument"
DOCUMENT_TEXT = "sylk/documentText"


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


def commit_text(c: Commit) -> str:
    """A commit as ``sylk/documentText`` shows it: sha, author, date, message, and the
    workspace's files it changed, one a line."""
    when = datetime.fromtimestamp(c.time, timezone.utc).isoformat() if c.time else "unknown"
    files = [f"Changed files ({len(c.files)}):", *c.files] if c.files else \
        ["No changed files of its own (a merge commit, or one outside this folder)."]
    return "\n".join([f"commit {c.sha}", f"Author: {c.author}", f"Date:   {when}", "", c.message.rstrip(), "",
                      *files, ""])


def text_of(engines: list[Workspace], target: uris.SylkUri) -> dict[str, Any] | None:
    """The answer of ``sylk/documentText`` from the first folder's index that has
    ``target`` (several folders: in the client's order), or None."""
    for engine in engines:
        if target.kind == uris.DOCUMENT:
            doc = documents.get(engine, target.key)
            if doc is not None:
                return {"text": doc.text, "languageId": "markdown", "title": doc.title or doc.id}
        else:
            c = gitmeta.commit(engine, target.key)
            if c is not None:
                summary = c.message.strip().split("\n", 1)[0]
                return {"text": commit_text(c), "title": f"{c.sha[:12]} {summary}".rstrip()}
    return None


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
        return {**doc.summary(), "chunks": engine.chunks_in(doc.path)}

    @feature(server, "documents", REMOVE_DOCUMENT)
    async def remove_document(ls: Any, params: Any) -> Any:
        raw = convert.params_dict(params)
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
            raise JsonRpcInvalidParams("id: required, the document's id")
        folder = _folder(ls, raw)
        removed = await _on_index_thread(ls, f"removing document {raw['id']}", documents.remove_document,
                                         folder.engine, raw["id"])
        return {"id": raw["id"], "removed": removed}

    @feature(server, "documents", DOCUMENT_TEXT)
    async def document_text(ls: Any, params: Any) -> Any:
        raw = convert.params_dict(params)
        uri = raw.get("uri") if isinstance(raw, dict) else None
        if not isinstance(uri, str):
            raise JsonRpcInvalidParams("uri: required, the sylk:// URI of a hit "
                                       "(sylk://document/<id> or sylk://commit/<sha>)")
        try:
            target = uris.parse(uri)
        except uris.UriError as exc:
            raise JsonRpcInvalidParams(f"uri: {exc}") from None
        engines = [engine for _folder, engine in ls.engines()]
        found = await asyncio.get_running_loop().run_in_executor(ls.thread_pool, text_of, engines, target)
        if found is None:
            what = f"document {target.key!r}" if target.kind == uris.DOCUMENT else f"commit {target.key}"
            where = "any workspace folder's index" if engines else "an index (no workspace folder is open yet)"
            raise JsonRpcInvalidParams(f"uri: no {what} in {where}")
        return {"uri": uri, **found}
