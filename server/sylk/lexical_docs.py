"""Chunk documents for the lexical index, built in parser workers (no Tantivy import)."""

from __future__ import annotations

import json


def chunk_json_rest(path: str, language: str | None, type: str, kind: str, symbol: str, start_line: int,
                    end_line: int, words: str, name_words: str) -> str:
    """A chunk's Tantivy document as JSON without its id: ``',"path":...}'``. Built in
    the parser workers; the main process prepends ``'{"chunk_id":N'`` (cheap)."""
    doc = {"path": path, "doc_type": "chunk", "language": language or "text", "type": type, "kind": kind,
           "name": symbol, "name_words": name_words, "content": words, "lines": end_line - start_line + 1}
    return "," + json.dumps(doc, ensure_ascii=False, separators=(",", ":"))[1:]
