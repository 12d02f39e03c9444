"""The packaged model's graph optimized once and kept on disk, its weights in a file
beside it.

onnxruntime optimizes a graph at every session creation: for the int8 MiniLM it folds
each weight into float32 (``Mul(Cast(w), scale)``), 0.2-0.3 s, and the session then holds
the folded weights in anonymous memory beside the parsed model: +131 MiB. Saved once,
with the weights as external data, the optimized graph loads in a third of the time,
onnxruntime maps the weights file instead of copying it (+69 MiB), and the outputs are
the same numbers (bench/README.md, "The folded model").

The folder is named for the onnxruntime version that wrote it (an optimized graph holds
onnxruntime's own fused operators) and built under a temporary name, then renamed: it
is complete wherever it exists, and two processes building at once each rename theirs
and one of them wins. Only what Sylk wrote in its own cache is ever removed.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

VERSION = 1  # of the folder's layout and of the optimization asked for
MODEL = "model.onnx"
WEIGHTS = "weights.bin"
STAMP = "folded.json"  # the source's size and mtime and the weights file's size, checked before each load


def folded_dir(source: Path) -> Path:
    import onnxruntime as ort

    return source.parent / f"{source.stem}.folded-v{VERSION}-ort{ort.__version__}"


def _source_stamp(source: Path) -> list[int]:
    st = source.stat()
    return [st.st_size, st.st_mtime_ns]


def _complete(folder: Path, source: Path) -> bool:
    """The folder holds a whole copy, built from ``source`` as it is now (a source
    rewritten or damaged since makes it stale)."""
    try:
        stamp = json.loads((folder / STAMP).read_text(encoding="utf-8"))
        return ((folder / MODEL).is_file() and (folder / WEIGHTS).stat().st_size == stamp["weights_bytes"]
                and stamp["source"] == _source_stamp(source))
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _ours(folder: Path) -> bool:
    """Nothing in ``folder`` but what ``_build`` writes: safe to remove."""
    try:
        return {p.name for p in folder.iterdir()} <= {MODEL, WEIGHTS, STAMP}
    except OSError:
        return False


def _build(source: Path, folder: Path) -> None:
    import onnxruntime as ort

    stamp = _source_stamp(source)  # before reading it: a change while building makes the copy stale
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=source.parent))
    try:
        options = ort.SessionOptions()
        # EXTENDED, not ALL: the layout changes ALL adds depend on this machine's CPU; they
        # are made again at each load (``_session``), which costs little
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = str(tmp / MODEL)
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", WEIGHTS)
        options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
        ort.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])
        (tmp / STAMP).write_text(json.dumps({"source": stamp, "weights_bytes": (tmp / WEIGHTS).stat().st_size}),
                                 encoding="utf-8")
        try:
            os.rename(tmp, folder)
        except OSError:
            if not _complete(folder, source):  # not another process's finished folder
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def folded_model(source: Path) -> Path | None:
    """The optimized copy of the ONNX file ``source``, built once beside it; None when it
    cannot be built (a read-only cache, a full disk: logged, and ``source`` runs as it is)."""
    folder = folded_dir(source)
    if _complete(folder, source):
        return folder / MODEL
    try:
        if folder.exists():  # left damaged: built again, if it holds only what Sylk writes there
            if not _ours(folder):
                raise OSError(f"{folder} holds files Sylk did not write; left as it is")
            shutil.rmtree(folder)
        _build(source, folder)
    except Exception as e:  # noqa: BLE001 - an optimization, never a reason to fail
        log.info("running %s unfolded (the optimized copy could not be written: %s)", source, e)
        return None
    return folder / MODEL


def forget(model: Path) -> None:
    """Remove the folder of a folded model that failed to load (built again next time);
    only a folder that holds nothing but what ``_build`` writes."""
    if _ours(model.parent):
        shutil.rmtree(model.parent, ignore_errors=True)

