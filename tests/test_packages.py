"""Packages as a search dimension (issue 17): every file's package by its language's rule
(ingest/packages.py), and the package filter, inline ``package:``, the facet, ``groupBy``
and the field on every hit, in the engine, over stdio, in the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TIMEOUT, start_lsp, wait_for_progress_end, write_tree
from sylk.config import Settings
from sylk.engine.workspace import Workspace
from sylk.ingest.packages import ancestors, package_of, within
from sylk.params import request_from_params
from sylk.search.query import Filters, GrepRequest, SearchRequest
from sylk.search.values import QueryError
from sylk.search.inline import parse_inline

FILES = {
    "gosvc/go.mod": "module example.com/gosvc\n\ngo 1.21\n",
    "gosvc/main.go": "package main\n\nfunc main() { ledgerMain() }\n\nfunc ledgerMain() {}\n",
    "gosvc/internal/db/db.go": "// Package db.\npackage db\n\nfunc OpenLedger() {}\n",
    "loose/loose.go": "package loosely\n\nfunc LedgerLoose() {}\n",
    "web/package.json": '{"name": "@acme/web", "version": "1.0.0"}\n',
    "web/src/nested/package.json": '{"private": true}\n',  # no name: the next one up counts
    "web/src/nested/view.ts": "export function ledgerView(): number { return 1 }\n",
    "crate/Cargo.toml": '[package]\nname = "ledger-core"\nversion = "0.1.0"\n',
    "crate/src/lib.rs": "pub fn ledger_total() -> u32 { 1 }\n",
    "ws/Cargo.toml": '[workspace]\nmembers = ["x"]\n',  # a workspace only: no crate
    "ws/x/src/main.rs": "fn ledger_ws() {}\n",
    "pylib/shop/__init__.py": "",
    "pylib/shop/billing/__init__.py": "def ledger_package():\n    pass\n",
    "pylib/shop/billing/invoice.py": "def ledger_invoice():\n    return 1\n",
    "tools/ledger_tool.py": "def ledger_tool():\n    pass\n",
    "javasrc/com/acme/LedgerBook.java": "// a book\npackage com.acme.books;\n\npublic class LedgerBook {}\n",
    "cs/Ledger.cs": "namespace Acme.Ledgers\n{\n    public class LedgerCs {}\n}\n",
    "native/ledger.c": "int ledger_c(void) { return 0; }\n",
    "ledger_root.py": "def ledger_root():\n    pass\n",
}
EXPECTED = {
    "gosvc/main.go": "example.com/gosvc",
    "gosvc/internal/db/db.go": "example.com/gosvc/internal/db",
    "loose/loose.go": "loosely",
    "web/src/nested/view.ts": "@acme/web",
    "crate/src/lib.rs": "ledger-core",
    "ws/x/src/main.rs": "ws/x/src",
    "pylib/shop/billing/__init__.py": "shop.billing",
    "pylib/shop/billing/invoice.py": "shop.billing.invoice",
    "tools/ledger_tool.py": "ledger_tool",
    "javasrc/com/acme/LedgerBook.java": "com.acme.books",
    "cs/Ledger.cs": "Acme.Ledgers",
    "native/ledger.c": "native",
    "ledger_root.py": "ledger_root",
    "crate/Cargo.toml": "crate",
}
NO_EMBED = {"embedding": {"enabled": False}}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "pk", FILES)


@pytest.fixture
def ws(root: Path, tmp_path: Path):
    w = Workspace(root, Settings(index_dir=str(tmp_path / "index")))
    w.index()
    yield w
    w.close()


def _language(rel: str) -> str | None:
    from sylk.languages import language_for_path
    return language_for_path(rel)


def test_each_languages_rule(root: Path):
    got = {rel: package_of(str(root), rel, _language(rel), (root / rel).read_bytes()) for rel in EXPECTED}
    assert got == EXPECTED


def test_a_changed_manifest_is_read_again(root: Path):
    rel = "web/src/nested/view.ts"
    assert package_of(str(root), rel, "typescript", b"") == "@acme/web"
    (root / "web/package.json").write_text('{"name": "@acme/website"}\n', encoding="utf-8")
    os.utime(root / "web/package.json", ns=(1, 1))  # (a new stamp even within the clock's resolution)
    assert package_of(str(root), rel, "typescript", b"") == "@acme/website"
    (root / "web/package.json").write_text("{not json", encoding="utf-8")
    os.utime(root / "web/package.json", ns=(2, 2))
    assert package_of(str(root), rel, "typescript", b"") == "web/src/nested"  # unreadable: the folder


def test_ancestors_and_within():
    assert ancestors("shop.billing.invoice") == ["shop", "shop.billing", "shop.billing.invoice"]
    assert ancestors("example.com/app/db") == ["example", "example.com", "example.com/app", "example.com/app/db"]
    assert ancestors("@acme/web") == ["@acme", "@acme/web"]
    assert ancestors("ledger-core") == ["ledger-core"]
    assert within("shop.billing", "shop") and within("shop", "shop") and within("a/b", "a")
    assert not within("shopping", "shop") and not within("shop", "shop.billing")
    # the index's rule (a term for each ancestor) and the engine's agree
    for pkg in EXPECTED.values():
        for other in ("shop", "example.com/gosvc", "@acme", "com.acme", "native", "ws/x"):
            assert within(pkg, other) == (other in ancestors(pkg))


def test_filters_facets_groups_and_hits(ws: Workspace):
    def paths(**filters) -> list[str]:
        res = ws.search(SearchRequest("ledger", mode="lexical", limit=50, filters=Filters(**filters)))
        return sorted({h.path for h in res.hits})

    everything = ws.search(SearchRequest("ledger", mode="lexical", limit=50, facets=True))
    assert {h.path: h.package for h in everything.hits if h.path in EXPECTED} == {
        p: EXPECTED[p] for p in {h.path for h in everything.hits} if p in EXPECTED}
    assert ("shop.billing.invoice", 1) in everything.facets["package"]
    assert paths(packages=("shop",)) == ["pylib/shop/billing/__init__.py", "pylib/shop/billing/invoice.py"]
    assert paths(packages=("shop.billing.invoice",)) == ["pylib/shop/billing/invoice.py"]
    assert paths(packages=("example.com/gosvc",)) == ["gosvc/internal/db/db.go", "gosvc/main.go"]
    assert paths(packages=("example.com/gosvc/internal/db", "@acme")) == [
        "gosvc/internal/db/db.go", "web/src/nested/view.ts"]
    assert paths(packages=("sho",)) == []  # a package is whole: no prefix of a name
    missing = ws.search(SearchRequest("ledger", mode="lexical", filters=Filters(packages=("nosuch",))))
    assert missing.hits == [] and "nosuch" in (missing.message or "")
    # inline, and a line search
    text, inline = parse_inline("package:com.acme ledger")
    assert (text, inline.packages) == ("ledger", ("com.acme",))
    lines = ws.grep(GrepRequest("ledger", mode="exact", case=False, limit=None,
                                filters=Filters(packages=("ledger-core", "Acme"))))
    assert sorted({h.path for h in lines.hits}) == ["crate/src/lib.rs", "cs/Ledger.cs"]


def test_request_parsing():
    req = request_from_params({"query": "x package:shop", "filters": {"packages": ["a.b"]}, "groupBy": "package"})
    assert req.filters.packages == ("a.b", "shop") and req.group_by == "package"
    with pytest.raises(QueryError) as err:
        request_from_params({"query": "x", "filters": {"packages": [3]}})
    assert err.value.field == "filters.packages"


async def test_packages_over_stdio(root: Path, _isolated_index: Path):
    """The filter, inline package:, groupBy package, the facet and each hit's package field."""
    client = await start_lsp(root, _isolated_index, "visual-studio-code", NO_EMBED)
    try:
        await wait_for_progress_end(client)

        async def search(params: dict) -> dict:
            return await client.protocol.send_request_async("sylk/search", params)

        got = await search({"query": "ledger", "mode": "lexical", "limit": 50, "facets": True, "groupBy": "package",
                            "filters": {"packages": ["example.com/gosvc", "shop"]}})
        hits = [(h.path, h.package) for h in got.hits]
        assert sorted(set(hits)) == [("gosvc/internal/db/db.go", "example.com/gosvc/internal/db"),
                                     ("gosvc/main.go", "example.com/gosvc"),
                                     ("pylib/shop/billing/__init__.py", "shop.billing"),
                                     ("pylib/shop/billing/invoice.py", "shop.billing.invoice")]
        assert {g.value for g in got.groups} == {p for _, p in hits}
        assert {f.value for f in got.facets.package} == {p for _, p in hits}
        inline = await search({"query": "package:@acme ledger", "mode": "lexical"})
        assert [(h.path, h.package) for h in inline.hits] == [("web/src/nested/view.ts", "@acme/web")]
        none = await search({"query": "ledger", "mode": "lexical", "filters": {"packages": ["nosuch"]}})
        assert none.hits == [] and "nosuch" in none.message
        lines = await search({"query": "ledger", "mode": "exact", "caseSensitive": False,
                              "filters": {"packages": ["com.acme"]}})
        assert [h.path for h in lines.hits] == ["javasrc/com/acme/LedgerBook.java"]
    finally:
        await client.shutdown_session()
        await client.stop()


def test_cli_package(root: Path, tmp_path: Path):
    exe = Path(sys.executable).parent / "sylk"
    env = {**os.environ, "SYLK_INDEX_DIR": str(tmp_path / "cli-index"), "NO_COLOR": "1"}

    def sylk(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=root, env=env, timeout=TIMEOUT)

    assert sylk("index", ".", "--no-embed").returncode == 0
    out = sylk("search", "ledger", "--mode", "lexical", "--package", "shop.billing", "--format", "json", "--no-refresh")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)["hits"]
    assert {(h["path"], h["package"]) for h in got} == {("pylib/shop/billing/__init__.py", "shop.billing"),
                                                        ("pylib/shop/billing/invoice.py", "shop.billing.invoice")}
    missing = sylk("search", "ledger", "--mode", "lexical", "--package", "nosuch", "--no-refresh")
    assert missing.returncode == 1 and "nosuch" in missing.stderr
    grep = sylk("grep", "-i", "ledger", "--package", "loosely", "--no-refresh")
    assert grep.stdout.splitlines() == ["loose/loose.go:3:6:func LedgerLoose() {}"]


def test_a_new_package_manifest_moves_the_files_below_it(ws: Workspace, root: Path):
    """An __init__.py or a package.json that comes or changes re-indexes its folder's files
    of that language (their contents unchanged), so their packages follow."""
    (root / "tools/__init__.py").write_text("", encoding="utf-8")
    (root / "web/package.json").write_text('{"name": "@acme/site"}\n', encoding="utf-8")
    report = ws.index()
    assert report.changed >= 2  # ledger_tool.py and view.ts, parsed again
    got = {h.path: h.package for h in ws.search(SearchRequest("ledger", mode="lexical", limit=50)).hits}
    assert got["tools/ledger_tool.py"] == "tools.ledger_tool"
    assert got["web/src/nested/view.ts"] == "@acme/site"
    (root / "tools/__init__.py").unlink()
    ws.index()
    got = {h.path: h.package for h in ws.search(SearchRequest("ledger_tool", mode="lexical")).hits}
    assert got["tools/ledger_tool.py"] == "ledger_tool"


async def test_packages_through_mcp(root: Path, _isolated_index: Path):
    """search_code and grep take packages; hits carry package; group_by package; a bad value
    names the argument."""
    from conftest import mcp_call, mcp_call_error, mcp_indexed, mcp_session, mcp_wait_until, without_embedding

    async with mcp_session(without_embedding(root), _isolated_index) as s:
        await mcp_wait_until(s, mcp_indexed, "the first index run")
        got = await mcp_call(s, "search_code", query="ledger", mode="lexical", packages=["shop"],
                             group_by="package", facets=True)
        assert sorted({(h["path"], h["package"]) for h in got["hits"]}) == [
            ("pylib/shop/billing/__init__.py", "shop.billing"), ("pylib/shop/billing/invoice.py", "shop.billing.invoice")]
        assert {g["value"] for g in got["groups"]} == {"shop.billing", "shop.billing.invoice"}
        assert {f["value"] for f in got["facets"]["package"]} == {"shop.billing", "shop.billing.invoice"}
        lines = await mcp_call(s, "grep", pattern="ledger", case="insensitive", packages=["example.com/gosvc/internal"])
        assert [h["path"] for h in lines["hits"]] == ["gosvc/internal/db/db.go"]
        error = await mcp_call_error(s, "search_code", query="ledger", packages="shop")
        assert "packages" in error


def test_an_edit_that_keeps_the_package_parses_nothing_again(ws: Workspace, root: Path):
    """Saving an __init__.py or a package.json whose name stays re-indexes only that file."""
    (root / "pylib/shop/__init__.py").write_text('"""The shop."""\n', encoding="utf-8")
    (root / "web/package.json").write_text('{"name": "@acme/web", "version": "1.0.1"}\n', encoding="utf-8")
    report = ws.index()
    assert (report.added, report.changed) == (0, 2)  # the two files themselves
