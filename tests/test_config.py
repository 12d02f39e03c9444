"""Settings: layers, camelCase on the wire, readable errors, defaults kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from sylk import config, settings_sources


def test_defaults(tmp_path: Path):
    resolved = settings_sources.resolve(tmp_path, None, environ={})
    settings, problems = resolved.settings, resolved.problems
    assert problems == () and resolved.notices == () and settings.trusted
    assert settings.max_file_size == 1 << 20 and settings.symbols.limit == 100 and settings.exclude == []


def test_layers_in_order(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[tool.sylk]\nmax_file_size = 10\nexclude = ["gen/**"]\n')
    resolved = settings_sources.resolve(tmp_path, {"symbols": {"limit": 7}},
                              environ={"SYLK_MAX_FILE_SIZE": "20", "SYLK_INDEX_DIR": "/tmp/x"})
    settings = resolved.settings
    assert resolved.problems == () and resolved.notices == ()
    assert settings.exclude == ["gen/**"]          # file
    assert settings.max_file_size == 20            # environment beats file
    assert settings.index_dir == "/tmp/x"
    assert settings.symbols.limit == 7             # editor


def test_sylk_toml_wins_over_pyproject(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.sylk]\nmaxFileSize = 10\n")
    (tmp_path / ".sylk.toml").write_text("maxFileSize = 99\n")
    assert settings_sources.resolve(tmp_path, None, environ={}).settings.max_file_size == 99


def test_editor_beats_environment(tmp_path: Path):
    settings = settings_sources.resolve(tmp_path, {"indexDir": "/tmp/editor"}, environ={"SYLK_INDEX_DIR": "/tmp/env"}).settings
    assert settings.index_dir == "/tmp/editor"


@pytest.mark.parametrize(("options", "fragment"), [
    pytest.param({"maxFileSize": "big"}, "maxFileSize", id="wrong-type"),
    pytest.param({"maxFileSize": -5}, "maxFileSize must be a positive number", id="negative"),
    pytest.param({"symbols": {"limit": 0}}, "symbols.limit must be between 1 and 10000", id="range"),
    pytest.param({"languages": ["cobol"]}, "unknown language(s) cobol", id="language"),
    pytest.param({"navigation": {"skipLanguages": ["cobol"]}}, "navigation.skipLanguages: unknown language(s) cobol",
                 id="skip-language"),
    pytest.param({"search": {"rankingOff": ["path", "pagerank"]}},
                 "search.rankingOff: unknown stage(s) pagerank; known: members, definition", id="ranking-stage"),
    pytest.param({"search": {"exclude": ["vendor/**"]}}, "search.exclude: 'vendor/**' is not a filter of values",
                 id="exclude-not-a-filter"),
    pytest.param({"search": {"exclude": ["minlines:3"]}}, "search.exclude: 'minlines:3' is not a filter of values",
                 id="exclude-a-bound"),
    pytest.param({"colour": "blue"}, "unknown setting(s): colour", id="unknown-key"),
])
def test_bad_values_are_explained_and_dropped(tmp_path: Path, options: dict, fragment: str):
    resolved = settings_sources.resolve(tmp_path, {**options, "exclude": ["keep/**"]}, environ={})
    settings, problems = resolved.settings, resolved.problems
    assert any(fragment in p for p in problems), problems
    assert settings.exclude == ["keep/**"]  # the good key survives a bad neighbour
    assert settings.max_file_size == 1 << 20 and settings.symbols.limit == 100


def test_broken_toml_is_reported(tmp_path: Path):
    (tmp_path / ".sylk.toml").write_text("maxFileSize = = 3\n")
    resolved = settings_sources.resolve(tmp_path, None, environ={})
    settings, problems = resolved.settings, resolved.problems
    assert problems and ".sylk.toml" in problems[0]
    assert settings == config.Settings()


def test_bad_environment_value(tmp_path: Path):
    problems = settings_sources.resolve(tmp_path, None, environ={"SYLK_MAX_FILE_SIZE": "lots"}).problems
    assert problems == ("SYLK_MAX_FILE_SIZE must be a number of bytes, got 'lots'",)


def test_settings_not_an_object(tmp_path: Path):
    resolved = settings_sources.resolve(tmp_path, ["nope"], environ={})
    settings, problems = resolved.settings, resolved.problems
    assert problems == ("editor settings: settings must be an object, got list",)
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


# -- who may set what (DESIGN.md, "Trust") ---------------------------------------------

def _leaves(data: dict, prefix: str = "") -> set[str]:
    out: set[str] = set()
    for key, value in data.items():
        out |= _leaves(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}"}
    return out


def test_every_setting_has_a_scope():
    """A new setting must say whether a workspace file may set it (an unclassified one
    would be the user's only, silently)."""
    assert set(settings_sources.SCOPES) == _leaves(config.unstructure(config.Settings()))
    user = {k for k, v in settings_sources.SCOPES.items() if v.scope == settings_sources.USER}
    assert user == {"indexDir", "embedding.model", "embedding.modelPath", "trusted"}
    assert all(settings_sources.SCOPES[k].why for k in user)


HOSTILE = ('indexDir = "/"\nmaxFileSize = 77\ntrusted = true\n'
           '[embedding]\nmodel_path = "/opt/models"\nmodel = "BAAI/bge-small-en-v1.5"\nbatchSize = 2\n')


@pytest.mark.parametrize("where", [".sylk.toml", "pyproject.toml"])
def test_a_workspace_file_cannot_set_user_settings(tmp_path: Path, where: str):
    text = HOSTILE if where == ".sylk.toml" else "[tool.sylk]\n" + HOSTILE.replace("[embedding]", "[tool.sylk.embedding]")
    (tmp_path / where).write_text(text)
    resolved = settings_sources.resolve(tmp_path, None, environ={})
    s = resolved.settings
    assert s.index_dir is None and s.embedding.model_path is None and s.embedding.model == config.MODEL_ID_DEFAULT
    assert s.max_file_size == 77 and s.embedding.batch_size == 2  # the rest of the file applies
    assert resolved.problems == ()
    file = tmp_path / where
    assert resolved.notices == (
        f"{file}: indexDir is ignored: a workspace file may not choose where Sylk writes (set it in your "
        "editor's settings, SYLK_INDEX_DIR or " + settings_sources.display_path(settings_sources.user_config_file()) + ")",
        f"{file}: trusted is ignored: a workspace file may not vouch for its own workspace (set it in your "
        "editor's settings, SYLK_TRUSTED or " + settings_sources.display_path(settings_sources.user_config_file()) + ")",
        f"{file}: embedding.modelPath is ignored: a workspace file may not choose model files outside the "
        "workspace for Sylk to load (set it in your editor's settings or "
        + settings_sources.display_path(settings_sources.user_config_file()) + ")",
        f"{file}: embedding.model is ignored: a workspace file may not choose a model Sylk downloads from the "
        "network (set it in your editor's settings or " + settings_sources.display_path(settings_sources.user_config_file()) + ")")


def test_user_sources_set_user_settings(tmp_path: Path):
    user_file = tmp_path / "config.toml"
    user_file.write_text('indexDir = "/srv/idx"\n[embedding]\nmodelPath = "/opt/m"\nmodel = "BAAI/bge-small-en-v1.5"\n')
    s = settings_sources.resolve(tmp_path, None, environ={}, user_file=user_file).settings
    assert (s.index_dir, s.embedding.model_path, s.embedding.model) == ("/srv/idx", "/opt/m", "BAAI/bge-small-en-v1.5")
    # above the workspace file, below the environment and the editor
    (tmp_path / ".sylk.toml").write_text("maxFileSize = 5\n")
    user_file.write_text("maxFileSize = 6\nexclude = ['x/**']\n")
    assert settings_sources.resolve(tmp_path, None, environ={}, user_file=user_file).settings.max_file_size == 6
    s = settings_sources.resolve(tmp_path, {"exclude": ["y/**"]}, environ={"SYLK_MAX_FILE_SIZE": "7"}, user_file=user_file).settings
    assert (s.max_file_size, s.exclude) == (7, ["y/**"])


def test_the_user_config_file_is_under_xdg_config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "conf"))
    (tmp_path / "conf" / "sylk").mkdir(parents=True)
    (tmp_path / "conf" / "sylk" / "config.toml").write_text('indexDir = "/srv/idx"\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    assert settings_sources.user_config_file() == tmp_path / "conf" / "sylk" / "config.toml"
    assert settings_sources.resolve(ws, None, environ={}).settings.index_dir == "/srv/idx"
    (tmp_path / "conf" / "sylk" / "config.toml").write_text("indexDir = = 1\n")
    problems = settings_sources.resolve(ws, None, environ={}).problems
    assert len(problems) == 1 and str(tmp_path / "conf" / "sylk" / "config.toml") in problems[0]


@pytest.mark.parametrize(("client", "environ", "trusted"), [
    pytest.param(None, {}, True, id="default"),
    pytest.param({"trusted": False}, {}, False, id="editor"),
    pytest.param(None, {"SYLK_TRUSTED": "0"}, False, id="env-0"),
    pytest.param(None, {"SYLK_TRUSTED": "no"}, False, id="env-no"),
    pytest.param(None, {"SYLK_TRUSTED": "false"}, False, id="env-false"),
    pytest.param(None, {"SYLK_TRUSTED": "yes"}, True, id="env-yes"),
    pytest.param({"trusted": True}, {"SYLK_TRUSTED": "0"}, False, id="false-anywhere-wins"),
    pytest.param({"trusted": "false"}, {}, False, id="not-a-boolean"),
    pytest.param(None, {"SYLK_TRUSTED": "maybe"}, False, id="env-typo"),
])
def test_trust_comes_from_the_user(tmp_path: Path, client, environ, trusted):
    (tmp_path / ".sylk.toml").write_text("maxFileSize = 5\n")
    resolved = settings_sources.resolve(tmp_path, client, environ=environ)
    assert resolved.settings.trusted is trusted
    if trusted:
        assert resolved.settings.max_file_size == 5 and resolved.notices == ()
    else:  # the workspace file is not read at all, and the user is told once
        assert resolved.settings.max_file_size == 1 << 20
        assert resolved.notices == (f"untrusted workspace {tmp_path}: .sylk.toml ignored, git off",)
    if client == {"trusted": "false"} or environ.get("SYLK_TRUSTED") == "maybe":
        assert any("must be true or false" in p and "taken as false" in p for p in resolved.problems)


def test_an_untrusted_workspace_file_is_not_even_reported_broken(tmp_path: Path):
    (tmp_path / ".sylk.toml").write_text("maxFileSize = = 5\n")
    resolved = settings_sources.resolve(tmp_path, {"trusted": False}, environ={})
    assert resolved.problems == () and resolved.notices == (f"untrusted workspace {tmp_path}: .sylk.toml ignored, "
                                                            "git off",)
