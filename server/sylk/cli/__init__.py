"""The ``sylk`` command: the same engine as the language server, from a terminal.

This module only parses the command line: the command's module (``commands``,
``doctor``) is imported once the command is known, so ``sylk --version`` and
``sylk --help`` start in a few tens of milliseconds.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence

from .. import __version__
from ..model import BOUND, FILTERS, FLAG, OPTIONS, SEARCH_MODES, SYMBOL_KINDS, VALUES, FilterSpec
from .errors import CliError


def filter_flags(p: argparse.ArgumentParser, which: Callable[[FilterSpec], bool]) -> None:
    """A flag for each filter of the table (model.FILTERS) that ``which`` keeps, and
    ``--exclude``; cli/args.py flag_filters reads them."""
    specs = [s for s in FILTERS if which(s)]
    for s in specs:
        if s.shape == FLAG:
            p.add_argument(*s.flags, dest=s.name, action=argparse.BooleanOptionalAction, default=None,
                           help=f"only {s.about} (inline: {s.inline[0]}:true)")
        elif s.shape == VALUES:
            p.add_argument(*s.flags, dest=s.name, action="append", metavar=s.inline[0].upper(),
                           choices=s.choices or None, help=f"only {s.about} (repeatable)")
        else:
            p.add_argument(*s.flags, dest=s.name, type=int if s.shape == BOUND else str, default=None,
                           metavar="N" if s.shape == BOUND else "DATE", help=f"only {s.about}")
    keys = ", ".join(f"{s.inline[0]}:" for s in specs if s.negatable)
    p.add_argument("--exclude", action="append", metavar="FILTER",
                   help=f"leave out what this filter matches, written as an inline filter ({keys}), e.g. "
                        "path:vendor/** (repeatable)")
    p.set_defaults(filter_names=tuple(s.name for s in specs))


def option_flags(p: argparse.ArgumentParser, names: Sequence[str]) -> None:
    """A flag for each of these options of a ranked search (model.OPTIONS): those whose
    answer the command prints."""
    for s in OPTIONS:
        if s.name in names:
            how: dict = {"choices": s.choices} if s.choices else {"action": "store_true"}
            p.add_argument(s.flag, dest=s.name, default=None, help=s.about, **how)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sylk", description="Local-first code search: symbols and text.")
    parser.add_argument("--version", action="version", version=f"sylk {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("index", help="index a workspace (only what changed since the last run)")
    p.add_argument("path", nargs="?", help="workspace folder (default: current directory)")
    p.add_argument("--workers", type=int, default=None, help="parser processes (default: one per core)")
    p.add_argument("--no-embed", action="store_true",
                   help="skip the embeddings (semantic search); symbols and text only")
    p.add_argument("--repair", action="store_true",
                   help="first fix drift between the index's stores (see 'sylk status --verify') without a rebuild")
    p.set_defaults(run="commands:cmd_index")

    p = sub.add_parser("symbols", help="fuzzy search of symbol definitions")
    p.add_argument("query")
    p.add_argument("path", nargs="?", help="workspace folder (default: current directory)")
    p.add_argument("--limit", type=int, default=None, help="maximum results (default: symbols.limit)")
    p.add_argument("--kind", action="append", choices=SYMBOL_KINDS, metavar="KIND",
                   help="only this kind: class, function, method, ... (repeatable)")
    p.add_argument("--exported", action=argparse.BooleanOptionalAction, default=None,
                   help="only exported definitions (Go: capitalised, Python: public or in __all__, JS/TS: export, "
                        "Rust: pub, Java/C#: public; see README), or with --no-exported only the others")
    p.add_argument("--format", choices=("default", "json"), default="default")
    p.add_argument("--no-refresh", action="store_true", help="do not bring the index up to date first")
    p.set_defaults(run="commands:cmd_symbols")

    p = sub.add_parser("def", help="where a name is defined, in every language (nearest first with --from)",
                       description="Definitions of NAME from the symbol index: a name match (Class.method or "
                                   "mod::name to prefer a container), printed rg-style as path:line:col: text.")
    p.add_argument("name")
    p.add_argument("path", nargs="?", help="workspace folder (default: current directory)")
    p.add_argument("--from", dest="origin", metavar="FILE",
                   help="the file that uses the name: its own and its imports' definitions first, then its "
                        "folder's, then its language's")
    p.add_argument("--limit", type=int, default=20, help="maximum results (default: 20)")
    p.add_argument("--format", choices=("default", "json"), default="default")
    p.add_argument("--no-refresh", action="store_true", help="do not bring the index up to date first")
    p.set_defaults(run="commands:cmd_def")

    p = sub.add_parser("refs", help="every whole-word occurrence of a name, from the index (Find References)",
                       description="Occurrences of the identifier NAME in the indexed files (as rg -w -F finds "
                                   "them, without reading the files), printed rg-style as path:line:col: text "
                                   "with the enclosing symbol.")
    p.add_argument("name")
    p.add_argument("path", nargs="?", help="workspace folder (default: current directory)")
    p.add_argument("--code-only", action="store_true", help="leave out occurrences in comments and strings")
    p.add_argument("--no-declarations", action="store_true", help="leave out the definitions' own names")
    filter_flags(p, lambda s: s.file)
    p.add_argument("--limit", type=int, default=None, help="maximum results (default: references.limit, 2000)")
    p.add_argument("--format", choices=("default", "json"), default="default")
    p.add_argument("--no-refresh", action="store_true", help="do not bring the index up to date first")
    p.set_defaults(run="commands:cmd_refs")

    p = sub.add_parser("grep", help="every line a regular expression or a literal matches, from the index (rg's flags)",
                       description="Lines of the indexed files that PATTERN matches, found through the index's "
                                   "trigrams and checked against the text: what rg finds in the same files, "
                                   "printed rg-style as path:line:col:text (col: 1-based UTF-16 column of the "
                                   "first match). PATTERN is a Python regular expression (README: the syntax "
                                   "shared with rg), a literal with -F. Case-sensitive, as rg, unless -i or -S. "
                                   "Exit 0 with matches, 1 without, 2 on an error.")
    p.add_argument("pattern")
    p.add_argument("path", nargs="?", help="workspace folder (default: current directory)")
    p.add_argument("-F", "--fixed-strings", action="store_true", help="PATTERN is a literal string")
    p.add_argument("-i", "--ignore-case", dest="case", action="store_const", const="ignore")
    p.add_argument("-s", "--case-sensitive", dest="case", action="store_const", const="sensitive",
                   help="(the default)")
    p.add_argument("-S", "--smart-case", dest="case", action="store_const", const="smart",
                   help="case-insensitive unless PATTERN holds an upper-case letter")
    p.add_argument("-w", "--word-regexp", action="store_true", help="only matches that are whole words")
    filter_flags(p, lambda s: s.line)
    p.add_argument("-c", "--count", action="store_true", help="print path:count of matching lines per file")
    p.add_argument("--json", action="store_true", help="the result as JSON (what sylk/search answers, 1-based)")
    p.add_argument("--limit", type=int, default=None, help="at most this many lines (default: all)")
    p.add_argument("--no-refresh", action="store_true", help="do not bring the index up to date first")
    p.set_defaults(run="grep:cmd_grep")

    p = sub.add_parser("search", help="search code by words and by meaning (hybrid)",
                       description="Inline filters work in the query: lang:python path:src/** kind:function "
                                   "package:asyncio type:markdown minlines:N maxlines:N exported:true")
    p.add_argument("query")
    p.add_argument("path", nargs="?", help="workspace folder (default: current directory)")
    p.add_argument("--mode", choices=SEARCH_MODES, default=None, help="default: search.mode (hybrid)")
    filter_flags(p, lambda s: True)
    p.add_argument("--limit", type=int, default=None, help="maximum results (default: search.limit, 20)")
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--context", type=int, default=2, help="lines of context around the match")
    option_flags(p, ("fuzzy", "facets", "explain"))
    p.add_argument("--min-score", type=float, default=None, metavar="X",
                   help="relevance floor: leave out hits only the semantic side found whose similarity to the "
                        "query is below X, 0 to 1 (0: no floor; default: search.minScore)")
    p.add_argument("--format", choices=("default", "paths", "json"), default="default")
    p.add_argument("--no-refresh", action="store_true", help="do not bring the index up to date first")
    p.set_defaults(run="commands:cmd_search")

    p = sub.add_parser("status", help="what is indexed, and what was skipped and why")
    p.add_argument("path", nargs="?")
    p.add_argument("--format", choices=("default", "json"), default="default")
    p.add_argument("--verify", action="store_true",
                   help="compare the manifest, the text index, the vectors and the disk; exit 1 on drift")
    p.add_argument("--skipped", action="store_true",
                   help="list every skipped file (default: the count per reason and the first 20 of each)")
    p.set_defaults(run="commands:cmd_status")

    p = sub.add_parser("clear", help="delete a workspace's index")
    p.add_argument("path", nargs="?")
    p.set_defaults(run="commands:cmd_clear")

    p = sub.add_parser("serve", help="run the language server")
    p.add_argument("--stdio", action="store_true", help="speak LSP over stdin/stdout (default)")
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP address instead (for debugging)")
    p.set_defaults(run="commands:cmd_serve")

    p = sub.add_parser("add", help="index a virtual document (a note, a prompt, a fetched page) from a file or stdin")
    p.add_argument("file", help="a text file, or - for standard input")
    p.add_argument("path", nargs="?", help="workspace folder (default: current directory)")
    p.add_argument("--id", help="the document's id (default: the file name); the same id replaces it")
    p.add_argument("--type", default="note", help="note, prompt, response, web_page ... (default: note)")
    p.add_argument("--title", help="a title (searchable)")
    p.add_argument("--tag", action="append", help="a tag (repeatable)")
    p.add_argument("--meta", action="append", metavar="KEY=VALUE", help="metadata (repeatable), e.g. url=...")
    p.add_argument("--no-embed", action="store_true", help="leave the embedding to the next run")
    p.set_defaults(run="commands:cmd_add")

    p = sub.add_parser("remove", help="remove a virtual document")
    p.add_argument("id")
    p.add_argument("path", nargs="?", help="workspace folder (default: current directory)")
    p.set_defaults(run="commands:cmd_remove")

    p = sub.add_parser("docs", help="list the virtual documents")
    p.add_argument("path", nargs="?", help="workspace folder (default: current directory)")
    p.add_argument("--format", choices=("default", "json"), default="default")
    p.set_defaults(run="commands:cmd_docs")

    p = sub.add_parser("tag", help="user tags on files and documents: add|remove TAG PATH..., list [PATH|TAG...]")
    p.add_argument("action", choices=("add", "remove", "list"))
    p.add_argument("items", nargs="*", metavar="TAG/PATH")
    p.add_argument("--root", dest="path", help="workspace folder (default: current directory)")
    p.set_defaults(run="commands:cmd_tag")

    p = sub.add_parser("doctor", help="check the installation: Python, grammars, the model, the index folder, "
                                      "git, the file watcher, the MCP extra; exit 1 if a required check fails")
    p.add_argument("path", nargs="?", help="workspace folder whose index folder is checked (default: current directory)")
    p.add_argument("--format", choices=("default", "json"), default="default")
    p.set_defaults(run="doctor:cmd_doctor")

    p = sub.add_parser("mcp", help="serve the workspace to agents over the Model Context Protocol (stdio)")
    p.add_argument("path", nargs="?", help="workspace folder (default: current directory)")
    p.set_defaults(run="commands:cmd_mcp")

    for p in sub.choices.values():  # every command reads a workspace's settings
        p.add_argument("--untrusted", action="store_true",
                       help=f"treat the workspace as untrusted: its .sylk.toml / [tool.sylk] is ignored and git "
                            f"is not run (the same as {TRUSTED_ENV}=0)")
    return parser


TRUSTED_ENV = "SYLK_TRUSTED"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.untrusted:  # the environment's word: settings_sources.resolve reads it (false from any user source wins)
        os.environ[TRUSTED_ENV] = "0"
    module, function = args.run.split(":")
    try:
        run = getattr(importlib.import_module(f".{module}", __name__), function)
        return run(args)
    except CliError as exc:
        print(f"sylk: error: {exc}", file=sys.stderr)
        return exc.status
    except sqlite3.DatabaseError as exc:  # damage the checks at open do not read for (see integrity)
        print(f"sylk: error: the index is damaged ({exc}); 'sylk index --repair' rebuilds it", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("sylk: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`sylk search ... | head`): stop quietly, as rg does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
        return 141
