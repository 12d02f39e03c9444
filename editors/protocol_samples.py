"""Writes editors/protocol-samples.json: answers of sylk/search and sylk/status made from
the protocol's schema (server/sylk/lsp/protocol.schema.json), for the editors' tests.

    python editors/protocol_samples.py          # rewrite the file
    python editors/protocol_samples.py --check  # exit 1 if it is not current

Each object comes twice: with every property (the schema's example value where it gives
one) and with only the required ones (null where null is allowed). Hits come once per
document type a hit can have: each file type, a commit, and a virtual document. The line
hits and results of the modes exact and regex (LineHit, LineSearchResult) are under
lineHits and lineResults: matches after non-ASCII text (UTF-16 columns), a line outside
any symbol, a line with only empty matches; a partial answer and an empty one. The
VS Code tests (test/protocol.test.ts) and the Neovim tests (nvim/tests/protocol.lua)
render every sample; tests/test_protocol_schema.py checks that this file is current and
that every sample is valid, and validates the real server's answers against the schema.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCHEMA = HERE.parent / "server" / "sylk" / "lsp" / "protocol.schema.json"
OUT = HERE / "protocol-samples.json"

# per document type: the fields that differ from the schema's examples (a source_code hit)
HIT_TYPES: dict[str, dict[str, Any]] = {
    "source_code": {},
    "markdown": {"uri": "file:///home/ada/shop/docs/retries.md", "path": "docs/retries.md", "language": "markdown",
                 "type": "markdown", "kind": "section", "symbol": "Retries", "containerName": "Operations",
                 "roles": ["docs"], "snippet": "## Retries\nFailed calls are retried three times.", "exported": False},
    "config": {"uri": "file:///home/ada/shop/config/app.yaml", "path": "config/app.yaml", "language": "yaml",
               "type": "config", "kind": "key", "symbol": "retry.limit", "containerName": None, "roles": ["config"],
               "snippet": "retry:\n  limit: 3", "exported": False},
    "text": {"uri": "file:///home/ada/shop/NOTES.txt", "path": "NOTES.txt", "language": "text", "type": "text",
             "kind": "window", "symbol": None, "containerName": None, "roles": [],
             "snippet": "retry the payment call before giving up", "exported": False},
    "git_commit": {"uri": "sylk://commit/4b825dc642cb6eb9a060e54bf8d69288fbee4904", "path": "src/retry.py",
                   "language": None, "type": "git_commit", "kind": "commit", "symbol": "4b825dc642cb",
                   "containerName": None, "roles": [], "range": None, "snippetRange": None, "highlights": [],
                   "semanticRank": None, "snippet": "Retry payments on 503\n\nThe gateway sheds load.",
                   "commit": {"sha": "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "files": ["src/retry.py"]},
                   "exported": False},
    "note": {"uri": "sylk://document/prompt-1", "path": "sylk:/prompt-1", "language": None, "type": "note",
             "kind": "window", "symbol": None, "containerName": None, "roles": [],
             "snippet": "Ask about retries in the payment gateway.", "exported": False,
             "document": {"id": "prompt-1", "type": "note", "title": "Payment retries", "tags": ["backend"],
                          "metadata": {"source": "chat"}, "created": 1763800000.5}},
}
# fields a full sample of a commit or a virtual document leaves out (the server never sends them)
NOT_FOR = {"git_commit": ("document", "tags"), "note": ("commit",)}
FILE_ONLY = ("document", "commit")


def load_schema() -> dict[str, Any]:
    return json.loads(SCHEMA.read_text(encoding="utf-8"))


class Maker:
    """Instances of the schema's definitions, full or with the required properties only."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            target: Any = self.schema
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            node = target
        return node

    def make(self, node: dict[str, Any], full: bool) -> Any:
        node = self.resolve(node)
        if "examples" in node:
            return copy.deepcopy(node["examples"][0])
        if "enum" in node:
            return node["enum"][0]
        if "oneOf" in node:
            alts = [self.resolve(a) for a in node["oneOf"]]
            nulls = [a for a in alts if a.get("type") == "null"]
            if not full and nulls:
                return None
            return self.make(next(a for a in alts if a.get("type") != "null"), full)
        types = node.get("type", "object")
        types = [types] if isinstance(types, str) else list(types)
        if not full and "null" in types:
            return None
        kind = next(t for t in types if t != "null")
        if kind == "object":
            props = node.get("properties", {})
            names = list(props) if full else list(node.get("required", []))
            out = {name: self.make(props[name], full) for name in names}
            extra = node.get("additionalProperties")
            if not props and isinstance(extra, dict):
                out = {"python": self.make(extra, full)} if full else {}
            return out
        if kind == "array":
            return [self.make(node["items"], full)] if full else []
        return {"string": "text", "integer": 1, "number": 1.5, "boolean": True}[kind]


def hits(maker: Maker) -> list[dict[str, Any]]:
    hit_def = {"$ref": "#/$defs/SearchHit"}
    out = []
    for type_, changes in HIT_TYPES.items():
        for full in (True, False):
            hit = maker.make(hit_def, full)
            hit.update(copy.deepcopy(changes))
            drop = NOT_FOR.get(type_, FILE_ONLY)
            for name in drop:
                hit.pop(name, None)
            if not full:  # required fields only: the type's own blocks stay (the schema requires them)
                for name in ("explain", "tags"):
                    hit.pop(name, None)
                if type_ != "git_commit":
                    hit["range"] = hit["snippetRange"] = maker.make({"$ref": "#/$defs/Range"}, True)
            out.append({"name": f"{type_}, {'every field' if full else 'required fields only'}", "hit": hit})
    stale = copy.deepcopy(out[0]["hit"])
    stale.update(stale=True, snippet="", highlights=[])
    out.append({"name": "source_code, stale (its file changed since it was indexed)", "hit": stale})
    return out


def utf16(text: str) -> int:
    """The length of ``text`` in UTF-16 code units (what the protocol's columns count)."""
    return len(text.encode("utf-16-le")) // 2


def line_hit(maker: Maker, line: int, text: str, needle: str, **changes: Any) -> dict[str, Any]:
    """A LineHit on ``line`` whose matches are every occurrence of ``needle`` in ``text``
    (none: an empty match at column 0), with its UTF-16 columns."""
    hit = maker.make({"$ref": "#/$defs/LineHit"}, True)
    hit.update(changes, line=line, text=text)
    matches, start = [], text.find(needle) if needle else -1
    while start >= 0:
        a, b = utf16(text[:start]), utf16(text[:start + len(needle)])
        matches.append({"start": {"line": line, "character": a}, "end": {"line": line, "character": b}})
        start = text.find(needle, start + len(needle))
    hit["matches"] = matches
    hit["range"] = copy.deepcopy(matches[0]) if matches else {"start": {"line": line, "character": 0},
                                                              "end": {"line": line, "character": 0}}
    return hit


def line_hits(maker: Maker) -> list[dict[str, Any]]:
    return [
        {"name": "source_code, two matches after non-ASCII text and an emoji",
         "hit": line_hit(maker, 11, '        note = "réessayer 🔁"; return should_retry(attempt) or should_retry(0)',
                         "should_retry", symbol="run", containerName="RetryPolicy", kind="method")},
        {"name": "text, a line outside any symbol",
         "hit": line_hit(maker, 0, "retry the payment call before giving up", "retry",
                         uri="file:///home/ada/shop/NOTES.txt", path="NOTES.txt", language="text", type="text",
                         symbol="", containerName="", kind=None)},
        {"name": "markdown, a line with only empty matches (^)",
         "hit": line_hit(maker, 1, "", "", uri="file:///home/ada/shop/docs/retries.md", path="docs/retries.md",
                         language="markdown", type="markdown", symbol="Operations", containerName="",
                         kind="section")},
    ]


def line_results(maker: Maker, hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    result_def = {"$ref": "#/$defs/LineSearchResult"}
    partial = maker.make(result_def, True)
    partial.update(query=r"should_\w+", mode="regex", hits=[h["hit"] for h in hits], totalHits=40,
                   totalHitsLowerBound=True, scanned=True, partial=True, filesSearched=12,
                   message="the pattern has no literal of 3 or more characters to look up: every indexed file was "
                           "read; stopped after 2 s: the answer is partial")
    unexplained = maker.make(result_def, False)  # the flags without a message: the editor says what they mean
    unexplained.update(query=r"\d{3}", mode="regex", hits=[h["hit"] for h in hits[:2]], totalHits=2,
                       totalHitsLowerBound=True, scanned=True, partial=True, filesSearched=5)
    complete = maker.make(result_def, False)
    complete.update(query="should_retry(", mode="exact", hits=[hits[0]["hit"]], totalHits=2,
                    totalHitsLowerBound=False, scanned=False, partial=False, filesSearched=3)
    empty = maker.make(result_def, False)
    empty.update(query="zzzqqq", mode="exact", hits=[], totalHits=0, totalHitsLowerBound=False, scanned=False,
                 partial=False, filesSearched=0)
    return [{"name": "every field (partial, a lower bound, scanned)", "result": partial},
            {"name": "required fields only, partial, a lower bound, scanned (no message)", "result": unexplained},
            {"name": "required fields only, complete", "result": complete},
            {"name": "required fields only, no match", "result": empty}]


def samples() -> dict[str, Any]:
    maker = Maker(load_schema())
    all_hits = hits(maker)
    full = maker.make({"$ref": "#/$defs/SearchResult"}, True)
    full["hits"] = [h["hit"] for h in all_hits]
    full["totalHits"] = len(all_hits)
    full["groups"] = [{"value": "src/retry.py", "count": 2, "hits": [0, 1]}]
    empty = maker.make({"$ref": "#/$defs/SearchResult"}, False)
    empty["message"] = "semantic search is not ready yet: no chunk is embedded"
    all_line_hits = line_hits(maker)
    status_full = maker.make({"$ref": "#/$defs/Status"}, True)
    status_full["folders"] = [maker.make({"$ref": "#/$defs/FolderStatus"}, True)]
    return {
        "note": "Made by editors/protocol_samples.py from server/sylk/lsp/protocol.schema.json; do not edit.",
        "hits": all_hits,
        "results": [{"name": "every field", "result": full}, {"name": "required fields only", "result": empty}],
        "lineHits": all_line_hits,
        "lineResults": line_results(maker, all_line_hits),
        "statuses": [{"name": "every field", "status": status_full},
                     {"name": "required fields only", "status": maker.make({"$ref": "#/$defs/Status"}, False)}],
    }


def render() -> str:
    return json.dumps(samples(), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is not current: run python editors/protocol_samples.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
