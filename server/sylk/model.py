"""Leaf types and rules shared by every layer; imports nothing of Sylk's.

Virtual documents (notes, prompts, fetched pages indexed beside the files) live
under the path ``sylk:/<id>``; these functions are the one place that rule is written.
"""

from __future__ import annotations

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


def is_virtual(path: str) -> bool:
    """The path names a virtual document, not a file."""
    return path.startswith(VIRTUAL_PREFIX)


def doc_id(path: str) -> str:
    """The id of the virtual document at ``path``."""
    return path[len(VIRTUAL_PREFIX):]


def virtual_path(id: str) -> str:
    """The path of the virtual document ``id``."""
    return VIRTUAL_PREFIX + id
