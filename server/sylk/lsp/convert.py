"""Pure conversions between Sylk core values and lsprotocol types (or their JSON)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from ..ingest.symbols import Symbol
from ..search.symbol_search import SymbolHit

SYMBOL_KINDS: dict[str, types.SymbolKind] = {
    "class": types.SymbolKind.Class,
    "struct": types.SymbolKind.Struct,
    "interface": types.SymbolKind.Interface,
    "trait": types.SymbolKind.Interface,
    "enum": types.SymbolKind.Enum,
    "enum_member": types.SymbolKind.EnumMember,
    "union": types.SymbolKind.Struct,
    "module": types.SymbolKind.Module,
    "namespace": types.SymbolKind.Namespace,
    "function": types.SymbolKind.Function,
    "method": types.SymbolKind.Method,
    "constructor": types.SymbolKind.Constructor,
    "field": types.SymbolKind.Field,
    "property": types.SymbolKind.Property,
    "constant": types.SymbolKind.Constant,
    "variable": types.SymbolKind.Variable,
    "type": types.SymbolKind.TypeParameter,
    "macro": types.SymbolKind.Function,
    "heading": types.SymbolKind.String,
}


def symbol_kind(kind: str) -> types.SymbolKind:
    return SYMBOL_KINDS.get(kind, types.SymbolKind.Variable)


def to_range(r: tuple[int, int, int, int]) -> types.Range:
    return types.Range(start=types.Position(line=r[0], character=r[1]),
                       end=types.Position(line=r[2], character=r[3]))


def range_json(start_line: int, start_character: int, end_line: int, end_character: int) -> dict[str, Any]:
    """An LSP ``Range`` as JSON (0-based lines, UTF-16 columns)."""
    return {"start": {"line": start_line, "character": start_character},
            "end": {"line": end_line, "character": end_character}}


@functools.lru_cache(maxsize=65536)
def path_to_uri(root: Path, rel: str) -> str:
    """The file URI of a root-relative path (kept: every answer names the same files)."""
    uri = from_fs_path(str(root / rel))
    assert uri is not None
    return uri


def uri_to_rel(root: Path, uri: str) -> str | None:
    """The workspace-relative posix path of a file URI, or None if outside the root."""
    fs = to_fs_path(uri)
    if fs is None:
        return None
    try:
        return Path(fs).resolve().relative_to(root).as_posix()
    except ValueError:
        return None


def symbol_information(root: Path, hit: SymbolHit) -> dict[str, Any]:
    """A ``SymbolInformation`` as JSON: workspace/symbol answers up to ``symbols.limit``
    of them per keystroke, and building lsprotocol records for cattrs to take apart
    again cost a third of the answer (bench/symbol_latency.py)."""
    s = hit.symbol
    out: dict[str, Any] = {
        "name": s.name,
        "kind": int(symbol_kind(s.kind)),
        "location": {"uri": path_to_uri(root, hit.path), "range": range_json(*s.selection)},
    }
    if s.container:
        out["containerName"] = s.container
    return out


def document_symbols(symbols: Sequence[Symbol]) -> list[types.DocumentSymbol]:
    """Nest a file's symbols (document order) into the DocumentSymbol hierarchy by range."""
    roots: list[types.DocumentSymbol] = []
    stack: list[types.DocumentSymbol] = []
    for s in symbols:
        node = types.DocumentSymbol(
            name=s.name,
            kind=symbol_kind(s.kind),
            range=to_range(s.range),
            selection_range=to_range(s.selection),
            detail=s.signature or None,
            children=[],
        )
        while stack and not _contains(stack[-1], s):
            stack.pop()
        (stack[-1].children if stack else roots).append(node)  # type: ignore[union-attr]
        stack.append(node)
    return roots


def _contains(parent: types.DocumentSymbol, s: Symbol) -> bool:
    pr = parent.range
    return (pr.start.line, pr.start.character) <= (s.range[0], s.range[1]) and \
        (s.range[2], s.range[3]) <= (pr.end.line, pr.end.character)


def params_dict(params: Any) -> Any:
    """pygls hands custom-request params over as a namespace object; turn it back into plain data."""
    if isinstance(params, (str, int, float, bool)) or params is None:
        return params
    if hasattr(params, "_asdict"):  # a namedtuple: before the tuple case
        return {k: params_dict(v) for k, v in params._asdict().items()}
    if isinstance(params, (list, tuple)):
        return [params_dict(p) for p in params]
    if isinstance(params, dict):
        return {k: params_dict(v) for k, v in params.items()}
    if hasattr(params, "__dict__"):
        return {k: params_dict(v) for k, v in vars(params).items()}
    return params
