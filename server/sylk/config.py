"""Typed settings, and the one door they come in by (``resolve``).

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

Names are camelCase on the wire and in TOML files (snake_case is accepted in
TOML too); invalid values produce readable messages and fall back to defaults.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import cattrs
import platformdirs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from .languages import BY_NAME
from .model import FUSIONS, SEARCH_MODES

# The default embedding model (shipped with Sylk: see embed/embedder.py).
MODEL_ID_DEFAULT = "sentence-transformers/all-MiniLM-L6-v2"


@attrs.frozen
class EmbeddingSettings:
    enabled: bool = True
    model: str = MODEL_ID_DEFAULT
    model_path: str | None = None
    # all-MiniLM-L6-v2 was trained on 128-token inputs: at 128 semantic MRR@10 is higher
    # (bench/relevance.py: 0.452 vs 0.438 at 256) and embedding ~1.4x faster
    max_tokens: int = 128
    # Sequences per batch at max_tokens (the batch budget is batch_size * max_tokens
    # padded tokens, so short texts go 4x as many). Throughput is flat from 4 to 32
    # sequences; onnxruntime's peak memory is not (2000 stdlib functions at 256
    # tokens: ~410 MB peak RSS at 4, ~590 MB at 8, ~920 MB at 16).
    batch_size: int = 4
    threads: int = 0  # onnxruntime intra-op threads; 0 = one per core


def _between(name: str, low: float, high: float | None = None) -> Any:
    """An attrs validator: ``name`` (as the user writes it) must lie in [low, high]."""
    def check(instance: Any, attribute: attrs.Attribute, value: float) -> None:
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f">= {low}"
            raise ValueError(f"{name} must be {bound}, got {value}")
    return check


def _one_of(name: str, values: tuple[str, ...]) -> Any:
    """An attrs validator: ``name`` must be one of ``values``."""
    def check(instance: Any, attribute: attrs.Attribute, value: str) -> None:
        if value not in values:
            raise ValueError(f"{name} must be one of {', '.join(values)}, got {value!r}")
    return check


@attrs.define
class SymbolSettings:
    limit: int = attrs.field(default=100, validator=_between("symbols.limit", 1, 10000))


# Languages whose own language server most editors run (pyright/Pylance, tsserver, gopls,
# rust-analyzer, jdtls, OmniSharp): there Sylk's name-match definitions would only add
# worse candidates beside the precise answer, so the editor gets none from Sylk.
NAVIGATION_SKIP = ["python", "javascript", "typescript", "tsx", "go", "rust", "java", "csharp"]


@attrs.define
class NavigationSettings:
    # textDocument/definition from the index
    definition: bool = True
    # textDocument/references from the index
    references: bool = True
    # the call hierarchy (textDocument/prepareCallHierarchy, callHierarchy/*) from the index
    call_hierarchy: bool = True
    # files of these languages get no definitions, references or calls from Sylk in the editor
    # (the CLI and MCP answer for every language)
    skip_languages: list[str] = attrs.field(factory=lambda: list(NAVIGATION_SKIP))

    @skip_languages.validator
    def _check_languages(self, attribute: attrs.Attribute, value: list[str]) -> None:
        unknown = [v for v in value if v not in BY_NAME]
        if unknown:
            raise ValueError(f"navigation.skipLanguages: unknown language(s) {', '.join(unknown)}; "
                             f"known: {', '.join(sorted(BY_NAME))}")


@attrs.define
class ReferenceSettings:
    # at most this many occurrences per answer (the answer says it was cut)
    limit: int = attrs.field(default=2000, validator=_between("references.limit", 1, 1_000_000))
    # occurrences inside comments and strings count as references
    comments_and_strings: bool = True


@attrs.define
class WeightSettings:
    # multipliers on each side; the balance per query style is search/fusion.py's ALPHA
    # (with fusion rrf, 1:1.5 did best on bench/relevance.py: MRR@10 0.482 vs 0.469 at 1:1)
    lexical: float = attrs.field(default=1.0, validator=_between("search.weights.lexical", 0))
    semantic: float = attrs.field(default=1.0, validator=_between("search.weights.semantic", 0))


@attrs.define
class SearchSettings:
    mode: str = attrs.field(default="hybrid")
    limit: int = attrs.field(default=20, validator=_between("search.limit", 1, 1000))
    rrf_k: int = attrs.field(default=60, validator=_between("search.rrfK", 1))
    fusion: str = attrs.field(default="convex", validator=_one_of("search.fusion", FUSIONS))
    weights: WeightSettings = attrs.field(factory=WeightSettings)
    # the relevance floor: modes semantic and hybrid leave out the hits only the semantic
    # side found whose cosine similarity to the query is below it (0: no floor). On
    # bench/relevance.py (all-MiniLM-L6-v2) at 0.35 hybrid MRR@10 does not drop, mode
    # semantic loses 0.003-0.017 on sentence and keyword queries, and 78-100% of 50
    # nonsense queries get no hits instead of ten (0.3: 46-96%; bench/README.md)
    min_score: float = attrs.field(default=0.35, validator=_between("search.minScore", 0, 1))

    @mode.validator
    def _check_mode(self, attribute: attrs.Attribute, value: str) -> None:
        if value not in SEARCH_MODES:
            raise ValueError(f"search.mode must be {', '.join(SEARCH_MODES[:-1])} or {SEARCH_MODES[-1]}, got {value!r}")


@attrs.define
class Settings:
    index_dir: str | None = None
    exclude: list[str] = attrs.field(factory=list)
    max_file_size: int = attrs.field(default=1 << 20)
    languages: list[str] = attrs.field(factory=list)  # empty: all we know
    symbols: SymbolSettings = attrs.field(factory=SymbolSettings)
    search: SearchSettings = attrs.field(factory=SearchSettings)
    embedding: EmbeddingSettings = attrs.field(factory=EmbeddingSettings)
    navigation: NavigationSettings = attrs.field(factory=NavigationSettings)
    references: ReferenceSettings = attrs.field(factory=ReferenceSettings)
    # the language server: follow changes on disk made outside the editor
    watch: bool = True
    # the language and MCP servers: every this many minutes, when no index run is under way,
    # check the disk as at start-up (git's view, or a stat() of every file) and index what
    # changed: the changes file watching missed (inotify limits, network file systems, a
    # machine asleep) or, with ``watch`` off, every change made outside the editor. 0: never
    reconcile_minutes: float = attrs.field(default=10.0)
    # workspace/symbol answers from the editor's unsaved text of open files
    unsaved_symbols: bool = True
    # the workspace is trusted (the editor says so: VS Code's workspace trust). False: the
    # workspace's own settings file is ignored and git is never run. Only the user sets it
    # (resolve: false from any of the user's sources wins; a value that is not a boolean
    # counts as false)
    trusted: bool = True

    @max_file_size.validator
    def _check_size(self, attribute: attrs.Attribute, value: int) -> None:
        if value <= 0:
            raise ValueError(f"maxFileSize must be a positive number of bytes, got {value}")

    @languages.validator
    def _check_languages(self, attribute: attrs.Attribute, value: list[str]) -> None:
        unknown = [v for v in value if v not in BY_NAME]
        if unknown:
            raise ValueError(
                f"unknown language(s) {', '.join(unknown)}; known: {', '.join(sorted(BY_NAME))}"
            )

    @reconcile_minutes.validator
    def _check_reconcile(self, attribute: attrs.Attribute, value: float) -> None:
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"reconcileMinutes must be a number of minutes >= 0 (0: never), got {value!r}")


def camel(name: str) -> str:
    """snake_case -> camelCase: the names on the wire."""
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def snake(name: str) -> str:
    """camelCase -> snake_case: the names in Python."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True)
    for cls in (WeightSettings, SearchSettings, SymbolSettings, EmbeddingSettings, NavigationSettings,
                ReferenceSettings, Settings):  # nested first
        overrides = {f.name: override(rename=camel(f.name)) for f in attrs.fields(cls)}
        conv.register_structure_hook(
            cls, make_dict_structure_fn(cls, conv, _cattrs_forbid_extra_keys=True, **overrides))
        conv.register_unstructure_hook(cls, make_dict_unstructure_fn(cls, conv, **overrides))
    return conv


converter = _make_converter()


class SettingsError(ValueError):
    """Settings that could not be used; ``messages`` says what is wrong, one line each."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


def _normalise_keys(data: Any) -> Any:
    """Accept snake_case keys (TOML users write them) by turning them camelCase."""
    if isinstance(data, Mapping):
        return {(camel(k) if isinstance(k, str) and "_" in k else k): _normalise_keys(v)
                for k, v in data.items()}
    return data


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def structure(data: Mapping[str, Any]) -> Settings:
    """Settings from a camelCase mapping; raises SettingsError with readable messages."""
    try:
        return converter.structure(_normalise_keys(dict(data)), Settings)
    except Exception as exc:  # cattrs raises ClassValidationError / ForbiddenExtraKeysError
        if isinstance(exc, cattrs.BaseValidationError):
            messages = [_camel_path(m) for m in cattrs.transform_error(exc, path="sylk", format_exception=_describe)]
        else:
            messages = [_describe(exc, None)]
        raise SettingsError(messages) from exc


def _describe(exc: BaseException, type_: Any) -> str:
    if isinstance(exc, cattrs.ForbiddenExtraKeysError):
        return f"unknown setting(s): {', '.join(sorted(exc.extra_fields))}"
    if isinstance(exc, ValueError) and str(exc) and not isinstance(exc, cattrs.BaseValidationError):
        return str(exc)
    if type_ is not None:
        name = getattr(type_, "__name__", str(type_))
        return f"expected {name}, got an invalid value ({exc})"
    return str(exc)


def _camel_path(message: str) -> str:
    head, sep, path = message.rpartition(" @ ")
    return f"{head}{sep}{'.'.join(camel(p) for p in path.split('.'))}" if sep else message


def unstructure(settings: Settings) -> dict[str, Any]:
    return converter.unstructure(settings)


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
    "embedding.enabled": Scope(WORKSPACE),
    "embedding.model": Scope(USER, "choose a model Sylk downloads from the network"),
    "embedding.modelPath": Scope(USER, "choose model files outside the workspace for Sylk to load"),
    "embedding.maxTokens": Scope(WORKSPACE),
    "embedding.batchSize": Scope(WORKSPACE),
    "embedding.threads": Scope(WORKSPACE),
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


def _shown(path: Path) -> str:
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
    return _normalise_keys(data)


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
            f"(set it in {where} or {_shown(user_config_file())})")


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
            user.append(("editor settings", _normalise_keys(editor) if isinstance(editor, Mapping) else editor))
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
            candidate = _merge(merged, {key: value})
            try:
                structure(candidate)
            except SettingsError as err:
                problems.extend(f"{origin}: {m}" for m in err.messages)
                continue
            merged = candidate
    return Resolved(attrs.evolve(structure(merged), trusted=trusted), tuple(problems), tuple(notices))


def cache_root() -> Path:
    """Sylk's folder in the user cache directory: index folders, the assembled model."""
    return Path(platformdirs.user_cache_dir("sylk", appauthor=False))


def index_dir_for(root: Path, settings: Settings) -> Path:
    """The index folder of a workspace: the configured one, or one under the user cache dir."""
    if settings.index_dir:
        return Path(os.path.expanduser(settings.index_dir)).resolve()
    root = root.resolve()
    digest = hashlib.sha1(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", root.name) or "root"
    return cache_root() / f"{safe}-{digest}"
