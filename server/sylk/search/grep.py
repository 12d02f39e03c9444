"""Exact and regex search: every line of the indexed files that a literal or a regular
expression matches, as ripgrep would find it, answered from the trigram index.

Records first; the search itself follows.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence

import attrs

from ..ingest.symbols import Symbol
from ..text import rg_classes
from ..text.folding import fold
from ..text.positions import utf16_len
from .filters import LINE_LEVEL_FILTERS, Admit
from .pattern import Pattern
from .query import GrepRequest
from .results import IndexState

@attrs.frozen
class LineHit:
    """One matching line; ``line`` 0-based, ``matches`` the (start, end) UTF-16 columns of
    every non-empty match on it, in order."""

    path: str
    language: str
    type: str
    line: int
    text: str  # the line, without its line break
    matches: tuple[tuple[int, int], ...]
    symbol: str = ""  # the innermost symbol holding the line, "" when none
    container: str = ""
    kind: str = ""


@attrs.frozen
class GrepResult:
    """One page of matching lines. ``total_hits`` counts matching lines; it is a lower
    bound when ``lower_bound`` (the search stopped early: the page was full and the
    time limit came, or ``partial``). ``scanned``: the pattern had no literal the
    trigram index could use, so every indexed file was read. ``partial``: the time
    limit stopped the search before every candidate was read (the page may lack lines
    that a complete search would have put on it)."""

    query: str
    mode: str
    took_ms: float
    total_hits: int
    hits: list[LineHit]
    index: IndexState
    lower_bound: bool = False
    scanned: bool = False
    partial: bool = False
    files_searched: int = 0
    message: str | None = None


@attrs.frozen
class GrepFile:
    """A file to search: its path and what the filters and the hits say of it."""

    path: str
    language: str
    type: str


# Once the page is full, the search goes on counting matching lines for at most this
# long (within the request's time limit), then says its total is a lower bound: an
# exact count of a common word costs a read of every file holding it.
COUNT_TIME_S = 0.1
# how many lines of one file are verified between two looks at the clock
_CLOCK_EVERY = 256


def search(req: GrepRequest, pattern: Pattern, files: Sequence[GrepFile], read: Callable[[str], str | None],
           enclosing: Callable[[str, int], Symbol | None], state: IndexState, *, scanned: bool,
           clock: Callable[[], float] = time.monotonic) -> GrepResult:
    """The matching lines of ``files`` (in their order), ``read`` giving each one's text
    (None: gone since), the page ``req.offset``:``req.offset + req.limit`` of them with the
    symbol holding each (``enclosing``). ``scanned``: ``files`` is every indexed file, not
    the trigram index's candidates (said in the result)."""
    start = clock()
    deadline = start + req.time_limit_s if req.time_limit_s is not None else None
    # the filters of a line (the symbol enclosing it: kinds), after those of its file
    of_line = Admit(req.filters.only(LINE_LEVEL_FILTERS))
    hits: list[LineHit] = []
    total = searched = 0
    stopped = False
    full_at: float | None = None
    want = None if req.limit is None else req.offset + req.limit
    for f in files:
        if deadline is not None and clock() > deadline:
            stopped = True
            break
        if full_at is not None and req.limit is not None and clock() > full_at + COUNT_TIME_S:
            stopped = True
            break
        text = read(f.path)
        searched += 1
        if text is None:
            continue
        for n, (line_no, line, spans) in enumerate(matching_lines(pattern, text)):
            symbol = enclosing(f.path, line_no) if of_line or (want is None or total < want) else None
            if of_line and not of_line(symbol):
                continue
            total += 1
            if total > req.offset and (want is None or total <= want):
                hits.append(_line_hit(f, line_no, line, spans, symbol))
                if want is not None and total == want:
                    full_at = clock()
            if n % _CLOCK_EVERY == _CLOCK_EVERY - 1 and deadline is not None and clock() > deadline:
                stopped = True
                break
        if stopped:
            break
    partial = stopped and (want is None or total < want)
    return GrepResult(req.pattern, req.mode, round((clock() - start) * 1000, 2), total, hits, state,
                      lower_bound=stopped, scanned=scanned, partial=partial, files_searched=searched,
                      message=_message(stopped, partial, scanned, req))


def _message(stopped: bool, partial: bool, scanned: bool, req: GrepRequest) -> str | None:
    notes = []
    if scanned:
        notes.append("the pattern has no literal of 3 or more characters to look up: every indexed file was read")
    if partial:
        notes.append(f"stopped after {req.time_limit_s:g} s: the answer is partial")
    elif stopped:
        notes.append("stopped counting once the page was full: the total is a lower bound")
    return "; ".join(notes) or None


# A file whose needle (Pattern.needle) is on at most this share of its lines is read
# needle by needle; in others the regex finds the lines (one C call for the file).
NEEDLE_SHARE = 0.25
NEEDLE_FEW = 64  # (this few is read needle by needle without counting the lines)


def needle_test(pattern: Pattern) -> Callable[[bytes], bool] | None:
    """A test of a file's bytes (UTF-8, as on disk) that is false only when the file cannot
    hold the pattern's needle, so it need not be decoded; None when there is none. A
    file's needle is in its decoded text only if its bytes are in the file: the needle
    holds no U+FFFD, the one character decoding makes of invalid bytes. A folded needle
    is looked for in the bytes lower-cased when they are ASCII (else the file is read)."""
    needle = pattern.needle
    if not needle or "\ufffd" in needle:
        return None
    wanted = needle.encode("utf-8", "surrogatepass")
    if not pattern.needle_folded:
        return lambda raw: wanted in raw
    return lambda raw: not raw.isascii() or wanted in raw.lower()


def matching_lines(pattern: Pattern, text: str) -> Iterator[tuple[int, str, list[tuple[int, int]]]]:
    """(0-based line number, line, match spans) of each line of ``text`` that ``pattern``
    matches, in order. The next candidate line is where the pattern's needle is next
    (``str.find``), or where a search of the whole text finds the next match, and that
    line is verified alone: a match of the whole text may cross a line break (``\\s``,
    ``[^x]``), one of the line never does, as with rg."""
    as_rg = pattern.rg_classes and not rg_classes.python_agrees(text)
    needle = pattern.needle
    if needle:
        hay = fold(text) if pattern.needle_folded else text
        if len(hay) == len(text):  # (folding kept every character's place)
            found = hay.count(needle)
            if not found:
                return
            # (every line holding a match holds the needle, whichever reading of \w verifies it)
            if as_rg or found <= NEEDLE_FEW or found <= NEEDLE_SHARE * (text.count("\n") + 1):
                yield from _candidate_lines(pattern, text, lambda pos: hay.find(needle, pos), not as_rg)
                return
    if as_rg:
        yield from _rg_classed_lines(pattern, text)
        return
    search = pattern.text_regex.search

    def next_match(pos: int) -> int:
        m = search(text, pos)
        return m.start() if m is not None else -1
    yield from _candidate_lines(pattern, text, next_match, True)


def _rg_classed_lines(pattern: Pattern, text: str) -> Iterator[tuple[int, str, list[tuple[int, int]]]]:
    """``matching_lines`` of a text that is not plain ASCII, for a pattern whose ``\\w``, ``\\s``
    or ``\\b`` Python reads otherwise than rg: a line rg would match either matches
    Python's reading too (then it is found as usual) or holds a character the two class
    differently (then it is looked at too); each is verified with rg's reading."""
    plain = attrs.evolve(pattern, rg_classes=False)
    found = {n for n, _line, _spans in matching_lines(plain, text)}
    line_no, last = 0, 0
    for m in rg_classes.differing().finditer(text):
        line_no += text.count("\n", last, m.start())
        last = m.start()
        found.add(line_no)
    lines = text.split("\n") if found else []
    count = len(lines) - (text == "" or text.endswith("\n"))  # (rg's lines: no empty last one)
    for n in sorted(found):
        if n < count and (spans := pattern.line_matches(lines[n])) is not None:
            yield n, lines[n], spans


def _candidate_lines(pattern: Pattern, text: str, next_at: Callable[[int], int],
                     as_python: bool) -> Iterator[tuple[int, str, list[tuple[int, int]]]]:
    """``matching_lines`` of the lines where ``next_at(pos)`` (-1: none) says a match may
    start, at or after ``pos``; ``as_python``: Python reads the text as rg does."""
    pos = line_start = line_no = 0
    end = len(text)
    while pos <= end:
        at = next_at(pos)
        if at < 0:
            return
        first = text.rfind("\n", 0, at) + 1
        if first == end and (end == 0 or text[end - 1] == "\n"):
            return  # (no line follows the last line break, as for rg: no empty last line)
        line_no += text.count("\n", line_start, first)
        line_start = first
        stop = text.find("\n", first)
        stop = end if stop < 0 else stop
        line = text[first:stop]
        spans = pattern.line_matches(line, as_python)
        if spans is not None:
            yield line_no, line, spans
        pos = stop + 1


def _line_hit(f: GrepFile, line_no: int, line: str, spans: list[tuple[int, int]], symbol: Symbol | None) -> LineHit:
    shown = line[:-1] if line.endswith("\r") else line
    if line.isascii():
        matches = tuple((a, b) for a, b in spans)
    else:
        matches = tuple((utf16_len(line[:a]), utf16_len(line[:b])) for a, b in spans)
    return LineHit(f.path, f.language, f.type, line_no, shown, matches,
                   symbol.name if symbol else "", symbol.container if symbol else "", symbol.kind if symbol else "")
