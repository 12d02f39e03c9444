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
