"""The lexical index: Tantivy on disk.

One document per chunk (``doc_type`` ``chunk``; see chunks.py): a function,
method, class, file header, Markdown section, config key or text window, with
its text (``content``), the name it defines, whole (``name``) and as words
(``name_words``), and its metadata as stored fast fields for filters and facets.
Chunks cover every line of a file, so the chunk documents are the full text
index too.

Code-aware tokens: text is split into words at camelCase, PascalCase,
snake_case, kebab-case and digit boundaries (``getHTTPResponse2`` -> ``get HTTP
Response 2``) by ``code_words`` and lower-cased (both in the parser workers: see
lexical_docs.py) before Tantivy's simple tokenizer splits it.
Queries go through the same function, and Tantivy turns a multi-word term into
a phrase query, so ``getUserById`` still finds exactly that identifier while
``user`` finds it too: the original is kept, as a phrase. Symbol names are also
indexed whole (``name``, lower-cased) for exact matches.

Beside it, a second Tantivy index holds one document per file (its own folder,
``grams``): the path, a 64-bit key of the path (``file_key``, a fast field: a search
reads the keys of the files it finds without loading a document) and the trigrams of
the file's folded text (``grams``, see ingest/grams.py), which exact and regex search
ask for to find the files a pattern may match (search/grep.py verifies them against
the text). An index of its own, because in the chunks' index the trigrams' postings
were merged again with every segment merge of the chunks (about 1 s more CPU per
cold index of the stdlib; on their own, 0.45 s). Both are written, deleted from and
committed together, the chunks first, before the manifest.

File contents are indexed, not stored: snippets read the file, whose hash the
manifest keeps. Custom tokenizers are not stored in the index, so
``_register`` runs on every ``Index`` object we open.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs
import tantivy

from ..ingest.grams import GramQuery
from ..text.query_terms import QueryTerms, analyze
from ..text.query_tree import Node
from .lexical_query import FieldWeights, compile_match, compile_terms

WORDS = "sylk_words"
LOWER = "sylk_lower"
MAX_TOKEN = 64


STEMS = "sylk_stems"
GRAMS = "sylk_grams"
GRAMS_HEAP = 48_000_000  # the trigram index's writer memory (one thread)


def _register(index: tantivy.Index) -> None:
    # ``content``, ``name_words`` and ``prose`` arrive lower-cased (lexical_docs.ChunkDocs):
    # no lowercase step here, where it would cost the indexing thread a pass per token and
    # field (an index written with one holds the same terms)
    words = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
             .filter(tantivy.Filter.remove_long(MAX_TOKEN))
             .build())
    stems = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
             .filter(tantivy.Filter.remove_long(MAX_TOKEN))
             .filter(tantivy.Filter.stopword("english"))
             .filter(tantivy.Filter.stemmer("english"))
             .build())
    lower = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw()).filter(tantivy.Filter.lowercase()).build()
    index.register_tokenizer(WORDS, words)
    index.register_tokenizer(STEMS, stems)
    index.register_tokenizer(LOWER, lower)


def build_grams_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("path", stored=False, tokenizer_name="raw")
    sb.add_integer_field("file_key", stored=False, indexed=False, fast=True)
    sb.add_text_field("grams", stored=False, tokenizer_name=GRAMS, index_option="basic")
    return sb.build()


def build_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("chunk_id", stored=True, indexed=True, fast=True)
    sb.add_text_field("path", stored=False, tokenizer_name="raw")
    sb.add_text_field("doc_type", stored=False, tokenizer_name="raw")
    sb.add_text_field("language", stored=False, tokenizer_name="raw", fast=True)
    sb.add_text_field("type", stored=False, tokenizer_name="raw", fast=True)
    sb.add_text_field("kind", stored=False, tokenizer_name="raw", fast=True)
    # the file's package and each package holding it (ingest.packages.ancestors): a
    # packages filter is a term lookup, the packages below the one asked for included
    sb.add_text_field("package", stored=False, tokenizer_name="raw")
    sb.add_text_field("name", stored=False, tokenizer_name=LOWER)
    sb.add_text_field("name_words", stored=False, tokenizer_name=WORDS)
    sb.add_text_field("content", stored=False, tokenizer_name=WORDS)
    # the same words stemmed, stop words out, for English queries; no positions (no phrases)
    sb.add_text_field("prose", stored=False, tokenizer_name=STEMS, index_option="freq")
    sb.add_integer_field("lines", stored=False, indexed=True, fast=True)
    return sb.build()


@attrs.frozen(slots=True)
class ChunkHit:
    id: int
    score: float


class LexicalIndexLocked(RuntimeError):
    """Another process holds the index writer."""


# One Tantivy indexing thread keeps up with about this many parser workers (stdlib, per
# file: 8 ms of parsing and chunking against 2.5 ms of indexing its chunks).
WORKERS_PER_WRITER_THREAD = 3
MAX_WRITER_THREADS = 8


def writer_threads(cores: int | None = None) -> int:
    """Indexing threads for a machine of ``cores`` (default: this one's), which an index run
    fills with one parser worker per core. Each thread writes segments of its own, and more
    segments than needed cost merges: on 2 cores one thread (2 cost 1.5-2.5 s more CPU on
    the stdlib, merges included, competing with the parser workers)."""
    cores = cores if cores is not None else os.cpu_count() or 1
    return max(1, min(MAX_WRITER_THREADS, cores // WORKERS_PER_WRITER_THREAD))


def _writer(index: tantivy.Index, heap_size: int, threads: int) -> tantivy.IndexWriter:
    try:
        return index.writer(heap_size=heap_size, num_threads=threads)
    except ValueError as exc:
        if "lock" in str(exc).lower():
            raise LexicalIndexLocked(str(exc)) from exc
        raise


class LexicalIndex:
    """The chunks' Tantivy index (``folder``) and the files' trigram index
    (``grams_folder``), with one writer each for the life of the object."""

    def __init__(self, folder: Path, grams_folder: Path, *, writable: bool = True, threads: int | None = None,
                 heap_size: int = 96_000_000) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        grams_folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.schema = build_schema()
        self.index = tantivy.Index(self.schema, path=str(folder), reuse=True)
        _register(self.index)
        self.grams_schema = build_grams_schema()
        self.grams = tantivy.Index(self.grams_schema, path=str(grams_folder), reuse=True)
        self.grams.register_tokenizer(GRAMS, tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build())
        self._writer: tantivy.IndexWriter | None = None
        self._grams_writer: tantivy.IndexWriter | None = None
        self._lock = threading.Lock()
        if writable:
            self._writer = _writer(self.index, heap_size, threads if threads is not None else writer_threads())
            try:
                self._grams_writer = _writer(self.grams, GRAMS_HEAP, 1)
            except BaseException:
                self._writer.rollback()
                self._writer = None
                raise

    @property
    def writable(self) -> bool:
        return self._writer is not None

    def close(self) -> None:
        with self._lock:
            for w in (self._writer, self._grams_writer):
                if w is not None:
                    w.rollback()
                    w.wait_merging_threads()
            self._writer = self._grams_writer = None

    # writing ----------------------------------------------------------
    def _w(self) -> tantivy.IndexWriter:
        if self._writer is None:
            raise RuntimeError("lexical index opened read-only")
        return self._writer

    def _gw(self) -> tantivy.IndexWriter:
        if self._grams_writer is None:
            raise RuntimeError("lexical index opened read-only")
        return self._grams_writer

    def delete_paths(self, paths: Iterable[str]) -> None:
        """Delete the documents of these paths: their chunks and their file document."""
        with self._lock:
            w, gw = self._w(), self._gw()
            for p in paths:
                w.delete_documents_by_term("path", p)
                gw.delete_documents_by_term("path", p)

    def add_file(self, doc: str) -> None:
        """Add a file's document (``grams.file_doc``) to the trigram index; call
        delete_paths first when re-indexing the file."""
        with self._lock:
            self._gw().add_json(doc)

    def add_chunks(self, docs: Sequence[tuple[int, str]]) -> None:
        """Add chunk documents given as (chunk id, chunk_json_rest(...)); call
        delete_paths first when re-indexing a file."""
        with self._lock:
            w = self._w()
            for cid, rest in docs:
                w.add_json('{"chunk_id":' + str(cid) + rest)

    def commit(self) -> None:
        """Commit the chunks, then the files' trigrams (the caller writes the manifest after)."""
        with self._lock:
            self._w().commit()
            self._gw().commit()
        self.index.reload()
        self.grams.reload()

    def delete_chunk_ids(self, ids: Iterable[int]) -> None:
        """Delete every document holding one of these chunk ids (orphans of a crash,
        duplicates); commit() makes it so."""
        with self._lock:
            w = self._w()
            for cid in ids:
                w.delete_documents_by_term("chunk_id", int(cid))

    def garbage_collect(self) -> None:
        """Remove files no commit refers to (left by a process killed while writing)."""
        with self._lock:
            self._w().garbage_collect_files()
            self._gw().garbage_collect_files()

    # reading ----------------------------------------------------------
    def reload(self) -> None:
        self.index.reload()
        self.grams.reload()

    def file_count(self) -> int:
        """How many file documents the trigram index holds."""
        return self.grams.searcher().num_docs

    def file_keys(self) -> list[int]:
        """The ``file_key`` of every file document (``grams.path_key`` of its path), ascending."""
        return self._file_values(tantivy.Query.all_query(), None)

    def files_holding(self, query: GramQuery, limit: int) -> list[int]:
        """The ``file_key`` of the files whose trigrams satisfy ``query``, at most ``limit``
        (the number of indexed files: a search collects that many values at most)."""
        return self._file_values(self._grams_query(query), limit)

    def _grams_query(self, query: GramQuery) -> tantivy.Query:
        occur = tantivy.Occur.Must if query.op == "all" else tantivy.Occur.Should
        clauses = [(occur, tantivy.Query.term_query(self.grams_schema, "grams", g)) for g in query.grams]
        clauses.extend((occur, self._grams_query(sub)) for sub in query.subs)
        return tantivy.Query.boolean_query(clauses)

    def _file_values(self, query: tantivy.Query, limit: int | None) -> list[int]:
        searcher = self.grams.searcher()
        if searcher.num_docs == 0 or limit == 0:
            return []
        hits = searcher.search(query, min(limit or searcher.num_docs, searcher.num_docs), count=False,
                               order_by_field="file_key", order=tantivy.Order.Asc).hits
        return [key for key, _addr in hits]

    def max_chunk_id(self) -> int:
        searcher = self.index.searcher()
        if searcher.num_docs == 0:
            return 0
        hits = searcher.search(tantivy.Query.all_query(), 1, count=False, order_by_field="chunk_id").hits
        return searcher.doc(hits[0][1]).get_first("chunk_id") if hits else 0

    def num_docs(self) -> int:
        return self.index.searcher().num_docs

    def chunk_ids(self) -> list[int]:
        """The chunk_id of every document, ascending; an id held by several documents is
        repeated. Read from the fast field (no stored document is loaded)."""
        searcher = self.index.searcher()
        if searcher.num_docs == 0:
            return []
        hits = searcher.search(tantivy.Query.all_query(), searcher.num_docs, count=False,
                               order_by_field="chunk_id", order=tantivy.Order.Asc).hits
        return [cid for cid, _addr in hits]

    def build_query(self, text: str | QueryTerms, *, fuzzy: bool = False, weights: FieldWeights | None = None,
                    match: Node | None = None) -> tantivy.Query:
        """BM25 over chunk names, their words, contents and stemmed contents (see
        lexical_query.py); ``match``, the tree of words and filters every hit must satisfy
        (text/query_tree.py; compile_match: the search filters this index applies), scoring
        nothing. ``text`` is what the user typed, or its analysis."""
        terms = analyze(text) if isinstance(text, str) else text
        Q, Occur = tantivy.Query, tantivy.Occur
        clauses = [(Occur.Must, compile_terms(self.index, self.schema, terms, fuzzy=fuzzy, weights=weights)),
                   (Occur.Must, Q.term_query(self.schema, "doc_type", "chunk"))]
        if match is not None:
            clauses.append((Occur.Must, Q.const_score_query(compile_match(self.schema, match), 0.0)))
        return Q.boolean_query(clauses)

    def holding(self, match: Node, chunk_ids: Sequence[int]) -> set[int]:
        """The chunks of ``chunk_ids`` whose words satisfy ``match`` (the other side of a
        search asks: the semantic side's candidates); with a filter the index does not
        apply in the tree, a superset (compile_match)."""
        if not chunk_ids:
            return set()
        Q, Occur = tantivy.Query, tantivy.Occur
        query = Q.boolean_query([(Occur.Must, Q.term_set_query(self.schema, "chunk_id", list(chunk_ids))),
                                 (Occur.Must, compile_match(self.schema, match))])
        searcher = self.index.searcher()
        # an id may be held twice for a moment (a chunk rewritten): room for both
        hits = searcher.search(query, 2 * len(chunk_ids), count=False, order_by_field="chunk_id").hits
        return {cid for cid, _addr in hits}

    def search_chunks(self, query: tantivy.Query, limit: int) -> tuple[list[ChunkHit], int]:
        """The best ``limit`` chunks for a query built by build_query, and the total count."""
        searcher = self.index.searcher()
        result = searcher.search(query, limit, count=True)
        hits = [ChunkHit(searcher.doc(addr).get_first("chunk_id"), score) for score, addr in result.hits]
        return hits, result.count or 0
