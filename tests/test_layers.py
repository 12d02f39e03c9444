"""The shape of the code: imports point one way, down the declared layers, and the core
never imports the LSP stack (the seam that keeps the CLI and other front ends thin)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from sylk.model import FILTERS

SERVER = Path(__file__).resolve().parent.parent / "server"

# Low to high. A module may import its own layer's modules and lower layers', never a
# higher layer's; and no import cycle, of any length, anywhere. Every import counts:
# inside functions and under TYPE_CHECKING too (a lazy import that dodges a cycle is a cycle).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("sylk", "sylk.model"),  # the version; leaf records and rules
    ("sylk.languages",),  # the table of languages (data), checked by the settings
    ("sylk.config",),  # the one settings tree
    ("sylk.settings_sources",),  # where settings come from, who may set which: the one door
    ("sylk.text",),  # positions (UTF-8 <-> UTF-16), identifier words
    ("sylk.ingest",),  # scan, git sync, grammars, symbols, chunks, the parse worker
    ("sylk.store",),  # manifest, lexical, vectors, embedding cache
    ("sylk.embed",),  # model resolution, batching
    ("sylk.search",),  # query, hybrid, symbol ranking, related, agent
    ("sylk.engine",),  # the indexer run, documents, git metadata, integrity
    ("sylk.jobs", "sylk.watch", "sylk.steps"),  # the long-running service's parts
    ("sylk.disk",),  # the served workspace's side of the disk: watcher, changes, reconcile
    ("sylk.service",),  # one WorkspaceService for every front end
    ("sylk.over_folders", "sylk.status"),  # searches and status over a front end's folders
    # the JSON the front ends share (status, CLI/MCP hits and symbols); sylk/search params read
    ("sylk.wire", "sylk.params"),
    ("sylk.lsp", "sylk.mcp"),  # front ends: neither imports the other
    ("sylk.cli",),  # the command line, which starts the other two
)

# Imports that close a cycle: none left (the test fails on any). Kept as the place to
# list one that a step of a redesign must leave for a while, with the reason.
KNOWN_CYCLE_EDGES: set[tuple[str, str]] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SERVER).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """module -> the sylk modules it imports (resolved to modules, not names in them)."""
    files = {_module_name(p): p for p in (SERVER / "sylk").rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    module = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                # `from pkg import mod` imports the module; `from mod import name`, the module
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in files else module for a in node.names]
            else:
                continue
            for target in targets:
                parts = target.split(".")
                while parts and ".".join(parts) not in files:  # the longest prefix that is ours
                    parts.pop()
                if parts and ".".join(parts) != name:
                    graph[name].add(".".join(parts))
    return graph


def _layer(module: str) -> int:
    best, best_len = -1, -1
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = i, len(prefix)
    return best


def _unit(module: str) -> str:
    """The package (or top-level module) a module belongs to: sylk.lsp.hover -> sylk.lsp."""
    return ".".join(module.split(".")[:2])


def violations(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Imports of a higher layer, or of another unit of the same layer (lsp -> mcp)."""
    return {(src, dst) for src, targets in graph.items() for dst in targets
            if _layer(dst) > _layer(src) or (_layer(dst) == _layer(src) and _unit(dst) != _unit(src))}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_module_has_a_layer():
    graph = import_graph()
    assert len(graph) > 40
    assert [m for m in graph if _layer(m) < 0] == []


def test_imports_point_down_the_layers():
    found = sorted(violations(import_graph()))
    assert found == [], "imports up the layers (or between front ends): " + ", ".join(f"{a} -> {b}" for a, b in found)


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        v = todo.pop()
        if v == goal:
            return True
        if v not in seen:
            seen.add(v)
            todo.extend(graph[v])
    return False


def test_no_import_cycles():
    graph = import_graph()
    pruned = {src: {dst for dst in targets if (src, dst) not in KNOWN_CYCLE_EDGES} for src, targets in graph.items()}
    assert cycles(pruned) == [], "import cycles"
    # each known edge still exists and still closes a cycle; else take it off the list
    stale = [(a, b) for a, b in sorted(KNOWN_CYCLE_EDGES) if b not in graph[a] or not _reaches(graph, b, a)]
    assert stale == [], f"no longer a cycle, remove from KNOWN_CYCLE_EDGES: {stale}"


def test_the_graph_sees_lazy_and_type_checking_imports(tmp_path: Path):
    """The checker itself: an import inside a function or under TYPE_CHECKING is an edge."""
    graph = import_graph()
    assert "sylk.engine.workspace" in graph["sylk.cli.commands"]  # imported at the top
    assert "sylk.lsp.app" in graph["sylk.cli.commands"]  # imported inside cmd_serve
    made_up = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(made_up) == [["a", "b", "c"]]


def test_core_imports_without_pygls():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('pygls', 'lsprotocol'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import sylk.cli, sylk.cli.commands, sylk.engine.workspace, sylk.search.symbol_search\n"
        "import sylk.store.lexical, sylk.config, sylk.ingest.scan\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


# Where camelCase (wire) keys may be written: the front ends and their shared wire module.
WIRE_UNITS = ("sylk.lsp", "sylk.mcp", "sylk.cli", "sylk.wire", "sylk.params")
# Modules below the front ends that keep camelCase keys, and why.
CAMEL_KEYS_ALLOWED = {
    "sylk.config": "the settings tree's camelCase form: the names settings have in the client, in TOML "
                   "and in SYLK_* variables, turned into the attrs tree by cattrs there",
    "sylk.settings_sources": "the same names, as the sources (TOML files, SYLK_* variables, the editor) "
                             "write them, and the scope table keyed by them, before config structures them",
}
_CAMEL = re.compile(r"[a-z]+[A-Z]")


def camel_keys(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, key) of every camelCase key a module writes: in a dict literal, as
    ``dict(someKey=...)``, or as ``d["someKey"] = ...``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        keys: list[object] = []
        if isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            keys = [k.arg for k in node.keywords]
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and isinstance(node.slice, ast.Constant):
            keys = [node.slice.value]
        found.extend((node.lineno, k) for k in keys if isinstance(k, str) and _CAMEL.search(k))
    return found


def below_the_front_ends(find: Callable[[ast.AST], list[tuple[int, str]]]) -> list[str]:
    """``find``'s camelCase keys in every module below the front ends (but those allowed)."""
    found = []
    for path in sorted((SERVER / "sylk").rglob("*.py")):
        module = _module_name(path)
        if _unit(module) in WIRE_UNITS or module in CAMEL_KEYS_ALLOWED:
            continue
        found += [f"{module}:{line} {key!r}" for line, key in find(ast.parse(path.read_text(encoding="utf-8")))]
    return found


def test_the_core_returns_records_not_wire_dicts():
    """camelCase dicts (wire shapes) are built only by the front ends' wire modules."""
    found = below_the_front_ends(camel_keys)
    assert found == [], "wire dicts below the front ends (return a record): " + ", ".join(found)


def camel_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, key) of every camelCase key a module reads: ``d["someKey"]``,
    ``d.get("someKey")`` (or pop, setdefault) and ``"someKey" in d``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        key: object = None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant):
            key = node.slice.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("get", "pop", "setdefault") and node.args and isinstance(node.args[0], ast.Constant):
            key = node.args[0].value
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and \
                any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            key = node.left.value
        if isinstance(key, str) and _CAMEL.search(key):
            found.append((node.lineno, key))
    return found


def test_the_core_reads_no_wire_params():
    """camelCase params (sylk/search's) are read only above the core: sylk.params and the
    front ends; the core takes requests (records)."""
    found = below_the_front_ends(camel_reads)
    assert found == [], "wire params read below the front ends (take a request): " + ", ".join(found)
    code = 'p["contextLines"]\np.get("minScore", 0)\n"groupBy" in p\np["query"]\n'
    assert camel_reads(ast.parse(code)) == [(1, "contextLines"), (2, "minScore"), (3, "groupBy")]


def test_the_wire_check_sees_each_way_of_writing_a_key():
    code = ('a = {"tookMs": 1, "query": "x", 2: 3}\nb = dict(totalHits=0, files=1)\n'
            'c = {}\nc["nextOffset"] = 4\nd = {"snake_case": 1, "URL": 2}\n')
    assert camel_keys(ast.parse(code)) == [(1, "tookMs"), (2, "totalHits"), (4, "nextOffset")]


# the engine's stores and tables: only the engine and the layers below it read them
ENGINE_INSIDES = {"manifest", "table", "stores"}
ABOVE_THE_ENGINE = ("sylk.over_folders", "sylk.status", "sylk.wire", "sylk.params", "sylk.lsp", "sylk.mcp",
                    "sylk.cli")


def engine_insides(tree: ast.AST) -> list[tuple[int, str]]:
    """``x.manifest``, ``engine.table`` ...: attribute reads of the engine's insides (the
    attribute of a name or attribute, not a module: ``ws.manifest``, ``folder.engine.table``)."""
    return sorted((n.lineno, n.attr) for n in ast.walk(tree)
                  if isinstance(n, ast.Attribute) and n.attr in ENGINE_INSIDES and not isinstance(n.ctx, ast.Store))


def test_front_ends_reach_the_index_through_the_engines_methods():
    """The front ends (and what serves them over folders) ask the engine, whose methods
    hold the request guard (a cleared or rebuilt index is IndexClosed, not a crash); they
    never read its manifest, symbol table or stores themselves."""
    found = []
    for path in sorted((SERVER / "sylk").rglob("*.py")):
        module = _module_name(path)
        if module.startswith(ABOVE_THE_ENGINE):
            found += [f"{module}:{line} .{attr}" for line, attr in engine_insides(ast.parse(path.read_text("utf-8")))]
    assert found == [], "the engine's insides read above it (add a Workspace method): " + ", ".join(found)
    assert engine_insides(ast.parse("ws.manifest.files()\nx = a.b.table\nself.stores = 1\n")) == [(1, "manifest"),
                                                                                                    (2, "table")]


# A filter is written once: its entry in model.FILTERS and its evaluators, tables keyed by
# its name (search/filters.CANDIDATE_TESTS, store/lexical_query.INDEX_FIELDS,
# store/annotations.COMMIT_CLAUSES, search/values.check_values). Only the table's own
# module and search/filters.py (the Filters record) name one filter of a Filters.
FILTER_NAMERS = ("sylk.model", "sylk.search.filters")
_FILTERS_VALUE = re.compile(r"(^|\.)(filters|exclude|f|ex)$")  # how a Filters is called where it is read


def named_filters(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of every place a module names one filter of a Filters: reads it
    (``req.filters.paths``, ``f.exclude.kinds``) or builds a Filters by it (``Filters(kinds=...)``)."""
    names = {s.name for s in FILTERS}
    found: list[tuple[int, str]] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and n.attr in names and _FILTERS_VALUE.search(ast.unparse(n.value)):
            found.append((n.lineno, ast.unparse(n)))
        elif isinstance(n, ast.Call) and ast.unparse(n.func).endswith("Filters"):
            found += [(n.lineno, f"Filters({k.arg}=...)") for k in n.keywords if k.arg in names]
    return found


def test_no_module_names_a_filter_but_the_tables():
    """Adding a filter is one entry in model.FILTERS and its evaluators: no other module
    reads one filter of a request, or builds one by name (it goes through the table:
    Filters.given, .tree, .of_git, .notes, values.read_filters)."""
    found = []
    for path in sorted((SERVER / "sylk").rglob("*.py")):
        module = _module_name(path)
        if module not in FILTER_NAMERS:
            found += [f"{module}:{line} {what}" for line, what in named_filters(ast.parse(path.read_text("utf-8")))]
    assert found == [], "a filter named outside the tables: " + ", ".join(found)
    code = "a = req.filters.paths\nb = f.exclude.kinds\nc = Filters(roles=x)\nd = settings.languages\n"
    assert named_filters(ast.parse(code)) == [(1, "req.filters.paths"), (2, "f.exclude.kinds"),
                                              (3, "Filters(roles=...)")]
