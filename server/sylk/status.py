"""What a status request tells, as records, for every front end: one folder's state read
from its ``WorkspaceService`` at once (``folder_status``), and the state of a front end's
folders together (``Rollup``). The LSP's ``sylk/status`` and MCP's ``get_status`` (and
``sylk://status``) only convert these to their JSON."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs

from .engine.indexer import IndexReport
from .engine.status import IndexStatus
from .errors import IndexClosed
from .service import WorkspaceService
from .steps import EmbedRun, Tally

# a folder's phase; over several folders, the first of these that any folder is in
PHASES = ("opening", "indexing", "embedding", "unavailable", "ready")


@attrs.frozen(kw_only=True)
class Watch:
    """The folder's watcher: on, its error, disk changes queued and batches taken in."""

    active: bool
    error: str | None = None
    pending: int = 0
    applied: int = 0


@attrs.frozen(kw_only=True)
class Semantic:
    """How semantic search stands (service.semantic_state) and with which model."""

    ready: bool
    state: str
    model: str | None
    message: str | None


@attrs.frozen(kw_only=True)
class FolderStatus:
    root: Path
    phase: str  # PHASES
    trusted: bool
    watch: Watch
    indexing: bool  # an index run is queued or running
    index_progress: Tally  # files of the running run
    embedding: bool
    embed_progress: Tally  # chunks of the running pass
    index: IndexStatus | None = None  # None: the index is not open
    semantic: Semantic | None = None  # None: the index is not open
    read_only_reason: str | None = None
    open_error: str | None = None  # why the index could not be opened
    last_report: IndexReport | None = None
    last_run_at: float | None = None
    last_embed: EmbedRun | None = None

    @property
    def ready(self) -> bool:
        """The index is open and no run is queued or running."""
        return self.index is not None and not self.indexing


def folder_status(service: WorkspaceService, skipped_limit: int | None) -> FolderStatus:
    """``service``'s state now; ``skipped_limit`` skipped files of each reason named (None: all)."""
    engine, watcher = service.engine, service.watcher
    index = semantic = None
    if engine is not None:
        try:
            index = engine.status(skipped_limit)
        except IndexClosed:  # cleared or rebuilt this moment: as if not open yet
            engine = None
    if engine is None:
        phase = "unavailable" if service.opened.is_set() and service.open_error else "opening"
    else:
        phase = "indexing" if service.indexing else "embedding" if service.embedding else "ready"
        semantic = Semantic(ready=engine.semantic_ready, state=service.semantic_state(),
                            model=engine.embedder.model_id if engine.embedder else None,
                            message=engine.semantic_message)
    return FolderStatus(
        root=service.root, phase=phase, trusted=service.settings.trusted,
        watch=Watch(active=service.watching, error=watcher.error if watcher else None,
                    pending=service.changes.pending, applied=service.changes_applied),
        indexing=service.indexing, index_progress=service.index_progress,
        embedding=service.embedding, embed_progress=service.embed_progress,
        index=index, semantic=semantic, read_only_reason=engine.read_only_reason if engine else None,
        open_error=service.open_error, last_report=service.last_report, last_run_at=service.last_run_at,
        last_embed=service.last_embed)


@attrs.frozen
class Rollup:
    """The folders of a front end together, in their order (the first one's status is the
    answer's top level where the protocol has one)."""

    folders: Sequence[FolderStatus]

    @property
    def phase(self) -> str:
        return next((p for p in PHASES if any(f.phase == p for f in self.folders)), "opening")

    @property
    def ready(self) -> bool:
        return bool(self.folders) and all(f.ready for f in self.folders)

    @property
    def indexing(self) -> bool:
        return any(f.indexing for f in self.folders)

    @property
    def embedding(self) -> bool:
        return any(f.embedding for f in self.folders)

    @property
    def trusted(self) -> bool:
        return all(f.trusted for f in self.folders)

    @property
    def watch(self) -> Watch:
        """Watching all; the first error; the changes summed."""
        w = [f.watch for f in self.folders]
        return Watch(active=bool(w) and all(x.active for x in w), error=next((x.error for x in w if x.error), None),
                     pending=sum(x.pending for x in w), applied=sum(x.applied for x in w))
