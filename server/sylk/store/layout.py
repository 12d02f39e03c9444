"""What an index folder holds, by name (one place for every file name and the schema)."""

from __future__ import annotations

SCHEMA_VERSION = 8  # a folder stamped with another is rebuilt
META_FILE = "sylk-index.json"  # the schema stamp
LOCK_FILE = "sylk.lock"
MANIFEST_FILE = "manifest.sqlite3"
TANTIVY_DIR = "tantivy"
GRAMS_DIR = "grams"  # the files' trigrams (store.lexical), a Tantivy index of its own
TEXT_INDEX_DIRS = (TANTIVY_DIR, GRAMS_DIR)
VECTORS_DIR = "vectors"
SYMBOLS_FILE = "symbols.bin"  # the symbol table as arrays (search.frozen_symbols), rebuilt when missing
