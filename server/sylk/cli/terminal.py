"""What the commands share on a terminal: the settings of a folder, its index opened
(CliError when it cannot be) and brought up to date, progress as a bar on stderr."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from .. import config, settings_sources, steps
from ..engine.indexer import Progress
from ..engine.workspace import Workspace
from ..errors import IndexError_
from .errors import CliError


def resolve(root: Path) -> settings_sources.Resolved:
    """The settings of ``root`` (.sylk.toml or [tool.sylk] as far as a workspace may set
    them, the user config file, SYLK_*), a warning on stderr per problem and notice."""
    resolved = settings_sources.resolve(root)
    for p in resolved.problems:
        print(f"sylk: warning: {p} (using the default)", file=sys.stderr)
    for n in resolved.notices:
        print(f"sylk: warning: {n}", file=sys.stderr)
    return resolved


def settings_for(root: Path) -> config.Settings:
    """The settings of ``root`` (see ``resolve``)."""
    return resolve(root).settings


def open_index(root: Path, *, writable: bool = True, settings: config.Settings | None = None) -> Workspace:
    """The workspace of ``root`` with its index open (CliError when it cannot be)."""
    try:
        return steps.open_workspace(root, settings or settings_for(root), Terminal(), writable=writable)
    except IndexError_ as exc:
        raise CliError(str(exc)) from exc


class ProgressBar:
    """A one-line progress bar on a terminal; silent otherwise."""

    def __init__(self, stream=sys.stderr) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self._last = 0.0

    def __call__(self, p: Progress) -> None:
        if not self.tty:
            return
        now = time.monotonic()
        if p.phase in ("index", "embed") and p.done != p.total and now - self._last < 0.1:
            return
        self._last = now
        if p.phase == "done":
            self.stream.write("\r\x1b[K")
        elif p.total:
            width = 30
            filled = int(width * p.done / p.total)
            counted, pct = steps.progress_text(p)
            self.stream.write(f"\r\x1b[K{p.phase} [{'#' * filled}{'.' * (width - filled)}] {counted} {pct}%")
        else:
            self.stream.write(f"\r\x1b[K{p.message}")
        self.stream.flush()


class Terminal(steps.Reporter):
    """The service's reports on a terminal: messages on stderr, progress as a bar."""

    def __init__(self) -> None:
        self.bar = ProgressBar()

    def message(self, text: str, severity: steps.Severity) -> None:
        print(f"sylk: {text}", file=sys.stderr)

    def begin(self, title: str, message: str) -> ProgressBar:
        return self.bar

    def report(self, handle: ProgressBar | None, progress: Progress) -> None:
        if handle is not None:
            handle(progress)


def refresh(ws: Workspace) -> None:
    """Bring the index up to date with the disk first (a progress bar on a terminal)."""
    if ws.writable:
        ws.index(progress=ProgressBar())
    else:
        print(f"sylk: {ws.read_only_reason}; it may lag behind the disk", file=sys.stderr)
