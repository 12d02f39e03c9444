"""Exact and regex search from the trigram index (issue 16): latency over stdio, in process
and of ``rg`` on the same files, agreement with ``rg``, what the trigrams add to the index
and to a cold index (run by hand, never in CI).

    git worktree add --detach /work/wt-grepbase a4bcaa2   # the base: the commit before the feature
    python bench/grep_bench.py [--corpus stdlib|rust|PATH] [--patterns 100] [--seed 1] [--limit 100]
                               [--runs 2] [--base /work/wt-grepbase] [--index-dir DIR] [--keep]

1. **Cold index**: ``sylk index --no-embed`` of the corpus into a fresh index folder.
   With ``--base`` (a checkout of an older commit, each tree's own ``server/`` on
   PYTHONPATH), this tree (A) and the base (B) interleaved A B A B, ``--runs`` each: wall
   time, CPU of the process tree, the load before each run; medians. Without a base
   checkout, one timed run of this tree. ``--index-dir``: that index as it is, no cold run.
2. **Index size**: the ``grams/`` folder (the files' trigrams, a Tantivy index of its own)
   against the bytes of the indexed files (their size on disk), the whole index folder,
   and with a base the growth of the whole folder over the base's.
3. **Patterns**, drawn (seeded) from the indexed files' own text, a quarter per class:
   ``selective literal`` (an identifier found in 1-5 files, with what follows it on one of
   its lines: punctuation, a call, an operator), ``common literal`` (an identifier found in
   at least 5% of the files, sometimes with the character beside it), ``regex with a
   literal`` (templates around an identifier found in 2-100 files: ``\\bNAME\\w*\\(``,
   ``NAME\\s*=\\s*\\S``, alternations, ``^\\s*def\\s+NAME``...) and ``regex without a
   literal`` (shapes such as ``\\w+_\\d+\\(`` from which the trigram index can require
   nothing: every indexed file is read). The class of a regex is checked with the
   engine's own analysis (``compile_pattern(...).grams``). All case-sensitive (``-s``),
   no whole word; literals in mode exact (``-F``).
4. **Latency**, interleaved per pattern (the order of the three turned each pattern), page
   cache warm (every file read and one ``rg`` pass first): ``sylk/search`` over stdio
   (``sylk serve --stdio``, embedding off; ``limit`` as an editor asks, the server's
   default time limit), client send -> response parsed; ``Workspace.grep`` in process
   (same limit, same default time limit); ``rg --no-config -a -s -n --with-filename
   [-F] -e PATTERN FILE...`` on exactly the indexed files (their list in chunks of
   arguments of 1 MB, run one after the other; rg's wall time, its whole answer). p50/p95
   per class for each, the ratio of rg's to Sylk's.
5. **Agreement**: for each pattern, the (path, 0-based line) of ``Workspace.grep`` without
   a limit or time limit against rg's; the share of patterns whose sets are equal, and
   examples of every difference (pattern, file, line, which side). The stdio pages are
   also checked against the in-process pages of the same limit (when neither was cut by
   the time limit).

Targets (issue 16): selective literal and regex-with-a-literal queries **p95 <= 30 ms
over stdio on the stdlib**, and **at least 5x faster than rg** (the ratio of the p50s,
stdio) **on the large corpus**; agreement with rg **1.00**; index size added (``grams/``)
**<= 1.5x the indexed text**; cold index **<= +25%** (median wall) over the base. Each
printed as PASS/MISS; the latency target is judged on the stdlib, the ratio on ``rust``,
both on another corpus. Exits 1 on a MISS.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
import unicodedata
from collections import Counter
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402
from references_bench import chunks, git_short, read_text, run_index  # noqa: E402
from search_latency import Client, pct  # noqa: E402
from sylk.config import Settings  # noqa: E402
from sylk.engine.workspace import Workspace  # noqa: E402
from sylk.model import is_virtual  # noqa: E402
from sylk.search.pattern import compile_pattern  # noqa: E402
from sylk.search.query import Filters, GrepRequest  # noqa: E402
from sylk.store.layout import GRAMS_DIR  # noqa: E402

DEFAULT_BASE = Path("/work/wt-grepbase")  # a4bcaa2, the commit before 1e297cc (exact and regex search)
LATENCY_TARGET_MS = 30.0
RATIO_TARGET = 5.0
SIZE_TARGET = 1.5  # grams/ over the indexed text
TIME_TARGET = 0.25  # cold index over the base (median wall)
CLASSES = ("selective literal", "common literal", "regex with a literal", "regex without a literal")
TARGET_CLASSES = ("selective literal", "regex with a literal")
WORD = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]{2,}")
COMMON_SHARE = 0.05

# regexes around a NAME (an identifier found in 2-100 files)
WITH_LITERAL = (
    r"\bNAME\w*\(", r"NAME\s*=\s*\S", r"(?:NAME|OTHER)\.\w+", r"^\s*(?:def|fn|pub fn|class|struct|impl)\s+NAME",
    r"NAME\w*\s*\(\s*\w+", r'"[^"]*NAME[^"]*"', r"NAME(?:s|es|ed)?\b", r"\.NAME\(", r"NAME\[\w+\]",
    r"\w+\.NAME\b", r"NAME\s*[!=<>]=", r"(?:self|this)\.NAME", r"\bNAME\b.*\bOTHER\b", r"[A-Z]\w*NAME",
)
# shapes from which the trigram index can require nothing (checked with compile_pattern)
WITHOUT_LITERAL = (
    r"\w+_\d+\(", r"[A-Z]{3,}_[A-Z]{3,}", r"\b\d{4}-\d{2}-\d{2}\b", r"0x[0-9a-fA-F]{8}\b",
    r"\b[a-z]+[A-Z][a-z]+[A-Z]\w*\(", r"\w+\s*!=\s*\d+", r"\(\w\)", r"\b\w{25,}\b", r"\w+\[\w+\]\[\w+\]",
    r"[<>]=\s*-\d", r"\d+\.\d+e[+-]?\d+", r"\b[a-z]_[a-z]\b", r"\w+::\w+::\w+::\w+", r"'\w'",
    r"\s{2,}\w+\s*=\s*\d{3,}", r"^\s*\w+ \w+ \w+ \w+ \w+$", r"\w+\.\w+\.\w+\.\w+\(", r"[A-Z][a-z]+[0-9]+\b",
    r"\$\{\w+\}", r"\\x[0-9a-f]{2}", r"\w+->\w+", r"\b[xyz]\d\b", r"#\s*\w+:\s*\w+", r"\b\d{5,}\b",
    r"\w+,\w+,\w+", r"[^\x00-\x7F]{3,}", r"\t\t\t\w", r"\w+\s*\|\|\s*\w+", r"\w+\s*&&\s*!\w+", r"\(\)\s*\{$",
    r"\b[A-Z]{2}\d{2}\b", r"\w+\(\w+\(\w+\(", r"\b[a-z]\w*_[a-z]\w*_[a-z]\w*_\w+\b", r"=\s*\[\s*\]",
)

Key = tuple[str, int]  # (path, 0-based line)


def rust_word(c: str) -> bool:
    """Whether rg's Unicode ``\\w`` takes ``c`` (Alphabetic, marks, Nd, Pc, Join_Control;
    Alphabetic approximated by the letter and Nl categories)."""
    cat = unicodedata.category(c)
    return cat[0] in "LM" or cat in ("Nd", "Nl", "Pc") or c in "\u200c\u200d"


def python_word(c: str) -> bool:
    return c.isalnum() or c == "_"


def why_differs(line: str, replaced: bool) -> str:
    """Why rg and Python's ``re`` may read ``line`` differently ("" when nothing explains it)."""
    odd = sorted({c for c in line if python_word(c) != rust_word(c)})
    if odd:
        return "\\w: " + " ".join(f"{c!r} {unicodedata.category(c)}" for c in odd[:3])
    if any("\x1c" <= c <= "\x1f" for c in line):
        return "\\s: U+001C..U+001F"
    if replaced and "\ufffd" in line:
        return "invalid UTF-8 (U+FFFD for Sylk, bytes for rg)"
    return ""


class Query(NamedTuple):
    cls: str
    pattern: str
    mode: str  # exact, regex


# -- the corpus and the patterns ------------------------------------------------------

class Corpus:
    """The indexed files' text, as Sylk reads them, and each identifier's file count."""

    def __init__(self, root: Path, files: list[str]) -> None:
        self.files = files
        self.texts: dict[str, str] = {}
        self.df: Counter = Counter()
        self.where: dict[str, str] = {}  # identifier -> a file holding it (the last one read)
        for rel in files:
            try:
                text = read_text(root / rel)
            except OSError:
                continue
            self.texts[rel] = text
            words = set(WORD.findall(text))
            self.df.update(words)
            for w in words:
                self.where[w] = rel

    def count_files(self, literal: str) -> int:
        return sum(literal in t for t in self.texts.values())

    def occurrence(self, rng: random.Random, word: str, rel: str | None = None) -> tuple[str, int, int]:
        """(line, start, end) of one whole-word occurrence of ``word`` (in ``rel`` or its file)."""
        text = self.texts[rel or self.where[word]]
        found = [m for m in re.finditer(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", text)]
        m = rng.choice(found)
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        line = text[start:len(text) if end < 0 else end].rstrip("\r")
        return line, m.start() - start, m.end() - start


def draw(corpus: Corpus, n: int, seed: int) -> list[Query]:
    """``n`` patterns, a quarter per class (see the module docstring), interleaved."""
    rng = random.Random(seed)
    per = n // len(CLASSES)
    counts = {cls: per + (1 if i < n % len(CLASSES) else 0) for i, cls in enumerate(CLASSES)}
    words = sorted(corpus.df)
    rare = [w for w in words if corpus.df[w] <= 5 and len(w) >= 6]
    medium = [w for w in words if 2 <= corpus.df[w] <= 100 and len(w) >= 4]
    threshold = max(2, int(COMMON_SHARE * len(corpus.texts)))
    common = sorted(w for w in words if corpus.df[w] >= threshold)
    out: dict[str, list[Query]] = {cls: [] for cls in CLASSES}
    seen: set[str] = set()

    def add(cls: str, pattern: str, mode: str) -> None:
        if pattern not in seen and "\n" not in pattern and "\r" not in pattern:
            seen.add(pattern)
            out[cls].append(Query(cls, pattern, mode))

    while len(out["selective literal"]) < counts["selective literal"]:
        word = rng.choice(rare)
        line, a, b = corpus.occurrence(rng, word)
        a = max(0, a - rng.choice((0, 0, 1, 5)))  # sometimes what comes before it (".", "self.")
        lit = line[a:b + rng.randint(0, 12)].strip()
        add("selective literal", lit if word in lit else word, "exact")
    while len(out["common literal"]) < counts["common literal"]:
        word = rng.choice(common)
        lit = word
        if rng.random() < 0.5:
            sample = corpus.files[::max(1, len(corpus.files) // 200)]
            rel = rng.choice([r for r in sample if word in corpus.texts.get(r, "")] or [corpus.where[word]])
            try:
                line, a, b = corpus.occurrence(rng, word, rel)
                wider = line[max(0, a - 1):b + 1].strip()
                if corpus.count_files(wider) >= threshold:
                    lit = wider
            except IndexError:
                pass
        add("common literal", lit, "exact")
    misses = 0  # (a pattern that matches nothing in its name's file is taken now and then)
    while len(out["regex with a literal"]) < counts["regex with a literal"]:
        name = rng.choice(medium)
        pattern = rng.choice(WITH_LITERAL).replace("NAME", name).replace("OTHER", rng.choice(medium))
        if compile_pattern(pattern, mode="regex", case=True).grams is None:
            continue
        if re.search(pattern, corpus.texts[corpus.where[name]], re.MULTILINE) is None:
            misses += 1
            if misses % 10:
                continue
        add("regex with a literal", pattern, "regex")
    shapes = [s for s in WITHOUT_LITERAL if compile_pattern(s, mode="regex", case=True).grams is None]
    for s in rng.sample(shapes, min(counts["regex without a literal"], len(shapes))):
        add("regex without a literal", s, "regex")
    # interleaved: one of each class in turn
    queries = []
    for i in range(max(map(len, out.values()))):
        queries += [out[cls][i] for cls in CLASSES if i < len(out[cls])]
    return queries


# -- the three ways -----------------------------------------------------------------------

def rg(root: Path, parts: list[list[str]], q: Query) -> tuple[float, set[Key]]:
    """(wall ms, every matching line) of rg on the files of ``parts``, one process after another."""
    outs = []
    t0 = time.perf_counter()
    for part in parts:
        p = subprocess.run(["rg", "--no-config", "-a", "-s", "-n", "--no-heading", "--with-filename", "--null",
                            "--color", "never", *(["-F"] if q.mode == "exact" else []), "-e", q.pattern, "--", *part],
                           cwd=root, capture_output=True)
        if p.returncode not in (0, 1):
            raise SystemExit(f"rg failed on {q.pattern!r} ({p.returncode}): {p.stderr.decode(errors='replace')[:500]}")
        outs.append(p.stdout)
    ms = (time.perf_counter() - t0) * 1000
    found: set[Key] = set()
    for out in outs:
        for row in out.split(b"\n"):
            if row:
                path, _, rest = row.partition(b"\0")
                found.add((os.fsdecode(path), int(rest.split(b":", 1)[0]) - 1))
    return ms, found


def request(q: Query, limit: int | None, time_limit_s: float | None = 2.0) -> GrepRequest:
    return GrepRequest(q.pattern, mode=q.mode, case=True, whole_word=False, filters=Filters(), limit=limit,
                       offset=0, time_limit_s=time_limit_s)


class Row(NamedTuple):
    q: Query
    stdio_ms: float
    inproc_ms: float
    all_ms: float  # in process, every line, no time limit
    rg_ms: float
    rg_lines: int
    rg_files: int
    only_rg: list[Key]
    only_sylk: list[Key]
    scanned: bool
    partial: bool  # the stdio answer (time limit)
    lower_bound: bool  # the stdio answer
    stdio_total: int
    page_same: bool | None  # stdio page == in-process page (None: a page was cut by the time limit)


def ask(client: Client, ws: Workspace, root: Path, parts: list[list[str]], q: Query, limit: int,
        turn: int) -> Row:
    timed: dict[str, object] = {}

    def stdio() -> None:
        t = time.perf_counter()
        r = client.request("sylk/search", {"query": q.pattern, "mode": q.mode, "caseSensitive": True,
                                           "wholeWord": False, "limit": limit})
        timed["stdio"] = ((time.perf_counter() - t) * 1000, r)

    def inproc() -> None:
        t = time.perf_counter()
        r = ws.grep(request(q, limit))
        timed["inproc"] = ((time.perf_counter() - t) * 1000, r)

    def with_rg() -> None:
        timed["rg"] = rg(root, parts, q)

    ways = [stdio, inproc, with_rg]
    for i in range(3):
        ways[(turn + i) % 3]()
    stdio_ms, answer = timed["stdio"]  # type: ignore[misc]
    if "error" in answer:
        raise SystemExit(f"sylk/search failed on {q.pattern!r}: {answer['error']}")
    res = answer["result"]
    inproc_ms, page = timed["inproc"]  # type: ignore[misc]
    rg_ms, by_rg = timed["rg"]  # type: ignore[misc]
    t = time.perf_counter()
    full = ws.grep(request(q, None, None))
    all_ms = (time.perf_counter() - t) * 1000
    mine = {(h.path, h.line) for h in full.hits}
    stdio_page = [(h["path"], h["line"]) for h in res["hits"]]
    same = None if (res["partial"] or page.partial) else stdio_page == [(h.path, h.line) for h in page.hits]
    return Row(q, stdio_ms, inproc_ms, all_ms, rg_ms, len(by_rg), len({p for p, _ in by_rg}),
               sorted(by_rg - mine), sorted(mine - by_rg), bool(res["scanned"]), bool(res["partial"]),
               bool(res["totalHitsLowerBound"]), int(res["totalHits"]), same)


# -- cold index and size ------------------------------------------------------------------

def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def cold_index(root: Path, base: Path | None, runs: int, keep: bool) -> tuple[Path, Path | None, bool | None]:
    """The cold runs (A, and B interleaved when ``base``); the last folder of each stays."""
    sides = [("A", corpora.SERVER)] + ([("B", base / "server")] if base else [])
    print(f"\n== cold index: A = this tree ({corpora.git_head()})"
          + (f", B = base {git_short(base)} ({base}), {runs} runs each, interleaved" if base else
             ", one run (no --base checkout: no comparison)"))
    results: dict[str, list[dict]] = {s: [] for s, _ in sides}
    last: dict[str, Path] = {}
    for i in range(max(runs, 1) if base else 1):
        for side, tree in sides:
            d = corpora.fresh_index_dir(f"grep-{side}")
            r = run_index(tree, root, d)
            results[side].append(r)
            print(f"  run {i + 1} {side}: wall {r['wall']:6.2f}s  CPU {r['cpu']:6.2f}s (main process "
                  f"{r['main_cpu']:5.2f}s)  engine {r['engine']:.2f}s, {r['files']} files"
                  f"   load {r['load']:.2f} before")
            if side in last and not keep:
                shutil.rmtree(last[side], ignore_errors=True)
            last[side] = d
    if not base:
        return last["A"], None, None
    print(f"  [{corpora.load_line()}]")
    for what in ("wall", "cpu"):
        a, b = med([r[what] for r in results["A"]]), med([r[what] for r in results["B"]])
        print(f"  median {what:<5} A {a:6.2f}s   B {b:6.2f}s (baseline)   A/B {a / b:.3f} ({(a / b - 1) * 100:+.1f}%)"
              f"   min A {min(r[what] for r in results['A']):.2f}s  B {min(r[what] for r in results['B']):.2f}s")
    a, b = med([r["wall"] for r in results["A"]]), med([r["wall"] for r in results["B"]])
    ok = a / b - 1 <= TIME_TARGET
    print(f"{'PASS' if ok else 'MISS'}: cold index <= +{TIME_TARGET:.0%} over the base (median wall "
          f"{(a / b - 1) * 100:+.1f}%)")
    return last["A"], last["B"], ok


def sizes(root: Path, index_dir: Path, base_dir: Path | None, files: list[str]) -> bool:
    text = sum(os.path.getsize(root / f) for f in files)
    grams = corpora.dir_bytes(index_dir / GRAMS_DIR)
    whole = corpora.dir_bytes(index_dir)
    print(f"\n== index size: {len(files)} indexed files, {corpora.human(text)} of text")
    print(f"  grams/ {corpora.human(grams)} = {grams / text:.3f}x the indexed text, {grams / whole:.1%} of the index "
          f"folder ({corpora.human(whole)}, {whole / text:.2f}x the text)")
    parts = {p.name: (corpora.dir_bytes(p) if p.is_dir() else p.stat().st_size) for p in index_dir.iterdir()}
    print("  " + ", ".join(f"{k} {corpora.human(v)}" for k, v in sorted(parts.items())))
    ok = grams / text <= SIZE_TARGET
    if base_dir is not None:
        b = corpora.dir_bytes(base_dir)
        print(f"  base folder {corpora.human(b)}: this one {(whole / b - 1) * 100:+.1f}%, added "
              f"{corpora.human(whole - b)} = {(whole - b) / text:.3f}x the indexed text")
        ok &= (whole - b) / text <= SIZE_TARGET
    print(f"{'PASS' if ok else 'MISS'}: index size added <= {SIZE_TARGET}x the indexed text "
          f"(grams/ {grams / text:.3f}x" + (f", the folder over the base's {(whole - b) / text:.3f}x)"
                                             if base_dir is not None else ")"))
    return ok


# -- main ---------------------------------------------------------------------------------

def report(rows: list[Row], corpus: Corpus, replaced: set[str], corpus_name: str, examples: int) -> bool:
    print(f"\n  ms per class (n patterns)          p50      p95      max   [{corpora.load_line()}]")
    ratios: dict[str, tuple[float, float]] = {}
    for cls in CLASSES:
        rs = [r for r in rows if r.q.cls == cls]
        if not rs:
            continue
        print(f"  {cls} ({len(rs)}): rg finds a median {med([r.rg_lines for r in rs]):.0f} lines in "
              f"{med([r.rg_files for r in rs]):.0f} files; {sum(r.scanned for r in rs)} scanned every file, "
              f"{sum(r.partial for r in rs)} partial (time limit), {sum(r.lower_bound for r in rs)} counted "
              f"to a lower bound (stdio)")
        for how, xs in (("stdio", [r.stdio_ms for r in rs]), ("in-process", [r.inproc_ms for r in rs]),
                        ("in-process, every line", [r.all_ms for r in rs]), ("rg (baseline)", [r.rg_ms for r in rs])):
            print(f"    {how:<24} {pct(xs, .5):8.1f} {pct(xs, .95):8.1f} {max(xs):8.1f}")
        s50, s95 = pct([r.stdio_ms for r in rs], .5), pct([r.stdio_ms for r in rs], .95)
        i50 = pct([r.inproc_ms for r in rs], .5)
        g50, g95 = pct([r.rg_ms for r in rs], .5), pct([r.rg_ms for r in rs], .95)
        per = med([r.rg_ms / r.stdio_ms for r in rs])
        ratios[cls] = (g50 / s50, s95)
        print(f"    rg / Sylk: p50 {g50 / s50:.1f}x over stdio ({g50 / i50:.1f}x in process), p95 {g95 / s95:.1f}x;"
              f" median per pattern {per:.1f}x")
        slow = sorted(rs, key=lambda r: -r.stdio_ms)[:3]
        print("    slowest over stdio: " + "; ".join(
            f"{r.q.pattern[:40]!r} {r.stdio_ms:.0f} ms (in process {r.inproc_ms:.0f}, rg {r.rg_ms:.0f}; "
            f"{r.stdio_total}{'+' if r.lower_bound else ''} lines{', partial' if r.partial else ''})" for r in slow))

    ok = True
    latency_target = corpus_name != "rust"
    ratio_target = corpus_name != "stdlib"
    for cls in TARGET_CLASSES:
        ratio, p95 = ratios[cls]
        good = p95 <= LATENCY_TARGET_MS
        print(f"{'PASS' if good else 'MISS'}: {cls} p95 <= {LATENCY_TARGET_MS:.0f} ms over stdio ({p95:.1f} ms)"
              + ("" if latency_target else "   (not a target on this corpus)"))
        ok &= good or not latency_target
        good = ratio >= RATIO_TARGET
        print(f"{'PASS' if good else 'MISS'}: {cls} >= {RATIO_TARGET:.0f}x faster than rg (p50 over stdio: "
              f"{ratio:.1f}x)" + ("" if ratio_target else "   (not a target on this corpus)"))
        ok &= good or not ratio_target

    print("\n== agreement with rg: (path, 0-based line) of every matching line, Workspace.grep without a limit")
    for cls in CLASSES:
        rs = [r for r in rows if r.q.cls == cls]
        alike = sum(not r.only_rg and not r.only_sylk for r in rs)
        print(f"  {cls:<26} {alike}/{len(rs)} patterns alike ({sum(len(r.only_rg) for r in rs)} lines only rg, "
              f"{sum(len(r.only_sylk) for r in rs)} only Sylk)")
    alike = sum(not r.only_rg and not r.only_sylk for r in rows)
    share = alike / max(len(rows), 1)
    unexplained = 0
    for r in rows:
        if r.only_rg or r.only_sylk:
            print(f"  differs: {r.q.pattern!r} ({r.q.cls}; rg -s{' -F' if r.q.mode == 'exact' else ''})")
            for side, keys in (("only rg", r.only_rg), ("only Sylk", r.only_sylk)):
                for i, (path, line) in enumerate(keys):
                    text = corpus.texts.get(path, "").split("\n")
                    shown = text[line].rstrip("\r") if line < len(text) else "?"
                    why = why_differs(shown, path in replaced)
                    unexplained += not why
                    if i < examples:
                        print(f"    {side}: {path}:{line + 1}: {shown[:110]!r}   [{why or 'unexplained'}]")
                if len(keys) > examples:
                    print(f"    {side}: ... and {len(keys) - examples} more")
    good = round(share, 2) == 1.0
    print(f"{'PASS' if good else 'MISS'}: agreement with rg 1.00 ({share:.2f}: {alike}/{len(rows)} patterns alike)")
    print(f"{'PASS' if not unexplained else 'MISS'}: no unexplained difference ({unexplained} lines that differ with "
          f"no character the two engines class differently)")
    ok &= good and not unexplained
    pages = [r for r in rows if r.page_same is not None]
    same = sum(bool(r.page_same) for r in pages)
    print(f"{'PASS' if same == len(pages) else 'MISS'}: the stdio pages are the in-process pages ({same}/{len(pages)};"
          f" {len(rows) - len(pages)} cut by the time limit, not compared)")
    return ok and same == len(pages)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="stdlib")
    ap.add_argument("--patterns", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--limit", type=int, default=100, help="the page asked over stdio and in process")
    ap.add_argument("--runs", type=int, default=2, help="cold index runs of each tree (with --base)")
    ap.add_argument("--base", type=Path, default=DEFAULT_BASE, help="a checkout of the base commit (a4bcaa2)")
    ap.add_argument("--index-dir", type=Path, help="query this index as it is: no cold runs")
    ap.add_argument("--examples", type=int, default=4, help="lines shown per side of a difference")
    ap.add_argument("--keep", action="store_true", help="keep the index folders")
    args = ap.parse_args()
    root = corpora.prepare(args.corpus)
    corpora.header("sylk exact and regex search (sylk/search modes exact and regex)")
    print(f"# corpus {root}")
    ok = True
    made: list[Path] = []
    try:
        base_dir = None
        if args.index_dir:
            index_dir = args.index_dir.resolve()
        else:
            base = args.base if (args.base / "server" / "sylk").is_dir() else None
            if base is None:
                print(f"# no base checkout at {args.base} (git worktree add --detach {args.base} a4bcaa2): "
                      "the cold index is not compared")
            index_dir, base_dir, timed = cold_index(root, base, args.runs, args.keep)
            made += [d for d in (index_dir, base_dir) if d]
            ok &= timed is not False

        ws = Workspace(root, Settings(index_dir=str(index_dir)), writable=False)
        records = ws.manifest.files()
        files = sorted(p for p in records if not is_virtual(p))
        replaced = {p for p, r in records.items() if r.replaced}
        ok &= sizes(root, index_dir, base_dir, files)

        t0 = time.perf_counter()
        corpus = Corpus(root, files)
        queries = draw(corpus, args.patterns, args.seed)
        print(f"\n== patterns: {len(queries)} (seed {args.seed}) from {len(corpus.texts)} files, "
              f"{len(corpus.df)} identifiers (read and counted in {time.perf_counter() - t0:.1f}s): "
              + ", ".join(f"{sum(q.cls == c for q in queries)} {c}" for c in CLASSES))
        for cls in CLASSES:
            print(f"  {cls}: " + ", ".join(repr(q.pattern) for q in queries if q.cls == cls)[:400])

        parts = chunks(files)
        # warm: the page cache (every file), rg itself, and the bench's data out of the collector's sight
        t0 = time.perf_counter()
        for rel in files:
            (root / rel).read_bytes()
        rg(root, parts, Query("", "a warm-up pattern that is nowhere", "exact"))
        print(f"  page cache warmed in {time.perf_counter() - t0:.1f}s; rg over {len(files)} files in {len(parts)} "
              f"process(es) per pattern; limit {args.limit}")
        gc.collect()
        gc.freeze()

        env = {**os.environ, "SYLK_INDEX_DIR": str(index_dir)}
        env["PYTHONPATH"] = str(corpora.SERVER) + os.pathsep + env.get("PYTHONPATH", "")
        client = Client(root, env, {"embedding": {"enabled": False}})
        try:
            t0 = time.perf_counter()
            while not client.request("sylk/status", {})["result"].get("ready"):
                time.sleep(0.05)
            print(f"\n== latency: server ready in {time.perf_counter() - t0:.1f}s")
            for q in queries[:4]:  # first use of each path (searchers, the symbol table), not timed
                ask(client, ws, root, parts, q, args.limit, 0)
            rows = []
            for i, q in enumerate(queries):
                rows.append(ask(client, ws, root, parts, q, args.limit, i))
                r = rows[-1]
                print(f"  {i + 1}/{len(queries)} {q.cls}: stdio {r.stdio_ms:.0f} ms, in-process {r.inproc_ms:.0f}, "
                      f"every line {r.all_ms:.0f}, rg {r.rg_ms:.0f}", file=sys.stderr, flush=True)
        finally:
            client.close()
            ws.close()
        ok &= report(rows, corpus, replaced, args.corpus, args.examples)
        print(f"# done -- {corpora.load_line()}")
        return 0 if ok else 1
    finally:
        if not args.keep:
            for d in made:
                shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
