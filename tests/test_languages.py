"""Every language is one entry of data (``sylk/languages/<name>.py``), and every entry
states every rule: a language that lacks a rule the others have fails here, not silently
at run time (a symbol without its export flag, a file without its package).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sylk import languages
from sylk.ingest import grammars, packages, visibility
from sylk.model import SYMBOL_KINDS
from sylk.search import agent

REPO = Path(__file__).resolve().parent.parent
QUERIES = REPO / "server" / "sylk" / "ingest" / "queries"
CODE = [s for s in languages.SPECS if s.name != "markdown"]  # (Markdown has no code rules)


def _ids(specs):
    return [s.name for s in specs]


def test_each_language_is_one_module_and_listed_once():
    names = [s.name for s in languages.SPECS]
    assert len(names) == len(set(names))
    folder = REPO / "server" / "sylk" / "languages"
    # a module per language (the second grammar of a wheel shares the first's: TSX is in
    # typescript.py, OCaml interfaces in ocaml.py), besides the shared parts
    modules = {p.stem for p in folder.glob("*.py")} - {"__init__", "spec", "c_family"}
    assert modules == set(names) - {"tsx", "ocaml_interface"}
    exts = [e for s in languages.SPECS for e in s.extensions]
    assert len(exts) == len(set(exts)), "an extension names two languages"
    assert all(e.startswith(".") and e == e.lower() for e in exts)


@pytest.mark.parametrize("spec", languages.SPECS, ids=_ids(languages.SPECS))
def test_grammar_and_queries_load(spec):
    query, tags = grammars.file_query(spec.name)
    assert tags > 0 and query.pattern_count >= tags
    names = {query.capture_name(i) for i in range(query.capture_count)}
    assert "name" in names and any(n.startswith("definition.") for n in names)
    if spec.name != "markdown":
        # comments and strings are not code; a call site's name is a call
        lacks = {"comment", "string", "call"} - names
        assert not lacks, f"{spec.name}: its refs query captures no {sorted(lacks)}"
    kinds = {n.removeprefix("definition.") for n in names if n.startswith("definition.")}
    assert kinds <= set(SYMBOL_KINDS), f"{spec.name}: unknown kinds {sorted(kinds - set(SYMBOL_KINDS))}"


def test_shared_query_parts_are_included_not_repeated():
    parts = {p.stem for p in QUERIES.glob("_*.scm")}
    assert parts, "no shared part"
    for part in parts:
        users = [s.name for s in languages.SPECS if f"; include: {part}" in (QUERIES / f"{s.query}.scm").read_text()]
        assert len(users) >= 2, f"{part} is used by {users}: inline it"
        body = [line for line in (QUERIES / f"{part}.scm").read_text().splitlines()
                if line.strip() and not line.startswith(";")]
        for spec in languages.SPECS:
            own = (QUERIES / f"{spec.query}.scm").read_text()
            assert "\n".join(body[:6]) not in own, f"{spec.query}.scm repeats {part}.scm instead of including it"


@pytest.mark.parametrize("spec", CODE, ids=_ids(CODE))
def test_code_language_states_every_rule(spec):
    assert spec.extensions or spec.filenames
    assert spec.comments, f"{spec.name}: no comment syntax"
    assert spec.keywords, f"{spec.name}: no keywords"
    assert spec.refs, f"{spec.name}: no refs query"
    # exports: a rule that is written (never "never" for code)
    assert spec.exports.rule in visibility.RULES and spec.exports.rule != "never"
    if spec.exports.rule == "modifiers":
        for pattern in (spec.exports.hidden, spec.exports.shown, spec.exports.private_name):
            re.compile(pattern)
    # imports: patterns with a group, and a resolver that is written
    assert spec.imports.patterns, f"{spec.name}: no import patterns"
    assert all(re.compile(p).groups >= 1 for p in spec.imports.patterns)
    assert spec.imports.resolve in agent.RESOLVERS
    if spec.imports.resolve == "dotted":
        assert spec.imports.suffixes and spec.imports.separator
    # package: a rule that is written; a clause has a group
    assert spec.package.rule in packages.RULES
    if spec.package.rule == "clause":
        assert re.compile(spec.package.clause.encode()).groups >= 1
    else:
        assert not spec.package.clause
    # test files
    assert spec.tests and re.compile(spec.tests)
    assert spec.module.startswith("tree_sitter_")


def test_every_rule_is_used():
    """A rule written for no language is dead code."""
    used_exports = {s.exports.rule for s in languages.SPECS}
    assert used_exports == set(visibility.RULES)
    assert {s.imports.resolve for s in languages.SPECS} == set(agent.RESOLVERS)
    assert {s.package.rule for s in languages.SPECS} == set(packages.RULES)
