"""Ranking of workspace/symbol: exact > prefix > camel-hump > substring > subsequence."""

from __future__ import annotations

import pytest
from sylk.ingest.symbols import Symbol, encode_symbols
from sylk.search.frozen_symbols import FrozenSymbols
from sylk.search.name_index import TIER_EXACT, TIER_HUMP, TIER_PREFIX, TIER_SUBSEQUENCE, TIER_SUBSTRING, hump_match
from sylk.search.symbol_search import SymbolTable
from sylk.store.manifest import FileSymbolData
from sylk.text.words import split_words

_LAYOUT = {"layout": "live", "dir": None}


@pytest.fixture(params=["live", "frozen", "snapshot"], autouse=True)
def layout(request: pytest.FixtureRequest, tmp_path) -> str:
    """Every test runs on a table held as Python objects, on one frozen into arrays, and on
    one saved to disk and opened again: the same answers from each."""
    _LAYOUT.update(layout=request.param, dir=tmp_path)
    return request.param


def sym(name: str, kind: str = "function", container: str = "", line: int = 0, doc: str = "") -> Symbol:
    return Symbol(name, kind, container, (line, 0, line + 1, 0), (line, 0, line, len(name)), f"def {name}()", doc)


def make(by_path: dict[str, list[Symbol]]) -> SymbolTable:
    """A table of ``by_path`` in the layout under test."""
    if _LAYOUT["layout"] == "live":
        t = SymbolTable()
        t.replace_all(by_path)
        return t
    frozen = FrozenSymbols.build(FileSymbolData(p, f"stamp-{p}", encode_symbols(syms)) for p, syms in by_path.items())
    if _LAYOUT["layout"] == "snapshot":
        path = _LAYOUT["dir"] / "symbols.bin"
        frozen.save(path)
        frozen = FrozenSymbols.load(path)
    return SymbolTable(frozen)


def table(*entries: tuple[str, Symbol]) -> SymbolTable:
    by: dict[str, list[Symbol]] = {}
    for path, s in entries:
        by.setdefault(path, []).append(s)
    return make(by)


@pytest.mark.parametrize(("name", "words"), [
    pytest.param("getUserById", ["get", "User", "By", "Id"], id="camel"),
    pytest.param("HttpRetryPolicy", ["Http", "Retry", "Policy"], id="pascal"),
    pytest.param("get_user_by_id", ["get", "user", "by", "id"], id="snake"),
    pytest.param("XMLHttpRequest", ["XML", "Http", "Request"], id="acronym"),
    pytest.param("utf8Decode2", ["utf", "8", "Decode", "2"], id="digits"),
    pytest.param("MAX_SIZE", ["MAX", "SIZE"], id="screaming"),
])
def test_split_words(name: str, words: list[str]):
    assert split_words(name) == words


@pytest.mark.parametrize(("query", "words", "expected"), [
    pytest.param("hrp", ["http", "retry", "policy"], 0, id="initials"),
    pytest.param("gubi", ["get", "user", "by", "id"], 0, id="snake-initials"),
    pytest.param("httpre", ["http", "retry", "policy"], 0, id="word-and-prefix"),
    pytest.param("rp", ["http", "retry", "policy"], 1, id="skips-a-word"),
    pytest.param("hp", ["http", "retry", "policy"], 1, id="skips-middle"),
    pytest.param("hx", ["http", "retry", "policy"], None, id="no-match"),
    pytest.param("ph", ["http", "retry", "policy"], None, id="order-matters"),
])
def test_hump_match(query: str, words: list[str], expected: int | None):
    assert hump_match(query, words) == expected


def names(hits) -> list[str]:
    return [h.symbol.name for h in hits]


def test_tiers_in_order():
    t = table(
        ("a.py", sym("retry")),                # exact
        ("a.py", sym("retryCount")),           # prefix
        ("b.py", sym("RetryEveryTime")),       # prefix as well, case-folded
        ("c.py", sym("resetTheRuleYard")),     # hump: re-t-r-y
        ("d.py", sym("unretryable")),          # substring (not at a word start)
        ("e.py", sym("rate_entry")),           # subsequence r..e..t..r..y
        ("f.py", sym("unrelated")),
    )
    hits = t.search("retry")
    assert names(hits) == ["retry", "retryCount", "RetryEveryTime", "resetTheRuleYard", "unretryable", "rate_entry"]
    assert [h.tier for h in hits] == [TIER_EXACT, TIER_PREFIX, TIER_PREFIX, TIER_HUMP, TIER_SUBSTRING,
                                      TIER_SUBSEQUENCE]


@pytest.mark.parametrize(("query", "expected"), [
    pytest.param("hrp", "HttpRetryPolicy", id="hrp"),
    pytest.param("gUBI", "get_user_by_id", id="gUBI"),
    pytest.param("GETUSER", "get_user_by_id", id="case-insensitive"),
    pytest.param("get_user", "get_user_by_id", id="prefix-with-underscore"),
    pytest.param("getubi", "get_user_by_id", id="word-then-initials"),
])
def test_camel_hump_queries(query: str, expected: str):
    t = table(("x.py", sym("HttpRetryPolicy", "class")), ("y.py", sym("get_user_by_id")),
              ("w.py", sym("hair_pin")), ("v.py", sym("gruelling_ubiquity")), ("u.py", sym("g_u_b")))
    assert names(t.search(query))[0] == expected


def test_case_exact_ranks_above_case_folded_in_a_tier():
    t = table(("a.py", sym("parser")), ("b.py", sym("Parser", "class")))
    assert names(t.search("Parser")) == ["Parser", "parser"]
    assert names(t.search("parser")) == ["parser", "Parser"]


def test_ties_broken_by_kind_then_path_depth():
    t = table(
        ("deep/er/x.py", sym("Config", "class")),
        ("x.py", sym("Config", "variable")),
        ("y.py", sym("Config", "class")),
        ("a/z.py", sym("Config", "function")),
    )
    hits = t.search("config")
    assert [(h.path, h.symbol.kind) for h in hits] == [
        ("y.py", "class"), ("deep/er/x.py", "class"), ("a/z.py", "function"), ("x.py", "variable")]


def test_limit_caps_results_and_keeps_the_best():
    t = table(*[(f"m{i}.py", sym(f"handler_{i:04d}")) for i in range(2000)], ("h.py", sym("handler")))
    hits = t.search("handler", limit=10)
    assert len(hits) == 10
    assert hits[0].symbol.name == "handler"


def test_container_qualified_query():
    t = table(("a.py", sym("save", "method", "UserRepository")), ("b.py", sym("save", "method", "OrderRepository")))
    assert [h.symbol.container for h in t.search("userrepo.save")] == ["UserRepository"]


def test_updates_are_visible_and_removed_files_vanish():
    t = table(("a.py", sym("alpha")))
    t.set_file("b.py", [sym("alphabet")])
    assert names(t.search("alpha")) == ["alpha", "alphabet"]
    t.remove_file("a.py")
    assert names(t.search("alpha")) == ["alphabet"]
    t.set_file("b.py", [])
    assert t.search("alpha") == []


def test_empty_query_lists_types_first():
    t = table(("a.py", sym("zeta", "function")), ("b.py", sym("Alpha", "class")), ("c.py", sym("X", "variable")))
    assert names(t.search("", limit=2)) == ["Alpha", "zeta"]


def test_no_match_returns_nothing():
    t = table(("a.py", sym("alpha")))
    assert t.search("qqq") == []


def test_direct_and_scanning_strategies_agree(monkeypatch: pytest.MonkeyPatch):
    """Few candidates are checked one by one, many by scanning all names: same answers."""
    import random

    import sylk.search.name_index as ss

    rng = random.Random(7)
    words = ["get", "set", "user", "by", "id", "http", "retry", "policy", "test", "parse", "config", "x", "io"]
    entries = []
    for n in range(600):
        parts = rng.sample(words, rng.randint(1, 4))
        style = rng.choice(["snake", "camel", "pascal"])
        if style == "snake":
            name = "_".join(parts)
        elif style == "camel":
            name = parts[0] + "".join(p.title() for p in parts[1:])
        else:
            name = "".join(p.title() for p in parts)
        entries.append((f"d{n % 7}/f{n}.py", sym(name, rng.choice(["function", "class", "method"]), line=n)))
    t = table(*entries)
    queries = ["gubi", "hrp", "tes", "pc", "io", "uid", "retpol", "xq", "getus", "t", "sgu", "cfg", "ttt"]
    direct = {q: [(h.path, h.symbol.name, h.tier) for h in t.search(q, limit=1000)] for q in queries}
    monkeypatch.setattr(ss, "DIRECT_MAX", -1)
    for few in (0, 10**9):  # the subsequence tier scans all names, or those with the query's letters
        monkeypatch.setattr(ss, "SUBSEQUENCE_FEW", few)
        for q in queries:
            for limit in (5, 1000):
                assert [(h.path, h.symbol.name, h.tier) for h in t.search(q, limit=limit)] == direct[q][:limit], q
    # camel humps: matched one by one (hump_match) or screened by regexes: the same
    # answers at any limit
    for hump_direct in (-1, 10**9):
        monkeypatch.setattr(ss, "HUMP_DIRECT", hump_direct)
        for q in queries:
            for limit in (5, 40, 1000):
                assert [(h.path, h.symbol.name, h.tier) for h in t.search(q, limit=limit)] == direct[q][:limit], q


def _random_symbols(rng, words: list[str], n: int) -> list[Symbol]:
    out = []
    for line in range(n):
        parts = rng.sample(words, rng.randint(1, 3))
        style = rng.randint(0, 2)
        name = ("_".join(parts) if style == 0 else
                "".join(p.capitalize() for p in parts) if style == 1 else
                parts[0] + "".join(p.capitalize() for p in parts[1:]))
        out.append(sym(name, rng.choice(["function", "class", "method", "constant"]), "", line))
    return out


def test_incremental_updates_answer_like_a_fresh_table():
    """Saves, new files and deletions applied one by one (each followed by warm(), as the
    indexer does) give the same answers as a table built from scratch."""
    import random

    rng = random.Random(7)
    words = ["get", "user", "by", "id", "http", "retry", "policy", "load", "save", "cache", "point", "distance",
             "parse", "token", "session", "store", "order", "invoice", "total", "queue"]
    files = {f"pkg{i % 4}/mod{i}.py": _random_symbols(rng, words, rng.randint(1, 8)) for i in range(60)}
    live = make(dict(files))
    live.warm()
    queries = ["getuser", "gubi", "retry", "Policy", "hrp", "cache", "sav", "x", "tok", "order.total", "dist",
               "invoiceTotal", "q", "pt"]
    for step in range(120):
        path = f"pkg{rng.randint(0, 4)}/mod{rng.randint(0, 80)}.py"
        if rng.random() < 0.2:
            files.pop(path, None)
            live.remove_file(path)
        else:
            extra = ["brandnew", "fresh", "zeta"] if rng.random() < 0.3 else []
            files[path] = _random_symbols(rng, words + extra, rng.randint(0, 6))
            live.set_file(path, files[path])
        live.warm()
        if step % 10 == 9:
            fresh = SymbolTable()
            fresh.replace_all(dict(files))
            for q in queries + ["brandnew", "fresh_zeta", "bn", ""]:
                got = [(h.path, h.symbol, h.tier) for h in live.search(q, 30)]
                want = [(h.path, h.symbol, h.tier) for h in fresh.search(q, 30)]
                assert got == want, (step, q)
    assert len(live) == sum(len(v) for v in files.values())


def test_a_save_within_known_names_does_not_rebuild_everything():
    t = table(("a.py", sym("HttpRetryPolicy", "class")), ("b.py", sym("get_user_by_id")))
    t.warm()
    base, live_base = t._base, t._live._base
    t.set_file("a.py", [sym("HttpRetryPolicy", "class", line=5), sym("brand_new_helper")])
    t.warm()
    t.search("x")
    # neither the snapshot nor the live layer's main structure was rebuilt
    assert t._base is base and (t._live._base is live_base or base is not None)
    assert names(t.search("hrp")) == ["HttpRetryPolicy"] and t.search("hrp")[0].symbol.range[0] == 5
    assert names(t.search("bnh")) == ["brand_new_helper"]
    t.remove_file("b.py")
    assert t.search("get_user_by_id") == []


def test_an_empty_table_and_odd_paths():
    """No symbols at all answers nothing; a path holding a newline or non-ASCII comes back whole."""
    assert make({}).search("x") == [] and make({}).search("") == []
    t = table(("odd\nname é.py", sym("héllo_wörld")), ("b.py", sym("hello")))
    assert [(h.path, h.symbol.name) for h in t.search("hello")] == [("b.py", "hello")]
    assert [(h.path, h.symbol.name) for h in t.search("hw")] == [("odd\nname é.py", "héllo_wörld")]
    assert [h.symbol.signature for h in t.search("hw")] == ["def héllo_wörld()"]


def test_the_one_skip_regex_agrees_with_hump_match():
    """Camel-hump names with one word skipped are found by a regex on busy queries; it
    must say exactly what hump_match says."""
    import random

    from sylk.search.name_index import _hump_one_skip_regex, _hump_regex, line_words, word_line

    rng = random.Random(3)
    words = ["get", "set", "user", "by", "id", "http", "retry", "policy", "temp", "cache", "tee", "t", "ab", "abc"]
    checked = ones = 0
    for _ in range(400):
        parts = rng.sample(words, rng.randint(1, 5))
        line = word_line("_".join(parts))
        for _ in range(5):
            q = "".join(w[: rng.randint(1, 2)] for w in rng.sample(parts, rng.randint(1, len(parts))))
            want = hump_match(q, line_words(line))
            zero = _hump_regex(q, skips=False).match(line) is not None
            one = _hump_one_skip_regex(q).match(line) is not None
            assert zero == (want == 0), (q, line)
            if not zero:
                assert one == (want == 1), (q, line, want)
            checked += 1
            ones += want == 1
    assert checked == 2000 and ones > 100


def test_a_name_with_thousands_of_entries_keeps_the_best_of_each_case():
    """A snapshot stops reading a name's entries once the best ``limit`` of each case are
    in: the answers are those of the whole list."""
    by: dict[str, list[Symbol]] = {}
    for i in range(400):
        path = f"{'deep/' * (i % 4)}t{i:03d}.rs"
        by[path] = [sym("Main" if i % 7 == 0 else "main", ["function", "method", "struct"][i % 3], f"C{i % 5}", i % 9),
                    sym("mainly", "function", "", 1)]
    live = SymbolTable()
    live.replace_all(by)
    t = make(by)
    for q in ("main", "Main", "mai", "C3.main", "mn"):
        for limit in (1, 10, 60, 500):
            got = [(h.path, h.symbol, h.tier) for h in t.search(q, limit)]
            assert got == [(h.path, h.symbol, h.tier) for h in live.search(q, limit)], (q, limit)


@pytest.mark.parametrize("direct_max", [3000, -1], ids=["few-candidates", "blob-scan"])
def test_substring_matches_at_the_same_start_keep_the_best_of_each_case(monkeypatch: pytest.MonkeyPatch,
                                                                         direct_max: int):
    """Hundreds of names hold the query at the same place (``est`` at 2 of ``xtest_...``).
    A search stops adding them once no name left can make the cut: the better-ranked
    names (classes, shallow paths) spell it ``TEST``, the worse-ranked ones ``test`` as the
    query does, and the answer at any limit is the head of the whole one."""
    import sylk.search.name_index as ss

    monkeypatch.setattr(ss, "DIRECT_MAX", direct_max)
    by: dict[str, list[Symbol]] = {}
    for i in range(300):
        spelled = "XTEST" if i % 2 == 0 else "xtest"  # one word either way: no camel hump
        kind = "class" if i % 2 == 0 else "function"
        path = f"{'deep/' * (i % 5 + (i % 2) * 3)}m{i:03d}.py"
        by[path] = [sym(f"{spelled}_{i:03d}", kind, line=i % 11), sym(f"ytest{i % 4}", "variable", line=20)]
    t = make(by)
    for q in ("test", "TEST", "Test", "est_1", "test_2"):
        whole = [(h.path, h.symbol.name, h.tier) for h in t.search(q, 10**6)]
        assert any(h[2] == TIER_SUBSTRING for h in whole), q
        for limit in (1, 7, 30, 151):
            assert [(h.path, h.symbol.name, h.tier) for h in t.search(q, limit)] == whole[:limit], (q, limit)
    # the query's own spelling ranks above the better-ranked other one
    assert {h.symbol.name[:5] for h in t.search("test", 150)} == {"xtest"}
    assert {h.symbol.name[:5] for h in t.search("TEST", 150)} == {"XTEST"}


def test_named_finds_one_name_and_named_in_every_one_in_given_files():
    """``named``: the symbols of one name (any case, the same case first), no fuzzy tier;
    ``named_in``: every one in the given files, however many the name has elsewhere, the
    changed files served from their new symbols."""
    def path(i: int) -> str:
        return f"{'deep/' * (i % 3)}m{i:03d}.py"

    by = {path(i): [sym("run" if i % 4 else "Run", "function", "", i % 5), sym("runner", "class", "", 9)]
          for i in range(300)}
    t = make(by)
    named = t.named("run", 10)
    assert len(named) == 10 and all(h.symbol.name.lower() == "run" for h in named)
    assert [h.symbol.name for h in named] == ["run"] * 10  # the same case first
    assert [h.symbol.name for h in t.named("Run", 500)][:75] == ["Run"] * 75
    assert t.named("ru", 10) == [] and t.named("nothing", 10) == []
    wanted = {path(1), path(299), path(8), "no/such.py"}
    got = sorted((h.path, h.symbol.name) for h in t.named_in("RUN", wanted))
    assert got == sorted([(path(299), "run"), (path(1), "run"), (path(8), "Run")])
    t.set_file(path(1), [sym("walk"), sym("run", line=40)])  # changed: its new symbols
    t.remove_file(path(8))
    got = [(h.path, h.symbol.name, h.symbol.range[0]) for h in t.named_in("run", wanted)]
    assert sorted(got) == sorted([(path(299), "run", 299 % 5), (path(1), "run", 40)])


def test_enclosing_names_the_innermost_symbol_around_a_line():
    def s(name: str, kind: str, container: str, first: int, last: int) -> Symbol:
        return Symbol(name, kind, container, (first, 0, last, 0), (first, 4, first, 4 + len(name)), "", "")

    t = make({"a.py": [s("Box", "class", "", 0, 9), s("put", "method", "Box", 2, 5), s("inner", "function",
                                                                                      "Box.put", 3, 4)],
              "b.py": [s("main", "function", "", 0, 3)]})
    assert [t.scope("a.py", n) for n in (0, 2, 3, 6, 12)] == ["Box", "Box.put", "Box.put.inner", "Box", ""]
    assert t.scope("b.py", 1) == "main" and t.scope("none.py", 1) == ""
    # of some kinds only: the innermost function or method around a call
    assert [t.enclosing("a.py", 3, kinds).name for kinds in ({"method"}, {"class"}, {"function", "method"})] == [
        "put", "Box", "inner"]
    assert t.enclosing("a.py", 7, {"method"}) is None
    t.set_file("b.py", [s("other", "function", "", 0, 1)])  # the file as it is now
    assert (t.scope("b.py", 1), t.scope("b.py", 2)) == ("other", "")
