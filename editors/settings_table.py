"""Print the settings table of the README's "Editors" section.

Names and defaults come from the server (``sylk.config``), descriptions from the VS Code
extension's package.json; tests/test_nvim.py checks that both agree and that the README
holds this exact table. Run: ``python editors/settings_table.py``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sylk import config, settings_sources

PACKAGE_JSON = Path(__file__).resolve().parent / "vscode" / "package.json"


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _default(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{json.dumps(value) if isinstance(value, list) else value}`"


def _plain(text: str) -> str:
    """A package.json description as README table text (no bold, no pipes)."""
    return re.sub(r"\*\*(.+?)\*\*", r"\1", text).replace("|", "\\|")


# Server settings VS Code offers no setting for: the extension sends them itself.
NOT_IN_VSCODE = {
    "trusted": "Whether the workspace is trusted. VS Code sends its workspace trust (`initializationOptions.trusted`); "
               "other editors, `SYLK_TRUSTED=0`, `--untrusted` or the user config file say false. Untrusted: the "
               "workspace's `.sylk.toml` / `[tool.sylk]` is ignored and git is not run. False in any of the user's "
               "sources wins.",
}


def table() -> str:
    """The table; ``scope`` (settings_sources.SCOPES): ``user``, only from the user's own sources,
    or ``workspace``, also from the workspace's ``.sylk.toml`` / ``[tool.sylk]``."""
    props = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))["contributes"]["configuration"]["properties"]
    rows = ["| setting | default | scope | meaning |", "|---|---|---|---|"]
    for name, value in _flatten(config.unstructure(config.Settings())).items():
        spec = props.get(f"sylk.{name}", {})
        meaning = _plain(spec.get("markdownDescription") or spec.get("description") or NOT_IN_VSCODE.get(name, ""))
        rows.append(f"| `{name}` | {_default(value)} | {settings_sources.scope_of(name)} | {meaning} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(table(), end="")
