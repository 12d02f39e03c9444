"""What the manifest knows beside the files: virtual documents (their text lives
here), user tags, the last commit of each file and commit messages (SQLite FTS5).

A mixin of ``Manifest``: the same connection, lock and transactions.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple


# the manifest's meta key of the HEAD the git metadata was last brought up to (engine/gitmeta.py):
# absent until the metadata is first read
GIT_META_HEAD = "git_meta_head"


# The search filters of git metadata (search/filters.py: ``git``) as conditions on a
# commit: filter -> its value -> (SQL, arguments). tests/test_filters.py fails when one lacks.
COMMIT_CLAUSES: dict[str, Callable[[Any], tuple[str, list[Any]]]] = {
    "authors": lambda v: (f"author IN ({','.join('?' * len(v))})", list(v)),
    "modified_after": lambda v: ("CAST(time AS INTEGER) >= ?", [v]),
    "modified_before": lambda v: ("CAST(time AS INTEGER) < ?", [v]),
}


class GitFile(NamedTuple):
    """The last commit that touched a file."""
    commit: str
    author: str
    time: int


class DocumentRow(NamedTuple):
    """A virtual document as stored (tags and metadata as JSON)."""
    type: str
    title: str
    tags: str
    metadata: str
    text: str
    created: float


class CommitRow(NamedTuple):
    """A commit found by its message (files joined by newlines)."""
    sha: str
    author: str
    time: int
    message: str
    files: str


class Annotations:
    _db: sqlite3.Connection
    _lock: threading.RLock
    _fts: bool | None
    _transaction: Callable[[], AbstractContextManager[sqlite3.Connection]]
    _shared: Callable[[str, Callable[[], Any]], Any]

    # git ----------------------------------------------------------------
    def set_git_files(self, rows: Iterable[tuple[str, str, str, int]], *, replace_all: bool = False) -> None:
        """(path, commit, author, time) of files; ``replace_all`` forgets every other file's."""
        with self._transaction() as db:
            if replace_all:
                db.execute("DELETE FROM git_files")
            db.executemany("INSERT OR REPLACE INTO git_files VALUES (?, ?, ?, ?)", rows)

    def git_files(self) -> dict[str, GitFile]:
        """path -> the last commit of the indexed files git knows."""
        with self._lock:
            return {r[0]: GitFile(r[1], r[2], r[3]) for r in self._db.execute(
                "SELECT g.path, g.commit_id, g.author, g.time FROM git_files g JOIN files f ON f.path = g.path")}

    # virtual documents and tags -------------------------------------------
    def _write(self, statements: Iterable[tuple[str, Sequence]]) -> None:
        """Run statements in one transaction (letting pending embedded flags through first)."""
        with self._transaction() as db:
            for sql, args in statements:
                db.execute(sql, args)

    def put_document(self, id: str, type: str, title: str, tags: str, metadata: str, text: str,
                     created: float) -> None:
        self._write([("INSERT OR REPLACE INTO documents VALUES (?, ?, ?, ?, ?, ?, ?)",
                      (id, type, title, tags, metadata, text, created))])

    def delete_document(self, id: str) -> bool:
        with self._lock:
            existed = self._db.execute("SELECT 1 FROM documents WHERE id=?", (id,)).fetchone() is not None
        self._write([("DELETE FROM documents WHERE id=?", (id,))])
        return existed

    def document(self, id: str) -> DocumentRow | None:
        """A virtual document, or None."""
        with self._lock:
            row = self._db.execute("SELECT type, title, tags, metadata, text, created FROM documents WHERE id=?",
                                   (id,)).fetchone()
        return DocumentRow(*row) if row else None

    def document_ids(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT id FROM documents ORDER BY created, id")]

    def set_tags(self, paths: Sequence[str], tags: Sequence[str], *, replace: bool = False) -> None:
        statements: list[tuple[str, Sequence]] = []
        for p in paths:
            if replace:
                statements.append(("DELETE FROM tags WHERE path=?", (p,)))
            statements.extend(("INSERT OR IGNORE INTO tags VALUES (?, ?)", (p, t)) for t in tags)
        self._write(statements)

    def remove_tags(self, paths: Sequence[str], tags: Sequence[str]) -> None:
        self._write([("DELETE FROM tags WHERE path=? AND tag=?", (p, t)) for p in paths for t in tags])

    def tag_lookup(self) -> dict[str, tuple[str, ...]]:
        """path -> tags of the indexed files and documents, cached until the next write."""
        return self._shared("tags", self._tags)

    def _tags(self) -> dict[str, tuple[str, ...]]:
        found: dict[str, list[str]] = {}
        for path, tag in self._db.execute(
                "SELECT t.path, t.tag FROM tags t JOIN files f ON f.path = t.path ORDER BY t.tag"):
            found.setdefault(path, []).append(tag)
        return {p: tuple(ts) for p, ts in found.items()}

    # commits: messages searchable as ``git_commit`` documents (SQLite FTS5) ----------
    def _commits_table(self) -> bool:
        """Create the commit table on first use; False when this SQLite has no FTS5."""
        if self._fts is None:
            try:
                self._db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS commits USING fts5("
                                 "sha UNINDEXED, author, time UNINDEXED, message, files, "
                                 "tokenize='porter unicode61')")
                self._fts = True
            except sqlite3.OperationalError:
                self._fts = False
        return self._fts

    def add_commits(self, rows: Iterable[tuple[str, str, int, str, str]], *, replace_all: bool = False) -> bool:
        """(sha, author, time, message, files joined by newlines); False without FTS5."""
        with self._lock:
            if not self._commits_table():
                return False
            with self._transaction() as db:
                if replace_all:
                    db.execute("DELETE FROM commits")
                db.executemany("INSERT INTO commits (sha, author, time, message, files) VALUES (?, ?, ?, ?, ?)", rows)
            return True

    def search_commits(self, words: Sequence[str], limit: int, keep: Mapping[str, Any] = {},
                       leave: Mapping[str, Any] = {}, leave_out: Sequence[str] = ()) -> list[CommitRow]:
        """Commits whose message, author or files match any of ``words`` and none of
        ``leave_out`` (each a word or words in a row), best (BM25) first; ``keep`` and
        ``leave``: the search filters of git metadata (COMMIT_CLAUSES) each commit must
        match, and must not."""
        terms = [w for w in words if w]
        if not terms:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in terms)
        left = [w for w in leave_out if w]
        if left:
            match = f"({match}) NOT (" + " OR ".join('"' + w.replace('"', '""') + '"' for w in left) + ")"
        sql = "SELECT sha, author, time, message, files FROM commits WHERE commits MATCH ?"
        args: list = [match]
        for given, form in ((keep, " AND {}"), (leave, " AND NOT ({})")):
            for name, value in given.items():
                clause, values = COMMIT_CLAUSES[name](value)
                sql += form.format(clause)
                args += values
        sql += " ORDER BY rank LIMIT ?"
        args.append(limit)
        with self._lock:
            if not self._commits_table():
                return []
            return [CommitRow(*r) for r in self._db.execute(sql, args).fetchall()]

    def commit(self, sha: str) -> CommitRow | None:
        """The indexed commit ``sha`` (the full sha), or None."""
        with self._lock:
            if not self._commits_table():
                return None
            row = self._db.execute("SELECT sha, author, time, message, files FROM commits WHERE sha=?",
                                   (sha,)).fetchone()
        return CommitRow(*row) if row else None

    def commit_count(self) -> int:
        with self._lock:
            if not self._commits_table():
                return 0
            return self._db.execute("SELECT count(*) FROM commits").fetchone()[0]

    def git_lookup(self) -> dict[str, GitFile]:
        """git_files(), cached until the next write; callers must not change it."""
        return self._shared("git", self.git_files)
