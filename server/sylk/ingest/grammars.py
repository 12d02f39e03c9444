"""tree-sitter grammars and Sylk's tags queries, loaded lazily and cached per process.

Grammars come from the official per-language wheels (tree-sitter-python, ...). Each
language's tags query lives in ``queries/<language>.scm`` beside this module.
"""

from __future__ import annotations

import functools
import importlib
from importlib import resources

from tree_sitter import Language, Query

from ..languages import BY_NAME


@functools.cache
def grammar(name: str) -> Language:
    spec = BY_NAME[name]
    module = importlib.import_module(spec.module)
    return Language(getattr(module, spec.func)())


@functools.cache
def query_source(name: str) -> str:
    return resources.files("sylk.ingest.queries").joinpath(f"{name}.scm").read_text(encoding="utf-8")


@functools.cache
def tags_query(name: str) -> Query:
    source = query_source("typescript" if name == "tsx" else name)
    return Query(grammar(name), source)



@functools.cache
def _refs_source(name: str) -> str:
    """The query telling comments, strings and call sites apart (``queries/refs/<language>.scm``,
    for ``ingest.occurrences``); empty for a language without one (markdown)."""
    # (the TypeScript grammars name these nodes as the JavaScript one does)
    shared = "javascript" if name in ("typescript", "tsx") else name
    path = resources.files("sylk.ingest.queries").joinpath(f"refs/{shared}.scm")
    return path.read_text(encoding="utf-8") if path.is_file() else ""


@functools.cache
def file_query(name: str) -> tuple[Query, int]:
    """The tags query followed by the refs query, run once over a file's tree, and how many
    of its patterns are the tags query's (one walk of the tree instead of two)."""
    refs = _refs_source(name)
    if not refs:
        tags = tags_query(name)
        return tags, tags.pattern_count
    source = query_source("typescript" if name == "tsx" else name)
    query = Query(grammar(name), source + "\n" + refs)  # (compiled once: the tags alone are not needed too)
    end = len(source.encode("utf-8"))
    return query, sum(query.start_byte_for_pattern(i) < end for i in range(query.pattern_count))
