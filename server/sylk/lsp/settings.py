"""Settings per folder, and live. ``workspace/configuration`` is asked once for every
folder, with the folder's URI as ``scopeUri`` (section ``sylk``): after ``initialized``,
for folders added later, and after ``workspace/didChangeConfiguration``. Each folder
resolves its own settings (``settings_sources.resolve``: defaults < ``.sylk.toml`` /
``[tool.sylk]`` < the user config file < environment < initializationOptions < the
folder's answer) and its service applies them at once (watcher, embedding; a re-index
when what is indexed changed). Invalid values: one ``window/showMessage`` naming them;
their defaults are used and the rest applies. Notices (a workspace file's setting only
the user may set, refused; an untrusted workspace: ``trusted`` false in
initializationOptions, its file ignored and git off): one ``window/showMessage``
warning, each notice shown once for the life of the server.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from .. import settings_sources
from .handlers import feature

if TYPE_CHECKING:
    from .folders import Folder
    from .server import SylkServer

log = logging.getLogger("sylk")
REINDEXING = "Re-indexing after a settings change"


def supports_configuration(ls: SylkServer) -> bool:
    caps = ls.client_capabilities.workspace
    return bool(caps is not None and caps.configuration)


async def ask(ls: SylkServer, folders: Sequence[Folder]) -> list[Mapping[str, Any] | None]:
    """The client's ``sylk`` settings for each folder (None where it has none or cannot say)."""
    if not folders or not supports_configuration(ls):
        return [None] * len(folders)
    try:
        answer = await ls.workspace_configuration_async(types.ConfigurationParams(items=[
            types.ConfigurationItem(scope_uri=f.uri, section="sylk") for f in folders]))
    except Exception as exc:  # the client failed to answer: keep what we have
        log.warning("workspace/configuration failed: %s", exc)
        return [None] * len(folders)
    answers = list(answer or [])[:len(folders)]
    answers += [None] * (len(folders) - len(answers))
    return [a if isinstance(a, Mapping) else None for a in answers]


def report(ls: SylkServer, problems: Sequence[str], notices: Sequence[str] = ()) -> None:
    """One message naming every invalid setting (each once), and one with the notices not
    shown before."""
    unique = list(dict.fromkeys(problems))
    if unique:
        ls.message("invalid settings, using defaults for them: " + "; ".join(unique), types.MessageType.Warning)
    fresh = [n for n in dict.fromkeys(notices) if n not in ls.notices_shown]
    if fresh:
        ls.notices_shown.update(fresh)
        ls.message("; ".join(fresh), types.MessageType.Warning)


async def configure(ls: SylkServer, folders: Sequence[Folder], fallback: Mapping[str, Any] | None = None,
                    problems: Sequence[str] = (), notices: Sequence[str] = ()) -> list[Folder]:
    """Ask for, resolve and apply the settings of ``folders`` (``fallback``: a folder's
    settings when the client gives none for it); report the problems and notices (with
    ``problems`` and ``notices`` met before). Returns the folders whose indexed files
    changed."""
    found, told = list(problems), list(notices)
    stale = []
    for folder, scoped in zip(folders, await ask(ls, folders)):
        resolved = settings_sources.resolve(folder.root, ls.client_options, scoped=scoped if scoped is not None else fallback)
        found.extend(resolved.problems)
        told.extend(resolved.notices)
        if folder.apply_settings(resolved.settings):
            stale.append(folder)
    report(ls, found, told)
    return stale


def setup(server: SylkServer, on_change: Callable[[SylkServer], None]) -> None:
    """``on_change``: called after the settings changed (to register features turned on)."""

    @feature(server, "settings", types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: SylkServer, params: types.DidChangeConfigurationParams) -> None:
        sent = params.settings.get("sylk", params.settings) if isinstance(params.settings, dict) else None
        if not supports_configuration(ls):  # the pushed settings are the client's, for every folder
            if sent is None:
                return
            if isinstance(ls.client_options, dict) and ls.client_options.get("trusted") is False \
                    and isinstance(sent, dict):
                sent = {**sent, "trusted": False}  # untrusted at start stays so: trust is not pushed later
            ls.client_options = sent
            sent = None
        for folder in await configure(ls, list(ls.folders.values()), fallback=sent):
            folder.start_indexing(REINDEXING)
        on_change(ls)
