"""The packaged model runs from a copy of its graph as onnxruntime optimizes it, saved
once beside it (sylk.embed.folded_model): the same vectors, built once, and a damaged
or unwritable copy never stops the model from running."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from sylk.embed import folded_model
from sylk.embed.int8_tables import int8_rows_model
from sylk.embed.onnx_encoder import OnnxEncoder
from sylk.embed.packaged import assemble_packaged_model

TEXTS = ["def parse_cookie(header):\n    return dict(p.split('=', 1) for p in header.split(';'))",
         "class Router:\n    def add_route(self, path, handler):\n        self.routes[path] = handler",
         "how are cookies parsed", "x", ""]


@pytest.fixture(scope="module")
def packaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path, reason = assemble_packaged_model(tmp_path_factory.mktemp("sylk-cache"))
    assert path is not None, reason
    return path


@pytest.fixture
def model_dir(packaged: Path, tmp_path: Path) -> Path:
    """A copy of the assembled model with no folded copy yet."""
    dest = tmp_path / "model"
    shutil.copytree(packaged, dest, ignore=shutil.ignore_patterns("*.folded-*"))
    return dest


def _unfolded(model_dir: Path) -> np.ndarray:
    """The vectors of the model run as it is (no folded copy)."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(folded_model, "folded_model", lambda source: None)
        encoder = OnnxEncoder(model_dir)
        assert Path(encoder.session._model_path) == int8_rows_model(model_dir)  # noqa: SLF001
        return encoder.encode(TEXTS)


def test_the_folded_copy_embeds_as_the_model_does(model_dir: Path) -> None:
    folded = folded_model.folded_model(int8_rows_model(model_dir))
    assert folded is not None and folded.is_file()
    assert folded.parent.name.endswith(f"-ort{ort.__version__}")
    assert (folded.parent / folded_model.WEIGHTS).stat().st_size > 40_000_000  # the float32 weights
    ours = OnnxEncoder(model_dir)
    assert Path(ours.session._model_path) == folded  # noqa: SLF001 - which file the session runs
    np.testing.assert_allclose(ours.encode(TEXTS), _unfolded(model_dir), rtol=0, atol=1e-6)


def test_the_copy_is_built_once(model_dir: Path) -> None:
    OnnxEncoder(model_dir)
    folder = folded_model.folded_dir(int8_rows_model(model_dir))
    written = (folder / folded_model.WEIGHTS).stat().st_mtime_ns
    OnnxEncoder(model_dir)
    assert (folder / folded_model.WEIGHTS).stat().st_mtime_ns == written
    assert [p.name for p in model_dir.iterdir() if p.name.endswith(".tmp")] == []  # no build left behind


def test_a_truncated_copy_is_built_again(model_dir: Path) -> None:
    source = int8_rows_model(model_dir)
    folded = folded_model.folded_model(source)
    assert folded is not None
    weights = folded.parent / folded_model.WEIGHTS
    weights.write_bytes(weights.read_bytes()[:1000])
    again = folded_model.folded_model(source)
    assert again == folded and weights.stat().st_size > 40_000_000
    np.testing.assert_allclose(OnnxEncoder(model_dir).encode(TEXTS), _unfolded(model_dir), rtol=0, atol=1e-6)


def test_a_copy_that_fails_to_load_is_removed_and_the_model_runs(model_dir: Path) -> None:
    folded = folded_model.folded_model(int8_rows_model(model_dir))
    assert folded is not None
    folded.write_bytes(b"not an onnx graph")  # the stamp still matches: only loading tells
    encoder = OnnxEncoder(model_dir)
    assert Path(encoder.session._model_path) == int8_rows_model(model_dir)  # noqa: SLF001
    np.testing.assert_allclose(encoder.encode(TEXTS), _unfolded(model_dir), rtol=0, atol=1e-6)
    assert not folded.parent.exists()  # removed, built again next time
    assert Path(OnnxEncoder(model_dir).session._model_path) == folded  # noqa: SLF001


def test_a_copy_that_cannot_be_written_leaves_the_model_running(model_dir: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def full_disk(source: Path, folder: Path) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(folded_model, "_build", full_disk)
    encoder = OnnxEncoder(model_dir)
    assert Path(encoder.session._model_path) == int8_rows_model(model_dir)  # noqa: SLF001
    np.testing.assert_allclose(encoder.encode(TEXTS), _unfolded(model_dir), rtol=0, atol=1e-6)


def test_a_folder_holding_other_files_is_never_removed(model_dir: Path) -> None:
    source = int8_rows_model(model_dir)
    folder = folded_model.folded_dir(source)
    folder.mkdir()
    (folder / "notes.txt").write_text("not Sylk's", encoding="utf-8")
    assert folded_model.folded_model(source) is None  # not built over it
    encoder = OnnxEncoder(model_dir)  # the model runs as it is
    assert Path(encoder.session._model_path) == source  # noqa: SLF001
    assert (folder / "notes.txt").read_text(encoding="utf-8") == "not Sylk's"
