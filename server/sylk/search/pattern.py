"""A search pattern (``search.grep``): the user's literal or regular expression compiled
to match within one line as ripgrep would, and the trigrams a file must hold to contain
a match.

The trigrams come from the parse tree (``re._parser``), after Russ Cox's codesearch
(swtch.com/~rsc/regexp/regexp4.html): a node is described by the strings it matches
when they are few (``exact``), else by the strings its matches start and end with and
a query every text holding a match satisfies. Strings are folded (``text.folding``) as
they are read: folding is per character, so a match's folding is a substring of the
file's, whose trigrams ``ingest.grams.file_grams`` holds, whatever the case mode. What
the analysis cannot read (a large class, ``.``, ``\\w``, a backreference, a repeat that
may be absent, a lookaround) stands for "any string", never for a requirement.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from itertools import groupby
from re import _constants as sre
from re import _parser
from typing import Any, TypeVar

import attrs

from ..errors import FieldError
from ..ingest.grams import GramQuery, literal_grams  # GramQuery: the index's query type
from ..text import rg_classes
from ..text.folding import fold

_T = TypeVar("_T")
MODES = ("exact", "regex")
_MAX_EXACT = 16  # strings in an exact set (and characters a class may expand to)
_MAX_AFFIX = 32  # strings in a prefix or suffix set
_MAX_COPIES = 3  # copies of a repeated node the analysis spells out
_NEWLINE = 10
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)
_LEADING_FLAGS = re.compile(r"(?:\(\?[aiLmsux]+\))*")
_LEADING_FLAGS_VERBOSE = re.compile(r"(?:\(\?[aiLmsux]+\)|[ \t\n\r\v\f]+|#[^\n]*\n?)*")
# a pattern whose assertions may read past a line's edge is checked on every line
_EVERY_LINE = re.compile(r"^", re.MULTILINE)
# rg's [[:alpha:]]: Python reads a set of "[:alph" and then "]" (with a FutureWarning)
_POSIX_CLASS = re.compile(r"(?<!\\)\[(?:[^\]\\]|\\.)*?(\[:\^?[a-z]+:\])")


class PatternError(FieldError):
    """A pattern that cannot be searched (empty, invalid, or holding a line break), or a
    bad search option, worded for the user."""

    def __init__(self, message: str, field: str = "query") -> None:
        super().__init__(field, message)


_TRUE = GramQuery("all")


@attrs.frozen
class Pattern:
    """A compiled search pattern. ``line_regex`` matches within one line (a str without
    "\\n"); ``text_regex`` finds candidate lines in a whole file's text (the caller
    verifies the line of each match start with ``line_regex``, then goes on from the
    next line): the same expression under re.MULTILINE, or, when the pattern holds an
    assertion that could read across a line break (lookaround, ``\\A``, ``\\Z``), a
    regex matching at every line start. ``grams``: what a file must hold to contain a
    match; None when the pattern has no usable literal (every file is read).
    ``needle``: a string every match contains (the longest run of literal characters
    the pattern cannot do without; "" when none), folded when ``needle_folded`` (the
    match may differ from it in case): lines holding it are found with ``str.find``,
    which is far faster than Python's regex engine walking every position."""

    source: str
    mode: str
    ignore_case: bool
    whole_word: bool
    line_regex: re.Pattern[str]
    text_regex: re.Pattern[str]
    grams: GramQuery | None
    needle: str = ""
    needle_folded: bool = False
    # the pattern holds \w \s \b ..., which rg reads otherwise than Python on a line that
    # is not ASCII: such a line is verified with ``unicode_regex`` (text.rg_classes.python_agrees)
    rg_classes: bool = False

    @property
    def unicode_regex(self) -> re.Pattern[str] | None:
        """``line_regex`` with rg's ``\\w \\s \\b`` (built once, on first use); None when
        the pattern holds none of them."""
        return _unicode_regex(self.line_regex.pattern, self.line_regex.flags) if self.rg_classes else None

    def line_matches(self, line: str, as_python: bool = False) -> list[tuple[int, int]] | None:
        """None when the line does not match; else the (start, end) str offsets of every
        non-empty match (re.finditer), [] when only empty matches. ``as_python``: the
        caller knows Python reads the line as rg does (its file does: ``python_agrees``)."""
        as_python = as_python or not self.rg_classes or rg_classes.python_agrees(line)
        regex = self.line_regex if as_python else self.unicode_regex
        assert regex is not None
        matches = list(regex.finditer(line))
        return [m.span() for m in matches if m.end() > m.start()] if matches else None


def compile_pattern(text: str, *, mode: str = "regex", case: bool | str = "smart",
                    whole_word: bool = False) -> Pattern:
    """``text`` compiled for a line search. ``mode``: "exact" (a literal) or "regex"
    (Python ``re`` syntax); ``case``: True (sensitive), False, or "smart" (sensitive
    when the pattern holds an upper-case letter, or no literal at all, as ``rg -S``);
    ``whole_word``: as ``rg -w``. Raises PatternError for a pattern that cannot be searched."""
    if mode not in MODES:
        raise PatternError(f"mode must be one of {', '.join(MODES)}, not {mode!r}", "mode")
    if not (case is True or case is False or case == "smart"):
        raise PatternError(f"case must be true, false or \"smart\", not {case!r}", "case")
    if not text:
        raise PatternError("the pattern is empty")
    source = re.escape(text) if mode == "exact" else text
    posix = _POSIX_CLASS.search(source) if mode == "regex" else None
    if posix:
        raise PatternError(f"POSIX classes such as {posix.group(1)} are not supported: write a class "
                           "instead ([a-zA-Z] for [:alpha:], \\d for [:digit:], \\s for [:space:])")
    parsed = _checked(_parser.parse, source, 0)
    if any(_is_line_break(op, av) for op, av in _walk(parsed)):
        raise PatternError("the pattern holds a line break (\\n), and a search cannot match a line "
                           "break: Sylk searches line by line, as rg")
    if case == "smart":
        chars = _literal_chars(parsed)
        ignore_case = bool(chars) and not any(chr(c).isupper() for c in chars)
    else:
        ignore_case = not case
    flags = re.IGNORECASE if ignore_case else 0
    line_regex = _checked(re.compile, source, flags)  # what the parser let through (look-behinds)
    if whole_word:
        source = _whole_word(source, bool(parsed.state.flags & re.VERBOSE))
        line_regex = _checked(re.compile, source, flags)
    across = any(op in (sre.ASSERT, sre.ASSERT_NOT)
                 or (op is sre.AT and av in (sre.AT_BEGINNING_STRING, sre.AT_END_STRING))
                 for op, av in _walk(parsed))
    query = _checked(lambda: _requirement(_sequence(parsed)))
    needle, scoped = _needle(parsed)
    folded = ignore_case or scoped or bool(parsed.state.flags & re.IGNORECASE)
    return Pattern(source=text, mode=mode, ignore_case=ignore_case, whole_word=whole_word,
                   line_regex=line_regex,
                   text_regex=_EVERY_LINE if across else re.compile(source, flags | re.MULTILINE),
                   grams=None if query == _TRUE else query, needle=fold(needle) if folded else needle,
                   needle_folded=folded, rg_classes=rg_classes.holds_classes(source))


def has_upper(text: str, mode: str) -> bool:
    """Whether the pattern holds an upper-case letter, smart case's test: its literal
    characters and class range ends count, escapes such as ``\\W`` or ``\\S`` do not."""
    if mode == "exact":
        return any(c.isupper() for c in text)
    return any(chr(c).isupper() for c in _literal_chars(_checked(_parser.parse, text, 0)))


def _checked(call: Callable[..., _T], *args: object) -> _T:
    """``call(*args)`` (parsing, compiling or reading a pattern), its errors as PatternError."""
    try:
        return call(*args)
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise PatternError(f"invalid regular expression{where}: {exc.msg}") from None
    except RecursionError:
        raise PatternError("the pattern is nested too deeply") from None


def _whole_word(source: str, verbose: bool) -> str:
    """``source`` matching only between non-word characters or the line's edges (rg -w);
    global flags such as ``(?i)`` must stay in front."""
    lead = (_LEADING_FLAGS_VERBOSE if verbose else _LEADING_FLAGS).match(source).end()
    close = "\n)" if verbose else ")"  # a trailing comment must not swallow the ")"
    return f"{source[:lead]}(?<!\\w)(?:{source[lead:]}{close}(?!\\w)"


@functools.lru_cache(maxsize=64)
def _unicode_regex(source: str, flags: int) -> re.Pattern[str]:
    rewritten = rg_classes.rewritten(source)
    return re.compile(rewritten if rewritten is not None else source, flags)


def _needle(parsed: _parser.SubPattern) -> tuple[str, bool]:
    """The longest run of literal characters in the pattern's top-level sequence (groups
    of literals included; anchors and lookarounds, which match no character, do not
    break a run), and whether a group on the way turns a flag on or off (its case may
    then differ from the pattern's)."""
    best, run, scoped = "", "", False
    for op, av in parsed:
        if op is sre.LITERAL:
            run += chr(av)
        elif op is sre.SUBPATTERN and all(o is sre.LITERAL for o, _a in av[3]):
            run += "".join(chr(a) for _o, a in av[3])
            scoped = scoped or bool(av[1] or av[2])
        elif op is sre.AT or op in (sre.ASSERT, sre.ASSERT_NOT):
            continue
        else:
            best, run = max(best, run, key=len), ""
    return max(best, run, key=len), scoped


def _walk(seq: _parser.SubPattern) -> Iterator[tuple[Any, Any]]:
    """Every (opcode, argument) of a parse tree, depth first."""
    for op, av in seq:
        yield op, av
        inner = (av[1] if op is sre.BRANCH else [av[3]] if op is sre.SUBPATTERN
                 else [av[2]] if op in _REPEATS else [av[1]] if op in (sre.ASSERT, sre.ASSERT_NOT)
                 else [av] if op is sre.ATOMIC_GROUP else av[1:] if op is sre.GROUPREF_EXISTS else [])
        for sub in inner:
            if sub is not None:
                yield from _walk(sub)


def _is_line_break(op: Any, av: Any) -> bool:
    """Whether a node asks for a line break: a "\\n" literal, or one in a class that is
    not negated (``[^\\n]`` matches any character of a line, as in rg)."""
    if op is sre.LITERAL:
        return av == _NEWLINE
    if op is sre.IN and not (av and av[0][0] is sre.NEGATE):
        return any((iop is sre.LITERAL and iav == _NEWLINE)  # or a range's end:
                   or (iop is sre.RANGE and _NEWLINE in iav) for iop, iav in av)
    return False


def _literal_chars(parsed: _parser.SubPattern) -> list[int]:
    """The code points written as literals in a parse tree, class range ends included."""
    chars: list[int] = []
    for op, av in _walk(parsed):
        if op is sre.LITERAL or op is sre.NOT_LITERAL:
            chars.append(av)
        elif op is sre.IN:
            chars.extend(c for iop, iav in av if iop in (sre.LITERAL, sre.RANGE)
                         for c in (iav if iop is sre.RANGE else (iav,)))
    return chars


def _combine(op: str, parts: Iterable[GramQuery]) -> GramQuery:
    """The conjunction (op "all") or disjunction ("any") of ``parts``, flattened and
    simplified (``_absorb``)."""
    grams: set[str] = set()
    subs: list[GramQuery] = []
    for part in parts:
        if part == _TRUE:
            if op == "any":
                return _TRUE
        elif part.op == op:
            grams.update(part.grams)
            subs.extend(part.subs)
        elif len(part.grams) == 1 and not part.subs:
            grams.add(part.grams[0])
        else:
            subs.append(part)
    kept = _absorb(grams, subs)
    if len(grams) + len(kept) == 1:
        return kept[0] if kept else GramQuery("all", tuple(grams))
    return GramQuery(op, tuple(sorted(grams)), tuple(kept))


def _absorb(grams: set[str], subs: list[GramQuery]) -> list[GramQuery]:
    """The subs of a query with ``grams`` that change its answer: a sub sharing one of
    ``grams`` goes (a ∧ (a ∨ b) = a, a ∨ (a ∧ b) = a), and so does one holding all of
    another sub's terms."""
    distinct = [s for s in dict.fromkeys(subs) if grams.isdisjoint(s.grams)]
    if len(distinct) > _MAX_AFFIX:  # (the pairs of a huge alternation would take too long)
        return distinct
    terms = [(set(s.grams), set(s.subs)) for s in distinct]
    return [s for s, (g, q) in zip(distinct, terms, strict=True) if not any(
        t is not s and h <= g and r <= q for t, (h, r) in zip(distinct, terms, strict=True))]


def _require(strings: AbstractSet[str]) -> GramQuery:
    """What a text holding one of ``strings`` (folded) holds: match-all when one is
    shorter than a trigram."""
    return _combine("any", (GramQuery("all", tuple(literal_grams(s))) for s in sorted(strings)))


_NOTHING = frozenset({""})  # a prefix or suffix set that says nothing


@attrs.frozen
class _Info:
    """What the analysis knows of the strings a node matches, folded: ``exact``, all of
    them (None: too many or unknown); else every match starts with a member of
    ``prefix`` and ends with one of ``suffix`` (cut to two characters; {""} when
    unknown, as for a node that may match ""), and a text holding a match satisfies
    ``match``."""

    exact: frozenset[str] | None
    prefix: frozenset[str] = _NOTHING
    suffix: frozenset[str] = _NOTHING
    match: GramQuery = _TRUE


_UNKNOWN = _Info(None)  # any string, or any character
_EMPTY = _Info(frozenset({""}))


def _requirement(info: _Info) -> GramQuery:
    """What a text holding a match of ``info``'s node satisfies."""
    return info.match if info.exact is None else _require(info.exact)


def _starts(info: _Info) -> frozenset[str]:
    return info.prefix if info.exact is None else info.exact


def _ends(info: _Info) -> frozenset[str]:
    return info.suffix if info.exact is None else info.exact


def _trim(strings: AbstractSet[str], at_end: bool) -> frozenset[str]:
    """A prefix (suffix) set cut to its first (last) characters, small enough to keep."""
    if "" in strings:
        return _NOTHING
    for keep in (2, 1):
        cut = frozenset(s[-keep:] if at_end else s[:keep] for s in strings)
        if len(cut) <= _MAX_AFFIX:
            return cut
    return _NOTHING


def _cross(left: AbstractSet[str], right: AbstractSet[str], limit: int) -> frozenset[str] | None:
    """Every string of ``left`` followed by one of ``right``; None past ``limit``."""
    if len(left) * len(right) > limit:
        return None
    return frozenset(a + b for a in left for b in right)


def _inexact(match: GramQuery, prefix: AbstractSet[str], suffix: AbstractSet[str]) -> _Info:
    return _Info(None, _trim(prefix, False), _trim(suffix, True), match)


def _concat(x: _Info, y: _Info) -> _Info:
    """The description of ``x`` followed by ``y``."""
    if x.exact is not None and y.exact is not None:
        both = _cross(x.exact, y.exact, _MAX_EXACT)
        if both is not None:
            return _Info(both)
    prefix = _cross(x.exact, _starts(y), _MAX_AFFIX) if x.exact is not None else None
    suffix = _cross(_ends(x), y.exact, _MAX_AFFIX) if y.exact is not None else None
    # a joined prefix (suffix) set holds x (y) whole and the strings across the join
    head = _require(prefix) if prefix is not None else _requirement(x)
    tail = _require(suffix) if suffix is not None else _requirement(y)
    parts = [head, tail]
    if prefix is None and suffix is None:
        edge = _cross(_trim(_ends(x), True), _trim(_starts(y), False), _MAX_AFFIX)
        if edge is not None:
            parts.append(_require(edge))
    return _inexact(_combine("all", parts), _starts(x) if prefix is None else prefix,
                    _ends(y) if suffix is None else suffix)


def _alternate(infos: list[_Info]) -> _Info:
    """The description of a match of any one of ``infos``."""
    starts = frozenset().union(*map(_starts, infos))
    if all(i.exact is not None for i in infos) and len(starts) <= _MAX_EXACT:
        return _Info(starts)
    return _inexact(_combine("any", map(_requirement, infos)), starts, frozenset().union(*map(_ends, infos)))


def _repeat(low: int, high: int, x: _Info) -> _Info:
    """The description of ``low`` to ``high`` copies of ``x``."""
    if high == 0:
        return _EMPTY
    if low == 0:
        if high == 1 and x.exact is not None and len(x.exact) < _MAX_EXACT:
            return _Info(x.exact | {""})
        return _UNKNOWN
    copies = min(low, _MAX_COPIES)
    info = x
    for _ in range(copies - 1):
        info = _concat(info, x)
    return info if high == copies else _concat(info, _UNKNOWN)


def _class(items: list[tuple[Any, Any]]) -> _Info:
    """The description of a character class: its characters when few, else unknown."""
    chars: set[str] = set()
    for op, av in items:
        if op is sre.LITERAL:
            chars.add(fold(chr(av)))
        elif op is sre.RANGE and av[1] - av[0] < _MAX_EXACT:
            chars.update(fold(chr(c)) for c in range(av[0], av[1] + 1))
        else:  # a negation, a category (\w, \d), a large range
            return _UNKNOWN
        if len(chars) > _MAX_EXACT:
            return _UNKNOWN
    return _Info(frozenset(chars))


def _sequence(seq: _parser.SubPattern) -> _Info:
    """The description of a sequence of nodes (a run of literals read as one string)."""
    info = _EMPTY
    for literal, nodes in groupby(seq, lambda node: node[0] is sre.LITERAL):
        if literal:
            info = _concat(info, _Info(frozenset({fold("".join(chr(av) for _, av in nodes))})))
        else:
            for op, av in nodes:
                info = _concat(info, _node(op, av))
    return info


def _node(op: Any, av: Any) -> _Info:
    """The description of one node other than a literal."""
    if op is sre.SUBPATTERN:
        return _sequence(av[3])
    if op is sre.ATOMIC_GROUP:
        return _sequence(av)
    if op is sre.BRANCH:
        return _alternate([_sequence(a) for a in av[1]])
    if op is sre.GROUPREF_EXISTS:
        return _alternate([_sequence(av[1]), _EMPTY if av[2] is None else _sequence(av[2])])
    if op in _REPEATS:
        return _repeat(av[0], av[1], _sequence(av[2]))
    if op is sre.IN:
        return _class(av)
    if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
        return _EMPTY  # matches no character
    return _UNKNOWN  # ANY, NOT_LITERAL, GROUPREF, anything else
