"""Corpora and queries of ``relevance.py``: per language, the files, the functions
with their doc text, the copy with the docs stripped; and the three query styles.

Python is read with ``ast``. Go with a small line/character scanner (no Go
parser): ``go_mask`` blanks comments and string contents so braces can be
counted, a ``func`` line is ``^func (\\(receiver\\) )?Name[(\\[]`` and its end is
the brace that closes its body. Lines are 0-based everywhere here.
"""

from __future__ import annotations

import ast
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

STOPWORDS = frozenset("""
a an the and or but if then else of to in on at by for with from as is are was were be been being
this that these those it its it's into onto than not no nor so such can could should would will
may might must do does did done has have had having which who whom whose what when where why how
all any each every both either neither some other another same own only also just very too more most
there here their them they we you your our us he she his her i me my one ones e g eg ie etc
""".split())

STYLES = ("sentence", "keywords", "typo")
TYPO_MIN_LETTERS = 5
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Definition:
    """A function or method: the answer of a query."""
    path: str  # relative to the corpus root, with /
    name: str
    line: int  # the def/func line
    end: int  # its last line
    doc: str | None  # docstring or doc comment text


@dataclass(frozen=True)
class Query:
    style: str  # one of STYLES
    text: str
    target: Definition
    project: str  # package, for the per-project lines
    rg_words: tuple[str, ...]  # what the rg baseline searches for


@dataclass(frozen=True)
class Language:
    name: str
    corpus: str  # corpora.prepare() name
    glob: str  # rg -g
    default_packages: tuple[str, ...]
    files: Callable[[Path, list[str]], list[Path]]
    definitions: Callable[[str, str], list[Definition]]  # (source, rel path)
    strip: Callable[[str], str]  # docs out, same line count
    project: Callable[[str], str]  # rel path -> package
    drop_leading_name: bool  # Go: "Scan advances ..." -> "advances ..."


# -- shared text rules -----------------------------------------------------------------------------

_SENTENCE = re.compile(r"^(.+?[.!?])(?=\s|$)")


def first_sentence(doc: str) -> str:
    para = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0]
    para = " ".join(para.split())
    m = _SENTENCE.match(para)
    return (m.group(1) if m else para).strip()


def content_words(text: str) -> list[str]:
    """Words that are not stopwords and longer than one letter, in order, case kept."""
    return [w for w in _WORD.findall(text) if w.lower() not in STOPWORDS and len(w) > 1]


def without_leading_name(sentence: str, name: str) -> str:
    """Go doc comments start with the function's name; the query must not hand it over."""
    words = sentence.split(None, 1)
    if len(words) == 2 and re.sub(r"(['’]s)?[,:]?$", "", words[0]) == name:
        return words[1]
    return sentence


# -- Python ----------------------------------------------------------------------------------------

def python_files(root: Path, packages: list[str]) -> list[Path]:
    out: list[Path] = []
    for pkg in packages:
        base = root / pkg
        if base.is_file() and base.suffix == ".py":
            out.append(base)
            continue
        for p in sorted(base.rglob("*.py")):
            rel = p.relative_to(root)
            if any(part in ("test", "tests", "idle_test") or part.startswith("test_") for part in rel.parts[:-1]):
                continue
            out.append(p)
    return out


def python_definitions(src: str, rel: str) -> list[Definition]:
    out = []
    for n in ast.walk(ast.parse(src)):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(Definition(rel, n.name, n.lineno - 1, n.end_lineno - 1, ast.get_docstring(n)))
    return out


def _docstring_node(node: ast.AST) -> ast.Expr | None:
    body = getattr(node, "body", None)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[0]
    return None


def strip_python(src: str) -> str:
    """``src`` with every docstring (module, class, function) replaced by ``""`` (same line count)."""
    tree = ast.parse(src)
    lines = src.split("\n")
    nodes = [tree] + [n for n in ast.walk(tree)
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    edits = []
    for n in nodes:
        d = _docstring_node(n)
        if d is not None:
            edits.append((d.lineno - 1, d.col_offset, d.end_lineno - 1, d.end_col_offset))
    # bottom-up so earlier offsets stay valid (col offsets are UTF-8 bytes)
    for l0, c0, l1, c1 in sorted(edits, reverse=True):
        head = lines[l0].encode("utf-8")[:c0].decode("utf-8")
        tail = lines[l1].encode("utf-8")[c1:].decode("utf-8")
        lines[l0:l1 + 1] = [head + '""' + tail] + [""] * (l1 - l0)
    out = "\n".join(lines)
    ast.parse(out)  # still valid Python
    return out


# -- Go --------------------------------------------------------------------------------------------

def go_files(root: Path, packages: list[str]) -> list[Path]:
    """Each package folder's own ``.go`` files (not its subpackages), ``_test.go`` excluded."""
    out: list[Path] = []
    for pkg in packages:
        base = root / pkg
        if not base.is_dir():
            raise SystemExit(f"{base}: no such Go package folder")
        out.extend(p for p in sorted(base.glob("*.go")) if not p.name.endswith("_test.go"))
    return out


def go_mask(src: str) -> str:
    """``src`` with comments and the contents of strings and runes as spaces (newlines and
    offsets kept), so braces and keywords can be found with plain searches."""
    out = list(src)
    i, n = 0, len(src)

    def blank(a: int, b: int) -> None:
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c == "`":
            j = src.find("`", i + 1)
            j = n if j < 0 else j + 1
            blank(i + 1, j - 1)
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            blank(i + 1, min(j, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


_GO_FUNC = re.compile(r"^func\s*(?:\([^)]*\)\s*)?([^\W\d]\w*)\s*[(\[]")
_GO_DIRECTIVE = re.compile(r"^//(line |extern |export |[a-z0-9]+:[a-z0-9])")
_GO_TYPE_WORD = re.compile(r"(?:interface|struct)\s*$")


def _go_func_end(masked: str, start: int) -> int:
    """Offset of the end of the func declaration that starts at ``start`` (in masked text):
    the brace closing its body, or the end of the signature's line if it has no body."""
    parens = braces = 0
    body = False
    type_braces: list[int] = []  # brace depths opened by interface{ / struct{ in the signature
    i = start
    while i < len(masked):
        c = masked[i]
        if c in "([":
            parens += 1
        elif c in ")]":
            parens -= 1
        elif c == "{":
            if not body and braces == 0 and parens == 0 and not _GO_TYPE_WORD.search(masked, max(start, i - 40), i):
                body = True
            elif not body:
                type_braces.append(braces)
            braces += 1
        elif c == "}":
            braces -= 1
            if type_braces and type_braces[-1] == braces:
                type_braces.pop()
            elif body and braces == 0:
                return i
        elif c == "\n" and not body and parens == 0 and braces == 0:
            return i
        i += 1
    return len(masked)


def _go_doc_block(lines: list[str], masked: list[str], decl: int) -> tuple[list[int], str]:
    """The comment lines directly above line ``decl`` (no blank line between: ``//`` lines
    and whole ``/* */`` blocks, in any mix) and their text. Directives (``//go:noinline``)
    are neither doc nor blanked."""
    doc_lines: list[int] = []
    parts: list[str] = []  # bottom-up
    i = decl - 1
    while i >= 0:
        if lines[i].startswith("//"):
            if not _GO_DIRECTIVE.match(lines[i]):
                doc_lines.append(i)
                t = lines[i][2:]
                parts.append(t[1:] if t.startswith(" ") else t)
            i -= 1
        elif lines[i].rstrip().endswith("*/") and not masked[i].strip():
            j = i  # a /* ... */ block ending here: its first line starts with /*
            while j >= 0 and not lines[j].lstrip().startswith("/*"):
                j -= 1
            if j < 0 or any(masked[k].strip() for k in range(j, i + 1)):
                break
            doc_lines.extend(range(j, i + 1))
            parts.append("\n".join(lines[j:i + 1]).strip()[2:-2])
            i = j - 1
        else:
            break
    return sorted(doc_lines), "\n".join(reversed(parts))


def _go_decl_lines(masked: list[str]) -> list[tuple[int, str]]:
    """(line, kind) of top-level func, type (and specs inside ``type (``) and package lines."""
    out = []
    in_type_group = False
    for i, m in enumerate(masked):
        if in_type_group:
            if m.startswith(")"):
                in_type_group = False
            elif re.match(r"^\t[A-Za-z_]\w*", m):
                out.append((i, "type"))
            continue
        word = m.split("(", 1)[0].split(None, 1)[0] if m.strip() and not m[0].isspace() else ""
        if word in ("func", "type", "package"):
            out.append((i, word))
            if word == "type" and re.match(r"^type\s*\(\s*$", m):
                in_type_group = True
    return out


def go_definitions(src: str, rel: str) -> list[Definition]:
    lines = src.split("\n")
    masked_src = go_mask(src)
    masked = masked_src.split("\n")
    offsets = [0]
    for ln in masked:
        offsets.append(offsets[-1] + len(ln) + 1)
    out = []
    for i, kind in _go_decl_lines(masked):
        m = _GO_FUNC.match(masked[i]) if kind == "func" else None
        if m is None:
            continue
        end_off = _go_func_end(masked_src, offsets[i])
        end = masked_src.count("\n", 0, end_off)
        _, doc = _go_doc_block(lines, masked, i)
        out.append(Definition(rel, m.group(1), i, end, doc or None))
    return out


def strip_go(src: str) -> str:
    """``src`` with the doc comments of funcs, types and the package as empty lines."""
    lines = src.split("\n")
    masked = go_mask(src).split("\n")
    for i, _kind in _go_decl_lines(masked):
        for k in _go_doc_block(lines, masked, i)[0]:
            lines[k] = ""
    return "\n".join(lines)


LANGUAGES = {
    "python": Language("python", "stdlib", "*.py", ("email", "asyncio", "http", "urllib", "json", "logging"),
                       python_files, python_definitions, strip_python, lambda rel: rel.split("/")[0], False),
    "go": Language("go", "go", "*.go",
                   ("net/http", "encoding/json", "go/ast", "go/parser", "strings", "bytes", "bufio",
                    "text/template", "text/template/parse", "net/url", "time", "fmt"),
                   go_files, go_definitions, strip_go, lambda rel: rel.rsplit("/", 1)[0], True),
}


# -- queries ---------------------------------------------------------------------------------------

@dataclass
class QueryStats:
    functions: int = 0
    with_doc: int = 0
    short: int = 0  # first sentence under --min-words
    generic: int = 0  # fewer than 3 content words
    ambiguous: int = 0  # same sentence on 2+ functions
    candidates: int = 0
    typo_short: int = 0  # name of fewer than TYPO_MIN_LETTERS letters
    typo_not_unique: int = 0  # name defined 2+ times among the corpus's functions
    typo_collides: int = 0  # the typo'd name is a word of the corpus
    typo_candidates: int = 0


def sentence_candidates(lang: Language, defs: list[Definition], min_words: int,
                        stats: QueryStats) -> list[tuple[Definition, str]]:
    cands = []
    for d in defs:
        stats.functions += 1
        if not d.doc:
            continue
        stats.with_doc += 1
        q = first_sentence(d.doc)
        if lang.drop_leading_name:
            q = without_leading_name(q, d.name)
        if len(q.split()) < min_words:
            stats.short += 1
        elif len(content_words(q)) < 3:
            stats.generic += 1
        else:
            cands.append((d, q))
    seen = Counter(" ".join(q.lower().split()) for _d, q in cands)
    out = [(d, q) for d, q in cands if seen[" ".join(q.lower().split())] == 1]
    stats.ambiguous = len(cands) - len(out)
    stats.candidates = len(out)
    return out


def keywords_of(sentence: str, rng: random.Random) -> str:
    """3 to 5 distinct content words of the sentence, in their order."""
    words = list(dict.fromkeys(content_words(sentence)))
    k = rng.randint(3, min(5, len(words)))
    keep = sorted(rng.sample(range(len(words)), k))
    return " ".join(words[i] for i in keep)


def one_typo(name: str, rng: random.Random) -> str:
    """``name`` with one edit of a letter: substitution, deletion, insertion or the
    transposition of two adjacent (different) letters."""
    letters = [i for i, c in enumerate(name) if c.isalpha()]
    swaps = [i for i in letters if i + 1 < len(name) and name[i + 1].isalpha() and name[i] != name[i + 1]]
    kind = rng.choice(("substitute", "delete", "insert", "transpose"))
    if kind == "transpose" and swaps:
        i = rng.choice(swaps)
        return name[:i] + name[i + 1] + name[i] + name[i + 2:]
    if kind == "delete":
        i = rng.choice(letters)
        return name[:i] + name[i + 1:]
    if kind == "insert":
        i = rng.randint(0, len(name))
        near = name[i - 1] if i > 0 else name[0]
        c = rng.choice("abcdefghijklmnopqrstuvwxyz")
        return name[:i] + (c.upper() if near.isupper() else c) + name[i:]
    i = rng.choice(letters)  # substitute (also a transposition with no two different adjacent letters)
    c = rng.choice([x for x in "abcdefghijklmnopqrstuvwxyz" if x != name[i].lower()])
    return name[:i] + (c.upper() if name[i].isupper() else c) + name[i + 1:]


def _rng(seed: int, style: str, d: Definition) -> random.Random:
    # a str seed is hashed with SHA-512 by random.seed: the same on every run (no hash())
    return random.Random(f"{seed}/{style}/{d.path}:{d.line + 1}:{d.name}")


def build_queries(lang: Language, defs: list[Definition], corpus_words: set[str], *, min_words: int,
                  max_queries: int, seed: int) -> tuple[dict[str, list[Query]], QueryStats]:
    """Queries by style. sentence and keywords share one seeded sample of functions;
    typo queries are drawn from the same candidates that pass the typo rules."""
    stats = QueryStats()
    cands = sentence_candidates(lang, defs, min_words, stats)
    picked = cands if len(cands) <= max_queries else random.Random(seed).sample(cands, max_queries)
    picked.sort(key=lambda c: (c[0].path, c[0].line))
    out: dict[str, list[Query]] = {s: [] for s in STYLES}
    for d, q in picked:
        project = lang.project(d.path)
        out["sentence"].append(Query("sentence", q, d, project, tuple(dict.fromkeys(w.lower() for w in content_words(q)))))
        kw = keywords_of(q, _rng(seed, "keywords", d))
        out["keywords"].append(Query("keywords", kw, d, project, tuple(dict.fromkeys(w.lower() for w in kw.split()))))

    defined = Counter(d.name for d in defs)
    typos = []
    for d, _q in cands:
        if sum(c.isalpha() for c in d.name) < TYPO_MIN_LETTERS:
            stats.typo_short += 1
        elif defined[d.name] > 1:
            stats.typo_not_unique += 1
        else:
            t = one_typo(d.name, _rng(seed, "typo", d))
            if t.lower() in corpus_words:
                stats.typo_collides += 1
            else:
                typos.append(Query("typo", t, d, lang.project(d.path), (t,)))
    stats.typo_candidates = len(typos)
    if len(typos) > max_queries:
        typos = random.Random(seed).sample(typos, max_queries)
    out["typo"] = sorted(typos, key=lambda q: (q.target.path, q.target.line))
    return out, stats


def words_of(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


# Queries with no answer in any code base (the relevance floor, issue 17): random letter
# strings, keyboard mash, made-up words and words of other languages that name nothing
# in code. Written out, not generated, so every run and reader sees the same 50. Short
# words (articles, "du", "mit") are left out: a lexical match on one is not the floor's
# to judge.
NONSENSE = (
    # random letters
    "qwfpgj zzkv", "zxqvbnmw", "kaqwuzz", "mmmxxqq", "jvrtq lpzoe", "xkcdqz", "pqzvwy", "vvbnqq rrtz",
    "ghqzx fmmw", "uuuuuuu",
    # keyboard mash
    "asdfghjkl", "qwertyuiop", "yxcvbnm", "jkjkjkjk", "hjkl hjkl hjkl", "aoeu snth", "lkjhg poiuy",
    "asdf asdf qwer", "zaq1 xsw2", "ffffffff jjjjjjj",
    # made-up words
    "xyzzyplugh", "blorptangle", "fnord quibbleflax", "snorfblatt", "grelvish tronk", "vexnor plif",
    "wibblewobble frunk", "zorbulated quimp", "thrumble gax", "ooblek nimmity", "frazzlegrump",
    "flibbertigibbet", "gobbledygook balderdash", "jabberwocky slithy toves", "snickerdoodle",
    # other languages, nothing of code
    "Schmetterling Apfelkuchen", "mariposa amarilla jardín", "boulangerie croissant", "buongiorno principessa",
    "Kaffeeklatsch Omas", "сапоги валенки", "smörgåsbord sill", "ciasto wiśniami", "xochitl tlalocan",
    "saudade", "hyvää huomenta", "τυρόπιτα σπανακόπιτα", "오늘 날씨", "猫が好きです", "Kartoffelsalat Rezept",
)
assert len(NONSENSE) == len(set(NONSENSE)) == 50
