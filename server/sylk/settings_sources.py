"""Where settings come from, and the one door they come in by (``resolve``).

Sources, lowest precedence first: defaults < the workspace's own file (``.sylk.toml``,
else ``[tool.sylk]`` in its pyproject.toml) < the user's config file
(``~/.config/sylk/config.toml``: ``user_config_file``) < environment
(``SYLK_INDEX_DIR``, ``SYLK_MAX_FILE_SIZE``, ``SYLK_TRUSTED``) < the editor's settings
(initializationOptions, or the settings of workspace/didChangeConfiguration, section
``sylk``) < the editor's answer to workspace/configuration for the folder
(``scopeUri``, section ``sylk``).

A workspace is data from a stranger (DESIGN.md, "Trust"): ``SCOPES`` says, key by key,
which settings its own file may set (``workspace``) and which only the user may
(``user``: a path outside the workspace, a network download, trust itself). A
workspace file's user-only keys are refused with a notice naming the file and the key;
the rest of the file applies. ``trusted`` (the editor declares it, or the user) false:
the workspace file is not read at all, and git is never run (engine.planner,
engine.gitmeta).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import platformdirs

from .config import Settings, SettingsError, merge_layers, normalise_keys, structure

# Who may set a setting ---------------------------------------------------------------

USER = "user"  # only the user: editor settings, initializationOptions, environment, user config file
WORKSPACE = "workspace"  # also the workspace's own .sylk.toml / [tool.sylk]
WORKSPACE_FILES = (".sylk.toml", "pyproject.toml")  # the first that holds settings is read


@attrs.frozen
class Scope:
    """Who may set one setting (``scope``); for a user-only one, what a workspace file
    setting it would choose (``why``, "... may not <why>") and its environment variable."""

    scope: str
    why: str = ""
    env: str | None = None


# Every setting (camelCase, dotted), key by key: a test fails on a setting missing here.
# A workspace file may set what stays inside the workspace or only shapes Sylk's own
# work (what is indexed, how search ranks, which features answer); what reaches outside
# (a folder to write, model files to load, a model to download) or vouches for the
# workspace is the user's alone.
SCOPES: dict[str, Scope] = {
    "indexDir": Scope(USER, "choose where Sylk writes", env="SYLK_INDEX_DIR"),
    "exclude": Scope(WORKSPACE),
    "maxFileSize": Scope(WORKSPACE, env="SYLK_MAX_FILE_SIZE"),
    "languages": Scope(WORKSPACE),
    "symbols.limit": Scope(WORKSPACE),
    "search.mode": Scope(WORKSPACE),
    "search.limit": Scope(WORKSPACE),
    "search.rrfK": Scope(WORKSPACE),
    "search.fusion": Scope(WORKSPACE),
    "search.weights.lexical": Scope(WORKSPACE),
    "search.weights.semantic": Scope(WORKSPACE),
    "search.minScore": Scope(WORKSPACE),
    "search.rankingOff": Scope(WORKSPACE),
    "search.exclude": Scope(WORKSPACE),
    "embedding.enabled": Scope(WORKSPACE),
    "embedding.model": Scope(USER, "choose a model Sylk downloads from the network"),
    "embedding.modelPath": Scope(USER, "choose model files outside the workspace for Sylk to load"),
    "embedding.maxTokens": Scope(WORKSPACE),
    "embedding.batchSize": Scope(WORKSPACE),
    "embedding.threads": Scope(WORKSPACE),
    "embedding.quickPass": Scope(WORKSPACE),
    "navigation.definition": Scope(WORKSPACE),
    "navigation.references": Scope(WORKSPACE),
    "navigation.callHierarchy": Scope(WORKSPACE),
    "navigation.skipLanguages": Scope(WORKSPACE),
    "references.limit": Scope(WORKSPACE),
    "references.commentsAndStrings": Scope(WORKSPACE),
    "watch": Scope(WORKSPACE),
    "reconcileMinutes": Scope(WORKSPACE),
    "unsavedSymbols": Scope(WORKSPACE),
    "trusted": Scope(USER, "vouch for its own workspace", env="SYLK_TRUSTED"),
}


def scope_of(key: str) -> str:
    """``user`` or ``workspace`` for a dotted camelCase setting; a key not in SCOPES is the
    user's (a setting nobody classified never comes from a workspace)."""
    entry = SCOPES.get(key)
    return entry.scope if entry is not None else USER


def _is_table(key: str) -> bool:
    """Whether a dotted key names a table of settings (``search``, ``search.weights``)."""
    return any(k.startswith(key + ".") for k in SCOPES)


def user_config_file() -> Path:
    """The user's own settings file: ``$XDG_CONFIG_HOME/sylk/config.toml``
    (``~/.config/sylk/config.toml``); the same keys as ``.sylk.toml``, every one allowed."""
    return Path(platformdirs.user_config_dir("sylk", appauthor=False)) / "config.toml"


def display_path(path: Path) -> str:
    """``path`` with the home folder as ``~``."""
    home = Path.home()
    return f"~/{path.relative_to(home).as_posix()}" if path.is_relative_to(home) else str(path)


def _read_toml(path: Path, pick: Any) -> dict[str, Any] | None:
    """``pick`` of the TOML file ``path`` (None when it has nothing for Sylk); raises
    SettingsError naming the file."""
    try:
        data = pick(tomllib.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError([f"{path}: {exc}"]) from exc
    if data is None:
        return None
    if not isinstance(data, dict):
        raise SettingsError([f"{path}: [tool.sylk] must be a table"])
    return normalise_keys(data)


def _workspace_file(root: Path) -> tuple[Path, dict[str, Any]] | None:
    """The workspace's settings file and what it says: ``.sylk.toml`` if present, else
    ``[tool.sylk]`` of pyproject.toml; raises SettingsError."""
    for name, pick in zip(WORKSPACE_FILES, (lambda d: d, lambda d: d.get("tool", {}).get("sylk"))):
        path = root / name
        if path.is_file():
            data = _read_toml(path, pick)
            if data is not None:
                return path, data
    return None


def file_settings(root: Path) -> dict[str, Any]:
    """What the workspace's own file says, every key (``resolve`` refuses those it may not
    set); raises SettingsError."""
    found = _workspace_file(root)
    return found[1] if found is not None else {}


def user_file_settings(path: Path | None = None) -> dict[str, Any]:
    """The user config file (``user_config_file``); {} when there is none; raises SettingsError."""
    path = path or user_config_file()
    return (_read_toml(path, lambda d: d) or {}) if path.is_file() else {}


def refused_message(path: Path, key: str) -> str:
    """Why a workspace file's ``key`` is ignored, and where the user can set it."""
    entry = SCOPES.get(key, Scope(USER, "set a setting Sylk does not know"))
    where = ", ".join(["your editor's settings", *([entry.env] if entry.env else [])])
    return (f"{path}: {key} is ignored: a workspace file may not {entry.why} "
            f"(set it in {where} or {display_path(user_config_file())})")


def workspace_scoped(data: Mapping[str, Any], path: Path) -> tuple[dict[str, Any], list[str]]:
    """``data`` (a workspace file's settings, camelCase) without the keys only the user may
    set, and a notice for each one left out."""
    notices: list[str] = []

    def keep(node: Mapping[str, Any], prefix: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in node.items():
            key = f"{prefix}{k}"
            if key in SCOPES:
                if SCOPES[key].scope == USER:
                    notices.append(refused_message(path, key))
                    continue
                out[k] = v
            elif _is_table(key) and isinstance(v, Mapping):
                out[k] = keep(v, key + ".")
            else:  # not a table, or not a setting: validation names it
                out[k] = v
        return out

    return keep(data, ""), notices


def _flag(raw: str) -> bool | str:
    """An environment variable's yes or no (``raw`` itself when it is neither)."""
    value = raw.strip().lower()
    if value in ("0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    return raw


def env_settings(environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if environ.get("SYLK_INDEX_DIR"):
        out["indexDir"] = environ["SYLK_INDEX_DIR"]
    if environ.get("SYLK_MAX_FILE_SIZE"):
        try:
            out["maxFileSize"] = int(environ["SYLK_MAX_FILE_SIZE"])
        except ValueError:
            raise SettingsError([f"SYLK_MAX_FILE_SIZE must be a number of bytes, got {environ['SYLK_MAX_FILE_SIZE']!r}"])
    if environ.get("SYLK_TRUSTED", "").strip():  # (a typo is not a yes: resolve takes it as no, and says so)
        out["trusted"] = _flag(environ["SYLK_TRUSTED"])
    return out


@attrs.frozen
class Resolved:
    """The effective settings of a workspace folder and what the user should be told:
    ``problems``, invalid values (their defaults used); ``notices``, settings refused
    from a workspace file and an untrusted workspace's file and git left alone."""

    settings: Settings
    problems: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()


# what a status says of an untrusted workspace (trusted false)
UNTRUSTED = ("untrusted workspace: its settings file (.sylk.toml, [tool.sylk]) is ignored and git is not run "
             "(no git metadata: author and date filters and commit search find nothing)")


def notes(resolved: Resolved) -> list[str]:
    """The problems and notices as lines a status lists (MCP's ``notes``)."""
    return [f"{p} (using the default)" for p in resolved.problems] + list(resolved.notices)


def untrusted_notice(root: Path, ignored: Path | None) -> str:
    """What an untrusted workspace means, said once."""
    what = f"{ignored.name if ignored.name == WORKSPACE_FILES[0] else '[tool.sylk] of ' + ignored.name} ignored, " \
        if ignored is not None else ""
    return f"untrusted workspace {root}: {what}git off"


def resolve(root: Path, client: Mapping[str, Any] | None = None,
            environ: Mapping[str, str] = os.environ, *,
            scoped: Mapping[str, Any] | None = None, user_file: Path | None = None) -> Resolved:
    """Effective settings for a workspace, and what was met on the way. ``client``: the
    editor's settings for every folder; ``scoped``: its settings for this folder
    (workspace/configuration with the folder's ``scopeUri``), over ``client`` key by
    key; ``user_file``: the user config file (default ``user_config_file()``).

    The workspace's own file gives only its ``workspace`` keys (SCOPES), and nothing when
    the workspace is not trusted: ``trusted`` is false in any of the user's sources.
    Every layer that fails validation is dropped (with its messages returned), so a
    typo in one place never stops Sylk from serving with the rest.
    """
    problems: list[str] = []
    notices: list[str] = []
    user: list[tuple[str, Any]] = []
    try:
        user.append((f"{user_file or user_config_file()}", user_file_settings(user_file)))
    except SettingsError as err:
        problems.extend(err.messages)
    try:
        user.append(("environment", env_settings(environ)))
    except SettingsError as err:
        problems.extend(err.messages)
    for editor in (client, scoped):
        if editor is not None:
            user.append(("editor settings", normalise_keys(editor) if isinstance(editor, Mapping) else editor))
    trusted = True
    for origin, layer in user:
        if isinstance(layer, Mapping) and "trusted" in layer:
            value = layer["trusted"]
            if not isinstance(value, bool):
                named = "SYLK_TRUSTED" if origin == "environment" else f"{origin}: trusted"
                problems.append(f"{named} must be true or false, got {value!r} (taken as false)")
            trusted = trusted and value is True
    layers: list[tuple[str, Any]] = []
    try:
        found = _workspace_file(root)
        named = found[0] if found is not None else None
    except SettingsError as err:
        found = None
        named = next((root / n for n in WORKSPACE_FILES if (root / n).is_file()), None)
        if trusted:
            problems.extend(err.messages)
    if not trusted:
        notices.append(untrusted_notice(root, named))
    elif found is not None:
        allowed, refused = workspace_scoped(found[1], found[0])
        notices.extend(refused)
        layers.append((str(found[0]), allowed))
    layers += user
    merged: dict[str, Any] = {}
    for origin, layer in layers:
        if not isinstance(layer, Mapping):
            problems.append(f"{origin}: settings must be an object, got {type(layer).__name__}")
            continue
        # Key by key, so one bad value costs only itself.
        for key, value in layer.items():
            if key == "trusted":  # decided above, from every user source
                continue
            candidate = merge_layers(merged, {key: value})
            try:
                structure(candidate)
            except SettingsError as err:
                problems.extend(f"{origin}: {m}" for m in err.messages)
                continue
            merged = candidate
    return Resolved(attrs.evolve(structure(merged), trusted=trusted), tuple(problems), tuple(notices))
