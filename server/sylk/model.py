"""Leaf types and rules shared by every layer; imports nothing of Sylk's.

Virtual documents (notes, prompts, fetched pages indexed beside the files) live
under the path ``sylk:/<id>``; these functions are the one place that rule is written.
"""

from __future__ import annotations

from dataclasses import dataclass

VIRTUAL_PREFIX = "sylk:/"
# The types of indexed files (and of commit messages); virtual documents have types of
# their own, never one of these.
FILE_TYPES = ("source_code", "markdown", "config", "text", "git_commit")
# The kinds of symbols the tags queries define (ingest/symbols.py), and every kind a chunk
# or hit can have: a symbol's, or code between definitions (file_header, top_level), a
# Markdown section, a config key, a window of lines, a commit message.
SYMBOL_KINDS = (
    "class", "struct", "interface", "trait", "enum", "enum_member", "union", "module",
    "namespace", "function", "method", "constructor", "field", "property", "constant",
    "variable", "type", "macro", "heading",
)
CHUNK_KINDS = SYMBOL_KINDS + ("file_header", "top_level", "section", "key", "window", "commit")
# How a search ranks: words (BM25), meaning (vectors), or both fused; the first is the default.
SEARCH_MODES = ("hybrid", "lexical", "semantic")
# Line searches: every line a literal (exact) or a regular expression matches, as rg.
LINE_MODES = ("exact", "regex")
# How hybrid search fuses its two rankings (search/fusion.py).
FUSIONS = ("convex", "rrf")
# The stages of the ranking stack, in order (search/ranking.py); search.rankingOff names those to skip.
RANKING_STAGES = ("members", "definition", "path", "code", "coherence", "spread")
# What a piece of code is for, told from names and places (search/roles.py).
ROLES = ("test", "repository", "service", "handler", "command", "query", "entity")


# The search filters (search/filters.py evaluates them): one entry each, naming it on every
# front end, its shape and where it is applied.
VALUES, BOUND, TIME, FLAG = "values", "bound", "time", "flag"


@dataclass(frozen=True)
class FilterSpec:
    name: str  # the field of Filters, and the argument of MCP's tools
    wire: str  # its key in the ``filters`` object of sylk/search
    inline: tuple[str, ...]  # its keys in the query (``lang:go``); the first is the one shown
    shape: str  # VALUES (any of them), BOUND (a number of lines), TIME (a date), FLAG (true / false)
    # what it keeps, for the help of each front end: "Only <about>" (MCP's argument, the
    # command line's flag)
    about: str = ""
    index: bool = False  # the lexical index applies it itself (store/lexical.py INDEX_FIELDS)
    line: bool = False  # a line search (modes exact and regex) filters by it too
    git: bool = False  # it reads git metadata (a file without any never passes it)
    file: bool = False  # it reads the file alone (path, language, type, package): Find References' filters
    choices: tuple[str, ...] = ()  # the values it takes, where the front ends list them
    aliases: tuple[str, ...] = ()  # more command-line flags (rg's -g / --glob)

    @property
    def negatable(self) -> bool:
        return self.shape == VALUES

    @property
    def flags(self) -> tuple[str, ...]:
        """Its command-line flags: ``--`` and its first inline key, then the aliases."""
        return (f"--{self.inline[0]}", *self.aliases)


FILTERS: tuple[FilterSpec, ...] = (
    FilterSpec("languages", "languages", ("lang", "language"), VALUES,
               "these languages: python, go, typescript, rust, java, markdown, ...",
               index=True, line=True, file=True),
    FilterSpec("types", "types", ("type",), VALUES,
               "these document types: " + ", ".join(FILE_TYPES) + ", or a virtual document's type (note, ...); "
               "git_commit searches commit messages", index=True, line=True, file=True),
    FilterSpec("paths", "paths", ("path",), VALUES,
               "files matching these gitignore-style globs, relative to the workspace root",
               line=True, file=True, aliases=("-g", "--glob")),
    FilterSpec("kinds", "kinds", ("kind",), VALUES,
               "code of these kinds (a line search: lines inside a symbol of these kinds): function, method, "
               "class, struct, interface, heading, ...", index=True, line=True),
    FilterSpec("packages", "packages", ("package",), VALUES,
               "these packages and the packages below them: a Go import path, a Java package, a Python module "
               "(asyncio holds asyncio.tasks), a package.json name, a Rust crate, else a folder",
               index=True, line=True, file=True),
    FilterSpec("min_lines", "minLines", ("minlines",), BOUND, "chunks of at least this many lines", index=True),
    FilterSpec("max_lines", "maxLines", ("maxlines",), BOUND, "chunks of at most this many lines", index=True),
    FilterSpec("roles", "roles", ("role",), VALUES,
               "code with these roles, told from names and paths (test code, repositories, ...)", choices=ROLES),
    FilterSpec("tags", "tags", ("tag",), VALUES, "files and documents with one of these user tags"),
    FilterSpec("authors", "authors", ("author",), VALUES,
               "files whose last commit is by one of these authors (git)", git=True),
    FilterSpec("modified_after", "modifiedAfter", ("after",), TIME,
               "files last committed on or after this date, e.g. 2024-05-31 (git)", git=True),
    FilterSpec("modified_before", "modifiedBefore", ("before",), TIME,
               "files last committed before this date (git)", git=True),
    FilterSpec("exported", "exported", ("exported",), FLAG,
               "code of exported (public) definitions (true), or only the rest (false); unset: both"),
)


# The keys a page's hits can be grouped by (search/agent.py).
GROUP_BY = ("file", "language", "folder", "kind", "package", "author")


@dataclass(frozen=True)
class OptionSpec:
    """An option of a ranked search beyond its query, filters and page: how to read the
    words, or what to add to the answer (search/agent.py). One entry each, naming it on
    every front end."""

    name: str  # the field of SearchRequest, MCP's argument of search_code, the CLI's --flag (- for _)
    wire: str  # its key in sylk/search's params
    about: str  # what it does, for the help of each front end
    choices: tuple[str, ...] = ()  # one of these (unset: none); without choices, true or false

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("expand", "expand", "also search the words inside identifiers and common synonyms "
                                   "(delete/remove, fetch/get ...), listed as expandedTerms"),
    OptionSpec("fuzzy", "fuzzy", "let each word of five letters or more match with one typo (the words' side)"),
    OptionSpec("group_by", "groupBy", "also group the page's hits by this key, each group with the indexes of "
                                      "its hits (groups)", GROUP_BY),
    OptionSpec("facets", "facets", "also count every match by language, type, kind, folder and package (facets)"),
    OptionSpec("related_files", "relatedFiles", "also list the files the hits' files import (relatedFiles)"),
    OptionSpec("follow_ups", "followUps", "also suggest refined searches worth trying (followUps)"),
    OptionSpec("summary", "summary", "also count the page's hits by file, language and kind (summary)"),
    OptionSpec("explain", "explain", "also say how the query was read and fused, and each side's rank and raw "
                                     "score on every hit (explain)"),
)


def is_virtual(path: str) -> bool:
    """The path names a virtual document, not a file."""
    return path.startswith(VIRTUAL_PREFIX)


def doc_id(path: str) -> str:
    """The id of the virtual document at ``path``."""
    return path[len(VIRTUAL_PREFIX):]


def virtual_path(id: str) -> str:
    """The path of the virtual document ``id``."""
    return VIRTUAL_PREFIX + id
