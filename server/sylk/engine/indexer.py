"""The index run: parse what the planner says changed (in worker processes for more
than a few files), write each file's chunks to the text index and the manifest (in
batches, committed every few seconds so a kill loses little), keep the symbol table
current, and report progress.

Tantivy commits before the manifest records the same chunks; see store.integrity for
what a kill at any point leaves and how it is repaired.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import logging
import multiprocessing
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import attrs

from ..config import Settings
from ..ingest import scan
from ..ingest.parsing import ERROR_SKIP, Parsed, exit_with_parent, parse_batch, parse_file
from ..store.manifest import ChunkRecord, FileRecord, IndexedFile
from ..store.stores import Stores
from .planner import Planner
from .reference_index import ReferenceIndex
from .symbol_index import SymbolIndex

log = logging.getLogger(__name__)

# The skip reason of the files a parser process failed on (killed, out of memory, a crash
# in a grammar): they are tried again at the next run.
WORKER_FAILED = f"{ERROR_SKIP}the parser process failed"
# The skip reason of a planned file the run got no answer for: never expected, but a run
# says so rather than report success without the file.
NOT_PARSED = f"{ERROR_SKIP}not parsed"
# Below this many files to parse, a process pool costs more than it saves.
POOL_THRESHOLD = 48
# Files per task sent to a parse worker, and tasks queued per worker.
BATCH_FILES = 16
BATCHES_AHEAD = 3
# Parsed in the indexing process while the workers start (until one is up), at most.
HEAD_FILES = 64
COMMIT_EVERY_S = 10.0
# The first commit of a run comes sooner: a cold start's text is searchable within
# seconds (each commit costs about a quarter of a second on the stdlib).
FIRST_COMMIT_S = 2.0
# A test hook, read in Indexer.run and nowhere else: with SYLK_HOLD_INDEX=<path> in the
# environment, a run that parses files makes its first file searchable, then waits while
# <path> exists (or until the run is cancelled), so a test can ask the server questions
# while a run is certainly under way and let it go on by deleting <path>. Never set it
# otherwise.
HOLD_ENV = "SYLK_HOLD_INDEX"


@attrs.frozen
class Progress:
    phase: str  # "scan" | "index" | "commit" | "done"
    done: int
    total: int
    message: str = ""
    # index runs: files whose text is searchable (committed); symbols are searchable
    # as soon as a file is parsed (``done``)
    committed: int = 0


@attrs.define
class IndexReport:
    added: int = 0
    changed: int = 0
    deleted: int = 0
    unchanged: int = 0
    files: int = 0
    symbols: int = 0
    skipped: Counter = attrs.field(factory=Counter)
    replaced_utf8: int = 0
    seconds: float = 0.0
    cancelled: bool = False

    def summary(self) -> str:
        parts = [f"{self.files} files, {self.symbols} symbols indexed in {self.seconds:.2f}s",
                 f"{self.added} added, {self.changed} changed, {self.deleted} deleted, {self.unchanged} unchanged"]
        if self.skipped:
            parts.append("skipped: " + ", ".join(f"{n} {r}" for r, n in sorted(self.skipped.items())))
        if self.replaced_utf8:
            parts.append(f"{self.replaced_utf8} with invalid UTF-8 (decoded with replacement characters)")
        if self.cancelled:
            parts.append("cancelled")
        return "; ".join(parts)


class Indexer:
    """Index runs over one workspace's stores. ``settings`` may be replaced between runs."""

    def __init__(self, root: Path, stores: Stores, planner: Planner, symbols: SymbolIndex,
                 references: ReferenceIndex, settings: Settings) -> None:
        self.root = root
        self.stores = stores
        self.planner = planner
        self.symbols = symbols
        self.references = references
        self.settings = settings

    def run(self, progress: Callable[[Progress], None], cancel: threading.Event,
            workers: int | None, paths: list[str] | None, use_git: bool) -> IndexReport:
        """One index run (the caller holds the stores' index lock)."""
        planner = self.planner
        t0 = time.perf_counter()
        report = IndexReport()
        progress(Progress("scan", 0, 0, "scanning files"))
        if paths is not None:
            plan = planner.paths(paths)
        else:
            plan = (planner.from_git() if use_git else None) or planner.full()
        if plan.full or plan.git is not None:
            planner.forget_sync_state()  # a crash before the end: walk the tree next time
        else:
            planner.note_touched([e.rel for e, _h in plan.todo] + plan.deleted)
        known, deleted, todo = plan.known, plan.deleted, plan.todo
        report.unchanged = plan.unchanged
        skipped: list[tuple] = list(plan.skipped)
        total = len(todo)
        progress(Progress("index", 0, total, f"{total} files to index"))
        forget: list[str] = list(deleted)  # files whose old chunks (and vectors) go at the next flush
        if deleted:
            self.stores.lexical.delete_paths(deleted)
            for p in deleted:
                self.symbols.remove(p)
                self.references.remove(p)
            report.deleted = len(deleted)

        pending: list[IndexedFile] = []
        pending_chunks: list[ChunkRecord] = []
        pending_skips: list[tuple] = [] if plan.full else list(plan.skipped)
        pending_deletes: list[str] = list(deleted)
        pending_touches: list[tuple[str, int, int]] = []
        last_commit = time.monotonic()
        done = committed = 0

        def flush() -> None:
            nonlocal pending, pending_chunks, pending_skips, pending_deletes, pending_touches, last_commit, forget
            nonlocal committed
            progress(Progress("commit", done, total, "committing", committed))
            self.stores.lexical.commit()
            self.stores.apply(forget, pending, pending_deletes, pending_skips, pending_touches, pending_chunks)
            self.symbols.flushed()
            self.references.flushed()
            committed = done
            pending, pending_chunks, pending_skips, pending_deletes, pending_touches = [], [], [], [], []
            forget = []
            last_commit = time.monotonic()

        languages = frozenset(self.settings.languages)
        hold = os.environ.get(HOLD_ENV)
        for parsed in _accounted(todo, self._parse_all(todo, languages, workers, cancel), cancel):
            done += 1
            rec = known.get(parsed.rel)
            if parsed.skip is not None:
                # a binary file is not read again while its size and mtime stay the same
                entry = ((parsed.rel, parsed.skip, parsed.size, parsed.mtime_ns) if parsed.skip == "binary"
                         else (parsed.rel, parsed.skip))
                skipped.append(entry)
                pending_skips.append(entry)
                if rec is not None:  # it was indexed before: it leaves the index
                    forget.append(parsed.rel)
                    self.stores.lexical.delete_paths([parsed.rel])
                    self.symbols.remove(parsed.rel)
                    self.references.remove(parsed.rel)
                    pending_deletes.append(parsed.rel)
            elif parsed.unchanged:
                assert rec is not None
                report.unchanged += 1
                pending_touches.append((parsed.rel, parsed.size, parsed.mtime_ns))
            else:
                # an added file too: a writer killed between the text commit and the manifest's
                # left its documents there, and the manifest does not know them
                self.stores.lexical.delete_paths([parsed.rel])
                if rec is not None:
                    forget.append(parsed.rel)
                    report.changed += 1
                else:
                    report.added += 1
                pending_chunks.extend(self.stores.add_chunks(parsed.rel, parsed.language, parsed.chunks,
                                                            parsed.file_doc))
                self.symbols.set(parsed.rel, parsed.symbol_data)
                self.references.set(parsed.rel, parsed.occurrence_data)
                if parsed.replaced:
                    report.replaced_utf8 += 1
                pending.append(IndexedFile(FileRecord(parsed.rel, parsed.hash, parsed.size, parsed.mtime_ns,
                                                      parsed.language, parsed.symbol_count, parsed.replaced,
                                                      parsed.package),
                                           parsed.symbol_data, parsed.occurrence_data))
            if done % 64 == 0 or done == total:
                progress(Progress("index", done, total, f"{done}/{total} files", committed))
            if time.monotonic() - last_commit > (COMMIT_EVERY_S if committed else FIRST_COMMIT_S):
                flush()
            if hold and done == 1:  # the test hook
                flush()
                while os.path.exists(hold) and not cancel.wait(0.05):
                    pass
            if cancel.is_set():
                break
        report.cancelled = cancel.is_set()
        flush()
        if plan.full or plan.git is None:
            for entry in skipped:
                report.skipped[entry[1]] += 1
        else:  # the skipped files git said nothing about are still skipped
            report.skipped.update(reason for _p, reason in self.stores.manifest.skipped())
        if not report.cancelled:
            if plan.full:
                self.stores.manifest.replace_skipped(skipped)
            if plan.full or plan.git is not None:
                planner.save_sync_state(plan.git)
            self.stores.manifest.set_meta(last_indexed=str(time.time()))
        self.symbols.warm()
        counts = self.stores.manifest.counts()
        report.files, report.symbols = counts["files"], counts["symbols"]
        report.seconds = time.perf_counter() - t0
        progress(Progress("done", done, total, report.summary()))
        self.symbols.compact()  # after "done": everything is searchable meanwhile
        self.references.compact()
        return report

    def _parse_all(self, todo: list[tuple[scan.FileEntry, str | None]], languages: frozenset[str],
                   workers: int | None, cancel: threading.Event) -> Iterable[Parsed]:
        root, max_size = str(self.root), self.settings.max_file_size
        workers = workers if workers is not None else (os.cpu_count() or 1)
        # The most recently modified files first: they are what the user works on, and
        # parsed here while the workers start (about a second), they answer the first
        # workspace/symbol at once.
        todo = sorted(todo, key=lambda t: -t[0].mtime_ns)
        if len(todo) < POOL_THRESHOLD or workers <= 1:
            for entry, known_hash in todo:
                if cancel.is_set():
                    return
                yield parse_file(root, entry, known_hash, max_size, languages)
            return
        # Then the largest first, so the last batches are small and the workers finish together.
        head = collections.deque(todo[:HEAD_FILES])
        queued: collections.deque[list[tuple[scan.FileEntry, str | None]]] = collections.deque(
            _batches(sorted(todo[HEAD_FILES:], key=lambda t: -t[0].size)))
        ctx = multiprocessing.get_context("spawn")
        with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=exit_with_parent,
                                    initargs=(os.getpid(),)) as pool:
            running: dict[cf.Future, list[tuple[scan.FileEntry, str | None]]] = {}
            broken = False
            # done as soon as a worker runs (the first batches, the largest files, take seconds):
            # from then on this process leaves the parsing to the workers
            up = pool.submit(os.getpid)
            try:
                while not cancel.is_set():
                    if head and up.done():  # the workers are up: they take the rest of the first files too
                        queued.extendleft(reversed(list(_batches(list(head)))))
                        head.clear()
                    # a few batches ahead per worker, not all of them: results wait in memory
                    # until this loop takes them, so memory stays flat whatever the tree's size
                    while not broken and queued and len(running) < workers * BATCHES_AHEAD:
                        batch = queued.popleft()
                        running[pool.submit(parse_batch, root, batch, max_size, languages)] = batch
                    if head:
                        entry, known_hash = head.popleft()
                        yield parse_file(root, entry, known_hash, max_size, languages)
                        continue
                    if not running:
                        # with the pool broken, what no worker will parse is parsed here
                        while broken and queued and not cancel.is_set():
                            for entry, known_hash in queued.popleft():
                                yield parse_file(root, entry, known_hash, max_size, languages)
                        break
                    finished, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
                    for fut in finished:  # in the order they finish: no result waits for a slower one
                        batch = running.pop(fut)
                        try:
                            results = fut.result()
                        except Exception as exc:  # a worker died (killed, out of memory, a crash in C)
                            broken = broken or isinstance(exc, BrokenProcessPool)
                            log.error("a parser process failed on %d files (%s: %s); they are skipped",
                                      len(batch), type(exc).__name__, exc)
                            results = [Parsed(e.rel, e.size, e.mtime_ns, skip=WORKER_FAILED) for e, _h in batch]
                        yield from results
            finally:
                for fut in running:
                    fut.cancel()


def _accounted(todo: list[tuple[scan.FileEntry, str | None]], parsed: Iterable[Parsed],
               cancel: threading.Event) -> Iterator[Parsed]:
    """``parsed``, then a NOT_PARSED skip for each file of ``todo`` it left out (unless the
    run was cancelled): a run covers every file it planned, or says which it did not."""
    seen: set[str] = set()
    for p in parsed:
        seen.add(p.rel)
        yield p
    if cancel.is_set():
        return
    for entry, _known in todo:
        if entry.rel not in seen:
            log.error("%s was planned but not parsed; it is skipped and tried again at the next run", entry.rel)
            yield Parsed(entry.rel, entry.size, entry.mtime_ns, skip=NOT_PARSED)


def _batches(todo: list[tuple[scan.FileEntry, str | None]]) -> Iterator[list[tuple[scan.FileEntry, str | None]]]:
    """``todo`` in tasks of BATCH_FILES files for the parse workers."""
    return (todo[i:i + BATCH_FILES] for i in range(0, len(todo), BATCH_FILES))
