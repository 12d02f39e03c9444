"""Chunk documents for the lexical index, built in parser workers (no Tantivy import)."""

from __future__ import annotations

from json.encoder import encode_basestring as _q  # the C string encoder: no dict, no dumps()

from ..text.words import name_key


def chunk_json_rest(path: str, language: str | None, type: str, kind: str, symbol: str, start_line: int,
                    end_line: int, words: str, name_words: str) -> str:
    """A chunk's Tantivy document as JSON without its id: ``',"path":...}'``. Built in
    the parser workers; the main process prepends ``'{"chunk_id":N'`` (cheap). The words
    go in twice: as written (``content``) and for the stemming analyzer (``prose``)."""
    body = _q(words)
    return (f',"path":{_q(path)},"doc_type":"chunk","language":{_q(language or "text")},"type":{_q(type)},'
            f'"kind":{_q(kind)},"name":{_q(name_key(symbol))},"name_words":{_q(name_words)},"content":{body},'
            f'"prose":{body},"lines":{end_line - start_line + 1}}}')
