"""The lexical index: Tantivy on disk.

Two kinds of documents share one index, told apart by ``doc_type``:

* ``file``   one per indexed file: its full text;
* ``symbol`` one per definition: name, words of the name, kind, container,
  signature and doc, with its line range.

Code-aware tokens: text is split into words at camelCase, PascalCase,
snake_case, kebab-case and digit boundaries (``getHTTPResponse2`` -> ``get HTTP
Response 2``) by ``code_words`` before Tantivy's simple tokenizer lower-cases it.
Queries go through the same function, and Tantivy turns a multi-word term into
a phrase query, so ``getUserById`` still finds exactly that identifier while
``user`` finds it too: the original is kept, as a phrase. Symbol names are also
indexed whole (``name``, lower-cased) for exact matches.

File contents are indexed, not stored: snippets read the file, whose hash the
manifest keeps. Custom tokenizers are not stored in the index, so
``_register`` runs on every ``Index`` object we open.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs
import tantivy

from .symbol_search import split_words
from .symbols import Symbol

WORDS = "sylk_words"
LOWER = "sylk_lower"
MAX_TOKEN = 64
# A space goes after each character that ends a word inside an identifier.
_BOUNDARY = re.compile(r"[a-z](?=[A-Z])|[A-Z](?=[A-Z][a-z])|[A-Za-z](?=[0-9])|[0-9](?=[A-Za-z])")


def code_words(text: str) -> str:
    """Separate the words inside identifiers with spaces (underscores and dashes
    already separate words for the tokenizer)."""
    return _BOUNDARY.sub(r"\g<0> ", text)


def _register(index: tantivy.Index) -> None:
    words = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
             .filter(tantivy.Filter.remove_long(MAX_TOKEN))
             .filter(tantivy.Filter.lowercase())
             .build())
    lower = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw()).filter(tantivy.Filter.lowercase()).build()
    index.register_tokenizer(WORDS, words)
    index.register_tokenizer(LOWER, lower)


def build_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("path", stored=True, tokenizer_name="raw", fast=True)
    sb.add_text_field("doc_type", stored=True, tokenizer_name="raw", fast=True)
    sb.add_text_field("language", stored=True, tokenizer_name="raw", fast=True)
    sb.add_text_field("kind", stored=True, tokenizer_name="raw", fast=True)
    sb.add_text_field("name", stored=True, tokenizer_name=LOWER)
    sb.add_text_field("name_words", stored=False, tokenizer_name=WORDS)
    sb.add_text_field("container", stored=True, tokenizer_name=WORDS)
    sb.add_text_field("signature", stored=True, tokenizer_name=WORDS)
    sb.add_text_field("doc", stored=True, tokenizer_name=WORDS)
    sb.add_text_field("content", stored=False, tokenizer_name=WORDS)
    sb.add_integer_field("line", stored=True, indexed=True)
    sb.add_integer_field("end_line", stored=True)
    return sb.build()


class LexicalIndexLocked(RuntimeError):
    """Another process holds the index writer."""


@attrs.frozen
class TextHit:
    path: str
    doc_type: str
    name: str
    line: int
    score: float


class LexicalIndex:
    """One Tantivy index with one writer for the life of the object."""

    def __init__(self, folder: Path, *, writable: bool = True, threads: int = 2,
                 heap_size: int = 96_000_000) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.schema = build_schema()
        self.index = tantivy.Index(self.schema, path=str(folder), reuse=True)
        _register(self.index)
        self._writer: tantivy.IndexWriter | None = None
        self._lock = threading.Lock()
        if writable:
            try:
                self._writer = self.index.writer(heap_size=heap_size, num_threads=threads)
            except ValueError as exc:
                if "lock" in str(exc).lower():
                    raise LexicalIndexLocked(str(exc)) from exc
                raise

    @property
    def writable(self) -> bool:
        return self._writer is not None

    def close(self) -> None:
        with self._lock:
            if self._writer is not None:
                self._writer.rollback()
                self._writer.wait_merging_threads()
                self._writer = None

    # writing ----------------------------------------------------------
    def _w(self) -> tantivy.IndexWriter:
        if self._writer is None:
            raise RuntimeError("lexical index opened read-only")
        return self._writer

    def delete_paths(self, paths: Iterable[str]) -> None:
        with self._lock:
            w = self._w()
            for p in paths:
                w.delete_documents_by_term("path", p)

    def add_file(self, path: str, language: str | None, words: str, lines: int,
                 symbols: Sequence[Symbol]) -> None:
        """Add one file (``words``: its text through ``code_words``) and its symbols;
        call delete_paths first for a re-index."""
        lang = language or "text"
        with self._lock:
            w = self._w()
            w.add_document(tantivy.Document(
                path=path, doc_type="file", language=lang, content=words, line=0, end_line=lines,
            ))
            for s in symbols:
                w.add_document(tantivy.Document(
                    path=path, doc_type="symbol", language=lang, kind=s.kind, name=s.name,
                    name_words=" ".join(split_words(s.name)), container=s.container,
                    signature=s.signature, doc=s.doc,
                    line=s.range[0], end_line=s.range[2],
                ))

    def commit(self) -> None:
        with self._lock:
            self._w().commit()
        self.index.reload()

    # reading ----------------------------------------------------------
    def reload(self) -> None:
        self.index.reload()

    def num_docs(self) -> int:
        return self.index.searcher().num_docs

    def search_text(self, text: str, limit: int = 20, doc_type: str | None = None) -> list[TextHit]:
        """Plain BM25 over names, words of names, docs and contents (user syntax tolerated)."""
        fields = ["name", "name_words", "signature", "doc", "content"]
        query, _errors = self.index.parse_query_lenient(
            code_words(text), fields, field_boosts={"name": 4.0, "name_words": 2.0, "signature": 1.5})
        if doc_type is not None:
            query = tantivy.Query.boolean_query([
                (tantivy.Occur.Must, query),
                (tantivy.Occur.Must, tantivy.Query.term_query(self.schema, "doc_type", doc_type)),
            ])
        searcher = self.index.searcher()
        out = []
        for score, addr in searcher.search(query, limit).hits:
            d = searcher.doc(addr)
            out.append(TextHit(d.get_first("path"), d.get_first("doc_type"), d.get_first("name") or "",
                               d.get_first("line") or 0, score))
        return out

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.folder.iterdir() if p.is_file())
