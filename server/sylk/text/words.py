"""Words inside identifiers, for the lexical index and its queries.

Kept free of Tantivy so parser worker processes import little.
"""

from __future__ import annotations

import re

import numpy as np


def code_words_utf8(data: bytes) -> str:
    """``data`` (UTF-8) with a space after each character that ends a word inside an
    identifier: lower->Upper (``getUser``), an acronym before a word (``HTTPServer``)
    and letter<->digit (``utf8``). Underscores and dashes already separate words for
    the tokenizer. Vectorised over the bytes: only ASCII letters and digits decide,
    so a multi-byte UTF-8 sequence is never split."""
    a = np.frombuffer(data, dtype=np.uint8)
    if a.size < 2:
        return data.decode("utf-8", "replace")
    low = (a >= 97) & (a <= 122)
    up = (a >= 65) & (a <= 90)
    dig = (a >= 48) & (a <= 57)
    alpha = low | up
    after = np.zeros(a.size, dtype=bool)
    after[:-1] = (low[:-1] & up[1:]) | (alpha[:-1] & dig[1:]) | (dig[:-1] & alpha[1:])
    after[:-2] |= up[:-2] & up[1:-1] & low[2:]
    idx = np.flatnonzero(after)
    if not idx.size:
        return data.decode("utf-8", "replace")
    return np.insert(a, idx + 1, 32).tobytes().decode("utf-8", "replace")


# The same boundaries as a regex: cheaper than numpy's fixed cost on short texts.
_BOUNDARY = re.compile(r"[a-z](?=[A-Z])|[A-Z](?=[A-Z][a-z])|[A-Za-z](?=[0-9])|[0-9](?=[A-Za-z])")
SHORT_TEXT = 4096


def code_words(text: str) -> str:
    """``code_words_utf8`` for a str (queries, class summaries, short texts)."""
    if len(text) < SHORT_TEXT:
        return _BOUNDARY.sub(r"\g<0> ", text)
    return code_words_utf8(text.encode("utf-8", "surrogatepass"))


_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W_]+")


def split_words(name: str) -> list[str]:
    """``getHTTPResponse2_code`` -> ``["get", "HTTP", "Response", "2", "code"]``."""
    return _WORD.findall(name)


_INDEX_WORD = re.compile(r"[^\W_]+")
_NAME_SEPARATORS = re.compile(r"[\W_]+")


def index_words(text: str) -> list[str]:
    """The lower-cased words the lexical index makes of ``text`` (``code_words``, then
    Tantivy's simple tokenizer: runs of letters and digits), for building queries."""
    return [w.lower() for w in _INDEX_WORD.findall(code_words(text))]


def name_key(name: str) -> str:
    """A name lower-cased without separators, so every spelling of one identifier
    meets: ``parse_url``, ``parseUrl``, ``ParseURL`` and ``parse-url`` -> ``parseurl``."""
    return _NAME_SEPARATORS.sub("", name).lower()
