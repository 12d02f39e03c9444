"""Exact and regex patterns (search/pattern.py): what a pattern matches on one line, the
smart case and whole word rules, the errors a user sees, and the trigrams a file must
hold, which must never leave out a file that holds a match (checked by hypothesis over
generated patterns and texts, and over the whole of Unicode for case folding)."""

from __future__ import annotations

import _sre
import bisect
import re
import sys
from collections import defaultdict
from re import _casefix

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sylk.ingest.grams import file_grams, literal_grams
from sylk.search import grep
from sylk.search.pattern import GramQuery, PatternError, compile_pattern, has_upper
from sylk.text.folding import fold


def grams_of(text: str) -> set[str]:
    return set(file_grams(text).split())


def requires(literal: str) -> GramQuery:
    """The query of a pattern that is one plain literal."""
    return GramQuery("all", tuple(literal_grams(literal)))


def matching_lines(pattern, text: str) -> list[int]:
    return [i for i, line in enumerate(text.split("\n")) if pattern.line_regex.search(line)]


def found_lines(pattern, text: str) -> list[int]:
    """The lines a caller finds with ``text_regex``: each match start's line verified
    with ``line_regex``, then on from the next line."""
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    found, pos = [], 0
    while pos <= len(text):
        match = pattern.text_regex.search(text, pos)
        if match is None:
            break
        line = bisect.bisect_right(starts, match.start()) - 1
        end = text.find("\n", starts[line])
        end = len(text) if end < 0 else end
        if pattern.line_regex.search(text[starts[line]:end]):
            found.append(line)
        pos = end + 1
    return found


# ---- what matches --------------------------------------------------------------------


@pytest.mark.parametrize(("literal", "hit", "miss"), [
    ("foo->bar(", "    x = foo->bar(1);", "x = foo->baz(1);"),
    ('"Content-Type"', 'headers["Content-Type"] = t', "headers['Content-Type'] = t"),
    ("TODO(alice)", "# TODO(alice): retry", "# TODO(bob): retry"),
    ("a.c", "x = a.c", "x = abc"),
])
def test_exact_mode_takes_punctuation_literally(literal, hit, miss):
    pattern = compile_pattern(literal, mode="exact")
    assert pattern.line_matches(hit) is not None
    assert pattern.line_matches(miss) is None
    assert pattern.grams == requires(literal)
    assert pattern.grams.satisfied_by(grams_of("first line\n" + hit))
    assert not pattern.grams.satisfied_by(grams_of("first line\n" + miss))


def test_a_regex_requires_the_literals_around_its_classes():
    pattern = compile_pattern(r"def \w+_cache\(")
    assert pattern.line_matches("    def get_cache(self):") == [(4, 18)]
    assert pattern.line_matches("def lru_cache(") is not None
    assert pattern.line_matches("def cache(") is None
    assert pattern.grams.op == "all"
    assert set(literal_grams("def ")) | set(literal_grams("_cache(")) <= set(pattern.grams.grams)


def test_a_trailing_wildcard_keeps_the_literal_and_smart_case():
    pattern = compile_pattern("Export.*")
    assert not pattern.ignore_case
    assert pattern.line_matches("Export default x") == [(0, 16)]
    assert pattern.line_matches("export default x") is None
    assert pattern.grams == requires("export")


def test_an_alternation_asks_for_either_whole_string():
    pattern = compile_pattern("(foo|bar)baz")
    assert pattern.grams == GramQuery("any", (), (requires("barbaz"), requires("foobaz")))
    assert pattern.grams.satisfied_by(grams_of("x = barbaz"))
    assert not pattern.grams.satisfied_by(grams_of("foo bar baz"))
    assert pattern.line_matches("a foobaz b") == [(2, 8)]


def test_a_small_class_expands_into_its_strings():
    pattern = compile_pattern("[Ee]xport")
    assert pattern.grams == requires("export")
    assert [pattern.line_matches(s) is not None for s in ("Export", "export", "EXPORT")] == [True, True, False]


def test_both_sides_of_a_gap_are_required():
    assert compile_pattern("abc.*def").grams == GramQuery("all", tuple(literal_grams("abc") + literal_grams("def")))
    pattern = compile_pattern(r"foo\d+bar")
    assert set(literal_grams("foo") + literal_grams("bar")) <= set(pattern.grams.grams)
    assert compile_pattern("(abc)?defg").grams == requires("defg")


def test_a_negated_class_stands_for_any_character():
    pattern = compile_pattern("foo[^a]bar")
    assert pattern.grams == GramQuery("all", tuple(sorted(literal_grams("foo") + literal_grams("bar"))))
    assert pattern.grams.satisfied_by(grams_of("fooxbar"))


def test_the_end_of_a_long_literal_meets_what_follows():
    pattern = compile_pattern(r"\w+abcd[ef]")
    assert pattern.grams.satisfied_by(grams_of("xabcdf"))
    assert not pattern.grams.satisfied_by(grams_of("xabcd e"))
    pattern = compile_pattern(r"[ef]abcd\w+")
    assert pattern.grams.satisfied_by(grams_of("fabcdx"))
    assert not pattern.grams.satisfied_by(grams_of("e abcdx"))


def test_anchors_match_at_the_line_edges():
    start, end = compile_pattern("^import "), compile_pattern(r";\s*$")
    assert start.line_matches("import os") == [(0, 7)]
    assert start.line_matches("  import os") is None
    assert start.grams == requires("import ")
    assert end.line_matches("x = 1;  ") == [(5, 8)]
    assert end.line_matches("x = 1; y") is None
    text = "a;\n  import os\nimport re\nb;"
    assert found_lines(start, text) == matching_lines(start, text) == [2]
    assert found_lines(end, text) == matching_lines(end, text) == [0, 3]


@pytest.mark.parametrize(("source", "case", "line", "hit"), [
    ("foo", False, "FOO = 1", True),
    ("foo", True, "FOO = 1", False),
    ("FOO", "smart", "foo = 1", False),
    ("straße", False, "STRAẞE", True),
    ("σ", False, "ΟΔΟΣ", True),
    ("σ", False, "λόγος", True),
    ("kid", False, "KİD", True),
    ("kelvin", False, "\u212aELVIN", True),
])
def test_case_variants_match_and_keep_their_grams(source, case, line, hit):
    pattern = compile_pattern(source, case=case)
    assert (pattern.line_matches(line) is not None) is hit
    if hit and pattern.grams is not None:
        assert pattern.grams.satisfied_by(grams_of(line))


def test_smart_case_looks_at_the_parsed_pattern():
    assert compile_pattern("foo").ignore_case
    assert not compile_pattern("Foo").ignore_case
    assert compile_pattern(r"\Wfoo").ignore_case
    assert compile_pattern(r"\Sfoo\D").ignore_case
    assert not compile_pattern("[A-Z]x").ignore_case  # a range's ends count
    assert not compile_pattern(r"\x41x").ignore_case  # an escaped upper-case letter counts
    assert compile_pattern("(?P<Name>x)").ignore_case  # a group's name is no literal
    assert not compile_pattern(r"\w+").ignore_case  # no literal at all: sensitive, as rg
    assert compile_pattern("FOO", case=False).ignore_case
    assert not compile_pattern("foo", case=True).ignore_case
    assert has_upper("Foo", "regex") and not has_upper(r"\W\S\D", "regex")
    assert has_upper(r"\W", "exact")  # a literal W
    assert not has_upper("(?x) f o o # A comment", "regex")


def test_whole_word_needs_a_non_word_character_or_the_edge_on_both_sides():
    pattern = compile_pattern("get", whole_word=True)
    assert pattern.line_matches("get get_user forget getter x.get(1)") == [(0, 3), (29, 32)]
    assert pattern.line_matches("get_user = forget") is None
    assert compile_pattern("foo-bar", mode="exact", whole_word=True).line_matches("foo-barx foo-bar") == [(9, 16)]
    assert compile_pattern("(?i)GET", whole_word=True).line_matches("a Get b") == [(2, 5)]
    verbose = compile_pattern("(?x) g e t  # the verb", whole_word=True)
    assert verbose.line_matches("get_x get") == [(6, 9)]
    assert compile_pattern("a|b", whole_word=True).line_matches("ab a") == [(3, 4)]


def test_line_matches_lists_non_empty_matches():
    assert compile_pattern("x*").line_matches("abc") == []
    assert compile_pattern("x*").line_matches("axx") == [(1, 3)]
    assert compile_pattern("q").line_matches("abc") is None
    assert compile_pattern("é", case=False).line_matches("É😀é") == [(0, 1), (2, 3)]


# ---- errors --------------------------------------------------------------------------


@pytest.mark.parametrize(("source", "options", "field", "words"), [
    ("", {}, "query", "the pattern is empty"),
    ("", {"mode": "exact"}, "query", "the pattern is empty"),
    ("foo(", {}, "query", "invalid regular expression at position 3: missing ), unterminated subpattern"),
    ("a[b", {}, "query", "position 1: unterminated character set"),
    ("(?<=a+)b", {}, "query", "look-behind requires fixed-width pattern"),
    ("(?<=a+)b", {"whole_word": True}, "query", "look-behind requires fixed-width pattern"),
    (r"a\nb", {}, "query", "cannot match a line break: Sylk searches line by line, as rg"),
    (r"a[x\n]b", {}, "query", "line break"),
    ("a\nb", {"mode": "exact"}, "query", "line break"),
    ("a\nb", {}, "query", "line break"),
    ("foo", {"case": "yes"}, "case", "case must be true, false or \"smart\""),
    ("foo", {"case": 1}, "case", "case must be"),
    ("foo", {"mode": "glob"}, "mode", "mode must be one of exact, regex"),
])
def test_errors_say_what_is_wrong(source, options, field, words):
    with pytest.raises(PatternError) as caught:
        compile_pattern(source, **options)
    assert caught.value.field == field
    assert str(caught.value).startswith(f"{field}: ")
    assert words in str(caught.value)


def test_classes_that_merely_exclude_a_line_break_are_fine():
    assert compile_pattern(r"a[^\n]+b").line_matches("a--b") == [(0, 4)]
    assert compile_pattern(r"a\s+b").line_matches("a \tb") == [(0, 4)]
    assert compile_pattern("(?x) a \n b").line_matches("ab") == [(0, 2)]  # verbose: \n is a space


# ---- grams ---------------------------------------------------------------------------


@pytest.mark.parametrize("source", [".*", r"\w+", "ab", "[a-z]+", "a|bcd", "(?=foo)", r"(\w+)\1", "x?yz", "(ab)*"])
def test_patterns_without_a_usable_literal_are_scanned(source):
    assert compile_pattern(source).grams is None


def test_gram_queries_combine_as_booleans():
    query = GramQuery("all", ("aaa",), (GramQuery("any", ("bbb", "ccc")),))
    assert query.satisfied_by({"aaa", "ccc"})
    assert not query.satisfied_by({"aaa"})
    assert not query.satisfied_by({"bbb", "ccc"})
    assert GramQuery("all").satisfied_by(set())


def test_a_lookaround_reads_lines_alone():
    pattern = compile_pattern(r"(?<!\s)foo(?!\S)")
    text = "x foo\nfoo\nfoo \nfoox"
    assert matching_lines(pattern, text) == [1, 2]
    assert found_lines(pattern, text) == [1, 2]
    assert pattern.grams == requires("foo")


# ---- the superset property -----------------------------------------------------------

# characters whose case folding is tricky (ß, İ, ı, the sigmas, the Kelvin and long s signs)
ALPHABET = ["a", "b", "x", "A", "B", "é", "É", "ß", "ẞ", "İ", "i", "ı", "I", "σ", "ς", "Σ",
            "😀", "k", "K", "\u212a", "s", "S", "ſ", "-", "_", ".", "(", " ", "1"]
VARIANTS = {"a": "aA", "b": "bB", "x": "xX", "é": "éÉ", "ß": "ßẞ", "i": "iIİı", "σ": "σςΣ",
            "k": "kK\u212a", "s": "sSſ"}
for _chars in list(VARIANTS.values()):
    for _c in _chars:
        VARIANTS[_c] = _chars

chars = st.sampled_from(ALPHABET)
words = st.lists(chars, min_size=1, max_size=4).map("".join)


@st.composite
def atoms(draw, depth: int) -> tuple[str, str]:
    """A regex node and a string it (usually) matches."""
    kind = draw(st.sampled_from(["literal"] * 4 + ["class", "escape", "anchor", "group",
                                 "alternation", "repeat", "repeat", "lookaround"] if depth else
                                ["literal", "literal", "class", "escape", "anchor"]))
    if kind == "literal":
        word = draw(words)
        return re.escape(word), word
    if kind == "class":
        members = draw(st.lists(st.sampled_from(["a", "B", "é", "ß", "σ", "İ", "a-c", "x-z", "_", "\\-",
                                                 "\\w", "\\d", "\\s", "😀"]), min_size=1, max_size=3))
        negated = draw(st.booleans())
        if negated:
            witness = draw(st.sampled_from([c for c in ALPHABET if c not in members] + ["-"]))
        else:
            witness = {"a-c": "b", "x-z": "y", "\\-": "-", "\\w": "q", "\\d": "7",
                       "\\s": " "}.get(members[0], members[0])
        return "[" + ("^" if negated else "") + "".join(members) + "]", witness
    if kind == "escape":
        return draw(st.sampled_from([("\\w", "w"), ("\\d", "4"), ("\\s", " "), (".", "?"), ("\\W", "-")]))
    if kind == "anchor":
        return draw(st.sampled_from(["^", "$", "\\b", "\\B"])), ""
    if kind == "group":
        source, witness = draw(sequences(depth - 1))
        return draw(st.sampled_from(["(", "(?:", "(?>", "(?i:"])) + source + ")", witness
    if kind == "alternation":
        branches = draw(st.lists(sequences(depth - 1), min_size=2, max_size=3))
        return "(?:" + "|".join(s for s, _ in branches) + ")", draw(st.sampled_from(branches))[1]
    if kind == "lookaround":
        word = draw(words)
        return draw(st.sampled_from(["(?=", "(?!", "(?<=", "(?<!"])) + re.escape(word) + ")", ""
    source, witness = draw(atoms(depth - 1))
    low, high = draw(st.sampled_from([(0, 1), (0, None), (1, None), (2, 2), (1, 3), (0, 2), (4, 4)]))
    suffix = {(0, 1): "?", (0, None): "*", (1, None): "+"}.get((low, high), f"{{{low},{high}}}")
    lazy = draw(st.sampled_from(["", "", "?", "+"]))  # greedy, lazy, possessive
    count = draw(st.integers(low, low + 2 if high is None else high))
    return f"(?:{source}){suffix}{lazy}", witness * count


@st.composite
def sequences(draw, depth: int) -> tuple[str, str]:
    parts = draw(st.lists(atoms(depth), min_size=1, max_size=4))
    return "".join(s for s, _ in parts), "".join(w for _, w in parts)


@st.composite
def texts(draw, witness: str) -> str:
    """Lines of the alphabet, some holding the witness in another case."""
    lines = draw(st.lists(st.lists(chars, max_size=8).map("".join), max_size=4))
    for _ in range(draw(st.integers(1, 3))):
        variant = "".join(draw(st.sampled_from(VARIANTS.get(c, c))) for c in witness)
        around = draw(st.sampled_from(["", " ", "_", "a", "-"]))
        lines.insert(draw(st.integers(0, len(lines))), around + variant + draw(st.sampled_from(["", " ", "x"])))
    return "\n".join(lines)


def check_superset(source: str, text: str, mode: str) -> None:
    """For every case mode and whole word setting: the grams hold wherever a line
    matches, line_matches agrees with line_regex, and text_regex finds every line."""
    lines = text.split("\n")
    for case in (True, False, "smart"):
        for whole_word in (False, True):
            pattern = compile_pattern(source, mode=mode, case=case, whole_word=whole_word)
            hits = [i for i, line in enumerate(lines) if pattern.line_regex.search(line)]
            for i, line in enumerate(lines):
                assert (pattern.line_matches(line) is not None) is (i in hits)
                if i in hits and pattern.grams is not None:
                    assert pattern.grams.satisfied_by(grams_of(line)), (source, case, line)
            if hits and pattern.grams is not None:
                assert pattern.grams.satisfied_by(grams_of(text))
            assert found_lines(pattern, text) == hits, (source, case, whole_word)
            if pattern.needle:  # a needle every match holds, in the line
                assert all((fold(lines[i]) if pattern.needle_folded else lines[i]).count(pattern.needle)
                           for i in hits), (source, case, pattern.needle)
            # (rg's lines: no empty line after the last line break, none in an empty file)
            counted = len(lines) - (text == "" or text.endswith("\n"))
            assert engine_lines(pattern, text) == [i for i in hits if i < counted], (source, case, whole_word)


def engine_lines(pattern, text: str) -> list[int]:
    """The lines search.grep finds, read needle by needle and by the regex alike."""
    kept = grep.NEEDLE_SHARE, grep.NEEDLE_FEW
    try:
        answers = []
        for share, few in ((0.0, 0), (1.0, 64)):
            grep.NEEDLE_SHARE, grep.NEEDLE_FEW = share, few
            answers.append([n for n, _line, _spans in grep.matching_lines(pattern, text)])
    finally:
        grep.NEEDLE_SHARE, grep.NEEDLE_FEW = kept
    assert answers[0] == answers[1]
    return answers[0]


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.data())
def test_grams_never_leave_out_a_matching_file(data):
    source, witness = data.draw(sequences(3))
    re.compile(source)  # the grammar writes valid expressions only
    check_superset(source, data.draw(texts(witness)), "regex")


@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_literal_grams_never_leave_out_a_matching_file(data):
    literal = data.draw(st.lists(chars, min_size=1, max_size=8).map("".join))
    check_superset(literal, data.draw(texts(literal)), "exact")


# ---- case folding over the whole of Unicode ------------------------------------------


def test_fold_keeps_every_class_of_re_ignorecase():
    """Every pair of characters that re.IGNORECASE takes as equal, as a literal or as a
    one-character range, folds alike; and folding twice changes nothing."""
    everything = [chr(c) for c in range(sys.maxunicode + 1)]
    assert [c for c in everything if fold(fold(c)) != fold(c)] == []
    keys = {"lower": str.lower, "upper": str.upper, "casefold": str.casefold,
            "sre": lambda c: chr(_sre.unicode_tolower(ord(c)))}
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for c in everything:
        for name, key in keys.items():
            if key(c) != c:
                groups[name, key(c)].append(c)
    extras = {chr(k): [chr(v) for v in vs] for k, vs in _casefix._EXTRA_CASES.items()}
    checked = 0
    for c in {c for members in groups.values() for c in members}:
        candidates = {c, *extras.get(c, ())}
        for name, key in keys.items():
            candidates.update(groups.get((name, key(c)), ()))  # sharing c's key
            candidates.update(groups.get((name, c), ()))  # whose key is c
            candidates.update(k for k in key(c) if len(key(c)) == 1)
        escaped = re.escape(c)
        for form in (re.compile(escaped, re.IGNORECASE), re.compile(f"[{escaped}-{escaped}]", re.IGNORECASE)):
            for d in candidates:
                if form.fullmatch(d):
                    assert fold(c) == fold(d), (c, d)
                    checked += 1
    assert checked > 2000
