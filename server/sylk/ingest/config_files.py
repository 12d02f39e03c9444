"""Config files: which syntax a file name says (``config_syntax``), and where its
top-level keys are, by line rules (``config_keys``): YAML ``key:`` at column 0; TOML/INI
``[section]`` at column 0, and ``key = value`` before the first section; JSON ``"key":``
at the indentation of the first key inside a root ``{``.
"""

from __future__ import annotations

import re

_JSON_EXTS = frozenset({".json", ".jsonc", ".json5", ".code-workspace"})
_YAML_EXTS = frozenset({".yaml", ".yml"})
_TOML_EXTS = frozenset({".toml"})
_INI_EXTS = frozenset({".ini", ".cfg", ".conf", ".properties", ".env"})
_WINDOW_CONFIG_EXTS = frozenset({".xml", ".plist", ".xsd", ".xsl"})
_CONFIG_NAMES = {
    "Pipfile": "toml", "Cargo.lock": "toml", "poetry.lock": "toml",
    ".editorconfig": "ini", ".gitconfig": "ini", ".npmrc": "ini", ".pylintrc": "ini", ".flake8": "ini",
    ".coveragerc": "ini", ".env": "ini", ".babelrc": "json", ".eslintrc": "json", ".prettierrc": "json",
}

_YAML_KEY = re.compile(r"""("(?:[^"\\]|\\.)*"|'[^']*'|[^\s#\-\[\]{}&*!|>%@`"'?,][^:#]*?|-[^\s:#][^:#]*?)\s*:(?:\s|$)""")
_SECTION = re.compile(r"\[\[?\s*([^\]]*?)\s*\]\]?\s*(?:[#;].*)?$")
_INI_KEY = re.compile(r"""([^\s=:#;\[][^=:]*?)\s*[=:]""")
_TOML_KEY = re.compile(r"""([A-Za-z0-9_\-."']+?)\s*=""")
_JSON_KEY = re.compile(r"""([ \t]*)"((?:[^"\\]|\\.)*)"\s*:""")


def config_syntax(name: str, ext: str) -> str | None:
    if name in _CONFIG_NAMES:
        return _CONFIG_NAMES[name]
    if ext in _JSON_EXTS:
        return "json"
    if ext in _YAML_EXTS:
        return "yaml"
    if ext in _TOML_EXTS:
        return "toml"
    if ext in _INI_EXTS:
        return "ini"
    if ext in _WINDOW_CONFIG_EXTS:
        return "window"
    return None


def config_keys(lines: list[str], syntax: str | None) -> tuple[list[tuple[int, str]], int]:
    """(line, key) of the top-level keys, and the line from which the rest closes the
    document (a JSON root's ``}``; ``len(lines)`` when nothing does)."""
    n = len(lines)
    keys: list[tuple[int, str]] = []  # (line, key)
    close = n  # lines from here on close the document (JSON "}")
    if syntax == "yaml":
        for i, line in enumerate(lines):
            if line and line[0] not in " \t#" and not line.startswith(("---", "...")):
                m = _YAML_KEY.match(line)
                if m:
                    keys.append((i, m.group(1).strip("\"'")))
    elif syntax in ("toml", "ini"):
        key_re = _TOML_KEY if syntax == "toml" else _INI_KEY
        in_sections = False
        for i, line in enumerate(lines):
            if not line or line[0] in " \t#;":
                continue
            if line[0] == "[":
                m = _SECTION.match(line)
                if m:
                    keys.append((i, m.group(1)))
                    in_sections = True
            elif not in_sections:
                m = key_re.match(line)
                if m:
                    keys.append((i, m.group(1).strip("\"'")))
    elif syntax == "json":
        keys, close = _json_keys(lines)
    return keys, close


def _json_keys(lines: list[str]) -> tuple[list[tuple[int, str]], int]:
    n = len(lines)
    first = 0
    while first < n and not lines[first].strip():
        first += 1
    if first == n or lines[first].strip() != "{":
        return [], n
    keys: list[tuple[int, str]] = []
    indent: str | None = None
    for i in range(first + 1, n):
        line = lines[i]
        if not line.strip():
            continue
        if indent is None:
            m = _JSON_KEY.match(line)
            if not m:
                return [], n
            indent = m.group(1)
        if line.startswith(indent) and line[len(indent):len(indent) + 1] == '"':
            m = _JSON_KEY.match(line)
            if m and m.group(1) == indent:
                keys.append((i, m.group(2)))
    close = n - 1
    while close > first and not lines[close].strip():
        close -= 1
    return keys, close if lines[close].strip() == "}" else n
