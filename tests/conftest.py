from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
WORKSPACE = FIXTURES / "workspace"


@pytest.fixture(autouse=True)
def _isolated_index(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own cache dir, so no test sees another's index (or the user's)."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv("SYLK_INDEX_DIR", raising=False)
    return cache


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A private copy of the multi-language fixture workspace (tests may edit it)."""
    dest = tmp_path / "workspace"
    shutil.copytree(WORKSPACE, dest, symlinks=True)
    return dest
