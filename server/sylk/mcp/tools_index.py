"""The tools about the index itself: ``get_status``, ``index`` (every file, or given
files and folders), ``reindex`` (``index`` without paths) and ``clear_index``. They run
the service's own steps (``WorkspaceService.start_indexing``, ``index_paths``,
``clear``), as the language server's commands do."""

from __future__ import annotations

import concurrent.futures as cf
import time
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from .. import wire as shared
from ..engine.indexer import IndexReport
from ..steps import INDEXING_PATHS
from . import wire
from .docs import CLEAR_INDEX_DOC, GET_STATUS_DOC, INDEX_DOC, REINDEX_DOC
from .folders import Folder, Folders
from .tools_search import READ_ONLY

REINDEX_WAIT_S = 45.0  # index(wait=true) reports "still running" after this (clients time out)
PROGRESS_EVERY_S = 0.5  # progress notifications while an index run is waited for
REINDEXING = "Re-indexing workspace"

SkippedChoice = Literal[shared.SKIPPED_CHOICES]  # type: ignore[valid-type]
INDEXES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def _targets(folders: Folders, paths: list[str] | None) -> tuple[dict[Folder, list[str] | None], dict[str, Any]]:
    """What to index in each folder (None: every file) for ``paths`` (every folder when
    None), and what the answer says about the paths: those the ignore rules leave out
    (``ignored``) and those neither on disk nor indexed (``notFound``)."""
    if not paths:
        return {f: None for f in folders.all()}, {}
    targets: dict[Folder, list[str] | None] = {}
    ignored: list[str] = []
    missing: list[str] = []
    for path in paths:
        folder, rel = folders.locate(path, "paths")
        if not rel or targets.get(folder, []) is None:
            targets[folder] = None  # the folder itself: every file
            continue
        engine = folder.engine
        on_disk = (folder.root / rel).exists()
        if engine is not None and engine.scan_ignored(rel, (folder.root / rel).is_dir()):
            ignored.append(path)
        elif not on_disk and (engine is None or not engine.holds(rel)):
            missing.append(path)
        targets.setdefault(folder, []).append(rel)  # type: ignore[union-attr]
    about: dict[str, Any] = {"paths": list(paths)}
    if ignored:
        about["ignored"] = ignored
    if missing:
        about["notFound"] = missing
    return targets, about


def _embedding_note(folder: Folder, report: IndexReport | None) -> str:
    engine = folder.engine
    if folder.service.semantic_state() in ("off", "unavailable"):
        return "off: semantic search is unavailable, search_code answers by words only"
    if report is None or engine is None:
        return "starts in the background when the index run ends; poll get_status"
    counts = engine.chunk_counts()
    if counts["pending"]:
        return (f"running in the background ({counts['embedded']} of {counts['chunks']} chunks embedded); "
                "poll get_status until pending is 0")
    if counts["failed"]:
        return (f"done: {counts['embedded']} chunks embedded; {counts['failed']} could not be embedded "
                "(embedFailures in get_status; the server log names them)")
    return "done: every chunk is embedded"


def _progress(folders: list[Folder]) -> tuple[int, int]:
    done = sum(f.service.index_progress.done for f in folders)
    return done, max(done, sum(f.service.index_progress.total for f in folders))


async def _index(folders: Folders, targets: dict[Folder, list[str] | None], wait: bool,
                 ctx: Context) -> list[dict[str, Any]]:
    """Start the runs (every file, or the paths) and wait for them (at most REINDEX_WAIT_S,
    telling the client the files done so far); each folder's answer."""
    runs: dict[Folder, cf.Future] = {}
    for folder, rels in targets.items():
        fut = folder.service.start_indexing(REINDEXING) if rels is None else folder.service.index_paths(
            rels, INDEXING_PATHS)
        if fut is None:
            raise ToolError("the server is shutting down")
        runs[folder] = fut
    if wait:
        pending = set(runs.values())
        deadline = time.monotonic() + REINDEX_WAIT_S
        while pending and time.monotonic() < deadline:
            _done, pending = await anyio.to_thread.run_sync(cf.wait, pending, PROGRESS_EVERY_S)
            done, total = _progress(list(runs))
            await ctx.report_progress(done, total or None, f"{done} of {total} files indexed" if total else
                                      "scanning files")
    out: list[dict[str, Any]] = []
    for folder, fut in runs.items():
        entry = folders.tagged(folder, {})
        report: IndexReport | None = None
        if wait and fut.done():
            try:
                report = fut.result()
            except Exception as exc:
                raise ToolError(f"indexing {folder.root} failed: {exc}") from exc
        if report is not None:
            entry["indexed"] = "done"
            entry["changes"] = wire.report_json(report)
        else:
            entry["indexed"] = "running in the background"
        entry["embedding"] = await anyio.to_thread.run_sync(_embedding_note, folder, report)
        out.append(entry)
    return out


def _answer(entries: list[dict[str, Any]], about: dict[str, Any]) -> dict[str, Any]:
    """One folder's answer as it is; several folders' under ``folders``."""
    if len(entries) == 1:
        return {**entries[0], **about}
    done = all(e["indexed"] == "done" for e in entries)
    return {"indexed": "done" if done else "running in the background", "folders": entries, **about}


def setup(app: MCPServer, folders: Folders) -> None:
    @app.tool(description=GET_STATUS_DOC, annotations=READ_ONLY)
    async def get_status(
        skipped: Annotated[SkippedChoice, Field(description="Skipped files to list: the first 20 of each reason "
                                                            "(sample), or every one (all)")] = "sample",
    ) -> dict[str, Any]:
        return await anyio.to_thread.run_sync(folders.status, shared.skipped_limit(skipped))

    @app.tool(description=INDEX_DOC, annotations=INDEXES)
    async def index(
        ctx: Context,
        paths: Annotated[list[str] | None, Field(description="Files or folders to index (added, changed or "
                                                             "deleted), relative to the workspace root or "
                                                             "absolute; none: every file")] = None,
        wait: Annotated[bool, Field(description="Wait for the files to be indexed (embedding always continues in "
                                                "the background)")] = True,
    ) -> dict[str, Any]:
        engines = await folders.engines()
        targets, about = await anyio.to_thread.run_sync(_targets, folders, paths)
        read_only = [f for f, ws in engines if f in targets and not ws.writable]
        if read_only and len(read_only) == len(targets):
            ws = read_only[0].engine
            reason = ws.read_only_reason if ws is not None else None
            raise ToolError(f"cannot index: {reason or 'the index is read-only'}; the process that writes it "
                            "keeps it up to date")
        for folder in read_only:
            del targets[folder]
        return _answer(await _index(folders, targets, wait, ctx), about)

    @app.tool(description=REINDEX_DOC, annotations=INDEXES)
    async def reindex(
        ctx: Context,
        wait: Annotated[bool, Field(description="Wait for the files to be indexed (embedding always continues in "
                                                "the background)")] = True,
    ) -> dict[str, Any]:
        engines = await folders.engines()
        if not all(ws.writable for _f, ws in engines):
            ws = next(ws for _f, ws in engines if not ws.writable)
            raise ToolError(f"cannot reindex: {ws.read_only_reason or 'the index is read-only'}; the process "
                            "that writes it keeps it up to date")
        return _answer(await _index(folders, {f: None for f, _ws in engines}, wait, ctx), {})

    @app.tool(description=CLEAR_INDEX_DOC,
              annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                                          open_world_hint=False))
    async def clear_index(
        folder: Annotated[str | None, Field(description="The workspace folder whose index to clear (its path or "
                                                        "name), when several are served; none: every one")] = None,
    ) -> dict[str, Any]:
        every = await folders.known()
        named = [f for f in every if folder in (f.name, str(f.root))]
        if folder is None:
            targets = every
        elif named:
            targets = named[:1]
        else:
            found, rel = folders.locate(folder, "folder")
            if rel:
                raise ToolError(f"invalid argument folder: {folder} is not a workspace folder (they are: "
                                + ", ".join(str(f.root) for f in every) + ")")
            targets = [found]
        cleared: list[dict[str, Any]] = []
        for target in targets:
            entry: dict[str, Any] = {"root": str(target.root), "removed": None, "error": None}
            fut = target.service.clear(REINDEXING)
            if fut is None:
                entry["error"] = "the server is shutting down"
            else:
                try:
                    removed = await anyio.to_thread.run_sync(fut.result)
                except Exception as exc:  # an index another process writes
                    entry["error"] = str(exc)
                else:
                    entry["removed"] = str(removed) if removed else None
            cleared.append(entry)
        if all(e["error"] for e in cleared):
            raise ToolError("cannot clear the index: " + "; ".join(e["error"] for e in cleared))
        return {"cleared": cleared,
                "indexing": "the index is being built again from scratch in the background: search answers "
                            "grow as files are indexed; poll get_status until state is ready"}
