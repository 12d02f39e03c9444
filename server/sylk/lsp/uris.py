"""The URI of everything the language server points an editor at: a file URI for an
indexed file, and a ``sylk:`` URI for what has no file, which the editors open through
``sylk/documentText`` (lsp/documents.py):

- ``sylk://document/<id>``: a virtual document (its path is ``sylk:/<id>``, model.py);
- ``sylk://commit/<sha>``: a commit (a ``git_commit`` hit), its full 40-digit sha.

The id is percent-encoded as VS Code's ``Uri.toString()`` writes it (everything but
letters, digits, ``-._~`` and ``/``), so the URI an editor hands back is the one sent.
The kind is the URI's authority: Neovim takes ``scheme://`` names for URLs, not files.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import attrs

from ..model import doc_id, is_virtual
from . import convert

SCHEME = "sylk"
DOCUMENT = "document"
COMMIT = "commit"
KINDS = (DOCUMENT, COMMIT)
_SHA = re.compile(r"^[0-9a-f]{40}$")


class UriError(ValueError):
    """Not a ``sylk:`` URI Sylk makes; the message says what is wrong with it."""


@attrs.frozen
class SylkUri:
    """What a ``sylk:`` URI names: ``kind`` (document or commit) and its ``key`` (the
    document's id, the commit's sha)."""

    kind: str
    key: str

    def __str__(self) -> str:
        return f"{SCHEME}://{self.kind}/{quote(self.key, safe='/')}"


def document_uri(id: str) -> str:
    return str(SylkUri(DOCUMENT, id))


def commit_uri(sha: str) -> str:
    return str(SylkUri(COMMIT, sha))


def path_uri(root: Path, path: str) -> str:
    """The URI of an indexed path of the folder ``root``: a file's, or a virtual document's."""
    return document_uri(doc_id(path)) if is_virtual(path) else convert.path_to_uri(root, path)


def parse(uri: str) -> SylkUri:
    """The document or commit ``uri`` names; UriError if it is not one of ours."""
    parts = urlsplit(uri)
    if parts.scheme != SCHEME:
        raise UriError(f"expected a {SCHEME}:// URI (sylk://document/<id> or sylk://commit/<sha>), got {uri[:100]!r}")
    if parts.netloc not in KINDS:
        raise UriError(f"expected sylk://document/<id> or sylk://commit/<sha>, got {uri[:100]!r}")
    try:
        key = unquote(parts.path[1:], errors="strict") if parts.path.startswith("/") else ""
    except UnicodeDecodeError:
        raise UriError(f"its percent-escapes are not UTF-8: {uri[:100]!r}") from None
    if not key or parts.query or parts.fragment:
        raise UriError(f"expected sylk://{parts.netloc}/<{'id' if parts.netloc == DOCUMENT else 'sha'}> and "
                       f"nothing after it, got {uri[:100]!r}")
    if parts.netloc == COMMIT and not _SHA.match(key):
        raise UriError(f"a commit's sha is 40 hexadecimal digits, got {key[:60]!r}")
    return SylkUri(parts.netloc, key)
