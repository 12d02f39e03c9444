"""Settings: layers, camelCase on the wire, readable errors, defaults kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from sylk import config


def test_defaults(tmp_path: Path):
    settings, problems = config.resolve(tmp_path, None, environ={})
    assert problems == []
    assert settings.max_file_size == 1 << 20 and settings.symbols.limit == 100 and settings.exclude == []


def test_layers_in_order(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[tool.sylk]\nmax_file_size = 10\nexclude = ["gen/**"]\n')
    settings, problems = config.resolve(tmp_path, {"symbols": {"limit": 7}},
                                        environ={"SYLK_MAX_FILE_SIZE": "20", "SYLK_INDEX_DIR": "/tmp/x"})
    assert problems == []
    assert settings.exclude == ["gen/**"]          # file
    assert settings.max_file_size == 20            # environment beats file
    assert settings.index_dir == "/tmp/x"
    assert settings.symbols.limit == 7             # editor


def test_sylk_toml_wins_over_pyproject(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.sylk]\nmaxFileSize = 10\n")
    (tmp_path / ".sylk.toml").write_text("maxFileSize = 99\n")
    assert config.resolve(tmp_path, None, environ={})[0].max_file_size == 99


def test_editor_beats_environment(tmp_path: Path):
    settings, _ = config.resolve(tmp_path, {"indexDir": "/tmp/editor"}, environ={"SYLK_INDEX_DIR": "/tmp/env"})
    assert settings.index_dir == "/tmp/editor"


@pytest.mark.parametrize(("options", "fragment"), [
    pytest.param({"maxFileSize": "big"}, "maxFileSize", id="wrong-type"),
    pytest.param({"maxFileSize": -5}, "maxFileSize must be a positive number", id="negative"),
    pytest.param({"symbols": {"limit": 0}}, "symbols.limit must be between 1 and 10000", id="range"),
    pytest.param({"languages": ["cobol"]}, "unknown language(s) cobol", id="language"),
    pytest.param({"colour": "blue"}, "unknown setting(s): colour", id="unknown-key"),
])
def test_bad_values_are_explained_and_dropped(tmp_path: Path, options: dict, fragment: str):
    settings, problems = config.resolve(tmp_path, {**options, "exclude": ["keep/**"]}, environ={})
    assert any(fragment in p for p in problems), problems
    assert settings.exclude == ["keep/**"]  # the good key survives a bad neighbour
    assert settings.max_file_size == 1 << 20 and settings.symbols.limit == 100


def test_broken_toml_is_reported(tmp_path: Path):
    (tmp_path / ".sylk.toml").write_text("maxFileSize = = 3\n")
    settings, problems = config.resolve(tmp_path, None, environ={})
    assert problems and ".sylk.toml" in problems[0]
    assert settings == config.Settings()


def test_bad_environment_value(tmp_path: Path):
    _, problems = config.resolve(tmp_path, None, environ={"SYLK_MAX_FILE_SIZE": "lots"})
    assert problems == ["SYLK_MAX_FILE_SIZE must be a number of bytes, got 'lots'"]


def test_settings_not_an_object(tmp_path: Path):
    settings, problems = config.resolve(tmp_path, ["nope"], environ={})
    assert problems == ["editor settings: settings must be an object, got list"]
    assert settings == config.Settings()


def test_round_trip_camel_case():
    data = config.unstructure(config.Settings(max_file_size=5))
    assert data["maxFileSize"] == 5 and "max_file_size" not in data
    assert config.structure(data) == config.Settings(max_file_size=5)


def test_index_dir_is_per_workspace_under_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    a = config.index_dir_for(tmp_path / "a", config.Settings())
    b = config.index_dir_for(tmp_path / "b", config.Settings())
    assert a != b and a.parent == b.parent == tmp_path / "cache" / "sylk"


def test_vscode_settings_declare_the_servers_defaults():
    """Every server setting VS Code offers has the server's default (a drifted default
    would show users one value and run another)."""
    import json
    import re

    import attrs

    manifest = Path(__file__).resolve().parents[1] / "editors" / "vscode" / "package.json"
    properties = json.loads(manifest.read_text())["contributes"]["configuration"]["properties"]
    defaults = config.Settings()
    checked = []
    for key, spec in properties.items():
        name = key.removeprefix("sylk.")
        if name.split(".")[0] in ("serverPath", "trace", "quickSearch"):
            continue  # the client's own
        value: object = defaults
        for part in name.split("."):
            value = getattr(value, re.sub(r"(?<!^)(?=[A-Z])", "_", part).lower())
        if attrs.has(type(value)):
            continue
        assert spec["default"] == value, f"{key}: package.json says {spec['default']!r}, the server {value!r}"
        checked.append(name)
    assert {"search.fusion", "search.weights.semantic", "embedding.enabled"} <= set(checked)
