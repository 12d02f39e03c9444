"""One workspace folder of the language server: a ``WorkspaceService`` (its index,
watcher and queue of disk changes) and the reporter that turns the service's reports
into ``$/progress``, ``window/showMessage`` and ``window/logMessage``.

A client may open several folders (``workspaceFolders``, and later
``workspace/didChangeWorkspaceFolders``): each gets its own ``Folder`` and its own
index; the server answers from all of them. Every folder's service shares the server's
threads (``jobs``), so long work runs one job at a time for all folders.

A folder knows the server only through ``Host``: the few things it needs from it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from lsprotocol import types

from .. import config
from ..engine.indexer import IndexReport, Progress
from ..engine.status import SKIPPED_EXAMPLES
from ..jobs import Jobs
from ..service import ServedFolder, WorkspaceService
from ..status import FolderStatus, folder_status
from ..steps import INDEXING, Severity, progress_text
from .convert import path_to_uri, uri_to_rel

PROGRESS_INTERVAL_S = 0.2

MESSAGE_TYPES = {Severity.ERROR: types.MessageType.Error, Severity.WARNING: types.MessageType.Warning,
                 Severity.INFO: types.MessageType.Info, Severity.LOG: types.MessageType.Log}


class Host(Protocol):
    """What a folder needs of the language server."""

    jobs: Jobs
    folders: Mapping[Path, Any]  # every open folder (progress titles name the folder when several)

    def open_uris(self) -> list[str]: ...

    def message(self, text: str, kind: types.MessageType = types.MessageType.Info) -> None: ...

    def log(self, text: str, kind: types.MessageType = types.MessageType.Log) -> None: ...

    def begin_progress_from_thread(self, title: str, message: str) -> str | None: ...

    def report_progress(self, token: str | None, message: str, percentage: int) -> None: ...

    def end_progress(self, token: str | None, message: str) -> None: ...


class Folder(ServedFolder):
    reindex_hint = "'Sylk: Reindex Workspace'"

    def __init__(self, host: Host, root: Path, settings: config.Settings, uri: str | None = None) -> None:
        """``uri``: the folder's URI as the client named it (the ``scopeUri`` of its settings)."""
        self.host = host
        self.uri = uri or path_to_uri(root, "").rstrip("/")
        self.service = WorkspaceService(root, settings, self, jobs=host.jobs, first_paths=self.open_paths)
        self._reported: dict[str, float] = {}  # token -> when it was last reported (throttled)

    @property
    def indexing(self) -> bool:
        return self.service.indexing

    @property
    def last_report(self) -> IndexReport | None:
        return self.service.last_report

    def title(self, text: str) -> str:
        """A progress title; names the folder when several are open."""
        return f"Sylk: {text}" if len(self.host.folders) <= 1 else f"Sylk: {text} ({self.name})"

    def open_paths(self) -> list[str]:
        """The folder's files open in the editor (embedded first)."""
        rels = (uri_to_rel(self.root, uri) for uri in self.host.open_uris())
        return [r for r in rels if r is not None]

    # the service's work ---------------------------------------------------------------
    def apply_settings(self, settings: config.Settings) -> bool:
        return self.service.apply_settings(settings)

    def start_indexing(self, title: str = INDEXING) -> None:
        self.service.start_indexing(title)

    def embed_soon(self, paths: list[str] = ()) -> None:  # type: ignore[assignment]
        """Embed the new chunks of ``paths`` next (joining a running pass) or start a pass."""
        self.service.embed_soon(paths)

    def semantic_state(self) -> str:
        return self.service.semantic_state()

    def close(self) -> None:
        """Stop everything of this folder (removed from the workspace, or shutdown)."""
        self.service.stop()

    def close_engine(self) -> None:
        self.service.close_engine()

    # Reporter ------------------------------------------------------------------------
    def message(self, text: str, severity: Severity) -> None:
        if severity is Severity.LOG:  # no pop-up for what the user chose
            self.log(text)
        else:
            self.host.message(text, MESSAGE_TYPES[severity])

    def log(self, text: str, severity: Severity = Severity.LOG) -> None:
        self.host.log(f"Sylk: {self.name}: {text}", MESSAGE_TYPES[severity])

    def begin(self, title: str, message: str) -> str | None:
        return self.host.begin_progress_from_thread(self.title(title), message)

    def report(self, handle: str | None, progress: Progress) -> None:
        if handle is None or progress.phase == "done":
            return
        now = time.monotonic()
        if now - self._reported.get(handle, 0.0) < PROGRESS_INTERVAL_S:
            return
        self._reported[handle] = now
        self.host.report_progress(handle, *progress_text(progress))

    def end(self, handle: str | None, message: str) -> None:
        if handle is not None:
            self._reported.pop(handle, None)
        self.host.end_progress(handle, message)

    # state ---------------------------------------------------------------------------
    def status(self, skipped_limit: int | None = SKIPPED_EXAMPLES) -> FolderStatus:
        return folder_status(self.service, skipped_limit)
