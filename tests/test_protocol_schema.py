"""The protocol's one description (server/sylk/lsp/protocol.schema.json, issue 13): the
real server's answers are valid against it, the editors' samples are made from it and
current, and the values it lists are the server's own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import TIMEOUT, git_commit, raw_until
from sylk import model
from sylk.model import GROUP_BY

REPO = Path(__file__).resolve().parent.parent
SCHEMA_PATH = REPO / "server" / "sylk" / "lsp" / "protocol.schema.json"
SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
SAMPLES = REPO / "editors" / "protocol-samples.json"


def errors(definition: str, instance: Any) -> list[str]:
    """What is wrong with ``instance`` as the schema's ``definition`` (empty: valid)."""
    validator = jsonschema.Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": SCHEMA["$defs"]})
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in validator.iter_errors(instance)]


def test_the_schema_is_a_valid_json_schema_and_lists_the_servers_own_values():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    params = SCHEMA["$defs"]["SearchParams"]["properties"]
    assert tuple(params["mode"]["enum"]) == model.SEARCH_MODES + model.LINE_MODES
    assert tuple(params["groupBy"]["enum"]) == GROUP_BY
    for o in model.OPTIONS:  # each option of a ranked search, as the table says
        assert params[o.wire]["description"] == o.about[0].upper() + o.about[1:], o.wire
        shape = {"enum": list(o.choices)} if o.choices else {"type": "boolean"}
        assert {k: v for k, v in params[o.wire].items() if k != "description"} == shape, o.wire
    assert set(SCHEMA["$defs"]["QueryExplain"]["properties"]["fusion"]["enum"]) == {*model.FUSIONS, "lexical",
                                                                                     "semantic"}
    assert tuple(SCHEMA["$defs"]["QueryExplain"]["properties"]["ranking"]["items"]["enum"]) == model.RANKING_STAGES
    file_types = SCHEMA["$defs"]["SearchHit"]["allOf"][1]["if"]["properties"]["type"]["enum"]
    assert tuple(file_types) == model.FILE_TYPES


def test_the_editors_samples_are_current_and_valid():
    check = subprocess.run([sys.executable, str(REPO / "editors" / "protocol_samples.py"), "--check"],
                           capture_output=True, text=True, timeout=TIMEOUT)
    assert check.returncode == 0, check.stderr
    samples = json.loads(SAMPLES.read_text(encoding="utf-8"))
    types = {s["hit"]["type"] for s in samples["hits"]}
    assert {"source_code", "markdown", "config", "text", "git_commit"} <= types and types - set(model.FILE_TYPES)
    for s in samples["hits"]:
        assert errors("SearchHit", s["hit"]) == [], s["name"]
    for s in samples["results"]:
        assert errors("SearchResult", s["result"]) == [], s["name"]
    for s in samples["statuses"]:
        assert errors("Status", s["status"]) == [], s["name"]
    assert samples["lineHits"] and samples["lineResults"]
    for s in samples["lineHits"]:
        assert errors("LineHit", s["hit"]) == [], s["name"]
    for s in samples["lineResults"]:
        assert errors("LineSearchResult", s["result"]) == [], s["name"]


def test_a_hit_the_schema_does_not_describe_is_refused():
    """The check can fail: a field the server adds without describing it, a wrong type,
    a commit with a range."""
    good = json.loads(SAMPLES.read_text(encoding="utf-8"))["hits"][0]["hit"]
    assert errors("SearchHit", {**good, "newField": 1})
    assert errors("SearchHit", {**good, "score": "high"})
    commit = next(s["hit"] for s in json.loads(SAMPLES.read_text(encoding="utf-8"))["hits"]
                  if s["hit"]["type"] == "git_commit")
    assert errors("SearchHit", {**commit, "range": good["range"]})
    note = next(s["hit"] for s in json.loads(SAMPLES.read_text(encoding="utf-8"))["hits"]
                if s["hit"]["type"] == "note")
    assert errors("SearchHit", {k: v for k, v in note.items() if k != "document"})


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A git repository with code, Markdown, a config file, plain text and two commits."""
    root = tmp_path / "shop"
    (root / "src").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "config").mkdir()
    (root / "src" / "retry.py").write_text(
        "import json\n\n\nclass RetryPolicy:\n    \"\"\"How often a failed payment call is retried.\"\"\"\n\n"
        "    def should_retry(self, attempt: int) -> bool:\n        return attempt < 3\n\n\n"
        "def backoff_delay(attempt: int) -> float:\n    return 0.1 * 2 ** attempt\n")
    (root / "docs" / "retries.md").write_text("# Operations\n\n## Retries\n\nFailed payment calls retry three times "
                                              "with an exponential backoff delay.\n")
    (root / "config" / "app.yaml").write_text("retry:\n  limit: 3\n  backoff: exponential\n")
    (root / "NOTES.txt").write_text("retry the payment call before giving up\n")
    subprocess.run(["git", "-C", str(root), "init", "-q"], check=True)
    git_commit(root, "Ada Lovelace", "Retry payments with exponential backoff")
    (root / "NOTES.txt").write_text("retry the payment call before giving up, then alert\n")
    git_commit(root, "Bob Stone", "Alert after the last payment retry")
    return root


REQUESTS: list[dict[str, Any]] = [
    {"query": "retry payment backoff", "explain": True, "facets": True, "relatedFiles": True, "groupBy": "file",
     "followUps": True, "summary": True, "expand": True, "limit": 20},
    {"query": "should_retry", "mode": "lexical", "filters": {"languages": ["python"], "kinds": ["method"]}},
    {"query": "exponential backoff delay", "mode": "semantic", "explain": True},
    {"query": "payment retry", "filters": {"types": ["git_commit", "source_code"]}, "explain": True},
    {"query": "author:Ada retry", "filters": {"types": ["git_commit"]}},
    {"query": "type:note payment retries", "mode": "lexical"},
    {"query": "nothing matches zzzqqq", "mode": "lexical"},
]


def test_the_servers_answers_are_valid_against_the_schema(raw_lsp: Any, shop: Path):
    server = raw_lsp()
    server.initialize(shop)
    ids = iter(range(1, 10_000))

    def embedded(answer: dict[str, Any]) -> bool:
        status = answer["result"]
        assert errors("Status", status) == []  # every status on the way is valid too
        return bool(status["ready"] and status["chunks"] and status["embedded"] == status["chunks"])

    raw_until(server, "sylk/status", {}, embedded, "every chunk indexed and embedded")
    assert errors("StatusParams", {"skipped": "all"}) == []
    assert errors("Status", server.request(next(ids), "sylk/status", {"skipped": "all"})["result"]) == []
    # the history is read after the files
    raw_until(server, "sylk/search", {"query": "retry", "filters": {"types": ["git_commit"]}},
              lambda found: len(found["result"]["hits"]) >= 2, "both commits searchable")
    note = server.request(next(ids), "sylk/indexDocument", {
        "id": "prompt-1", "type": "note", "title": "Payment retries", "text": "Ask about payment retries.",
        "tags": ["backend"], "metadata": {"source": "chat"}})
    assert "error" not in note, note
    seen_types: set[str] = set()
    for params in REQUESTS:
        assert errors("SearchParams", params) == [], params
        answer = server.request(next(ids), "sylk/search", params)
        assert "error" not in answer, (params, answer)
        assert errors("SearchResult", answer["result"]) == [], params
        seen_types |= {h["type"] for h in answer["result"]["hits"]}
        for hit in answer["result"]["hits"]:
            if hit["uri"].startswith("sylk://"):  # what an editor does to open it
                assert errors("DocumentTextParams", {"uri": hit["uri"]}) == []
                text = server.request(next(ids), "sylk/documentText", {"uri": hit["uri"]})
                assert "error" not in text, (hit["uri"], text)
                assert errors("DocumentText", text["result"]) == [], hit["uri"]
    # every kind of hit the editors must render was checked
    assert {"source_code", "markdown", "config", "text", "git_commit", "note"} <= seen_types
    for params in LINE_REQUESTS:
        assert errors("SearchParams", params) == [], params
        answer = server.request(next(ids), "sylk/search", params)
        assert "error" not in answer, (params, answer)
        assert errors("LineSearchResult", answer["result"]) == [], params
        assert answer["result"]["hits"] or params["query"] == "zzzqqq", params


LINE_REQUESTS: list[dict[str, Any]] = [
    {"query": "attempt < 3", "mode": "exact"},
    {"query": r"def \w+\(", "mode": "regex", "caseSensitive": True, "filters": {"kinds": ["method"]}},
    {"query": "RETRY", "mode": "exact", "caseSensitive": False, "wholeWord": True, "limit": 2, "offset": 1},
    {"query": ".*", "mode": "regex", "filters": {"paths": ["docs/**"], "types": ["markdown"]}},
    {"query": "lang:python /return \\w+/"},
    {"query": "zzzqqq", "mode": "exact"},
]
