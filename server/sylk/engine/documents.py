"""Virtual documents (notes, LLM prompts and responses, fetched web pages ...) and user
tags on files.

A virtual document has an id, a type, a title, tags and metadata, and its text lives
in the manifest, not on disk. It is indexed like a Markdown file under the path
``sylk:/<id>`` (chunks by heading, the lexical index, vectors), so every search
finds it and the ``types`` filter selects it; the disk sync never touches it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

import attrs

from ..errors import FieldError
from ..ingest import scan
from ..ingest.parsing import chunk_rows
from ..ingest.symbols import extract
from ..model import FILE_TYPES, virtual_path
from ..search.values import is_document_type
from ..store.manifest import FileRecord, IndexedFile, Manifest
from ..store.stores import Stores
from ..text.words import code_words_utf8


class Workspace(Protocol):
    """What documents need of a workspace: its stores, and a way to embed a path next."""

    stores: Stores

    @property
    def manifest(self) -> Manifest: ...

    def prioritize(self, paths: Iterable[str]) -> None: ...

_ID = re.compile(r"^[\w.@:/+-]{1,200}$")
# a document's type: search.query.is_document_type (never a file type nor a language)
MAX_TEXT = 4 << 20


class DocumentError(FieldError):
    """A bad document request; ``field`` names the offending parameter."""


@attrs.frozen
class Document:
    id: str
    type: str
    title: str
    tags: tuple[str, ...]
    metadata: dict[str, Any]
    text: str
    created: float

    @property
    def path(self) -> str:
        return virtual_path(self.id)

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "title": self.title, "tags": list(self.tags),
                "metadata": self.metadata, "created": self.created}


def validate(id: str, text: str, type: str, title: str, tags: Sequence[str],
             metadata: Mapping[str, Any] | None) -> None:
    if not isinstance(id, str) or not _ID.match(id):
        raise DocumentError("id", "1-200 letters, digits and . _ - @ : / + (no spaces)")
    if not isinstance(text, str) or not text.strip():
        raise DocumentError("text", "required, a non-empty string")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_TEXT:
        raise DocumentError("text", f"larger than {MAX_TEXT >> 20} MiB")
    if not isinstance(type, str) or not is_document_type(type):
        raise DocumentError("type", "a lower-case name like note, prompt, response, web_page "
                                    f"(not one of {', '.join(FILE_TYPES)} nor a language)")
    if not isinstance(title, str):
        raise DocumentError("title", "expected a string")
    if isinstance(tags, (str, Mapping)) or not isinstance(tags, Iterable) or \
            not all(isinstance(t, str) and t.strip() for t in tags):
        raise DocumentError("tags", "expected a list of non-empty strings")
    if metadata is not None:
        if not isinstance(metadata, Mapping):
            raise DocumentError("metadata", "expected an object")
        try:
            json.dumps(metadata)
        except (TypeError, ValueError) as exc:
            raise DocumentError("metadata", f"not JSON: {exc}") from None


def index_document(ws: Workspace, id: str, text: str, *, type: str = "note", title: str = "",
                   tags: Sequence[str] = (), metadata: Mapping[str, Any] | None = None) -> Document:
    """Add or replace a virtual document and index it now (its vectors come with the next
    embedding pass). Raises DocumentError on bad input."""
    validate(id, text, type, title, tags, metadata)
    doc = Document(id, type, title, tuple(dict.fromkeys(t.strip() for t in tags)), dict(metadata or {}),
                   text, time.time())
    body = f"# {title}\n\n{text}" if title and not text.lstrip().startswith("#") else text
    data = body.encode("utf-8", "surrogatepass")
    path = doc.path
    rows = chunk_rows(path, "markdown", body, code_words_utf8(data), extract(data, "markdown"), type=type)
    record = FileRecord(path, scan.content_hash(data), len(data), 0, "markdown", 0)
    stores = ws.stores
    with stores.index_lock:
        # the text first: a crash before the index write leaves a document the next call re-indexes
        stores.manifest.put_document(id, type, title, json.dumps(list(doc.tags)), json.dumps(doc.metadata), body,
                                 doc.created)
        stores.manifest.set_tags([path], doc.tags, replace=True)
        stores.lexical.delete_paths([path])
        chunks = stores.add_chunks(path, "markdown", rows)
        stores.lexical.commit()
        stores.apply([path], [IndexedFile(record)], [], chunks=chunks)
    ws.prioritize([path])
    return attrs.evolve(doc, text=body)


def remove_document(ws: Workspace, id: str) -> bool:
    """Remove a virtual document from every store; False if there was none."""
    path = virtual_path(id)
    stores = ws.stores
    with stores.index_lock:
        existed = stores.manifest.delete_document(id)
        stores.lexical.delete_paths([path])
        stores.lexical.commit()
        stores.apply([path], [], [path])
        stores.manifest.set_tags([path], (), replace=True)
    return existed


def get(ws: Workspace, id: str) -> Document | None:
    row = ws.manifest.document(id)
    if row is None:
        return None
    return Document(id, row.type, row.title, tuple(json.loads(row.tags)), json.loads(row.metadata), row.text,
                    row.created)


def list_documents(ws: Workspace) -> list[Document]:
    return [d for d in (get(ws, i) for i in ws.manifest.document_ids()) if d is not None]


def tag(ws: Workspace, paths: Iterable[str], tags: Sequence[str], *, remove: bool = False) -> int:
    """Add (or remove) tags on indexed files or documents; returns how many paths took them.
    Paths must be indexed (a typo is an error, not a silent no-op)."""
    paths = list(paths)
    tags = [t.strip() for t in tags if t.strip()]
    if not tags:
        raise DocumentError("tags", "at least one non-empty tag")
    known = ws.manifest.files()
    unknown = [p for p in paths if p not in known]
    if unknown:
        raise DocumentError("paths", f"not in the index: {', '.join(unknown[:5])}")
    if remove:
        ws.manifest.remove_tags(paths, tags)
    else:
        ws.manifest.set_tags(paths, tags)
    return len(paths)
