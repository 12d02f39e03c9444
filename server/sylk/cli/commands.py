"""The commands of ``sylk`` (parsed in ``sylk.cli``): the engine, from a terminal.

Imported only once a command is chosen, so ``sylk --version`` and ``sylk --help``
never load the engine, the model runtime or FAISS.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from pathlib import Path

from .. import MCP_INSTALL, config, settings_sources, steps, wire
from ..engine import documents
from ..engine.workspace import Workspace, clear_index, index_exists
from ..errors import IndexError_
from ..ingest.occurrences import IDENTIFIER
from ..model import is_virtual
from ..search.file_lines import file_lines, file_text
from ..params import wants_lines
from ..search.values import QueryError, check_min_score, check_number
from ..search.inline import parse_inline
from ..search.query import search_request
from ..search.symbol_search import SymbolFilter
from .args import flag_filters, option_values, workspace_root
from .errors import CliError
from .grep import search_lines
from .terminal import Terminal, open_index, refresh, resolve, settings_for
from .render import (
    STALE_MARK,
    explain_line,
    explanation_line,
    human_size,
    print_skipped,
    print_verification,
    verification_json,
)

KIND_WIDTH = 11


def cmd_index(args: argparse.Namespace) -> int:
    root = workspace_root(args.path)
    ws = open_index(root)
    try:
        _writable(ws)
        if args.repair:
            print(f"{root}: repair: {ws.repair().summary()}")
        terminal = Terminal()
        report = steps.index_files(ws, terminal, terminal.bar, workers=args.workers)
        print(f"{root}: {report.summary()}")
        steps.update_git(ws)
        if not args.no_embed:
            _embed(ws)
    finally:
        ws.close()
    return 0


def _embed(ws: Workspace) -> None:
    """Embed what is not embedded yet, with a progress bar; one line either way."""
    run = steps.embed(ws, Terminal())
    if run is not None and run.quick:
        print(f"quick pass: {run.quick} chunks searchable by meaning in {run.quick_seconds:.1f}s "
              f"({run.quick / max(run.quick_seconds, 1e-3):.0f}/s) with the static model")
    if run is not None and run.chunks:
        print(f"embedded {run.chunks} chunks in {run.seconds:.1f}s ({run.chunks / run.seconds:.0f}/s) "
              f"with {run.model}")
    if run is not None and run.failed:
        chunks = "1 chunk" if run.failed == 1 else f"{run.failed} chunks"
        print(f"sylk: {chunks} could not be embedded (the model failed; named above) and "
              "left out of semantic search", file=sys.stderr)


def cmd_symbols(args: argparse.Namespace) -> int:
    root = workspace_root(args.path)
    ws = open_index(root)
    try:
        if not args.no_refresh:
            refresh(ws)
        t0 = time.perf_counter()
        hits = ws.search_symbols(args.query, args.limit, SymbolFilter(frozenset(args.kind or ()), args.exported))
        took = (time.perf_counter() - t0) * 1000
    finally:
        ws.close()
    if args.format == "json":
        print(json.dumps([wire.symbol_json(h) for h in hits], indent=2))
        return 0
    color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    for h in hits:
        s = h.symbol
        loc = f"{h.path}:{s.selection[0] + 1}:{s.selection[1] + 1}"
        name = s.qualified_name
        if color:
            name = f"\x1b[1m{name}\x1b[0m"
            loc = f"\x1b[36m{loc}\x1b[0m"
        print(f"{s.kind:<{KIND_WIDTH}} {name}  {loc}")
    if sys.stdout.isatty():
        print(f"{len(hits)} symbols in {took:.1f} ms", file=sys.stderr)
    return 0 if hits else 1


def cmd_def(args: argparse.Namespace) -> int:
    from ..search import definitions

    root = workspace_root(args.path)
    if not definitions.parse_name(args.name).name:
        print(f"sylk: {args.name!r}: no identifier in it", file=sys.stderr)
        return 2
    origin = None
    if args.origin:
        origin = _relative(root, args.origin)
        if origin is None:
            print(f"sylk: --from {args.origin}: not a file of {root}", file=sys.stderr)
            return 2
    ws = open_index(root)
    try:
        if not args.no_refresh:
            refresh(ws)
        found = definitions.lookup(ws, args.name, origin, functools.partial(file_text, root))[:max(args.limit, 0)]
    finally:
        ws.close()
    if args.format == "json":
        print(json.dumps([{**wire.symbol_json(d.hit), "near": d.near.name.lower()} for d in found], indent=2))
        return 0 if found else 1
    color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    for d in found:
        s = d.hit.symbol
        loc = f"{d.hit.path}:{s.selection[0] + 1}:{s.selection[1] + 1}:"
        text = _line(root / d.hit.path, s.selection[0])
        print(f"\x1b[35m{loc}\x1b[0m {text}" if color else f"{loc} {text}")
    return 0 if found else 1


def cmd_refs(args: argparse.Namespace) -> int:
    root = workspace_root(args.path)
    name = args.name.strip()
    if not IDENTIFIER.fullmatch(name):
        print(f"sylk: {args.name!r} is not an identifier (letters, digits and _, not starting with a digit)",
              file=sys.stderr)
        return 2
    if args.limit is not None and args.limit < 1:
        print(f"sylk: --limit must be at least 1, got {args.limit}", file=sys.stderr)
        return 2
    filters = flag_filters(args, files=True)  # navigation: search.exclude leaves out nothing here
    ws = open_index(root)
    try:
        if not args.no_refresh:
            refresh(ws)
        found = ws.find_references(name, include_declaration=not args.no_declarations, limit=args.limit,
                                   comments_and_strings=False if args.code_only else None, filters=filters)
        rows = [wire.reference_json(s) for s in ws.shown(found, found.references)]
    finally:
        ws.close()
    if found.truncated:
        print(f"sylk: the first {len(found.references)} of {found.total} occurrences (--limit)", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(rows, indent=2))
        return 0 if rows else 1
    color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    for row in rows:
        loc = f"{row['path']}:{row['line']}:{row['column']}:"
        text = row["text"].strip()
        where = f"  ({row['symbol']})" if row["symbol"] else ""
        print(f"\x1b[35m{loc}\x1b[0m {text}\x1b[2m{where}\x1b[0m" if color else f"{loc} {text}{where}")
    return 0 if rows else 1


def _relative(root: Path, file: str) -> str | None:
    """``file`` (absolute, or relative to the current directory) as a path relative to ``root``."""
    path = Path(file).resolve()
    try:
        return path.relative_to(root.resolve()).as_posix() if path.is_file() else None
    except ValueError:
        return None


def _line(path: Path, line: int) -> str:
    """Line ``line`` (0-based) of ``path``, stripped; "" when unreadable."""
    lines = file_lines(path) or []
    return lines[line].strip() if line < len(lines) else ""


def cmd_search(args: argparse.Namespace) -> int:
    root = workspace_root(args.path)
    filters = flag_filters(args)
    try:
        for flag, name, value in (("--limit", "limit", args.limit), ("--offset", "offset", args.offset),
                                  ("--context", "context_lines", args.context)):
            if value is not None:
                check_number(flag, name, value)
        # the floor the command line gives, else the settings' (from_settings)
        floor = {} if args.min_score is None else {"min_score": check_min_score("--min-score", args.min_score)}
        if wants_lines({"query": args.query}):
            return search_lines(args, root, settings_for(root), filters.merged(parse_inline(args.query)[1]))
    except QueryError as exc:
        raise CliError(str(exc), 2) from exc
    settings = settings_for(root)
    s = settings.search  # what the command line does not say comes from the settings
    try:
        req = search_request(s, args.query, mode=args.mode or s.mode,
                             limit=args.limit if args.limit is not None else s.limit, offset=args.offset,
                             filters=filters, context_lines=args.context, **option_values(args), **floor)
    except QueryError as exc:  # an inline filter, the query (a OR), a value of search.exclude
        raise CliError(str(exc), 2) from exc
    ws = open_index(root, settings=settings)
    try:
        if not args.no_refresh:
            refresh(ws)
        note = ws.load_semantic() if req.mode != "lexical" else None
        if note and ws.semantic_ready:  # the vectors started over (damaged, another model)
            print(f"sylk: {note}", file=sys.stderr)
        result = ws.search(req)
    finally:
        ws.close()
    if args.format == "json":
        print(json.dumps(wire.result_json(result), indent=2, ensure_ascii=False))
        return 0 if result.hits else 1
    if args.format == "paths":
        seen: set[str] = set()
        for h in result.hits:
            if h.path not in seen:
                seen.add(h.path)
                print(h.path)
        return 0 if result.hits else 1
    color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    for n, h in enumerate(result.hits, req.offset + 1):
        if h.commit is not None:
            when = time.strftime("%Y-%m-%d", time.gmtime(h.modified))
            files = h.commit.files
            print(f"{n:>3}. commit {h.commit.sha[:12]}  {h.author}  {when}  ({', '.join(files[:3])}"
                  f"{' ...' if len(files) > 3 else ''})")
            for line in h.snippet.split("\n"):
                print(f"            {line}")
            continue
        title = ".".join(x for x in (h.container, h.symbol) if x) or h.kind
        loc = f"{h.path}:{h.start_line + 1}"
        ranks = " ".join(f"{k}#{v}" for k, v in (("lex", h.lexical_rank), ("sem", h.semantic_rank)) if v)
        if color:
            loc, title = f"\x1b[36m{loc}\x1b[0m", f"\x1b[1m{title}\x1b[0m"
        print(f"{n:>3}. {loc}  {title}  ({h.kind}{', ' + ranks if ranks else ''}){STALE_MARK if h.stale else ''}")
        if h.explained:
            print("     " + explain_line(h))
        for i, line in enumerate(h.snippet.split("\n") if h.snippet else (), h.snippet_line):
            if color:
                line = _highlight(line, [(a, b) for (ln, a, b) in h.highlights if ln == i])
            print(f"     {i + 1:>5}  {line}")
    if result.facets:
        for name, values in result.facets.items():
            print(f"{name}: " + ", ".join(f"{v} ({c})" for v, c in values[:8]))
    footer = f"{len(result.hits)} of {result.total_hits} hits in {result.took_ms:.1f} ms, mode {result.mode}"
    if result.notes:
        footer += f" ({result.notes})"
    if result.semantic_covered is not None and (result.semantic_covered < result.index.chunks
                                                or result.semantic_quick):
        footer += "; 'sylk index' embeds the rest"
    print(footer, file=sys.stderr)
    if result.explanation is not None:
        print(explanation_line(result.explanation), file=sys.stderr)
    return 0 if result.hits else 1


def _highlight(line: str, spans: list[tuple[int, int]]) -> str:
    """Bold the UTF-16 spans of a line (ASCII-only lines map 1:1; others are left plain)."""
    if not spans or not line.isascii():
        return line
    out, pos = [], 0
    for a, b in sorted(spans):
        out.append(line[pos:a] + "\x1b[1;33m" + line[a:b] + "\x1b[0m")
        pos = b
    return "".join(out) + line[pos:]


def cmd_status(args: argparse.Namespace) -> int:
    root = workspace_root(args.path)
    settings = settings_for(root)
    if not index_exists(root, settings):  # say so, and create nothing
        index_dir = config.index_dir_for(root, settings)
        if args.format == "json":
            print(json.dumps({"root": str(root), "indexed": False, "indexDir": str(index_dir),
                              **wire.trust_json(settings.trusted)}, indent=2))
        else:
            print(f"{root}: not indexed ('sylk index {root}' indexes it)")
            if not settings.trusted:
                print(settings_sources.UNTRUSTED)
        return 1
    ws = open_index(root, writable=False, settings=settings)
    try:
        st = ws.status(skipped_limit=wire.skipped_limit("all" if args.skipped else "sample"))
        check = ws.verify() if args.verify else None
    finally:
        ws.close()
    status = 0 if check is None or check.clean else 1
    if args.format == "json":
        out = {"indexed": True, **wire.status_json(st), **wire.trust_json(settings.trusted)}
        if check is not None:
            out["verify"] = verification_json(check)
        print(json.dumps(out, indent=2))
        return status
    last = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.last_indexed)) if st.last_indexed else "never"
    print(f"workspace     {st.root}")
    print(f"index         {st.index_dir} ({human_size(st.index_bytes)})")
    print(f"files         {st.files}")
    print(f"symbols       {st.symbols}")
    failures = f", {st.embed_failures} could not be embedded" if st.embed_failures else ""
    quick = f", {st.quick} of them with a quick-pass vector" if st.quick else ""
    print(f"chunks        {st.chunks} ({st.embedded} embedded, {st.pending} pending{quick}{failures})")
    print(f"last indexed  {last}")
    if st.languages:
        print("languages     " + ", ".join(f"{lc.language} {lc.files} files/{lc.symbols} symbols"
                                           for lc in st.languages))
    print_skipped(st.skipped, every=args.skipped)
    print(f"merkle root   {st.merkle_root}")
    if not settings.trusted:
        print(f"trusted       no: {settings_sources.UNTRUSTED}")
    if check is not None:
        print_verification(check)
    return status


def _writable(ws: Workspace) -> None:
    if not ws.writable:
        raise CliError("another Sylk process (a language server or 'sylk index') is writing this "
                       "workspace's index; run this again when it is done")


def cmd_add(args: argparse.Namespace) -> int:
    """A virtual document from a file or stdin ('-')."""
    root = workspace_root(args.path)
    if args.file == "-":
        text = sys.stdin.read()
        default_id = f"{args.type}-{int(time.time() * 1000)}"
    else:
        try:
            text = Path(args.file).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise CliError(f"{args.file}: {exc.strerror or exc}", 2) from exc
        default_id = Path(args.file).name
    metadata: dict[str, str] = {}
    for item in args.meta or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CliError(f"--meta {item!r}: expected KEY=VALUE", 2)
        metadata[key] = value
    ws = open_index(root)
    try:
        _writable(ws)
        try:
            doc = documents.index_document(ws, args.id or default_id, text, type=args.type, title=args.title or "",
                                           tags=args.tag or (), metadata=metadata)
        except documents.DocumentError as exc:
            raise CliError(str(exc), 2) from exc
        chunks = ws.chunks_in(doc.path)
        print(f"added {doc.type} {doc.id!r} ({chunks} chunks)")
        if not args.no_embed:
            _embed(ws)
    finally:
        ws.close()
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    ws = open_index(workspace_root(args.path))
    try:
        _writable(ws)
        if not documents.remove_document(ws, args.id):
            raise CliError(f"no document {args.id!r} (see 'sylk docs')")
        print(f"removed {args.id!r}")
    finally:
        ws.close()
    return 0


def cmd_docs(args: argparse.Namespace) -> int:
    ws = open_index(workspace_root(args.path), writable=False)
    try:
        docs = documents.list_documents(ws)
    finally:
        ws.close()
    if args.format == "json":
        print(json.dumps([d.summary() for d in docs], indent=2))
    else:
        for d in docs:
            tags = f"  [{', '.join(d.tags)}]" if d.tags else ""
            print(f"{d.type:<10} {d.id}  {d.title}{tags}")
    return 0


def cmd_tag(args: argparse.Namespace) -> int:
    root = workspace_root(args.path)
    ws = open_index(root, writable=args.action != "list")
    try:
        if args.action == "list":
            tagged = ws.tags()
            wanted = set(args.items)
            for path, tags in sorted(tagged.items()):
                if not wanted or path in wanted or wanted & set(tags):
                    print(f"{path}  {', '.join(tags)}")
            return 0
        _writable(ws)
        if len(args.items) < 2:
            raise CliError(f"sylk tag {args.action} TAG PATH...: a tag and at least one path", 2)
        tag, paths = args.items[0], [_rel_to(root, p) for p in args.items[1:]]
        try:
            n = documents.tag(ws, paths, [tag], remove=args.action == "remove")
        except documents.DocumentError as exc:
            raise CliError(str(exc), 2) from exc
        print(f"{'removed' if args.action == 'remove' else 'added'} tag {tag!r} "
              f"{'from' if args.action == 'remove' else 'to'} {n} path{'s' if n != 1 else ''}")
    finally:
        ws.close()
    return 0


def _rel_to(root: Path, path: str) -> str:
    """A workspace-relative path from a path given on the command line (relative to the
    current directory, or already relative to the root, or a document's sylk:/ path)."""
    if is_virtual(path):
        return path
    p = Path(path).expanduser()
    for candidate in (p if p.is_absolute() else Path.cwd() / p, root / p):
        try:
            return candidate.resolve().relative_to(root).as_posix()
        except ValueError:
            continue
    raise CliError(f"{path}: not inside {root}", 2)


def cmd_clear(args: argparse.Namespace) -> int:
    root = workspace_root(args.path)
    try:
        folder = clear_index(root, settings_for(root))
    except IndexError_ as exc:  # a folder that is not Sylk's: nothing removed
        raise CliError(str(exc)) from exc
    print(f"removed {folder}" if folder else f"no index for {root}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from ..lsp.app import serve  # imports pygls only here

    if not args.stdio and not args.tcp:
        args.stdio = True
    serve(tcp=args.tcp)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    try:
        from ..mcp.server import serve  # imports the MCP SDK only here
    except ImportError as exc:
        if (exc.name or "").split(".")[0] != "mcp":
            raise
        raise CliError(f"'sylk mcp' needs the MCP SDK, an optional extra: {MCP_INSTALL}", 2) from exc

    root = workspace_root(args.path)
    resolved = resolve(root)
    serve(root, resolved.settings, settings_sources.notes(resolved))
    return 0
