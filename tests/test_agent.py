"""Agent options of sylk/search: expand, groupBy, relatedFiles, followUps, summary
(pure functions, then end to end over stdio on the fixture workspace)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import start, wait_for_progress_end
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from sylk.search import agent
from sylk.params import request_from_params
from sylk.search.values import QueryError
from sylk.search.results import Commit, Hit


def test_expand_splits_identifiers_and_adds_synonyms_without_repeating_the_query():
    terms = agent.expand_terms("getUserById delete")
    assert terms[:4] == ("get", "user", "by", "id")
    assert "remove" in terms and "fetch" in terms
    assert "delete" not in terms and len(terms) <= agent.MAX_EXPANDED
    assert agent.expand_terms("zzz qqq") == ()


def _hit(path: str, language: str = "python", kind: str = "function", type: str = "source_code") -> Hit:
    return Hit(id=0, path=path, language=language, type=type, kind=kind, symbol="name", container="", start_line=0,
               end_line=1, score=1.0, lexical_rank=1, semantic_rank=None,
               commit=Commit("0" * 40, ()) if type == "git_commit" else None)


def test_group_by_keeps_the_order_of_each_groups_best_hit():
    hits = [_hit("a/x.py", "python", "function"), _hit("b/y.go", "go", "method"), _hit("a/x.py", "python", "class")]
    assert agent.group(hits, "file") == [agent.Group("a/x.py", 2, (0, 2)), agent.Group("b/y.go", 1, (1,))]
    assert [g.value for g in agent.group(hits, "folder")] == ["a", "b"]
    assert [g.value for g in agent.group(hits, "kind")] == ["function", "method", "class"]


def test_summary_counts_the_returned_hits_and_a_commit_has_no_language():
    hits = [_hit("a/x.py"), _hit("a/x.py", kind="class"), _hit("", "git", "commit", "git_commit")]
    s = agent.summary(hits, 40)
    assert (s.total_hits, s.returned, s.files) == (40, 3, 2)
    assert s.top_files == {"a/x.py": 2, None: 1}
    assert s.languages == {"python": 2, "text": 1} and s.kinds == {"function": 1, "class": 1, "commit": 1}
    assert [g.value for g in agent.group(hits, "language")] == ["python", "text"]


def test_request_options_are_validated_naming_the_field():
    with pytest.raises(QueryError, match="groupBy"):
        request_from_params({"query": "x", "groupBy": "colour"})
    with pytest.raises(QueryError, match="relatedFiles"):
        request_from_params({"query": "x", "relatedFiles": "yes"})
    req = request_from_params({"query": "retryPolicy", "expand": True, "summary": True})
    assert req.extra_terms[:2] == ("retry", "policy") and req.summary


@pytest.mark.parametrize(("language", "importer", "text", "files", "want"), [
    ("python", "app/cli.py", "from .repository import UserRepository\nimport app.http\nimport os\n",
     {"app/repository.py", "app/http.py"}, {".repository": "app/repository.py", "app.http": "app/http.py", "os": None}),
    ("python", "pkg/sub/m.py", "from ..core import x\n", {"pkg/core/__init__.py"}, {"..core": "pkg/core/__init__.py"}),
    ("typescript", "web/src/cart.ts", "import { a } from './session';\nimport React from 'react';\n",
     {"web/src/session.ts"}, {"./session": "web/src/session.ts", "react": None}),
    ("c", "native/ring_buffer.c", '#include "ring_buffer.h"\n#include <stdlib.h>\n',
     {"native/ring_buffer.h"}, {"ring_buffer.h": "native/ring_buffer.h"}),
    ("java", "a/B.java", "import com.acme.billing.InvoiceService;\nimport java.util.List;\n",
     {"java/com/acme/billing/InvoiceService.java"},
     {"com.acme.billing.InvoiceService": "java/com/acme/billing/InvoiceService.java", "java.util.List": None}),
    ("go", "cmd/main.go", 'import (\n\t"fmt"\n\tgeo "example.com/shop/services/geo"\n)\n',
     {"services/geo/point.go"}, {"fmt": None, "example.com/shop/services/geo": "services/geo/"}),
    ("rust", "src/main.rs", "use crate::limiter::TokenBucket;\nuse std::time::Duration;\n",
     {"src/limiter.rs"}, {"crate::limiter::TokenBucket": "src/limiter.rs", "std::time::Duration": None}),
])
def test_imports_resolve_to_workspace_files(language, importer, text, files, want):
    found = {e.module: e.path for e in agent.related_files(
        [_hit(importer, language)], lambda p: text, files | {importer})}
    assert found == want


def test_related_files_never_read_a_virtual_document():
    """A virtual document (sylk:/<id>) has no file: its path is never handed to ``read``
    (joined to the root it could name a real file, or nothing) and it imports nothing."""
    asked: list[str] = []

    def read(path: str) -> str:
        asked.append(path)
        return "import json\nfrom app import models\n"
    found = agent.related_files([_hit("sylk:/notes/users", "markdown"), _hit("sylk:/chat/7", "python"),
                                 _hit("app/views.py", "python")], read, {"app/views.py", "app/models.py"})
    assert asked == ["app/views.py"]
    assert found and all(f.imported_by == ("app/views.py",) for f in found)


def test_follow_ups_suggest_filters_from_facets_and_help_when_nothing_matched():
    facets = {"language": [("python", 8), ("go", 2)], "folder": [("app", 7), ("services", 3)],
              "kind": [("method", 6), ("function", 4)]}
    ups = agent.follow_ups("retry", "hybrid", facets, 10, semantic_ready=True, expanded=False)
    queries = [u.query for u in ups]
    assert "lang:python retry" in queries and "path:app/** retry" in queries and "kind:function retry" in queries
    none = agent.follow_ups("zzz", "lexical", {}, 0, semantic_ready=True, expanded=False)
    assert [u.options for u in none] == ["expand", "mode=semantic", "fuzzy"]


@pytest.fixture
async def served(workspace: Path, _isolated_index: Path):
    (workspace / "app/service.py").write_text(
        "from .repository import UserRepository\nfrom app.http import HttpRetryPolicy\nimport json\n\n\n"
        "def load_user_profile(repo: UserRepository, user_id):\n    return repo.get_user_by_id(user_id)\n")
    client = await start(workspace, _isolated_index, "visual-studio-code")
    await wait_for_progress_end(client)
    yield client
    await client.shutdown_session()
    await client.stop()


async def test_agent_options_over_stdio(served: LanguageClient):
    r = await served.protocol.send_request_async("sylk/search", {
        "query": "loadUserProfile", "mode": "lexical", "expand": True, "groupBy": "file",
        "relatedFiles": True, "followUps": True, "summary": True, "limit": 10})
    assert list(r.expandedTerms)[:3] == ["load", "user", "profile"]
    paths = [h.path for h in r.hits]
    assert paths[0] == "app/service.py"
    assert len(paths) > 1  # the expanded words find more than the one identifier
    groups = {g.value: list(g.hits) for g in r.groups}
    assert groups["app/service.py"][0] == 0 and sum(len(v) for v in groups.values()) == len(paths)
    related = {f.path: f for f in r.relatedFiles if f.path}
    assert "app/repository.py" in related and "app/http.py" in related
    assert "app/service.py" in related["app/repository.py"].importedBy
    assert any(f.path is None and f.module == "json" for f in r.relatedFiles)
    assert r.summary.returned == len(paths) and r.summary.files == len(set(paths))
    assert r.summary.topFiles[0].path in paths
    # follow-ups: the refinements the answer's own facets suggest, each a ready query
    languages, folders = list(r.facets.language), list(r.facets.folder)
    n, all_ = languages[0].count, sum(v.count for v in languages)
    assert languages[0].value == "python" and folders[0].value == "app" and n < all_
    ups = [(u.query, u.options) for u in r.followUps]
    assert ups == [("lang:python loadUserProfile", ""), ("path:app/** loadUserProfile", ""),
                   ("kind:function loadUserProfile", "")]
    assert list(r.followUps)[0].reason == f"{n} of {all_} candidates are python"
    narrowed = await served.protocol.send_request_async("sylk/search", {
        "query": r.followUps[0].query, "mode": "lexical", "expand": True, "limit": 10})
    assert narrowed.hits and narrowed.hits[0].path == "app/service.py"
    assert {h.language for h in narrowed.hits} == {"python"}
    # nothing matched: the help an agent gets (embedding is off: no semantic retry offered)
    none = await served.protocol.send_request_async("sylk/search", {
        "query": "zzqqxxj", "mode": "lexical", "followUps": True})
    assert none.hits == [] and [(u.query, u.options) for u in none.followUps] == [("zzqqxxj", "expand"),
                                                                               ("zzqqxxj", "fuzzy")]
    with pytest.raises(JsonRpcException, match="groupBy"):
        await served.protocol.send_request_async("sylk/search", {"query": "x", "groupBy": "colour"})


@pytest.mark.parametrize(("kind", "name", "container", "path", "want"), [
    ("class", "UserRepository", "", "app/repository.py", ("repository",)),
    ("method", "get_user_by_id", "UserRepository", "app/repository.py", ("repository",)),
    ("function", "test_backoff", "", "tests/test_http.py", ("test",)),
    ("function", "helper", "", "pkg/thing_test.go", ("test",)),
    ("method", "HandlesEmptyCart", "CartSpec", "web/src/cart.spec.js", ("test",)),
    ("class", "OrderService", "", "dotnet/OrderProcessor.cs", ("service",)),
    ("function", "handle_webhook", "", "app/hooks.py", ("handler",)),
    ("class", "CheckoutController", "", "web/checkout.ts", ("handler",)),
    ("class", "MigrateCommand", "", "cli/migrate.py", ("command",)),
    ("class", "OpenInvoicesQuery", "", "billing/queries.py", ("query",)),
    ("class", "InvoiceModel", "", "billing/models.py", ("entity",)),
    ("function", "restore", "", "app/backup.py", ()),
    ("function", "once", "", "web/util.js", ()),
])
def test_roles_from_names_and_paths(kind, name, container, path, want):
    from sylk.search.roles import roles_of

    assert roles_of(kind, name, container, path) == want


def test_roles_filter_holds_and_unknown_roles_are_named(workspace: Path):
    from sylk.config import Settings
    from sylk.engine.workspace import Workspace
    from sylk.search.query import SearchRequest

    ws = Workspace(workspace, Settings())
    ws.index()
    req = request_from_params({"query": "user", "mode": "lexical", "filters": {"roles": ["repository"]}, "limit": 50})
    hits = ws.search(req).hits
    from sylk.search.roles import roles_of

    assert all("repository" in roles_of(h.kind, h.symbol, h.container, h.path) for h in hits)
    names = {h.symbol for h in hits}
    assert {"UserRepository", "get_user_by_id"} <= names and "User" not in names
    assert "SessionStore" in names  # a store is repository code too
    inline = request_from_params({"query": "role:repository user", "mode": "lexical"})
    assert inline.filters.roles == ("repository",) and inline.query == "user"
    with pytest.raises(QueryError, match="filters.roles: unknown role 'helper'"):
        request_from_params({"query": "x", "filters": {"roles": ["helper"]}})
    assert ws.search(SearchRequest("user", "lexical")).hits  # without the filter: more than the repository
    ws.close()
