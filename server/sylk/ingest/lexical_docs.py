"""Chunk documents for the lexical index, built in parser workers (no Tantivy import)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from json.encoder import encode_basestring as _q  # the C string encoder: no dict, no dumps()

from ..text.words import name_key

# joins lines while they are escaped together: encode_basestring leaves it as it is, and
# as ASCII it keeps an ASCII text's compact form (a non-ASCII joint would double its size)
_SEP = "\x7f"


class ChunkDocs:
    """The Tantivy documents of one file's chunks, as JSON without their ids:
    ``',"path":...}'``. Built in the parser workers; the main process prepends
    ``'{"chunk_id":N'`` (cheap). What every chunk of the file shares is encoded once.
    The words go in twice: as written (``content``) and for the stemming analyzer (``prose``).

    The words are lower-cased here, with ``str.lower`` as the query's words are
    (text/query_terms.py), not by Tantivy's analyzers (store/lexical.py): a worker does it
    for a chunk in one C call, where Tantivy's indexing thread, the main process's
    serial part, would pay a filter step per token and per field (0.3-0.5 s on the
    stdlib). JSON escapes stay valid lower-cased (``\\u00E9`` -> ``\\u00e9``)."""

    __slots__ = ("_head",)

    def __init__(self, path: str, language: str | None, type: str, packages: Sequence[str] = ()) -> None:
        # ``packages``: the file's package and those holding it (ingest.packages.ancestors)
        self._head = (f',"path":{_q(path)},"doc_type":"chunk","language":{_q(language or "text")},"type":{_q(type)}'
                      f',"package":[{",".join(map(_q, packages))}]')

    def rest(self, kind: str, symbol: str, start_line: int, end_line: int, quoted_words: str,
             name_words: str) -> str:
        """One chunk's document; ``quoted_words`` is its words as a JSON string (``quote(words)``,
        or joined from ``quoted_lines``)."""
        words = quoted_words.lower()
        return (f'{self._head},"kind":{_quoted_name(kind)},"name":{_quoted_key(symbol)},'
                f'"name_words":{_q(name_words.lower())},"content":{words},"prose":{words},'
                f'"lines":{end_line - start_line + 1}}}')


# kinds and names repeat across chunks (``method``, ``__init__``): each encoded once
_quoted_name = functools.lru_cache(maxsize=1024)(_q)


@functools.lru_cache(maxsize=65536)
def _quoted_key(name: str) -> str:
    return _q(name_key(name))


def quote(text: str) -> str:
    """``text`` as a JSON string."""
    return _q(text)


def quoted_lines(text: str) -> list[str]:
    """The lines of ``text`` (split at ``\\n``), each JSON-escaped without its quotes. Escaping
    is per character, so ``'"' + "\\\\n".join(out[a:b]) + '"'`` is ``quote("\\n".join(lines[a:b]))``:
    a file's words are escaped once, not once per chunk holding them."""
    # What encode_basestring escapes, for the common text, in a few passes of str.replace
    # (several times faster than its loop over characters); the rest (a character below
    # U+0020 besides these, or anything not printable) takes the encoder.
    lines = text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t").replace("\r", "\\r").split("\n")
    if all(map(str.isprintable, lines)):
        return lines
    if _SEP in text:
        return [_q(line)[1:-1] for line in text.split("\n")]
    return _q(text.replace("\n", _SEP))[1:-1].split(_SEP)


def chunk_json_rest(path: str, language: str | None, type: str, kind: str, symbol: str, start_line: int,
                    end_line: int, words: str, name_words: str) -> str:
    """One chunk's document (``ChunkDocs.rest``) from its words as they are."""
    return ChunkDocs(path, language, type).rest(kind, symbol, start_line, end_line, _q(words), name_words)
