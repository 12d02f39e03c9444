"""Typed settings: the one settings tree (attrs + cattrs), camelCase on the wire and in
TOML files (snake_case is accepted in TOML too); invalid values produce readable
messages and fall back to defaults. Where settings come from, and which source may set
which, is ``settings_sources``.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import cattrs
import platformdirs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from .languages import BY_NAME, SPECS
from .model import FILTERS, FUSIONS, RANKING_STAGES, SEARCH_MODES

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
    # Embed every chunk with the packaged static model first (the whole stdlib in seconds),
    # then with the model above, which replaces those vectors chunk by chunk (engine.embedding)
    quick_pass: bool = True


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


def _each_of(name: str, what: str, known: tuple[str, ...]) -> Any:
    """An attrs validator: every item of the list ``name`` must be one of ``known``."""
    def check(instance: Any, attribute: attrs.Attribute, value: list[str]) -> None:
        unknown = [v for v in value if v not in known]
        if unknown:
            raise ValueError(f"{name}: unknown {what} {', '.join(unknown)}; known: {', '.join(known)}")
    return check


def _exclusions(name: str) -> Any:
    """An attrs validator: every item of the list ``name`` is a filter of values as written
    inline (``role:test``, ``path:vendor/**``; model.FILTERS)."""
    keys = {k: s for s in FILTERS for k in s.inline}

    def check(instance: Any, attribute: attrs.Attribute, value: list[str]) -> None:
        for item in value:
            key, sep, rest = item.removeprefix("-").partition(":")
            spec = keys.get(key)
            if not sep or not rest.strip('"') or spec is None or not spec.negatable:
                known = ", ".join(f"{s.inline[0]}:" for s in FILTERS if s.negatable)
                raise ValueError(f"{name}: {item!r} is not a filter of values ({known} followed by a value)")
    return check


@attrs.define
class SymbolSettings:
    limit: int = attrs.field(default=100, validator=_between("symbols.limit", 1, 10000))


# Languages whose own language server most editors run (pyright/Pylance, tsserver, gopls,
# rust-analyzer, jdtls, OmniSharp: ``own_server`` in languages/<name>.py): there Sylk's
# name-match definitions would only add worse candidates beside the precise answer, so the
# editor gets none from Sylk.
NAVIGATION_SKIP = [s.name for s in SPECS if s.own_server]


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
    skip_languages: list[str] = attrs.field(factory=lambda: list(NAVIGATION_SKIP),
                                            validator=_each_of("navigation.skipLanguages", "language(s)",
                                                               tuple(sorted(BY_NAME))))


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
    # stages of the ranking stack (search/ranking.py) to skip; by default none, and each
    # stage ranks the queries it serves (ranking.APPLIES)
    ranking_off: list[str] = attrs.field(factory=list,
                                         validator=_each_of("search.rankingOff", "stage(s)", RANKING_STAGES))
    # what every search leaves out unless it names that filter itself, as inline filters
    # without their "-" (["role:test", "path:vendor/**"]); the values are checked against
    # the index by the search itself (search/query.py default_exclusions)
    exclude: list[str] = attrs.field(factory=list, validator=_exclusions("search.exclude"))

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


def normalise_keys(data: Any) -> Any:
    """Accept snake_case keys (TOML users write them) by turning them camelCase."""
    if isinstance(data, Mapping):
        return {(camel(k) if isinstance(k, str) and "_" in k else k): normalise_keys(v)
                for k, v in data.items()}
    return data


def merge_layers(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``, table by table (a later source's keys win)."""
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = merge_layers(out[k], v)
        else:
            out[k] = v
    return out


def structure(data: Mapping[str, Any]) -> Settings:
    """Settings from a camelCase mapping; raises SettingsError with readable messages."""
    try:
        return converter.structure(normalise_keys(dict(data)), Settings)
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
