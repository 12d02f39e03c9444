"""``Workspace``: one workspace root and its index folder, the facade the front ends
use. It owns the parts and hands each what it needs:

* ``stores`` (store.stores): the manifest, the text index and the vectors, under the
  writer lock; integrity checks at open;
* ``planner`` and ``indexer``: what changed, and the index run;
* ``symbols``: the symbol table with the editor's unsaved buffers on top;
* ``references``: every identifier's occurrences, with the same buffers on top;
* ``lines``: exact and regex search (the trigram index and the same buffers);
* ``semantic``: the model and the embedding queue.

Searches read the stores directly (search.hybrid). The long-running parts (threads,
the watcher, progress) belong to the service and the front ends, not here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager, suppress
from pathlib import Path

import attrs

from ..config import Settings, index_dir_for
from ..embed.embedder import Embedder
from ..errors import IndexClosed, IndexError_
from ..ingest import gitsync, occurrences
from ..ingest.ignore import find_git
from ..ingest.symbols import Symbol, extract_marked
from ..languages import language_for_path
from ..model import doc_id, is_virtual
from ..search import calls, definitions, related
from ..search import references as reference_search
from ..search.hybrid import HybridSearch
from ..search.nearest import VectorSpace
from ..search.grep import GrepRequest, GrepResult
from ..search.filters import Filters
from ..search.query import SearchRequest
from ..search.references import References
from ..search.relocate import Relocator
from ..search.results import IndexState, SearchResult
from ..search.symbol_search import SymbolFilter, SymbolHit, SymbolTable
from ..store import integrity
from ..store.annotations import GIT_META_HEAD
from ..store.layout import MANIFEST_FILE, FolderState, folder_state, remove_layout
from ..store.lexical import LexicalIndex
from ..store.manifest import Manifest
from ..store.stores import Stores
from ..store.vectors import VectorIndex
from . import documents
from .embedding import EmbedQueue
from .indexer import Indexer, IndexReport, Progress
from .line_search import LineSearch
from .planner import Planner
from .reference_index import ReferenceIndex
from .status import SKIPPED_EXAMPLES, FolderSize, IndexStatus, read_status
from .symbol_index import SymbolIndex

# how long close() waits for the searches in flight before it closes the stores anyway
CLOSE_WAIT_S = 30.0


class Workspace:
    """One workspace root and its index folder."""

    def __init__(self, root: Path, settings: Settings | None = None, *, writable: bool = True,
                 load_symbols: bool = False) -> None:
        self.root = root.resolve()
        settings = settings or Settings()
        self.index_dir = index_dir_for(self.root, settings)
        self._size = FolderSize(self.index_dir)  # the index folder's bytes, walked now and then
        self._run: Progress | None = None  # the last progress of the index run under way
        # one writer per index folder; damaged stores are set aside (store.stores, store.damage)
        self.stores = Stores.open(self.root, self.index_dir, writable=writable, deep=load_symbols)
        self.symbols = SymbolIndex(self.stores)
        self.references = ReferenceIndex(self.stores)
        self.lines = LineSearch(self.root, self.stores, self.symbols, lambda: self.settings.max_file_size)
        self.planner = Planner(self.root, self.stores, settings)
        self.indexer = Indexer(self.root, self.stores, self.planner, self.symbols, self.references, settings)
        self.semantic = EmbedQueue(self.stores, settings.embedding)
        self._settings = settings
        self.rebuilt_reason = self.stores.rebuilt_reason
        # what check_on_open repaired (orphan documents after a kill, ...), for the user
        self.repair_note = integrity.check_on_open(self.stores, self.reindex_files) if self.writable else None
        if load_symbols:
            self.symbols.table  # noqa: B018 - loads it now
        # a reader: what was opened is current; follow_writer() reloads after the writer's runs
        self._reader_stamp = None if self.writable else self.manifest.get_meta("last_indexed")
        # searches in flight: close() waits for them, and refuses new ones (IndexClosed)
        self._use = threading.Condition()
        self._users = 0
        self._closed = False

    # settings, and the stores as the rest of the engine and the front ends read them
    @property
    def settings(self) -> Settings:
        return self._settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self._settings = self.planner.settings = self.indexer.settings = settings
        self.semantic.settings = settings.embedding

    @property
    def manifest(self) -> Manifest:
        return self.stores.manifest

    @property
    def lexical(self) -> LexicalIndex:
        return self.stores.lexical

    @property
    def vectors(self) -> VectorIndex | None:
        return self.stores.vectors

    @property
    def read_only_reason(self) -> str | None:
        return self.stores.read_only_reason

    @property
    def writable(self) -> bool:
        return self.stores.writable

    # indexing ---------------------------------------------------------------
    def index(self, progress: Callable[[Progress], None] | None = None,
              cancel: threading.Event | None = None, workers: int | None = None,
              paths: Iterable[str] | None = None, use_git: bool = True) -> IndexReport:
        """Bring the index up to date with the disk: only added, changed and deleted files are
        processed. ``paths`` (root-relative files or folders, e.g. from a file watcher)
        limits the work to them; a change to an ignore file among them widens it to the
        whole tree. Without ``paths``, a git work tree is checked through git (see
        gitsync) unless ``use_git`` is False, other trees by a walk and stat()."""
        if not self.writable:
            raise IndexError_(self.read_only_reason or "index is read-only")
        tell = progress or (lambda p: None)

        def track(p: Progress) -> None:
            self._run = p
            tell(p)

        paths = None if paths is None else list(paths)
        with self.stores.index_lock:
            try:
                report = self.indexer.run(track, cancel or threading.Event(), workers, paths, use_git)
            finally:
                self._run = None
        if not report.cancelled:
            self.lines.indexed(paths)
        return report

    def reindex_paths(self, rels: Iterable[str]) -> IndexReport:
        """Re-index given files now (a save, a few changes): ``index(paths=rels)``."""
        return self.index(paths=rels)

    def reindex_files(self, files: list[str]) -> None:
        """Index files again, virtual documents from their stored text (a repair's last step)."""
        for path in [f for f in files if is_virtual(f)]:
            doc = documents.get(self, doc_id(path))
            if doc is not None:
                documents.index_document(self, doc.id, doc.text, type=doc.type, title=doc.title, tags=doc.tags,
                                         metadata=doc.metadata)
        self.index(paths=[f for f in files if not is_virtual(f)])

    def scan_ignored(self, rel: str, is_dir: bool = False) -> bool:
        """Whether the ignore rules of this workspace exclude ``rel`` (a saved or changed path)."""
        return self.planner.matcher().ignored(rel, is_dir)

    def verify(self, *, disk: bool = True) -> integrity.Verification:
        """``sylk status --verify``: drift between the stores and the disk (reads only)."""
        return integrity.verify(self.stores, self.settings, disk=disk)

    def repair(self) -> integrity.RepairReport:
        """``sylk index --repair``: fix the drift between the stores (see integrity.repair)."""
        report = integrity.repair(self.stores, self.reindex_files)
        if report.rebuilt:
            self.symbols.drop()
            self.references.drop()
        return report

    def follow_writer(self) -> bool:
        """A read-only index (another process writes it): reload the text searcher and the
        symbol table when the writer finished a run since the last call (the manifest
        follows the writer's commits by itself). Vectors are not reloaded: a reader's
        semantic results cover what was embedded when it opened. True if reloaded."""
        if self.writable:
            return False
        stamp = self.manifest.get_meta("last_indexed")
        if stamp == self._reader_stamp:
            return False
        self._reader_stamp = stamp
        self.manifest.reread()
        self.lexical.reload()
        self.symbols.reload()
        self.references.reload()
        return True

    # symbols ----------------------------------------------------------------
    @property
    def table(self) -> SymbolTable:
        return self.symbols.table

    def set_unsaved(self, rel: str, source: bytes | None) -> None:
        """Symbols, occurrences and text (for exact and regex search) of ``rel`` from an
        editor buffer (``source``), or from disk again (None): one parse for both."""
        if source is None:
            self.symbols.set_unsaved(rel, None)
            self.references.set_unsaved(rel, None)
            self.lines.set_buffer(rel, None)
            return
        self.lines.set_buffer(rel, source.decode("utf-8", "surrogatepass"))
        language = language_for_path(rel)
        symbols: list[Symbol] = []
        marks = None
        if language is not None:
            try:
                symbols, marks = extract_marked(source, language)
            except Exception:  # noqa: BLE001 - a grammar failure costs the symbols, not the text
                symbols, marks = [], None
        self.symbols.set_unsaved(rel, symbols)
        self.references.set_unsaved(rel, occurrences.extract(source, marks))

    def keep_unsaved(self, rel: str) -> None:
        """The buffer of ``rel`` was saved: indexing takes over its symbols from here."""
        self.symbols.keep_unsaved(rel)
        self.references.keep_unsaved(rel)
        self.lines.saved(rel)

    # the semantic side ------------------------------------------------------
    def load_semantic(self) -> str | None:
        """Load the model and the vectors (once); a message when semantic search is off or
        had to start over."""
        return self.semantic.load()

    @property
    def embedder(self) -> Embedder | None:
        return self.semantic.embedder

    @property
    def semantic_message(self) -> str | None:
        return self.semantic.message

    @property
    def semantic_ready(self) -> bool:
        return self.semantic.ready

    def prioritize(self, paths: Iterable[str]) -> None:
        """Embed the pending chunks of ``paths`` next (files opened or saved in the editor)."""
        self.semantic.prioritize(paths)

    def quick_pass(self, cancel: threading.Event | None = None) -> int:
        """Give the pending chunks their quick vectors (see EmbedQueue.quick_pass)."""
        return self.semantic.quick_pass(cancel)

    def vector_spaces(self) -> tuple[VectorSpace | None, VectorSpace | None]:
        """(the model's, the quick pass's) vectors as search.nearest takes them."""
        embedder, vectors, quick = self.semantic.embedder, self.stores.vectors, self.stores.quick
        quick_embedder = self.semantic.quick_embedder if quick is not None and len(quick) else None
        return (VectorSpace(embedder, vectors) if embedder is not None and vectors is not None else None,
                VectorSpace(quick_embedder, quick) if quick_embedder is not None and quick is not None else None)

    def embed_pending(self, progress: Callable[[int, int], None] | None = None,
                      cancel: threading.Event | None = None, first_paths: Sequence[str] = (),
                      batch: int = 256, save_every_s: float = 30.0,
                      pause: Callable[[], None] | None = None) -> int:
        """Embed every chunk not embedded yet (see EmbedQueue.embed_pending)."""
        return self.semantic.embed_pending(progress, cancel, first_paths, batch, save_every_s, pause)

    @contextmanager
    def in_use(self) -> Iterator[None]:
        """Hold the index open for one request; IndexClosed once close() has begun."""
        with self._use:
            if self._closed:
                raise IndexClosed(f"the index of {self.root} was closed (cleared or rebuilt); ask again")
            self._users += 1
        try:
            yield
        finally:
            with self._use:
                self._users -= 1
                self._use.notify_all()

    def close(self) -> None:
        """Refuse new requests, wait (at most CLOSE_WAIT_S) for those in flight, then close
        the stores."""
        with self._use:
            self._closed = True
            self._use.wait_for(lambda: self._users == 0, timeout=CLOSE_WAIT_S)
        with self.semantic.lock:
            if self.writable and self.stores.chunks_left_unloaded:
                integrity.prune_vectors(self.stores)  # chunks left while the vectors were not loaded
            self.stores.close()  # saves the vectors, then says the index was closed cleanly

    # queries ------------------------------------------------------------
    @property
    def symbols_ready(self) -> bool:
        """Whether a symbol search would answer without first loading or rebuilding."""
        return self.symbols.ready

    def holds(self, path: str) -> bool:
        """Whether ``path`` is an indexed file (or virtual document)."""
        with self.in_use():
            return bool(self.manifest.file_records([path]))

    def file_symbols(self, path: str) -> tuple[str | None, list[Symbol]] | None:
        """The language and the symbols of the indexed file ``path``; None when not indexed."""
        with self.in_use():
            record = self.manifest.file_records([path]).get(path)
            return None if record is None else (record.lang, self.manifest.symbols_of(path) or [])

    def files(self) -> AbstractSet[str]:
        """The paths of the indexed files (and virtual documents)."""
        with self.in_use():
            return self.manifest.files().keys()

    def tags(self) -> dict[str, tuple[str, ...]]:
        """The user tags of each tagged file or document."""
        with self.in_use():
            return self.manifest.tag_lookup()

    def chunk_counts(self) -> dict[str, int]:
        """Chunks held, embedded, pending and failed (the model could not embed them)."""
        with self.in_use():
            return self.manifest.chunk_counts()

    def chunks_in(self, path: str) -> int:
        """How many chunks the indexed file or document ``path`` holds."""
        with self.in_use():
            return len(self.manifest.chunk_ids([path]))

    def origin_at(self, path: str, language: str | None, text: str | None,
                  line: int | None = None) -> definitions.Origin:
        """Where definitions are ranked from: the file ``path`` (its ``text``: its imports,
        resolved against the indexed files) and, given ``line``, the scope around it."""
        with self.in_use():
            scope = self.table.scope(path, line) if line is not None else ""
            return definitions.origin_of(path, language, text, self.table.file_set(), scope)

    def shown(self, found: References, refs: Sequence[reference_search.Reference]) -> list[reference_search.Shown]:
        """``refs`` (some of ``found``'s) with their enclosing symbols and lines (search.references.shown)."""
        with self.in_use():
            return reference_search.shown(found, refs, self.table, self.root)

    def similar_at(self, path: str, line: int, limit: int, symbol: str = "") -> related.Similar:
        """The code at ``path``:``line`` (0-based; the chunk named ``symbol`` when several
        hold the line) and the chunks nearest it by meaning (search.related.similar_at),
        under the request guard."""
        with self.in_use():
            return related.similar_at(self, path, line, limit, symbol)

    def search_symbols(self, query: str, limit: int | None = None, only: SymbolFilter | None = None) -> list[SymbolHit]:
        """``only``: the kinds, and exported or not, of the symbols wanted (all when None)."""
        with self.in_use():
            return self.symbols.search(query, limit if limit is not None else self.settings.symbols.limit, only)

    def find_references(self, name: str, *, include_declaration: bool = True, limit: int | None = None,
                        first: str | None = None, paths: AbstractSet[str] | Callable[[str], bool] | None = None,
                        comments_and_strings: bool | None = None, filters: Filters | None = None) -> References:
        """Every occurrence of the identifier ``name`` (search.references.find), as the
        ``references`` settings say unless told: at most ``limit``, in comments and strings;
        ``filters``: the files' (languages, types, paths, packages, and what to leave out)."""
        with self.in_use():
            s = self.settings.references
            text = s.comments_and_strings if comments_and_strings is None else comments_and_strings
            if filters is not None and not filters.empty:
                admitted = self.lines.file_test(filters)
                given = paths
                paths = admitted if given is None else (lambda p: admitted(p) and (
                    given(p) if callable(given) else p in given))
            return reference_search.find(self.references.table, self.table, name,
                                         include_declaration=include_declaration, comments_and_strings=text,
                                         limit=limit if limit is not None else s.limit, first=first, paths=paths)

    def grep(self, req: GrepRequest) -> GrepResult:
        """Every line a literal or a regular expression matches (engine.line_search);
        PatternError (a FieldError) for a pattern that is not one."""
        with self.in_use():
            return self.lines.grep(req, self.index_state())

    def incoming_calls(self, name: str) -> list[calls.Caller]:
        """The call sites of ``name``, by the function around each (search.calls)."""
        with self.in_use():
            return calls.incoming(self.references.table, self.table, name)

    def outgoing_calls(self, rel: str, span: Sequence[int]) -> list[calls.Callee]:
        """The calls made within ``span`` of the file ``rel`` (search.calls), by name."""
        with self.in_use():
            occ = self.references.file(rel)
            return calls.outgoing(occ, span) if occ is not None else []

    def index_state(self) -> IndexState:
        """The ``index`` block of a search result: how complete each side is."""
        chunks = self.manifest.chunk_counts()
        run = self._run
        quick = self.stores.quick
        return IndexState(self.manifest.counts()["files"], chunks["chunks"], chunks["embedded"], chunks["pending"],
                          chunks["pending"] == 0 and self.semantic_ready, run is not None,
                          max(0, run.total - run.committed) if run is not None and run.phase != "done" else 0,
                          len(quick) if quick is not None else 0)

    @property
    def git_note(self) -> str:
        """Why no file has git metadata (the author and date filters then match nothing)."""
        if not self.settings.trusted:
            return "no git metadata: git is not run in an untrusted workspace"
        if find_git(str(self.root)) is None or gitsync.git_executable() is None:
            return "no git metadata (not a git repository, or git is missing)"
        if self.manifest.get_meta(GIT_META_HEAD) is None:  # it follows the first index run
            return "git metadata is not read yet (it follows the index run)"
        return "no git metadata (no indexed file is in a commit)"

    def search_paths(self, text: str, limit: int = 20) -> list[str]:
        """Paths of the files whose chunks match ``text`` lexically, best first."""
        return list(dict.fromkeys(h.path for h in self.search(SearchRequest(text, "lexical", limit=limit * 5,
                                                                            context_lines=0)).hits))[:limit]

    def search(self, req: SearchRequest) -> SearchResult:
        if req.mode != "lexical" and not self.semantic.tried:
            self.load_semantic()
        with self.in_use():
            state = self.index_state()
            note = self.semantic_message
            if note is None and state.embedded + state.quick == 0:
                note = "semantic search is not ready yet: no chunk is embedded"
            relocator = Relocator(self.root, self.manifest, self.settings.max_file_size, self.settings.languages)
            main, quick = self.vector_spaces()
            result = HybridSearch(self.root, self.lexical, self.manifest, main, quick, semantic_note=note,
                                  relocator=relocator, git_note=self.git_note if req.needs_git else None
                                  ).search(req, state)
        if state.files_pending:
            indexing = f"indexing: {state.files_pending} files are not searchable yet"
            result = attrs.evolve(result, message=f"{result.message}; {indexing}" if result.message else indexing)
        return result

    def status(self, skipped_limit: int | None = SKIPPED_EXAMPLES) -> IndexStatus:
        """The index's counts (engine.status.read_status); ``skipped_limit``: how many
        skipped files of each reason to name (None: all)."""
        with self.in_use():
            return read_status(self.stores, self._size, skipped_limit)


def semantic_state(settings: Settings, ws: Workspace | None) -> str:
    """``off`` (disabled in the settings), ``loading`` (not tried yet, or the model is
    loading), ``ready``, or ``unavailable`` (see ``Workspace.semantic_message``)."""
    if not settings.embedding.enabled:
        return "off"
    if ws is not None and ws.semantic_ready:
        return "ready"
    if ws is not None and ws.semantic_message:
        return "unavailable"
    return "loading"


def clear_index(root: Path, settings: Settings | None = None) -> Path | None:
    """Remove a workspace's index without opening it: only the names of Sylk's layout
    (store.layout), then the folder itself if that left it empty. Returns the folder if
    it existed. A folder that is not Sylk's is refused (IndexError_), nothing touched."""
    folder = index_dir_for(root.resolve(), settings or Settings())
    check = folder_state(folder)
    if check.state is FolderState.MISSING:
        return None
    if check.refused:
        raise IndexError_(f"not cleared: {check.why}")
    failed = remove_layout(folder)
    if failed:
        raise IndexError_(f"the index in {folder} was not cleared: {', '.join(failed)} could not be removed")
    if not folder.is_symlink():
        with suppress(OSError):
            folder.rmdir()  # only when nothing else is in it
    return folder


def index_exists(root: Path, settings: Settings | None = None) -> bool:
    """The workspace has been indexed (its index folder holds a manifest); looks, creates nothing."""
    return (index_dir_for(root.resolve(), settings or Settings()) / MANIFEST_FILE).is_file()
