"""Chunks: the unit of retrieval (lexical hits, vectors, snippets).

``chunk_file`` cuts one file into chunks from its lines and its symbols
(``symbols.extract``); it runs in parser worker processes on every file, so it
splits the text into lines once and walks the symbols once, never rescanning
the text per symbol.

Source files (a language we parse):

* one chunk per function, method, constructor, macro and type alias: its full
  source lines, from the comments, decorators and attributes directly above it
  (no blank line between) to its last line;
* one chunk per class-like definition (class, struct, interface, trait, enum,
  union, module, namespace): its header lines (from the definition's first line
  up to its first member: the ``class`` line, the docstring), then one line per
  direct member, indented like the member, holding its decorators and the
  member symbol's signature (fields included), then the closing ``}``/``end``
  line. Method bodies are not copied: methods have chunks of their own. The
  chunk's range is the whole definition;
* nested definitions get their own chunks; an outer function's chunk keeps its
  full text, nested functions included (they are part of what it does);
* signature-only methods of an interface or trait (one line, no body) are
  member lines of that chunk, not chunks of their own;
* fields, properties, constants, variables and enum members are never chunks of
  their own: they belong to the class chunk (member lines) or to the lines
  outside every definition;
* the lines outside every top-level chunk form runs of consecutive lines; the
  run before the first definition is the ``file_header`` chunk (module
  docstring, imports, constants), each later run holding a word character is a
  ``top_level`` chunk (``if __name__ == "__main__":``, statements between
  definitions). Runs stay separate chunks rather than one concatenated header,
  so every chunk but a class summary is a contiguous slice of the file and a
  snippet maps to its lines by offset.

Markdown: one ``section`` chunk per heading, from the heading line to the line
before the next heading of any level, so a parent section holds only its own
text (its sub-sections are chunks of their own); the text before the first
heading is the ``file_header``. Without headings, windows.

Config files (by extension or file name): one ``key`` chunk per top-level key
found by line rules (YAML ``key:`` at column 0; TOML/INI ``[section]`` at column
0, and ``key = value`` before the first section; JSON ``"key":`` at the
indentation of the first key inside a root ``{``); comment lines directly above
a key belong to it; consecutive keys of fewer than 3 lines each are grouped into
one chunk (symbol: their names joined with ", ") so one-line keys do not become
one-line chunks. When no key is found (XML, minified JSON, top-level arrays),
windows.

Anything else (plain text, sources we cannot parse): overlapping ``window``
chunks (60 lines, 10 of overlap), windows holding only blank lines skipped.

Any chunk longer than ``max_lines`` lines is split into parts of ``max_lines``
lines overlapping by ``overlap`` lines, numbered ``part`` 1..n (a class summary
splits the same way over its summary lines). Whole chunks and windows have
part 0.

A chunk is exported when the definition it holds is (``Symbol.exported``); file
headers, top-level code, sections, keys and windows hold none and are not.

``embed_text`` is what the embedding model sees, budgeted for a small model
(all-MiniLM-L6-v2: 256 tokens, ~4 characters a token for code), most meaningful
first: the path; the kind, the qualified name and, when an identifier has
several words, the words lower-cased (``method UserRepository.get_user_by_id
(user repository get user by id)``); decorators; the signature; the docstring
or leading comments (whitespace collapsed, at most half the budget); then the
body lines stripped of indentation, blank lines dropped, skipping the lines
that repeat the signature and the docstring. Parts after the first carry the
path, name and signature but not the docstring. The whole is cut at
``embed_chars`` characters. ``text_hash`` is a BLAKE2b (16 bytes) of it, the
embedding cache key (with the model id): deterministic across runs.

Why one ~360-line class: every kind of file goes through the same ``_Builder``,
whose passes (source, markdown, config, windows) share one split of the text into
lines, one coverage record and one emit path (parts, budgets, hashes). What needs
none of that state lives elsewhere: config syntaxes and key rules in
``config_files``, the kinds of files in ``file_types``, the embedding text and its
hash in ``embed_text``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

import attrs

from ..languages import BY_NAME
from .config_files import config_keys, config_syntax
from .embed_text import embed_text as _embed_text
from .embed_text import text_hash
from .embed_text import title as _title
from .file_types import CONFIG, MARKDOWN, SOURCE_CODE, file_type, name_and_suffix
from .symbols import TYPE_KINDS, Symbol

MAX_LINES = 120
OVERLAP = 20
EMBED_CHARS = 1000
WINDOW_LINES = 60
WINDOW_OVERLAP = 10
# Comment lines and decorators above a definition join its chunk up to this many lines.
MAX_LEADING = 40
# Config keys shorter than this many lines are grouped with their short neighbours.
MIN_KEY_LINES = 3
MAX_GROUP_NAME = 100

CONTAINER_KINDS = TYPE_KINDS | {"module", "namespace"}
LEAF_KINDS = frozenset({"function", "method", "constructor", "macro", "type"})
# Containers whose one-line methods are declarations without a body.
_DECLARING = frozenset({"interface", "trait"})

_WORD = re.compile(r"\w")
_HEREDOC = ('"""', "'''")


def _heredoc_opener(lines: list[str], k: int, floor: int, decorators: tuple[str, ...]) -> int | None:
    """Where a decorator whose argument is a heredoc starts, when line ``k`` closes it (Elixir's
    ``@doc \"\"\"`` ... ``\"\"\"`` above a ``def``): the doc joins the definition's chunk."""
    if not decorators or not lines[k].rstrip().endswith(_HEREDOC):
        return None
    for j in range(k - 1, floor - 1, -1):
        text = lines[j].lstrip()
        if any(q in text for q in _HEREDOC):
            return j if text.startswith(decorators) else None
    return None
_PY_DOC = re.compile(r"""[rRuUbBfF]{0,2}("{3}|'{3}|"|')""")


@attrs.frozen(slots=True)
class Chunk:
    path: str  # workspace-relative posix path
    language: str | None  # sylk language name, None for plain text
    type: str  # "source_code" | "markdown" | "config" | "text"
    # symbol kind for symbol chunks ("function", "method", "class", ...), "file_header",
    # "top_level" (code between definitions), "section" (markdown), "key" (config), "window"
    kind: str
    symbol: str  # symbol name / heading text / config key(s); "" for header, top-level code and windows
    container: str  # e.g. "UserRepository" for a method; "" when none
    start_line: int  # 0-based, inclusive
    end_line: int  # 0-based, inclusive
    text: str  # the chunk's source lines (a class: its summary lines)
    embed_text: str  # the budgeted text to embed
    text_hash: str  # blake2b-128 hex of embed_text: the embedding cache key (with the model id)
    part: int = 0  # 0 for a whole chunk; 1..n for the parts of a long body split with overlap
    exported: bool = False  # the definition it holds is exported (Symbol.exported)


def split_lines(text: str) -> list[str]:
    """Lines as tree-sitter counts them (only ``\\n`` ends a line), without a ``\\r`` before it;
    no empty last line after a final newline."""
    lines = text.split("\n")
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if len(lines) > 1 and not lines[-1]:
        lines.pop()
    return lines


class Cut(NamedTuple):
    """One chunk as cut from a file, before it is a ``Chunk`` (with its text joined) or a
    row for the stores (``parsing.chunk_rows``, which needs no text but a class summary's)."""
    kind: str
    symbol: str
    container: str
    start_line: int
    end_line: int
    part: int
    embed_text: str
    text_hash: str
    texts: Sequence[str]  # the chunk's lines (a class: its summary lines), without line ends
    linenos: Sequence[int]  # the line of the file each of ``texts`` comes from
    exported: bool = False  # the definition it holds is exported (Symbol.exported)


class FileCuts(NamedTuple):
    type: str  # file_type
    lines: list[str]  # split_lines of the text
    cuts: list[Cut]  # in order of their first line (parts in order)


def cut_file(path: str, language: str | None, text: str, symbols: Sequence[Symbol], *,
             max_lines: int = MAX_LINES, overlap: int = OVERLAP, embed_chars: int = EMBED_CHARS,
             window_lines: int = WINDOW_LINES, window_overlap: int = WINDOW_OVERLAP) -> FileCuts:
    """The chunks of one file as cuts, with the file's type and lines (see ``chunk_file``)."""
    ftype = file_type(path, language)
    lines = split_lines(text)
    if not text or text.isspace():
        return FileCuts(ftype, lines, [])
    b = _Builder(path, language, ftype, lines, max_lines, overlap, embed_chars)
    if ftype == MARKDOWN:
        headings = [s for s in symbols if s.kind == "heading"]
        if headings:
            b.markdown(headings)
        else:
            b.windows(window_lines, window_overlap)
    elif ftype == CONFIG:
        name, ext = name_and_suffix(path)
        if not b.config(config_syntax(name, ext), window_lines):
            b.windows(window_lines, window_overlap)
    elif ftype == SOURCE_CODE and language is not None:
        b.source(symbols)
    else:
        b.windows(window_lines, window_overlap)
    out = b.cuts
    out.sort(key=lambda c: (c.start_line, -c.end_line, c.part))
    return FileCuts(ftype, lines, out)


def chunk_file(path: str, language: str | None, text: str, symbols: Sequence[Symbol], *,
               max_lines: int = MAX_LINES, overlap: int = OVERLAP, embed_chars: int = EMBED_CHARS,
               window_lines: int = WINDOW_LINES, window_overlap: int = WINDOW_OVERLAP) -> list[Chunk]:
    """The chunks of one file, in order of their first line (parts in order)."""
    if not text or text.isspace():
        return []
    ftype, _lines, cuts = cut_file(path, language, text, symbols, max_lines=max_lines, overlap=overlap,
                                   embed_chars=embed_chars, window_lines=window_lines,
                                   window_overlap=window_overlap)
    return [Chunk(path, language, ftype, c.kind, c.symbol, c.container, c.start_line, c.end_line,
                  "\n".join(c.texts), c.embed_text, c.text_hash, c.part, c.exported) for c in cuts]


def window_chunk(path: str, language: str | None, type: str, start_line: int, end_line: int, text: str, *,
                 embed_chars: int = EMBED_CHARS) -> Chunk:
    """One ``window`` chunk of given lines (``text`` is lines start_line..end_line)."""
    c = window_cut(path, start_line, text.split("\n"), embed_chars=embed_chars)
    return Chunk(path, language, type, "window", "", "", start_line, end_line, text, c.embed_text, c.text_hash)


def window_cut(path: str, start_line: int, texts: Sequence[str], *, embed_chars: int = EMBED_CHARS) -> Cut:
    """``window_chunk`` as a cut: ``texts`` are the lines from ``start_line`` on."""
    embed = _embed_text([path], "", texts, 0, len(texts), embed_chars)
    end_line = start_line + len(texts) - 1
    return Cut("window", "", "", start_line, end_line, 0, embed, text_hash(embed), texts,
               range(start_line, end_line + 1))


def _has_word(lines: list[str], start: int, end: int) -> bool:
    search = _WORD.search
    for i in range(start, end + 1):
        if search(lines[i]):
            return True
    return False


class _Builder:
    __slots__ = ("path", "language", "type", "lines", "max_lines", "overlap", "budget", "cuts", "n")

    def __init__(self, path: str, language: str | None, ftype: str, lines: list[str],
                 max_lines: int, overlap: int, budget: int) -> None:
        self.path, self.language, self.type, self.lines = path, language, ftype, lines
        self.max_lines = max(1, max_lines)
        self.overlap = min(max(0, overlap), self.max_lines - 1)
        self.budget = budget
        self.cuts: list[Cut] = []
        self.n = len(lines)

    # emitting -------------------------------------------------------------
    def _add(self, kind: str, symbol: str, container: str, start: int, end: int, texts: Sequence[str],
             linenos: Sequence[int], embed: str, part: int, exported: bool = False) -> None:
        self.cuts.append(Cut(kind, symbol, container, start, end, part, embed, text_hash(embed), texts, linenos,
                             exported))

    def _emit(self, kind: str, symbol: str, container: str, start: int, end: int, texts: Sequence[str],
              linenos: Sequence[int], head: list[str], doc: str, skip: int, part_head: list[str] | None = None,
              exported: bool = False) -> None:
        """A chunk of ``texts`` (the line ``linenos[i]`` is ``texts[i]``) covering ``start..end``,
        split into overlapping parts when long. The embedded body of the first part starts at
        ``texts[skip]``; later parts embed ``part_head`` (default ``head``) and their own lines."""
        n, m = len(texts), self.max_lines
        if n <= m:
            embed = _embed_text(head, doc, texts, skip, n, self.budget)
            self._add(kind, symbol, container, start, end, texts, linenos, embed, 0, exported)
            return
        step = m - self.overlap
        i, part = 0, 0
        while True:
            j = min(i + m, n)
            part += 1
            if i == 0:
                embed = _embed_text(head, doc, texts, skip, j, self.budget)
            else:
                embed = _embed_text(part_head if part_head is not None else head, "", texts, i, j, self.budget)
            self._add(kind, symbol, container, start if i == 0 else linenos[i], end if j == n else linenos[j - 1],
                      texts[i:j], linenos[i:j], embed, part, exported)
            if j == n:
                return
            i += step

    def _emit_lines(self, kind: str, symbol: str, container: str, start: int, end: int, head: list[str],
                    doc: str = "", skip: int = 0, part_head: list[str] | None = None) -> None:
        self._emit(kind, symbol, container, start, end, self.lines[start:end + 1], range(start, end + 1),
                   head, doc, skip, part_head)

    def _trim(self, start: int, end: int) -> tuple[int, int]:
        lines = self.lines
        while start <= end and not lines[start].strip():
            start += 1
        while end >= start and not lines[end].strip():
            end -= 1
        return start, end

    # windows --------------------------------------------------------------
    def windows(self, size: int, overlap: int, start: int = 0, end: int | None = None) -> None:
        size = max(1, size)
        step = max(1, size - min(max(0, overlap), size - 1))
        end = self.n - 1 if end is None else end
        head = [self.path]
        i = start
        while i <= end:
            j = min(i + size - 1, end)
            s, e = self._trim(i, j)
            if s <= e:
                self._emit("window", "", "", s, e, self.lines[s:e + 1], range(s, e + 1), head, "", 0)
            if j == end:
                return
            i += step

    # source ---------------------------------------------------------------
    def source(self, symbols: Sequence[Symbol]) -> None:
        lines, n = self.lines, self.n
        spec = BY_NAME[self.language]  # (source code: a language Sylk parses)
        comments, decorators = spec.comments, spec.decorators
        leading = comments + decorators
        syms = list(symbols)
        keys = [(r[0], r[1], -r[2], -r[3]) for r in (sym.range for sym in syms)]
        if any(keys[k] > keys[k + 1] for k in range(len(keys) - 1)):
            order = sorted(range(len(syms)), key=keys.__getitem__)
            syms = [syms[k] for k in order]
        syms = [sym for sym in syms if sym.range[0] < n]
        count = len(syms)
        ranges = [sym.range for sym in syms]
        # positions as single integers: (line, column) -> line << 24 | column
        opens = [(r[0] << 24) | r[1] for r in ranges]
        closes = [(r[2] << 24) | r[3] for r in ranges]
        # last lines, inclusive: a range ending at column 0 ends on the line before
        ends = [min(r[2] - 1 if r[3] == 0 and r[2] > r[0] else r[2], n - 1) for r in ranges]
        starts = [0] * count  # first line with the comments and decorators above
        parent = [-1] * count  # index of the innermost enclosing symbol
        members: dict[int, list[int]] = {}
        stack: list[int] = []
        prev_end = -1  # last line of the symbols closed so far
        for i in range(count):
            o = opens[i]
            while stack:
                t = stack[-1]
                if closes[t] <= o or (opens[t] == o and closes[t] == closes[i]):
                    stack.pop()
                    if ends[t] > prev_end:
                        prev_end = ends[t]
                else:
                    break
            sl = ranges[i][0]
            lo = prev_end
            if stack:
                p = stack[-1]
                parent[i] = p
                if ranges[p][0] > lo:
                    lo = ranges[p][0]
                if syms[p].kind in CONTAINER_KINDS:
                    members.setdefault(p, []).append(i)
            es = sl
            floor = max(lo + 1, sl - MAX_LEADING)
            while es > floor:
                if lines[es - 1].lstrip().startswith(leading):
                    es -= 1
                    continue
                opener = _heredoc_opener(lines, es - 1, floor, decorators)
                if opener is None:
                    break
                es = opener
            starts[i] = es
            stack.append(i)

        chunked = [False] * count
        top: list[tuple[int, int]] = []  # (start, end) of chunks not inside another chunk
        for i, s in enumerate(syms):
            kind = s.kind
            if kind in LEAF_KINDS:
                p = parent[i]
                if p >= 0 and syms[p].kind in _DECLARING and ends[i] == s.range[0]:
                    continue
                self._leaf(s, starts[i], ends[i], comments)
            elif kind in CONTAINER_KINDS:
                self._container(s, starts[i], ends[i], [(syms[j], starts[j]) for j in members.get(i, ())],
                                comments)
            else:
                continue
            chunked[i] = True
            p = parent[i]
            while p >= 0 and not chunked[p]:
                p = parent[p]
            if p < 0:
                top.append((starts[i], ends[i]))
        self._outside(top)

    def _decorations(self, es: int, sl: int, comments: tuple[str, ...]) -> list[str]:
        if es == sl:
            return []
        return [t for t in (self.lines[k].strip() for k in range(es, sl)) if t and not t.startswith(comments)]

    def _body_skip(self, texts: Sequence[str], i: int, hi: int, sig: str, doc: str) -> int:
        """Index in ``texts`` of the first line after the signature lines starting at ``i``
        (and after a Python docstring right below them); never past the last line."""
        last = hi - 1
        k = i
        if sig:
            while k < last and k < i + 6:
                t = texts[k].strip()
                if t and (sig in t or t.rstrip("{:=; ") in sig):
                    k += 1
                else:
                    break
        if doc and self.language == "python" and k < last:
            t = texts[k].strip()
            m = _PY_DOC.match(t)
            if m:
                q = m.group(1)
                if q in t[m.end():]:
                    k += 1
                else:
                    k += 1
                    while k < last and q not in texts[k]:
                        k += 1
                    k += 1
        return min(k, last)

    def _leaf(self, s: Symbol, es: int, el: int, comments: tuple[str, ...]) -> None:
        sl = s.range[0]
        title = _title(s.kind, s.name, s.container)
        sig = s.signature
        # a one-line definition holds its signature: the line itself says it
        head = [self.path, title]
        if es < sl:
            head += self._decorations(es, sl, comments)
        if sig and el > sl:
            head.append(sig)
        texts = self.lines[es:el + 1]
        skip = self._body_skip(texts, sl - es, len(texts), sig, s.doc) if el > sl else len(texts) - 1
        if len(texts) <= self.max_lines:  # the common case, inlined
            embed = _embed_text(head, s.doc, texts, skip, len(texts), self.budget)
            self.cuts.append(Cut(s.kind, s.name, s.container, es, el, 0, embed,
                                 text_hash(embed),
                                 texts, range(es, el + 1), s.exported))
            return
        self._emit(s.kind, s.name, s.container, es, el, texts, range(es, el + 1), head, s.doc, skip,
                   [self.path, title, sig] if sig else [self.path, title], s.exported)

    def _container(self, s: Symbol, es: int, el: int, members: list[tuple[Symbol, int]],
                   comments: tuple[str, ...]) -> None:
        lines = self.lines
        sl = s.range[0]
        header_end = max(sl, members[0][1] - 1) if members else el
        header_end = min(header_end, el)
        texts = lines[es:header_end + 1]
        linenos: list[int] = list(range(es, header_end + 1))
        last = header_end
        for m, m_es in members:
            m_sl = m.range[0]
            if m_sl <= last:
                continue
            line = lines[m_sl]
            indent = line[: len(line) - len(line.lstrip())]
            for k in range(m_es, m_sl):
                t = lines[k].strip()
                if t and not t.startswith(comments):
                    texts.append(indent + t)
                    linenos.append(k)
            texts.append(indent + (m.signature or line.strip()))
            linenos.append(m_sl)
            last = m_sl
        if el > last and lines[el].strip() in ("}", "};", "end"):
            texts.append(lines[el])
            linenos.append(el)
        title = _title(s.kind, s.name, s.container)
        head = [self.path, title, *self._decorations(es, sl, comments)]
        if s.signature:
            head.append(s.signature)
        skip = self._body_skip(texts, sl - es, len(texts), s.signature, s.doc)
        self._emit(s.kind, s.name, s.container, es, el, texts, linenos, head, s.doc, skip,
                   [self.path, title, s.signature] if s.signature else [self.path, title], s.exported)

    def _outside(self, top: list[tuple[int, int]]) -> None:
        """Chunks of the lines outside every top-level chunk: file_header, then top_level runs."""
        top.sort()
        cursor = 0
        runs: list[tuple[int, int]] = []
        for s, e in top:
            if s > cursor:
                runs.append((cursor, s - 1))
            cursor = max(cursor, e + 1)
        if cursor < self.n:
            runs.append((cursor, self.n - 1))
        first_def = top[0][0] if top else self.n
        head = [self.path]
        for s, e in runs:
            s, e = self._trim(s, e)
            if s > e or not _has_word(self.lines, s, e):
                continue
            kind = "file_header" if s < first_def else "top_level"
            self._emit_lines(kind, "", "", s, e, head)

    # markdown -------------------------------------------------------------
    def markdown(self, headings: list[Symbol]) -> None:
        lines, n = self.lines, self.n
        heads = sorted((h for h in headings if h.range[0] < n), key=lambda h: h.range[0])
        if not heads:
            self.windows(WINDOW_LINES, WINDOW_OVERLAP)
            return
        s, e = self._trim(0, heads[0].range[0] - 1)
        if s <= e and _has_word(lines, s, e):
            self._emit_lines("file_header", "", "", s, e, [self.path])
        for k, h in enumerate(heads):
            start = h.range[0]
            nxt = heads[k + 1].range[0] if k + 1 < len(heads) else n
            if nxt <= start:  # two headings on one line cannot happen; be safe
                continue
            _, end = self._trim(start, nxt - 1)
            title = f"section {h.name}" + (f" (in {h.container})" if h.container else "")
            skip = 1 if end > start else 0
            self._emit_lines("section", h.name, h.container, start, end, [self.path, title], "", skip)

    # config ---------------------------------------------------------------
    def config(self, syntax: str | None, group_lines: int) -> bool:
        """Key chunks by line rules; False when none are found (the caller makes windows)."""
        lines, n = self.lines, self.n
        keys, close = config_keys(lines, syntax)
        if not keys:
            return False
        comments = ("//", "#") if syntax in ("json", "yaml") else ("#", ";")
        # blocks: (start, end, key), comment lines directly above a key joining it
        blocks: list[list] = []
        for k, (i, key) in enumerate(keys):
            floor = keys[k - 1][0] + 1 if k else 0
            s = i
            while s > floor and lines[s - 1].lstrip().startswith(comments) and lines[s - 1].strip():
                s -= 1
            blocks.append([s, i, key])
        for k, blk in enumerate(blocks):
            nxt = blocks[k + 1][0] if k + 1 < len(blocks) else close
            blk[1] = self._trim(blk[0], nxt - 1)[1]
        # the lines before the first key: a header when they say something, else part of the first key
        s, e = self._trim(0, blocks[0][0] - 1)
        if s <= e:
            if _has_word(lines, s, e):
                self._emit_lines("file_header", "", "", s, e, [self.path])
            else:
                blocks[0][0] = s
        if close < n:  # the closing brace joins the last key
            blocks[-1][1] = self._trim(blocks[-1][0], n - 1)[1]
        group: list[list] = []
        for blk in blocks:
            short = blk[1] - blk[0] + 1 < MIN_KEY_LINES
            if group and (not short or blk[1] - group[0][0] + 1 > group_lines):
                self._key_chunk(group)
                group = []
            group.append(blk)
            if not short:
                self._key_chunk(group)
                group = []
        if group:
            self._key_chunk(group)
        return True

    def _key_chunk(self, group: list[list]) -> None:
        start, end = group[0][0], group[-1][1]
        name = ", ".join(b[2] for b in group)
        if len(name) > MAX_GROUP_NAME:
            name = name[: MAX_GROUP_NAME - 1] + "…"
        self._emit_lines("key", name, "", start, end, [self.path, f"key {name}"])
