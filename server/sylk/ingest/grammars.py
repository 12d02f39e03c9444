"""tree-sitter grammars and Sylk's tags queries, loaded lazily and cached per process.

Grammars come from the official per-language wheels (tree-sitter-python, ...). Each
language's tags query lives in ``queries/<query>.scm`` beside this module (a line
``; include: _part`` stands for the shared ``queries/_part.scm``), its refs query in
``queries/refs/<refs>.scm``; ``languages/<name>.py`` names them.
"""

from __future__ import annotations

import functools
import importlib
import re
import warnings
from importlib import resources

from tree_sitter import Language, Query

from ..languages import BY_NAME

_INCLUDE = re.compile(r"^; include: (_\w+)$", re.MULTILINE)


@functools.cache
def grammar(name: str) -> Language:
    spec = BY_NAME[name]
    module = importlib.import_module(spec.module)
    with warnings.catch_warnings():
        # (a wheel built before tree-sitter 0.24 hands an int pointer, which still works)
        warnings.simplefilter("ignore", DeprecationWarning)
        return Language(getattr(module, spec.func)())


def _read(name: str) -> str:
    return resources.files("sylk.ingest.queries").joinpath(name).read_text(encoding="utf-8")


@functools.cache
def query_source(name: str) -> str:
    """The tags query of the language ``name``, its shared parts included."""
    return _INCLUDE.sub(lambda m: _read(f"{m.group(1)}.scm"), _read(f"{BY_NAME[name].query}.scm"))


@functools.cache
def tags_query(name: str) -> Query:
    return Query(grammar(name), query_source(name))


@functools.cache
def file_query(name: str) -> tuple[Query, int]:
    """The tags query followed by the refs query (telling comments, strings and call sites
    apart, for ``ingest.occurrences``), run once over a file's tree, and how many of its
    patterns are the tags query's (one walk of the tree instead of two)."""
    refs = BY_NAME[name].refs
    if not refs:
        tags = tags_query(name)
        return tags, tags.pattern_count
    source = query_source(name)
    query = Query(grammar(name), source + "\n" + _read(f"refs/{refs}.scm"))  # (compiled once)
    end = len(source.encode("utf-8"))
    return query, sum(query.start_byte_for_pattern(i) < end for i in range(query.pattern_count))
