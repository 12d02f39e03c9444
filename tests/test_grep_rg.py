"""Exact and regex search (``Workspace.grep``) against ripgrep: a randomized comparison on
a fixture tree. Each generated pattern is searched by Sylk (every matching line, no limit,
no time limit) and by ``rg`` on exactly the indexed files with the same flags (exact =
``-F``; case True / False / "smart" = ``-s`` / ``-i`` / ``-S``; whole word = ``-w``), and
the two sets of (path, 0-based line) must be equal.

The tree: a copy of ``fixtures/workspace`` (Python, Go, TS, JS, Rust, Java, C, C++, C#,
Ruby, Markdown, a file of non-ASCII text and emoji) and generated files of code-like
lines (punctuation of many languages, tabs, trailing blanks), Unicode text (é, ß, ẞ,
Σσς, 日本, emoji, full-width digits, a no-break space), the characters Python's own
``\\w`` and ``\\s`` class otherwise than rg (see below), CRLF lines and a lone CR, a
UTF-8 BOM file, a file without a final line break, an empty file.

The patterns (``PATTERNS``, a seeded ``random.Random``, so the same on every run):
literals drawn from the tree's own text (so most patterns match), searched as exact
literals (``-F``) and as escaped regexes, and regexes built around them: alternations,
classes, ``.``, ``\\w``/``\\d``/``\\s``, ``\\b``, ``^`` and ``$``, repeats, groups,
literal-free shapes (``\\w+_\\d+``), case variants of the literal (upper, lower, title,
swapped) under each of the three case modes, whole word on and off.

Only the regex syntax Python's ``re`` and Rust's ``regex`` (rg 13) read alike is
generated: no lookaround, backreferences, inline flags, ``\\A``/``\\Z``, ``{,n}`` or
class set operations (``&&``, ``--``, ``~~``), and in a regex only
``\\.+*?()|[]{}^$`` are escaped (Rust rejects an escaped ``<``, ``'``, ``/``...). No
generated pattern matches the empty string. ``EDGES``, next to them, are hand-picked:
line edges (BOM, CRLF, a lone CR, no final line break, empty lines: ``^$``), whole words
that start or end with punctuation, the tree's Unicode under each case mode.

Sylk reads ``\\w``, ``\\s`` and ``\\b`` (and so ``-w``) as rg does, not as Python's ``re``
(``text/rg_classes.py``), so the tree holds the characters where the two differ, in
``gen/classes.txt`` and the fixture's ``app/unicode.py``: ZWJ (U+200D) and a variation
selector (U+FE0F), combining marks (``e`` + U+0301, ``f̅``, Devanagari vowel signs),
circled letters (``Ⓐ``) and ``‿``, which are words to rg only; ``²``, ``½`` and ``㊀``
(numbers of category No), words to Python only; U+001C..U+001F, spaces to Python only.

What the comparison leaves out, because the difference is the engines', not Sylk's:

- Invalid UTF-8: Sylk reads it as U+FFFD, rg as bytes. None in the tree.
- ``İ`` (U+0130) and ``ı`` (U+0131): Python's ``re.IGNORECASE`` takes them as ``i``/``I``,
  Rust's simple case folding keeps them apart (``rg -i istanbul`` does not find
  ``İstanbul``; ``[^i]`` finds ``İ`` under rg -i, not under re). They appear only in
  ``gen/turkish.txt``; a case-insensitive search (``-i``, or smart case without an
  upper-case letter) is compared without that file's lines containing them, a pattern
  holding one is only searched case-sensitively, and
  ``test_dotted_capital_i_folds_as_python_re`` says what Sylk does there.

``K`` (U+212A, Kelvin sign), ``ſ`` (U+017F) and ``µ`` (U+00B5), which case folding joins
to ``k``, ``s`` and ``μ`` in both engines, are in the tree.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import unicodedata
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pytest
from sylk.config import Settings
from sylk.engine.workspace import Workspace
from sylk.search.query import Filters, GrepRequest

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "workspace"
SEED = 20261127
N_PATTERNS = 240
ARG_BYTES = 100_000  # rg's file arguments per process
BOM = b"\xef\xbb\xbf"
TURKISH = "\u0130\u0131"  # İ ı: see the module docstring
CASE_FLAGS = {True: "-s", False: "-i", "smart": "-S"}

Key = tuple[str, int]  # (path, 0-based line)


# ---- the tree ------------------------------------------------------------------------

PIECES = ("user", "id", "count", "max", "buffer", "read", "write", "parse", "token", "cache", "http", "retry",
          "policy", "point", "cart", "session", "order", "item", "total", "index", "value", "key", "node", "name",
          "path", "line", "size", "len", "file", "err", "ctx", "req", "resp", "map", "list", "queue", "lock")
TYPES = ("String", "Vec<u8>", "HashMap<K, V>", "int", "u32", "Option<T>", "List[str]", "*Node", "&'a str")
TEMPLATES = (
    "def {a}({b}, {c}=None):",
    "    return {a}->{b}({n});",
    "let {a}: {T} = {B}::new();",
    "{a}[{n}] += {b}.{c}({d}) * {m};",
    "if ({a} != nullptr && {b}->{c} >= {n}) {{",
    '    "{K}": "{b}/{c}",',
    "#define {K} ({n} << {m})",
    "// TODO({a}): fix {b} \u2014 {c} is {n}% done",
    '{a} = re.compile(r"^\\s*{b}\\d+$")',
    "const {a} = {b}?.{c} ?? {d};",
    'fmt.Printf("%s=%d\\n", {a}, {b})',
    '@{a}({b}="{c}")',
    "{a} |> {b} |> {c}",
    '<{a} class="{b}">{c}</{a}>',
    "$ {a} --{b}={n} -x",
    "{a}!{b}!~{c}^{d}",
    "path = C:\\{B}\\{C}.txt",
    "{a}::{b}::<{T}>()",
    "    {a}.{b}.{c} = {{ {d}: {n}, {e}: '{b}' }};",
    "\t{a}\t= {n}\t// {b}",
    "{A}_{B} = 0x{h}  # {b}",
    "match {a} {{ Some({b}) => {c}, None => {n} }}",
    "  {a} = [{n}, {m}, {n}.{m}e-3]   ",
    "/* {a} */ {b}++; --{c};",
    "{a} := make(map[string]{T}, {n})",
    "SELECT {a}, {b} FROM {c} WHERE {d} = '{e}';",
    "x = {a} if {b} else ({c} or {d})",
    "{a}_{n} = {b}_{m}({c}_{n})",
    "assert {a} == {b}, f\"{{{c}!r}}\"",
    "",
)
UNICODE_LINES = (
    'naïve_name = "café crème"  # é',
    "größe = berechne(straße, GROẞE)",
    "STRASSE = 'strasse'  # not ß",
    "Σίσυφος σοφός · ΣΊΣΥΦΟΣ · ς σ Σ",
    "ÉTÉ été Été eté",
    '名前 = "日本語"  # 日本 の テスト',
    'rocket = "🚀 launch 🚀"; party = "🎉"',
    "price = '€42' or '42€' — ≥ 3",
    "digits = '１２３' + \"456\"",
    "nbsp\u00a0separated\u00a0words = 1",
    "mixed: αβγ_δ = λx: x·2 here",
    "Добрый день, мир: привет_мир = 1",
)
# the characters Python's re and rg class differently in \w and \s (see the module docstring)
CLASSES_LINES = (
    "x² = a½ + ㊀ * b2",
    "cafe\u0301 = e\u0301te\u0301  # decomposed",
    "f\u0305o\u0305o\u0305 = bar",
    "नमस्ते नमस्कार = 'namaste'",
    "Ⓐlpha = ⒷETA + c",
    "tie = a‿b and x_y",
    "family = '👨\u200d👩\u200d👧' # joined",
    "coffee = '☕\ufe0f hot'",
    "fields\x1cone\x1dtwo\x1ethree\x1ffour",
    "kelvin = 5\u212a; long_s = 'ſtraße'; micro = 'µs' or 'μs' or 'ΜS'",
    "word² and word ² and ½word",
    "only: power²",
    "only: half½",
    "only: ㊀x",
)
TURKISH_LINES = (
    "İstanbul büyük bir şehir",
    "ılık bir gün",
    "city = 'istanbul'  # plain i",
    "ISTANBUL in capitals",
    "no dotted letters on this line: list index",
)


def _name(rng: random.Random, style: str) -> str:
    parts = [rng.choice(PIECES) for _ in range(rng.randint(1, 3))]
    if style == "snake":
        return "_".join(parts)
    if style == "camel":
        return parts[0] + "".join(p.title() for p in parts[1:])
    if style == "pascal":
        return "".join(p.title() for p in parts)
    return "_".join(parts).upper()


def _code_line(rng: random.Random) -> str:
    names = {k: _name(rng, rng.choice(("snake", "snake", "camel", "pascal"))) for k in "abcde"}
    caps = {k.upper(): _name(rng, rng.choice(("pascal", "upper"))) for k in "abck"}
    return rng.choice(TEMPLATES).format(**names, **caps, n=rng.randint(0, 999), m=rng.randint(1, 64),
                                        h=f"{rng.getrandbits(24):06X}", T=rng.choice(TYPES))


def generated_files() -> dict[str, bytes]:
    """The generated part of the tree (path -> bytes), the same on every run."""
    rng = random.Random(SEED)
    exts = ("py", "go", "rs", "ts", "c", "java", "rb", "txt")
    files: dict[str, bytes] = {}
    for i in range(24):
        lines = [_code_line(rng) for _ in range(rng.randint(30, 70))]
        if i % 4 == 0:
            lines[rng.randrange(len(lines))] = rng.choice(UNICODE_LINES)
        if i % 6 == 1:
            lines[rng.randrange(len(lines))] = rng.choice(CLASSES_LINES)
        files[f"gen/mod_{i:02d}.{exts[i % len(exts)]}"] = ("\n".join(lines) + "\n").encode()
    files["gen/unicode.txt"] = ("\n".join(UNICODE_LINES) + "\n").encode()
    files["gen/turkish.txt"] = ("\n".join(TURKISH_LINES) + "\n").encode()
    files["gen/classes.txt"] = ("\n".join(CLASSES_LINES) + "\n").encode()
    crlf = [_code_line(rng) for _ in range(20)] + ["ends with a CR only\rand goes on", "été\tand tabs", "last"]
    files["gen/windows.txt"] = ("\r\n".join(crlf) + "\r\n").encode()
    files["gen/bom.py"] = BOM + ("# bom first line\nimport os\nbom_value = os.sep  # é\n").encode()
    files["gen/tabs.go"] = "".join(f"\t{_code_line(rng)}\t\n" for _ in range(25)).encode()
    files["gen/no_final_newline.txt"] = "first line\nlast line without a break".encode()
    files["gen/empty.txt"] = b""
    return files


def fixture_files() -> dict[str, bytes]:
    """The copied fixture workspace."""
    out = {}
    for p in sorted(FIXTURE.rglob("*")):
        if p.is_file():
            text = p.read_bytes().decode("utf-8")
            out[p.relative_to(FIXTURE).as_posix()] = text.encode()
    return out


TREE = {**fixture_files(), **generated_files()}


def tree_lines() -> list[str]:
    """Every line of the tree as both tools read it (no BOM, no line break, no CR)."""
    out = []
    for data in TREE.values():
        text = (data[3:] if data.startswith(BOM) else data).decode("utf-8")
        out += [ln.rstrip("\r") for ln in text.split("\n")]
    return out


# ---- the patterns --------------------------------------------------------------------

class Case(NamedTuple):
    kind: str
    pattern: str
    mode: str  # exact, regex
    case: bool | str
    whole_word: bool

    def flags(self) -> list[str]:
        return (["-F"] if self.mode == "exact" else []) + [CASE_FLAGS[self.case]] + (["-w"] if self.whole_word else [])

    def __str__(self) -> str:
        return f"{self.pattern!r} ({self.kind}; rg {' '.join(self.flags())})"


_RUST_SAFE_META = set("\\.+*?()|[]{}^$")


def escape(text: str) -> str:
    """``text`` as a regex both engines read as that literal (see the module docstring)."""
    return "".join("\\" + c if c in _RUST_SAFE_META else c for c in text)


def _variant(rng: random.Random, text: str) -> str:
    return rng.choice((str.upper, str.lower, str.title, str.swapcase, str))(text)


class Generator:
    """Patterns drawn from the tree's lines (see the module docstring)."""

    def __init__(self, lines: list[str], seed: int) -> None:
        self.rng = random.Random(seed)
        self.lines = [ln for ln in lines if len(ln.strip()) >= 4]
        self.punct_lines = [ln for ln in self.lines if re.search(r"[^\w\s]", ln)]
        self.words = sorted({w for ln in self.lines for w in re.findall(r"\w{3,}", ln)})
        self.unicode_lines = [ln for ln in self.lines if not ln.isascii()]
        self.whole = False  # the pattern being made is for a whole-word search

    def literal(self, lines: list[str] | None = None, lo: int = 3, hi: int = 16) -> str:
        """A piece of a line of ``lines``: from and to word edges when the pattern is to be
        searched as whole words (``self.whole``), else anywhere."""
        rng = self.rng
        while True:
            line = rng.choice(lines or self.lines)
            if self.whole:
                words = list(re.finditer(r"\w+", line))
                if not words:
                    continue
                i = rng.randrange(len(words))
                j = min(len(words) - 1, i + rng.choice((0, 0, 1, 2)))
                lit = line[words[i].start():words[j].end()]
            else:
                n = rng.randint(lo, min(hi, len(line)))
                start = rng.randint(0, len(line) - n)
                lit = line[start:start + n]
            if lit.strip() and lit == lit.strip(" ") and (self.whole or len(lit) >= lo):
                return lit

    def non_ascii(self, hi: int = 8) -> str:
        lit = self.literal(self.unicode_lines, 1, hi)
        while lit.isascii():
            lit = self.literal(self.unicode_lines, 1, hi)
        return lit

    def word(self) -> str:
        return self.rng.choice(self.words)

    def make(self, kind: str) -> tuple[str, str]:
        """(mode, pattern) of the ``kind``."""
        rng = self.rng
        if kind == "exact":
            return "exact", self.literal()
        if kind == "exact-punct":
            lit = self.literal(self.punct_lines, 2, 12)
            while not re.search(r"[^\w\s]", lit):
                lit = self.literal(self.punct_lines, 2, 12)
            return "exact", lit
        if kind == "exact-unicode":
            return "exact", self.non_ascii()
        if kind == "exact-variant":
            return "exact", _variant(rng, self.literal())
        if kind == "regex-literal":
            return "regex", escape(self.literal())
        if kind == "alternation":
            alts = [escape(self.literal(hi=10)) for _ in range(rng.randint(2, 4))]
            body = "|".join(alts)
            return "regex", rng.choice((body, f"(?:{body})", f"({body})\\s*\\W", f"\\w*(?:{body})"))
        if kind == "class":
            lit = self.literal(lo=4, hi=12)
            i = rng.randrange(len(lit))
            c = lit[i]
            if c.isalpha():
                cls = rng.choice((f"[{c}{_variant(rng, 'xq')}]", "[a-z]", "[A-Za-z_]", "\\w", ".", f"[^{c}0-9]"))
            elif c.isdigit():
                cls = rng.choice(("\\d", "[0-9]", "[^a-z]", "\\w"))
            elif c.isspace():
                cls = rng.choice(("\\s", "\\s+", "[ \\t]", "\\W"))
            else:
                cls = rng.choice((".", "\\W", "[^\\w\\s]", "\\S"))
            return "regex", escape(lit[:i]) + cls + escape(lit[i + 1:])
        if kind == "anchor":
            line = rng.choice(self.lines)
            stripped = line.lstrip()
            if rng.random() < 0.5:
                head = stripped[:rng.randint(2, min(12, len(stripped)))]
                indent = rng.choice(("\\s*", "[ \\t]*", "")) if stripped != line else ""
                return "regex", "^" + indent + escape(head)
            tail = line.rstrip()[-rng.randint(2, min(12, len(line.rstrip()))):]
            return "regex", escape(tail) + rng.choice(("$", "\\s*$", "$"))
        if kind == "word-boundary":
            w = self.word()
            return "regex", rng.choice((f"\\b{escape(w)}\\b", f"\\b{escape(w)}", f"{escape(w)}\\b",
                                        f"\\b{escape(w[:3])}\\w*"))
        if kind == "repeat":
            w = self.word()
            return "regex", rng.choice((f"{escape(w[:2])}\\w{{2,}}", f"(?:{escape(w[:3])}){{1,2}}\\d*",
                                        f"{escape(w)}[ \\t]{{0,3}}[=:(]", f"[{w[0]}{w[-1]}]{{2}}\\w+",
                                        f"{escape(w)}.{{3,9}}{escape(self.word()[:3])}",
                                        f"{escape(w[0])}[a-z]+?{escape(w[-1])}"))
        if kind == "group":
            a, b = self.word(), self.word()
            return "regex", rng.choice((f"({escape(a)})(\\.|->|::)\\w+", f"(?:{escape(a)}|{escape(b)})\\(",
                                        f"(?P<n>{escape(a)})\\s*=", f"({escape(a[:3])}(_\\w+)?)\\b"))
        if kind == "shape":  # no literal the trigram index could use, or a short one
            return "regex", rng.choice(SHAPES)
        if kind == "regex-unicode":
            lit = self.non_ascii(6)
            first = f"[{lit[0]}]" if lit[0].isalnum() else escape(lit[0])
            return "regex", rng.choice((escape(lit), f"{escape(lit)}\\w*", f"\\b{escape(lit)}", f"{first}\\S+"))
        if kind == "regex-variant":
            w = _variant(rng, self.word())
            return "regex", rng.choice((f"\\b{escape(w)}", f"{escape(w)}\\s*\\(", f"{escape(w)}|{escape(self.word())}"))
        raise ValueError(kind)


SHAPES = (
    "\\w+_\\d+", "\\w+_\\d+\\(", "\\w+\\(", "\\d{2,}", "[A-Z][a-z]+[A-Z]\\w*", "(\\w+)\\.(\\w+)\\(", "=>\\s*\\{",
    "\\$\\w+", "^\\s+return\\b", "#\\w+", '"[^"]*"', "'[^']*'", "\\w+::\\w+", "[^\\x00-\\x7F]+", "^\\t", "\\s+$",
    "^[A-Z_]+ =", "\\d+\\.\\d+", "0x[0-9A-F]{6}", "[<>]=?", "\\w{12,}", "^\\S+$", "\\(\\)", "[{}]\\s*$", "\\W{3}",
    "\\bi\\w+",
)
KINDS = ("exact", "exact-punct", "exact-unicode", "exact-variant", "regex-literal", "alternation", "class",
         "anchor", "word-boundary", "repeat", "group", "shape", "regex-unicode", "regex-variant")


def generate(n: int = N_PATTERNS, seed: int = SEED) -> list[Case]:
    gen = Generator(tree_lines(), seed)
    rng = gen.rng
    out: list[Case] = []
    seen: set[tuple] = set()
    i = 0
    while len(out) < n:
        kind = KINDS[i % len(KINDS)]
        i += 1
        case = rng.choice((True, False, "smart"))
        whole = gen.whole = rng.random() < 0.3
        mode, pattern = gen.make(kind)
        compiled = re.compile(re.escape(pattern) if mode == "exact" else pattern)
        if compiled.fullmatch("") is not None or "\n" in pattern or (mode, pattern, case, whole) in seen:
            continue
        if case is not True and any(c in pattern for c in TURKISH):  # see the module docstring
            continue
        seen.add((mode, pattern, case, whole))
        out.append(Case(kind, pattern, mode, case, whole))
    return out


PATTERNS = generate()
# Hand-picked next to them: line edges (a BOM, CRLF, a lone CR, no final line break, empty
# lines), whole words that start or end with punctuation, the Unicode of the tree.
EDGES = [Case("edge", p, mode, case, whole) for p, mode, case, whole in (
    ("^# bom", "regex", True, False), ("^import os$", "regex", True, False), ("\\r$", "regex", True, False),
    ("^$", "regex", True, False), ("^\\s*$", "regex", True, False), ("goes on\\s$", "regex", True, False),
    ("break$", "regex", True, False), ("^last", "regex", True, False), ("CR only\rand", "exact", True, False),
    ("->", "exact", True, True), ("::", "exact", True, True), ("(", "exact", True, True), ("x.", "exact", True, True),
    ("\\w+\\(", "regex", True, True), ("-x", "regex", True, True), ("C:\\", "exact", True, False),
    ("é", "exact", True, True), ("é", "exact", False, False), ("ÉTÉ", "exact", "smart", False),
    ("été", "exact", "smart", True), ("ß", "exact", False, False), ("ẞ", "exact", True, False),
    ("GROẞE", "exact", False, False), ("strasse", "exact", False, True), ("σ", "exact", False, False),
    ("ς", "exact", "smart", False), ("Σ", "exact", "smart", False), ("ΣΊΣΥΦΟΣ", "exact", False, False),
    ("日本", "exact", True, True), ("日本", "exact", True, False), ("テスト", "regex", True, True),
    ("🚀", "exact", True, True), ('= ".\\s', "regex", True, False), ("\\d+", "regex", True, True),
    ("[０-９]+", "regex", True, False), ("nbsp\\sseparated", "regex", True, False),
    ("\\w+\\s\\w+", "regex", True, True), ("[^\\x00-\\x7F]+", "regex", "smart", True),
    ("\\bмир\\b", "regex", False, False), ("ПРИВЕТ", "exact", False, False), ("\\W+", "regex", True, True),
    ("\\t", "regex", True, False), ("\\t$", "regex", True, False), ("\t= ", "exact", True, False),
    ("€\\d+|\\d+€", "regex", True, True), ("x·2", "exact", True, True),
    # \w \s \b and -w beside the characters Python and rg class differently
    ("power\\b", "regex", True, False), ("power\\w", "regex", True, False), ("power", "exact", True, True),
    ("\\bhalf", "regex", True, False), ("half\\W", "regex", True, False), ("\\w+x$", "regex", True, False),
    ("x", "exact", True, True), ("caf\\w+", "regex", True, False), ("cafe", "exact", True, True),
    ("\\w\u0301", "regex", True, False), ("f", "exact", True, True), ("o\\W", "regex", True, False),
    ("lpha", "exact", True, True), ("\\blpha", "regex", True, False), ("\\w+lpha", "regex", False, False),
    ("a\\wb", "regex", True, False), ("a\\Wb", "regex", True, False), ("\\bb\\b", "regex", True, False),
    ("fields\\sone", "regex", True, False), ("fields\\Sone", "regex", True, False),
    ("\\S+\\sthree", "regex", True, False), ("'\\W+'", "regex", True, False), ("👨", "exact", True, True),
    ("☕\\w", "regex", True, False), ("नमस", "exact", True, True), ("\\w+ =", "regex", True, True),
    ("\\B²", "regex", True, False), ("\\b²", "regex", True, False), ("[\\w²]+", "regex", True, False),
    ("[^\\w\\s]+", "regex", True, False), ("k", "exact", False, True), ("5k", "exact", False, False),
    ("STRASSE|ſtr", "regex", False, False), ("µs", "exact", False, False), ("ΜS", "exact", "smart", False),
    ("long_s = 's", "exact", False, False),
)]


# ---- the two answers -----------------------------------------------------------------

def _chunks(files: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    size = 0
    for f in files:
        if size + len(f) + 1 > ARG_BYTES and out[-1]:
            out.append([])
            size = 0
        out[-1].append(f)
        size += len(os.fsencode(f)) + 1
    return out


def rg_lines(root: Path, files: list[str], case: Case) -> set[Key]:
    found: set[Key] = set()
    for part in _chunks(files):
        p = subprocess.run(["rg", "--no-config", "--no-ignore", "--hidden", "-a", "-n", "--no-heading",
                            "--with-filename", "--null", "--color", "never", *case.flags(), "-e", case.pattern,
                            "--", *part], cwd=root, capture_output=True)
        assert p.returncode in (0, 1), f"rg failed on {case}: {p.stderr.decode(errors='replace')}"
        for row in p.stdout.split(b"\n"):
            if row:
                path, _, rest = row.partition(b"\0")
                found.add((os.fsdecode(path), int(rest.split(b":", 1)[0]) - 1))
    return found


def sylk_lines(ws: Workspace, case: Case) -> set[Key]:
    result = ws.grep(GrepRequest(case.pattern, mode=case.mode, case=case.case, whole_word=case.whole_word,
                                 filters=Filters(), limit=None, offset=0, time_limit_s=None))
    assert not result.partial and not result.lower_bound, case
    found = {(h.path, h.line) for h in result.hits}
    assert result.total_hits == len(result.hits) == len(found), case
    return found


def ignores_case(case: Case) -> bool:
    """Whether rg searches ``case`` case-insensitively (``-S``: no upper-case letter among
    the pattern's literal characters; escapes such as ``\\W`` do not count)."""
    if case.case != "smart":
        return not case.case
    if case.mode == "exact":
        return not any(c.isupper() for c in case.pattern)
    return not any(c.isupper() for c in re.sub(r"\\x[0-9A-Fa-f]{2}|\\[A-Za-z]", "", case.pattern))


class Tree(NamedTuple):
    root: Path
    ws: Workspace
    files: list[str]  # the indexed files (rg is given exactly these)
    lines: dict[str, list[str]]  # path -> lines as rg reads them


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("grep_rg")
    root = base / "tree"
    for rel, data in TREE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    ws = Workspace(root, Settings(index_dir=str(base / "index")))
    ws.index(workers=1)
    files = sorted(ws.manifest.files())
    lines = {rel: (TREE[rel][3:] if TREE[rel].startswith(BOM) else TREE[rel]).decode().split("\n") for rel in files}
    try:
        yield Tree(root, ws, files, lines)
    finally:
        ws.close()


@pytest.fixture(scope="module")
def rg_answers(tree: Tree) -> dict[Case, set[Key]]:
    return {case: rg_lines(tree.root, tree.files, case) for case in PATTERNS + EDGES}


def _left_out(tree: Tree, case: Case, key: Key) -> bool:
    """A line the comparison leaves out: İ or ı under a case-insensitive search."""
    return ignores_case(case) and any(c in tree.lines[key[0]][key[1]] for c in TURKISH)


def _describe(tree: Tree, keys: set[Key]) -> str:
    return "\n".join(f"    {p}:{n + 1}: {tree.lines[p][n]!r}" for p, n in sorted(keys)[:20]) + (
        f"\n    ... and {len(keys) - 20} more" if len(keys) > 20 else "")


# ---- tests -----------------------------------------------------------------------------

def test_the_tree_and_the_patterns_cover_the_brief(tree: Tree, rg_answers: dict[Case, set[Key]]):
    assert len(PATTERNS) >= 200
    assert set(Counter(c.kind for c in PATTERNS)) == set(KINDS)
    assert {c.case for c in PATTERNS} == {True, False, "smart"}
    assert {c.whole_word for c in PATTERNS} == {True, False}
    assert {c.mode for c in PATTERNS} == {"exact", "regex"}
    for rel in ("gen/bom.py", "gen/windows.txt", "gen/turkish.txt", "gen/unicode.txt", "app/unicode.py",
                "gen/classes.txt", "gen/no_final_newline.txt", "gen/tabs.go"):
        assert rel in tree.files, rel
    assert "ignored_dir/secret.py" not in tree.files  # the comparison is on the indexed files only
    text = "".join(tree.lines[f][n] for f in tree.files for n in range(len(tree.lines[f])))
    for needle in ("é", "ß", "Σ", "σ", "ς", "İ", "日本", "🚀", "\t", "\r", "\u00a0"):
        assert needle in text, needle
    for needle in ("\u200d", "\ufe0f", "\u0301", "²", "㊀", "Ⓐ", "‿", "\x1c", "\u212a", "ſ", "µ"):
        assert needle in text, repr(needle)
    assert {unicodedata.category(c) for c in text} >= {"Mn", "Mc", "No", "So", "Pc", "Cf"}
    matched = sum(bool(found) for found in rg_answers.values())
    assert matched >= 0.75 * len(PATTERNS), f"only {matched} of {len(PATTERNS)} patterns match anything"
    assert sum(len(found) > 1 and len({p for p, _ in found}) > 1 for found in rg_answers.values()) >= 60


@pytest.mark.parametrize("case", PATTERNS + EDGES, ids=[f"{i:03d}-{c.kind}" for i, c in enumerate(PATTERNS + EDGES)])
def test_the_same_lines_as_rg(tree: Tree, rg_answers: dict[Case, set[Key]], case: Case):
    theirs = {k for k in rg_answers[case] if not _left_out(tree, case, k)}
    mine = {k for k in sylk_lines(tree.ws, case) if not _left_out(tree, case, k)}
    only_rg, only_sylk = theirs - mine, mine - theirs
    assert not only_rg and not only_sylk, (
        f"pattern {case}: {len(theirs & mine)} lines in both\n"
        f"  only rg ({len(only_rg)}):\n{_describe(tree, only_rg)}\n"
        f"  only Sylk ({len(only_sylk)}):\n{_describe(tree, only_sylk)}")


def test_dotted_capital_i_folds_as_python_re(tree: Tree):
    """Case-insensitive, Sylk takes ``İ`` and ``ı`` for ``i``/``I`` as Python's ``re``
    does (``rg -i`` does not: Rust's simple case folding keeps them apart)."""
    insensitive = sylk_lines(tree.ws, Case("", "istanbul", "exact", False, False))
    assert {n for p, n in insensitive if p == "gen/turkish.txt"} == {0, 2, 3}
    assert {n for p, n in sylk_lines(tree.ws, Case("", "ILIK", "exact", False, False))
            if p == "gen/turkish.txt"} == {1}
    assert {n for p, n in sylk_lines(tree.ws, Case("", "İstanbul", "exact", "smart", False))
            if p == "gen/turkish.txt"} == {0}  # an upper-case letter: case-sensitive


def test_an_edited_file_is_found_by_its_new_text_once_indexed(tmp_path: Path):
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.py").write_text("x = 1\nold_marker_value = compute(1)\n")
    (root / "b.py").write_text("old_marker_value = 2\n")
    ws = Workspace(root, Settings(index_dir=str(tmp_path / "index")))
    try:
        ws.index(workers=1)
        old = Case("", "old_marker_value", "exact", True, False)
        new = Case("", r"new_marker_\w+ = \d+", "regex", True, False)
        assert sylk_lines(ws, old) == {("a.py", 1), ("b.py", 0)}

        (root / "a.py").write_text("x = 1\n\n\nnew_marker_total = 42  # was old_marker\n")
        ws.index(paths=["a.py"])
        files = sorted(ws.manifest.files())
        for case in (old, new):
            assert sylk_lines(ws, case) == rg_lines(root, files, case), case
        assert sylk_lines(ws, old) == {("b.py", 0)}
        assert sylk_lines(ws, new) == {("a.py", 3)}
        hit = ws.grep(GrepRequest("new_marker_total", mode="exact", limit=None, time_limit_s=None)).hits[0]
        assert hit.text == "new_marker_total = 42  # was old_marker"
    finally:
        ws.close()
