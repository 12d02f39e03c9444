"""``sylk mcp``: the same engine for agents, over the Model Context Protocol on stdio.

Tools: ``search_code`` (hybrid, lexical or semantic search over code chunks),
``search_symbol`` (fuzzy definitions by name), ``get_status`` and ``reindex``.

Like the language server, the index opens and is brought up to date in the
background, then pending chunks are embedded, and changes on disk are followed:
tools answer at once from what is indexed, and their results say how complete
the index is. This module is a thin front end: requests are parsed by
``query.request_from_params`` (the same filters and checks as ``sylk/search``),
results are shaped by the core's JSON helpers shared with the CLI.

Only MCP messages go to stdout (the SDK points the process's fd 1 at stderr while
it serves, so worker processes cannot write there either); logs go to stderr.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import sys
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from .. import __version__, config
from ..engine.indexer import IndexReport, Progress
from ..engine.workspace import Workspace, semantic_state
from ..errors import IndexError_
from ..jobs import Jobs
from ..search.hybrid import result_json
from ..search.query import MODES, TYPES, QueryError, Weights, request_from_params
from ..search.roles import ROLES
from ..search.symbol_search import symbol_json
from ..watch import Watcher

log = logging.getLogger("sylk.mcp")

MAX_LIMIT = 100  # results per page: an agent's context is the scarce thing
MAX_SYMBOL_WINDOW = 2000  # offset + limit of symbol pages
OPEN_WAIT_S = 30.0  # a tool waits this long for the index to open before it answers "not yet"
REINDEX_WAIT_S = 45.0  # reindex(wait=true) reports "still running" after this (clients time out)

ModeName = Literal[MODES]  # type: ignore[valid-type]
RoleName = Literal[ROLES]  # type: ignore[valid-type]

INSTRUCTIONS = """\
Sylk searches this workspace's code locally: an index of symbols (definitions), \
full text (BM25) and meaning (embeddings of every function, class, section and file).
- search_symbol: you know (part of) a name: fuzzy, camelCase/snake_case aware \
("hrp" finds HttpRetryPolicy, "Repo.get" finds methods named get* of *Repo* classes). \
Fast and exact about definitions.
- search_code: you know words that appear in the code (mode "lexical"), or you can \
describe what the code does (mode "semantic"), or both (mode "hybrid", the default). \
Hits are chunks (a function, a class, a markdown section) with a snippet and line range.
- get_status: how much is indexed and embedded, and whether work is running.
- reindex: after you changed files, to be sure the index has them (changes on disk are \
usually picked up by themselves within a second or two).
Results are pages: pass the returned nextOffset as offset for more."""

SEARCH_CODE_DOC = """\
Search the workspace's code and docs by words and by meaning; returns ranked chunks \
(functions, methods, classes, markdown sections, config blocks, file headers) with \
path, 1-based line range, symbol, kind, language, score, per-side ranks and a snippet.

Modes: "lexical" matches the words of the query (identifiers are split, so "user id" \
finds get_user_by_id; best for names, error messages, exact terms). "semantic" matches \
meaning with a local embedding model (best for natural-language questions like "where \
do we retry failed HTTP calls"; needs the chunks embedded, see "semantic" in the result). \
"hybrid" (default) fuses both rankings and is the right choice when unsure. \
To find a definition by name, search_symbol is faster and more precise.

Filters narrow the results (all optional, combined with AND; values within one filter \
are OR): languages (e.g. ["python", "go"]), types (source_code, markdown, config, text, ...), \
paths (gitignore-style globs relative to the workspace root, e.g. ["app/**", "*.go"]), \
kinds (function, method, class, struct, interface, heading, ...), roles (test, \
repository, service, handler, command, query, entity: told from names and paths). The \
same filters work inline in the query: "lang:python path:app/** kind:function role:test \
retry backoff".

Pagination: "totalHits" counts the matches found, "nextOffset" is the offset of the \
next page (null when there is none). "semantic" says how complete the semantic side is: \
while embedding runs, semantic and hybrid results cover only the embedded part."""

SEARCH_SYMBOL_DOC = """\
Find symbol definitions (classes, functions, methods, types, constants, markdown headings) \
by name, fuzzily: exact > prefix > camel-hump/snake-word initials ("hrp" -> \
HttpRetryPolicy, "gubi" -> get_user_by_id) > substring > subsequence, types before \
functions on ties. "Container.name" restricts to members of a matching container \
("HttpRetryPolicy.delay"). Returns name, kind, container, path, 1-based line and column \
of the name, end line of the definition, and signature. Use it when you know (part of) \
a name; use search_code for words inside bodies or for descriptions of behaviour. \
Pagination: pass the returned nextOffset as offset (null: no more)."""

GET_STATUS_DOC = """\
The index of this workspace: files, symbols, chunks, how many chunks are embedded and \
pending (semantic search covers only embedded chunks), languages, skipped files by \
reason, the last indexing run, and what runs now ("state": opening, indexing, \
embedding or ready, with progress). Poll it after reindex to follow the embedding."""

REINDEX_DOC = """\
Bring the index up to date with the files on disk: only added, changed and deleted \
files are processed (seconds, usually), then their new chunks are embedded in the \
background. With wait=true (default) it returns when the files are indexed (or after \
about 45 s, saying the run continues in the background); with wait=false it returns at \
once. The answer says which ("indexed": done or running), what changed, and whether \
embedding runs ("embedding"); follow progress with get_status."""


class Service:
    """One workspace served over MCP: its index (a core ``Workspace``), opened, indexed and
    embedded on background threads, and kept current by a file watcher.

    Like the language server: one indexing thread (opening, index runs, disk changes)
    and one embedding thread, so searches and symbol lookups never wait for them."""

    def __init__(self, root: Path, settings: config.Settings) -> None:
        self.root = root
        self.settings = settings
        self.engine: Workspace | None = None
        self.opened = threading.Event()  # the open was tried (engine set, or open_error)
        self.open_error: str | None = None
        self.notes: list[str] = []  # things the user should know (rebuilt, repaired, model problems)
        self.cancel = threading.Event()
        self.indexing = False
        self.index_progress: tuple[int, int] = (0, 0)  # files done, total of the running run
        self.embedding = False
        self.embed_progress: tuple[int, int] = (0, 0)  # chunks
        self.last_report: IndexReport | None = None
        self.last_run_at: float | None = None
        self.last_embed: dict[str, Any] | None = None
        self.watcher: Watcher | None = None
        self._jobs = Jobs()
        self._changes: set[str] = set()
        self._changes_lock = threading.Lock()
        self._sync_scheduled = False
        self._embed_sched_lock = threading.Lock()
        self._embed_scheduled = False

    # jobs -------------------------------------------------------------------
    def submit(self, name: str, fn: Callable[..., Any], *args: Any, embed: bool = False) -> cf.Future | None:
        """Run ``fn`` on the indexing (or embedding) thread; see ``jobs.Jobs``."""
        return self._jobs.submit(name, fn, *args, embed=embed)

    def start(self) -> None:
        self.indexing = True  # from now until the first run is over: results may be partial
        self.submit("opening the index", self._open)
        self.submit("indexing", self._index, None)

    def _open(self) -> None:
        self._open_engine()
        if self.engine is None:
            self.indexing = False

    def _open_engine(self) -> None:
        try:
            ws = Workspace(self.root, self.settings, load_symbols=True)
        except IndexError_ as exc:
            self.open_error = str(exc)
            log.error("%s", exc)
            return
        except Exception as exc:  # a damaged store the checks at open did not catch, ...
            self.open_error = f"cannot open the index: {exc}; 'sylk index --repair {self.root}' rebuilds it"
            log.exception("opening the index failed")
            return
        else:
            for note in (ws.rebuilt_reason and f"rebuilt the index ({ws.rebuilt_reason})", ws.repair_note,
                         ws.read_only_reason):
                if note:
                    self.notes.append(note)
                    log.info("%s", note)
            self.engine = ws
            if not ws.writable:  # another process indexes: nothing to wait for here
                self.indexing = False
                self.embed_soon()  # loads the model for searches; the writer embeds
        finally:
            self.opened.set()

    def follow_writer(self) -> None:
        """A read-only index: follow the writer's runs (``Workspace.follow_writer``)."""
        if self.engine is not None:
            self.engine.follow_writer()

    def _index(self, paths: list[str] | None) -> IndexReport | None:
        """An index run (all files, or ``paths``) on the indexing thread, then embedding."""
        engine = self.engine
        try:
            if engine is None or not engine.writable or self.cancel.is_set():
                return None
            self.indexing, self.index_progress = True, (0, 0)

            def progress(p: Progress) -> None:
                if p.phase == "index":
                    self.index_progress = (p.done, p.total)

            report = engine.index(progress=progress, cancel=self.cancel, paths=paths)
        finally:
            self.indexing = False
        self.last_report, self.last_run_at = report, time.time()
        log.info("%s", report.summary())
        if paths is None:
            self.start_watching()
        self.embed_soon()
        return report

    def index_now(self) -> cf.Future | None:
        """Queue an incremental run of the whole workspace (reindex)."""
        return self.submit("reindexing", self._index, None)

    def embed_soon(self) -> None:
        """Embed what is pending after the running pass (if any): one pass queued at most."""
        with self._embed_sched_lock:
            if self._embed_scheduled:
                return
            self._embed_scheduled = True
        self.submit("embedding", self._embed, embed=True)

    def _embed(self) -> None:
        with self._embed_sched_lock:
            self._embed_scheduled = False
        engine = self.engine
        if engine is None or self.cancel.is_set():
            return
        note = engine.load_semantic()
        if note:
            self.notes.append(note)
            log.info("%s", note)
        if not engine.semantic_ready or not engine.writable:
            return
        self.embedding, self.embed_progress = True, (0, engine.manifest.chunk_counts()["pending"])
        t0 = time.perf_counter()
        done = 0

        def progress(n: int, total: int) -> None:
            self.embed_progress = (n, total)

        try:
            done = engine.embed_pending(progress=progress, cancel=self.cancel)
        finally:
            self.embedding = False
            took = time.perf_counter() - t0
            if done:
                self.last_embed = {"chunks": done, "seconds": round(took, 2), "at": _iso(time.time())}
                log.info("%d chunks embedded in %.1fs", done, took)

    # changes on disk ---------------------------------------------------------
    def start_watching(self) -> None:
        engine = self.engine
        if self.watcher is not None or engine is None or not engine.writable or not self.settings.watch \
                or self.cancel.is_set():
            return
        self.watcher = Watcher(engine.root, self._queue_changes, engine.scan_ignored,
                               on_error=lambda msg: self.notes.append(msg)).start()

    def _queue_changes(self, rels: list[str]) -> None:
        with self._changes_lock:
            self._changes.update(rels)
            if self._sync_scheduled:
                return
            self._sync_scheduled = True
        self.submit("indexing changes on disk", self._apply_changes)

    def _apply_changes(self) -> None:
        with self._changes_lock:
            rels, self._changes, self._sync_scheduled = sorted(self._changes), set(), False
        if rels:
            self._index(rels)

    # state -----------------------------------------------------------------------
    def state(self) -> str:
        if self.engine is None:
            return "unavailable" if self.opened.is_set() else "opening"
        if self.indexing:
            return "indexing"
        return "embedding" if self.embedding else "ready"

    def semantic_state(self) -> str:
        return semantic_state(self.settings, self.engine)

    def semantic_summary(self, index: dict[str, Any]) -> dict[str, Any]:
        """How complete the semantic side of a search is, in one object."""
        chunks, embedded = index.get("chunks", 0), index.get("embedded", 0)
        state = self.semantic_state()
        out: dict[str, Any] = {"state": state, "embeddedChunks": embedded, "totalChunks": chunks,
                               "complete": state == "ready" and index.get("pending", 0) == 0}
        if state in ("off", "unavailable"):
            out["note"] = "semantic search is unavailable; results are lexical only" + (
                f" ({self.engine.semantic_message})" if self.engine and self.engine.semantic_message else "")
        elif not out["complete"]:
            out["note"] = (f"{embedded} of {chunks} chunks embedded; embedding continues in the background, "
                           "so semantic and hybrid results may miss the rest")
        return out

    def status(self) -> dict[str, Any]:
        engine = self.engine
        out: dict[str, Any] = {"root": str(self.root), "state": self.state()}
        if engine is None:
            if self.open_error:
                out["error"] = self.open_error
            return out
        st = engine.status()
        out.update({
            "files": st["files"], "symbols": st["symbols"],
            "chunks": st.get("chunks", 0), "embedded": st.get("embedded", 0), "pending": st.get("pending", 0),
            "languages": st["languages"],
            "lastIndexed": _iso(st["lastIndexed"]),
            "indexDir": st["indexDir"], "indexBytes": st["indexBytes"],
            "readOnly": st["readOnly"],
        })
        if engine.read_only_reason:
            out["readOnlyReason"] = engine.read_only_reason
        if st["skipped"]:
            out["skipped"] = dict(Counter(s["reason"] for s in st["skipped"]).most_common())
        out["indexing"] = {"active": self.indexing, "filesDone": self.index_progress[0],
                           "filesTotal": self.index_progress[1]}
        out["embedding"] = {"active": self.embedding, "chunksDone": self.embed_progress[0],
                            "chunksTotal": self.embed_progress[1], "state": self.semantic_state(),
                            "model": engine.embedder.model_id if engine.embedder else None}
        if engine.semantic_message:
            out["embedding"]["message"] = engine.semantic_message
        if self.last_embed:
            out["embedding"]["lastRun"] = self.last_embed
        if self.last_report is not None:
            out["lastRun"] = {**_report_json(self.last_report), "at": _iso(self.last_run_at)}
        watching = self.watcher is not None and self.watcher.active and self.watcher.ready.is_set()
        out["watch"] = {"active": watching, **({"error": self.watcher.error} if self.watcher and self.watcher.error
                                               else {})}
        if self.notes:
            out["notes"] = list(self.notes)
        return out

    def close(self) -> None:
        """Stop the watcher and the jobs, then close the index (it stays consistent)."""
        self.cancel.set()
        if self.watcher is not None:
            self.watcher.stop()
        self._jobs.shutdown()
        if self.engine is not None:
            self.engine.close()
            self.engine = None


def _result_within(fut: cf.Future, seconds: float) -> Any:
    try:
        return fut.result(seconds)
    except cf.TimeoutError:
        return None


def _iso(t: float | None) -> str | None:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(t)) if t else None


def _report_json(r: IndexReport) -> dict[str, Any]:
    return {"added": r.added, "changed": r.changed, "deleted": r.deleted, "unchanged": r.unchanged,
            "files": r.files, "symbols": r.symbols, "seconds": round(r.seconds, 3),
            "cancelled": r.cancelled, "summary": r.summary()}


# QueryError fields (``sylk/search`` params) -> the tool's argument names
_ARGUMENT = {"query": "query", "mode": "mode", "limit": "limit", "offset": "offset",
             "contextLines": "context_lines", "filters.languages": "languages", "filters.types": "types",
             "filters.paths": "paths", "filters.kinds": "kinds", "filters.roles": "roles"}


def _argument_error(exc: QueryError) -> ToolError:
    """A QueryError as a tool error naming the argument (an inline filter is part of ``query``)."""
    name = _ARGUMENT.get(exc.field)
    message = str(exc).split(": ", 1)[1] if ": " in str(exc) else str(exc)
    if name is None:
        return ToolError(f"invalid argument query: inline filter {exc.field}: {message}")
    return ToolError(f"invalid argument {name}: {message}")


def _page(offset: int, shown: int, more: bool) -> int | None:
    return offset + shown if more and shown else None


def create_server(root: Path, settings: config.Settings) -> tuple[MCPServer, Service]:
    service = Service(root, settings)

    @asynccontextmanager
    async def lifespan(_app: MCPServer) -> AsyncIterator[None]:
        service.start()
        try:
            yield None
        finally:
            await anyio.to_thread.run_sync(service.close)

    app = MCPServer("sylk", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan,
                    log_level="WARNING")

    async def engine() -> Workspace:
        """The open index; waits (briefly) while it opens."""
        if not service.opened.is_set():
            await anyio.to_thread.run_sync(service.opened.wait, OPEN_WAIT_S)
        if service.engine is None:
            raise ToolError(service.open_error or "the index is still opening; try again in a few seconds")
        return service.engine

    def _indexing_note() -> dict[str, Any]:
        if not service.indexing:
            return {"indexing": False}
        return {"indexing": True, "note": "the index is being updated: results may miss files not indexed yet "
                                          "(get_status shows the progress)"}

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @app.tool(description=SEARCH_CODE_DOC, annotations=read_only)
    async def search_code(
        query: Annotated[str, Field(description="Words, an identifier, or a description of what the code does; "
                                                "may hold inline filters (lang:go path:src/** kind:function)")],
        mode: Annotated[ModeName, Field(description="hybrid (default): words and meaning fused; lexical: words "
                                                    "only; semantic: meaning only")] = settings.search.mode,
        languages: Annotated[list[str] | None, Field(description="Only these languages, e.g. python, go, "
                                                                 "typescript, rust, java, markdown")] = None,
        types: Annotated[list[str] | None, Field(description="Only these document types: "
                                                             + ", ".join(TYPES)
                                                             + ", or a virtual document type (note, ...); "
                                                             "git_commit searches commit messages")] = None,
        paths: Annotated[list[str] | None, Field(description="Only files matching these gitignore-style globs, "
                                                             "relative to the workspace root")] = None,
        kinds: Annotated[list[str] | None, Field(description="Only chunks of these kinds: function, method, "
                                                             "class, struct, interface, heading, ...")] = None,
        roles: Annotated[list[RoleName] | None, Field(description="Only code with these roles, told from names "
                                                                  "and paths (test code, repositories, ...)")] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Hits per page")] = min(
            settings.search.limit, MAX_LIMIT),
        offset: Annotated[int, Field(ge=0, description="Hits to skip: the nextOffset of the previous "
                                                       "page")] = 0,
        context_lines: Annotated[int, Field(ge=0, le=20, description="Lines of context around the best "
                                                                    "matching line in each snippet")] = 2,
        tags: Annotated[list[str] | None, Field(description="Only files and documents with one of these user "
                                                            "tags")] = None,
        authors: Annotated[list[str] | None, Field(description="Only files whose last commit is by one of these "
                                                               "authors (git repositories)")] = None,
        modified_after: Annotated[str | None, Field(description="Only files last committed on or after this "
                                                                "date, e.g. 2024-05-31 (git)")] = None,
        modified_before: Annotated[str | None, Field(description="Only files last committed before this "
                                                                 "date (git)")] = None,
        expand: Annotated[bool, Field(description="Also search the words inside identifiers and common "
                                                  "synonyms (delete/remove, fetch/get ...); reported as "
                                                  "expandedTerms")] = False,
    ) -> dict[str, Any]:
        filters = {k: v for k, v in (("languages", languages), ("types", types), ("paths", paths),
                                     ("kinds", kinds), ("roles", roles), ("tags", tags), ("authors", authors),
                                     ("modifiedAfter", modified_after), ("modifiedBefore", modified_before)) if v}
        params = {"query": query, "mode": mode, "limit": limit, "offset": offset, "filters": filters,
                  "contextLines": context_lines, "expand": expand}
        s = settings.search
        try:
            req = request_from_params(params, default_mode=s.mode, default_limit=s.limit, rrf_k=s.rrf_k,
                                      default_weights=Weights(s.weights.lexical, s.weights.semantic))
        except QueryError as exc:
            raise _argument_error(exc) from exc
        if not req.query.strip():
            raise ToolError("invalid argument query: no words to search for (inline filters alone select nothing)")
        ws = await engine()
        if not ws.writable:
            await anyio.to_thread.run_sync(service.follow_writer)
        result = await anyio.to_thread.run_sync(ws.search, req)
        out = result_json(result)
        out.pop("facets", None)
        out.pop("tookMs", None)
        index = out.pop("index")
        out["offset"] = req.offset
        out["nextOffset"] = _page(req.offset, len(result.hits), req.offset + len(result.hits) < result.total_hits)
        if req.mode != "lexical":
            out["semantic"] = service.semantic_summary(index)
        out["index"] = {"files": index.get("files", 0), "chunks": index.get("chunks", 0)}
        if req.expand:
            out["expandedTerms"] = list(req.extra_terms)
        out.update(_indexing_note())
        return out

    @app.tool(description=SEARCH_SYMBOL_DOC, annotations=read_only)
    async def search_symbol(
        query: Annotated[str, Field(description="A name or part of one (fuzzy; 'Container.name' to match members "
                                                "of a container); empty lists the top symbols")],
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Symbols per page")] = 20,
        offset: Annotated[int, Field(ge=0, le=MAX_SYMBOL_WINDOW, description="Symbols to skip: the nextOffset "
                                                                            "of the previous page")] = 0,
    ) -> dict[str, Any]:
        ws = await engine()
        window = min(offset + limit, MAX_SYMBOL_WINDOW)
        if not ws.writable:
            await anyio.to_thread.run_sync(service.follow_writer)
        # one more than the page tells whether there is a next one
        hits = await anyio.to_thread.run_sync(ws.search_symbols, query, window + 1)
        page = hits[offset:window]
        more = len(hits) > window and window < MAX_SYMBOL_WINDOW
        return {"query": query, "symbols": [symbol_json(h) for h in page], "offset": offset,
                "nextOffset": _page(offset, len(page), more), **_indexing_note()}

    @app.tool(description=GET_STATUS_DOC, annotations=read_only)
    async def get_status() -> dict[str, Any]:
        if not service.opened.is_set():
            return service.status()
        return await anyio.to_thread.run_sync(service.status)

    @app.tool(description=REINDEX_DOC,
              annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                          open_world_hint=False))
    async def reindex(
        wait: Annotated[bool, Field(description="Wait for the files to be indexed (embedding always continues in "
                                                "the background)")] = True,
    ) -> dict[str, Any]:
        ws = await engine()
        if not ws.writable:
            raise ToolError(f"cannot reindex: {ws.read_only_reason or 'the index is read-only'}; the process "
                            "that writes it keeps it up to date")
        fut = service.index_now()
        if fut is None:
            raise ToolError("the server is shutting down")
        out: dict[str, Any] = {}
        report: IndexReport | None = None
        if wait:
            try:
                report = await anyio.to_thread.run_sync(_result_within, fut, REINDEX_WAIT_S)
            except Exception as exc:
                raise ToolError(f"reindex failed: {exc}") from exc
        if report is not None:
            out["indexed"] = "done"
            out["changes"] = _report_json(report)
        else:
            out["indexed"] = "running in the background"
        counts = await anyio.to_thread.run_sync(ws.manifest.chunk_counts)
        if service.semantic_state() in ("off", "unavailable"):
            out["embedding"] = "off: semantic search is unavailable, search_code answers by words only"
        elif report is None:
            out["embedding"] = "starts in the background when the index run ends; poll get_status"
        elif counts["pending"]:
            out["embedding"] = (f"running in the background ({counts['embedded']} of {counts['chunks']} chunks "
                                "embedded); poll get_status until pending is 0")
        else:
            out["embedding"] = "done: every chunk is embedded"
        return out

    return app, service


def serve(root: Path, settings: config.Settings) -> None:
    """Serve the workspace ``root`` over MCP on stdin/stdout until the client disconnects."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    app, _service = create_server(root, settings)
    app.run("stdio")
