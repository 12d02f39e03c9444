"""Find References from the index: latency over stdio, recall and precision against
``rg -w -F``, what the occurrences cost the index (size, cold index time) and the
in-memory table on first use (run by hand, never in CI).

    python bench/references_bench.py [--corpus stdlib|rust|PATH] [--names 200] [--seed 1]
                                     [--runs 2] [--base /work/wt-refbase] [--tree DIR] [--attribute]
                                     [--index-dir DIR] [--keep]

1. **Cold index, this commit against the base** (``--base``: a checkout of the commit
   before Find References, 67e8068: ``git worktree add /work/wt-refbase 67e8068``):
   ``sylk index --no-embed`` of the corpus into a fresh index folder, each tree's own
   ``server/`` on PYTHONPATH, interleaved A B A B (``--runs`` each); wall time, the CPU
   of the process tree (``getrusage(RUSAGE_CHILDREN)``: the parser workers are reaped by
   the index process, it by us) and of the main process alone, the load average before
   each run; medians. ``--tree``: a checkout to take as A instead of this one (the
   references alone, without what later issues added to indexing: a4bcaa2 and the
   commits that made references cheaper since). ``--attribute``: the CPU of what the workers do more (the marks
   of comments, strings and calls in the tags walk, ``occurrences.extract``), in process.
2. **Index size**: the whole index folder of each, and the ``occurrences`` table alone
   (SQLite's ``dbstat``: its pages and its primary key's; else the blobs' bytes).
3. **The table on first use**: in a fresh process each time, the workspace opened
   read-only, then ``ws.references.table`` built: wall and CPU time, RSS before, peak
   (``VmHWM``), after and after ``malloc_trim``; once more under ``tracemalloc`` (what
   the table's objects and arrays hold, and their peak while built).
4. **Names**: every identifier of the indexed files (the manifest's file list, read as
   Sylk reads them: UTF-8 BOM dropped, invalid bytes replaced), counted with Python's
   ``(?<!\\w)[^\\W\\d]\\w*``; ``--names`` drawn (seeded) from those with 2 to 1,000
   occurrences, a third each of 2-9, 10-99 and 100-1,000; a few very common names
   (``self``, ``get``, ``None`` and the corpus's three most frequent) to show the cut at
   ``references.limit``; and up to 10 names with non-ASCII letters (recall only).
5. **Latency**: ``sylk serve --stdio`` (``navigation.skipLanguages: []``, embedding
   off), ``textDocument/references`` (includeDeclaration) at an occurrence of each name
   that the server takes for a name (not a keyword of the file's language), timed
   client send -> response read; the first request, which builds the table, apart.
   Baselines in the same run, interleaved per name: ``Workspace.find_references`` in
   process (same name, same leading file, the settings' limit), and
   ``rg -w -F -o -n --column NAME FILE...`` on exactly the indexed files (wall time;
   the file list in chunks of arguments when it is long, run one after the other).
6. **Recall and precision** against that ``rg`` output, as sets of (path, 0-based line,
   UTF-16 column); rg's 1-based byte column converted with the line's bytes. The
   engine's side is ``find_references`` without a limit. Each difference is classed by
   the characters beside it (invalid UTF-8, a non-ASCII neighbour the two ``\\w`` class
   differently, unexplained) and examples of each class printed with them: a
   disagreement is the point of this number. The stdio answers are also checked
   against the in-process ones (same set, when not cut).

Targets: recall and precision 1.00 (two decimals) with no unexplained difference; index
**<= +40%** bigger and a cold index **<= +15%** slower (median wall) than the base.
Exits 1 on a MISS.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import random
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402
from index_bench import SUMMARY, TreeMemory  # noqa: E402
from search_latency import Client, pct  # noqa: E402
from sylk.config import Settings  # noqa: E402
from sylk.engine.workspace import Workspace  # noqa: E402
from sylk.ingest import occurrences, source_files, symbols  # noqa: E402
from sylk.languages import language_for_path  # noqa: E402
from sylk.model import is_virtual  # noqa: E402
from sylk.search import definitions  # noqa: E402
from sylk.store.layout import MANIFEST_FILE  # noqa: E402

SIZE_TARGET = 0.40  # index growth over the base
TIME_TARGET = 0.15  # cold index time over the base (median wall)
DEFAULT_BASE = Path("/work/wt-refbase")
NAME = re.compile(r"(?<!\w)[^\W\d]\w*")  # what an occurrence is (ingest/occurrences.py says the same in numpy)
BUCKETS = ((2, 9), (10, 99), (100, 1000))
COMMON = ("self", "get", "None")
ARG_BYTES = 1_000_000  # rg's arguments per process (ARG_MAX is 2 MB with an 8 MB stack)
BOM = b"\xef\xbb\xbf"

Key = tuple[str, int, int]  # (path, 0-based line, UTF-16 column)


# -- cold index and size -------------------------------------------------------------

def run_index(server: Path, root: Path, index_dir: Path) -> dict:
    """``sylk index --no-embed`` with ``server`` on PYTHONPATH: wall and CPU of the tree."""
    env = {**os.environ, "SYLK_INDEX_DIR": str(index_dir)}
    env["PYTHONPATH"] = str(server) + os.pathsep + env.get("PYTHONPATH", "")
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "sylk.cli", "index", str(root), "--no-embed"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tempfile.gettempdir())
    tree = TreeMemory(proc.pid)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    main_peak, _worker_peak, _tree_peak = tree.stop()
    if proc.returncode != 0:
        raise SystemExit(f"sylk index ({server}) failed ({proc.returncode}):\n{err}")
    m = SUMMARY.search(out)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "main_cpu": tree.cpu_split()[0], "main_peak": main_peak, "load": load,
            "engine": float(m.group(3)) if m else float("nan"), "files": int(m.group(1)) if m else -1,
            "summary": out.strip()}


def occurrences_bytes(index_dir: Path) -> tuple[int, int, str]:
    """(bytes of the ``occurrences`` table on disk, bytes of its blobs, how it was measured)."""
    db = sqlite3.connect(f"file:{index_dir / MANIFEST_FILE}?mode=ro", uri=True)
    try:
        payload = db.execute("SELECT coalesce(sum(length(data)), 0) FROM occurrences").fetchone()[0]
        try:
            pages = db.execute("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN "
                               "('occurrences', 'sqlite_autoindex_occurrences_1')").fetchone()[0]
            return pages, payload, "dbstat: the table's and its key's pages"
        except sqlite3.OperationalError:
            return payload, payload, "sum(length(data)): no dbstat in this SQLite"
    finally:
        db.close()


def attribute(root: Path, files: list[str], max_size: int) -> None:
    """What a cold index does more, in this process, one file after another (CPU seconds):
    the tags walk with the comment/string/call marks against without, and
    ``occurrences.extract``."""
    plain = marked = extract = 0.0
    for rel in files:
        try:
            src = source_files.load_source(root / rel, max_size)
        except source_files.SkipFile:
            continue
        language, marks = language_for_path(rel), None
        if language is not None:
            t = time.process_time()
            symbols.extract(src.data, language)
            t1 = time.process_time()
            _syms, marks = symbols.extract_marked(src.data, language)
            t2 = time.process_time()
            plain, marked = plain + t1 - t, marked + t2 - t1
        t = time.process_time()
        occurrences.extract(src.data, marks)
        extract += time.process_time() - t
    print(f"  where the extra CPU goes (in process, one file after another): the tags walk {plain:.2f}s, with the"
          f" marks {marked:.2f}s ({marked - plain:+.2f}s); occurrences.extract {extract:.2f}s;"
          f" together {marked - plain + extract:+.2f}s   [{corpora.load_line()}]")


def git_short(tree: Path) -> str:
    out = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or "?"


# -- the table on first use (a fresh process) ----------------------------------------

def _proc_status() -> dict[str, int]:
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) * 1024
    return out


def probe_table(root: Path, index_dir: Path, traced: bool) -> None:
    """Child mode: open the workspace, build the reference table, print JSON. ``traced``:
    under tracemalloc (slower), for what Python objects and numpy arrays hold."""
    if traced:
        import tracemalloc
        tracemalloc.start()
    ws = Workspace(root, Settings(index_dir=str(index_dir)), writable=False)
    gc.collect()
    before = _proc_status()
    traced_before = tracemalloc.get_traced_memory()[0] if traced else 0
    if traced:
        tracemalloc.reset_peak()
    t0, c0 = time.perf_counter(), time.process_time()
    table = ws.references.table
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    after = _proc_status()
    out = {"wall": wall, "cpu": cpu, "rss_before": before["VmRSS"], "hwm_before": before["VmHWM"],
           "hwm": after["VmHWM"], "rss_after": after["VmRSS"], "files": len(table)}
    if traced:
        gc.collect()
        now, peak = tracemalloc.get_traced_memory()
        out.update(traced_held=now - traced_before, traced_peak=peak - traced_before)
    else:  # what the allocator keeps of the freed build memory
        gc.collect()
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        out["rss_trimmed"] = _proc_status()["VmRSS"]
    print(json.dumps(out))
    ws.close()


def measure_table(root: Path, index_dir: Path, runs: int) -> list[dict]:
    """``runs`` probes, then one under tracemalloc (last)."""
    env = {**os.environ, "PYTHONPATH": str(corpora.SERVER) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = []
    for mode in ["--probe-table"] * runs + ["--probe-table-traced"]:
        p = subprocess.run([sys.executable, __file__, mode, str(root), str(index_dir)], env=env,
                           capture_output=True, text=True, cwd=tempfile.gettempdir())
        if p.returncode != 0:
            raise SystemExit(f"table probe failed:\n{p.stderr}")
        out.append(json.loads(p.stdout.strip().splitlines()[-1]))
    return out


# -- names ----------------------------------------------------------------------------

def read_text(path: Path) -> str:
    """A file's text as Sylk indexes it (source_files.load_source): BOM dropped, bad bytes replaced."""
    raw = path.read_bytes()
    return (raw[3:] if raw.startswith(BOM) else raw).decode("utf-8", "replace")


def count_names(root: Path, files: list[str]) -> Counter:
    counts: Counter = Counter()
    for rel in files:
        try:
            counts.update(NAME.findall(read_text(root / rel)))
        except OSError:
            continue
    return counts


def sample_names(counts: Counter, n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    for i, (lo, hi) in enumerate(BUCKETS):
        share = n // len(BUCKETS) + (1 if i < n % len(BUCKETS) else 0)
        pool = sorted(w for w, c in counts.items() if lo <= c <= hi)
        out += rng.sample(pool, min(share, len(pool)))
    return out


def common_names(counts: Counter) -> list[str]:
    names = [w for w in COMMON if counts[w]]
    names += [w for w, _c in counts.most_common(len(COMMON) + 3) if w not in names][:3]
    return names


def unicode_names(counts: Counter, seed: int, n: int = 10) -> list[str]:
    pool = sorted(w for w, c in counts.items() if not w.isascii() and c <= 1000)
    return random.Random(seed).sample(pool, min(n, len(pool)))


# -- rg --------------------------------------------------------------------------------

def chunks(files: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    size = 0
    for f in files:
        n = len(os.fsencode(f)) + 1
        if size + n > ARG_BYTES and out[-1]:
            out.append([])
            size = 0
        out[-1].append(f)
        size += n
    return out


class FileBytes:
    """Files' lines as bytes (rg's view: a UTF-8 BOM is not part of line 1), read once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lines: dict[str, list[bytes]] = {}

    def line(self, rel: str, line: int) -> bytes:
        lines = self._lines.get(rel)
        if lines is None:
            raw = (self.root / rel).read_bytes()
            lines = self._lines[rel] = (raw[3:] if raw.startswith(BOM) else raw).split(b"\n")
        return lines[line] if line < len(lines) else b""


def utf16_column(line: bytes, byte_col: int) -> int:
    """A byte offset of ``line`` as UTF-16 units (invalid bytes read as U+FFFD, as Sylk reads them)."""
    prefix = line[:byte_col]
    if prefix.isascii():
        return len(prefix)
    return len(prefix.decode("utf-8", "replace").encode("utf-16-le")) // 2


def rg(root: Path, parts: list[list[str]], name: str, lines: FileBytes) -> tuple[float, set[Key]]:
    """(wall ms, occurrences) of ``rg -w -F -o -n --column name`` over the files in ``parts``."""
    found: set[Key] = set()
    t0 = time.perf_counter()
    outs = []
    for part in parts:
        p = subprocess.run(["rg", "--no-config", "-a", "-H", "--null", "-o", "-n", "--column", "-w", "-F",
                            "-e", name, "--", *part], cwd=root, capture_output=True)
        if p.returncode not in (0, 1):
            raise SystemExit(f"rg failed ({p.returncode}): {p.stderr.decode(errors='replace')[:500]}")
        outs.append(p.stdout)
    ms = (time.perf_counter() - t0) * 1000
    for out in outs:
        for row in out.split(b"\n"):
            if not row:
                continue
            path, _, rest = row.partition(b"\0")
            ln, col, _match = rest.split(b":", 2)
            rel = os.fsdecode(path)
            line = int(ln) - 1
            found.add((rel, line, utf16_column(lines.line(rel, line), int(col) - 1)))
    return ms, found


# -- comparing --------------------------------------------------------------------------

def engine_set(ws: Workspace, name: str) -> set[Key]:
    found = ws.find_references(name, limit=10 ** 9)
    return {(r.path, r.line, r.column) for r in found.references}


class Around:
    """An occurrence in its line: the characters on each side of the name, and why rg and
    Sylk may see it differently."""

    def __init__(self, root: Path, key: Key, name: str, replaced: AbstractSet[str]) -> None:
        rel, line, col = key
        lines = read_text(root / rel).split("\n")
        text = lines[line] if line < len(lines) else ""
        at = len(text.encode("utf-16-le")[:2 * col].decode("utf-16-le", "replace"))
        end = at + len(name)
        self.key, self.name = key, name
        self.before = text[at - 1] if at > 0 else ""
        self.after = text[end] if end < len(text) else ""
        self.there = text[at:end]
        self.excerpt = text[max(0, at - 30):end + 30].strip()[:90]
        sides = (self.before, self.after)
        if self.there != name:
            self.cause = "unexplained (the name is not there)"
        elif "\ufffd" in sides and rel in replaced:
            self.cause = ("invalid UTF-8 beside it (Sylk reads U+FFFD, no word character; "
                          "rg's \\W takes no invalid byte)")
        elif any(ch and not ch.isascii() for ch in sides):
            self.cause = "a non-ASCII neighbour Python's \\w and rg's Unicode \\w class differently"
        else:
            self.cause = "unexplained"

    def __str__(self) -> str:
        def show(ch: str) -> str:
            return f"{ch!r} {unicodedata.category(ch)}" if ch else "line edge"

        rel, line, col = self.key
        return (f"{rel}:{line + 1}:{col + 1} {self.name!r}  before {show(self.before)}, after {show(self.after)}"
                f"{'' if self.there == self.name else f', text there {self.there!r}'}  | {self.excerpt!r}")


class Agreement:
    """Two answers compared as sets over many names: ``left`` the reference (rg), ``right``
    the one measured."""

    def __init__(self, label: str, left: str = "rg", right: str = "sylk") -> None:
        self.label, self.left, self.right = label, left, right
        self.both = self.only_left = self.only_right = 0
        self.names = self.exact = 0
        self.diffs: list[tuple[str, Key, str]] = []  # (side, occurrence, name)
        self.diff_names: dict[str, int] = {}

    def add(self, name: str, right: set[Key], left: set[Key]) -> None:
        self.names += 1
        self.both += len(right & left)
        a, b = sorted(left - right), sorted(right - left)
        self.only_left += len(a)
        self.only_right += len(b)
        self.exact += not a and not b
        if a or b:
            self.diff_names[name] = len(a) + len(b)
        self.diffs += [(f"only {self.left}", k, name) for k in a] + [(f"only {self.right}", k, name) for k in b]

    @property
    def recall(self) -> float:
        return self.both / max(self.both + self.only_left, 1)

    @property
    def precision(self) -> float:
        return self.both / max(self.both + self.only_right, 1)

    def report(self, root: Path, replaced: AbstractSet[str], examples: int) -> int:
        """Print the numbers, the causes and examples; return the unexplained differences."""
        print(f"  {self.label:<34} recall {self.recall:.5f}  precision {self.precision:.5f}   "
              f"({self.both} in both, {self.only_left} only {self.left}, {self.only_right} only {self.right}; "
              f"{self.exact}/{self.names} names exactly alike)")
        if not self.diffs:
            return 0
        worst = sorted(self.diff_names.items(), key=lambda kv: -kv[1])[:8]
        print("    names that differ: " + ", ".join(f"{n} ({c})" for n, c in worst)
              + (f" and {len(self.diff_names) - len(worst)} more" if len(self.diff_names) > len(worst) else ""))
        by_cause: dict[tuple[str, str], list[Around]] = defaultdict(list)
        for side, key, name in self.diffs:
            a = Around(root, key, name, replaced)
            by_cause[(side, a.cause)].append(a)
        for (side, cause), found in sorted(by_cause.items()):
            print(f"    {side}, {len(found)}: {cause}")
            for a in found[:examples]:
                print(f"      {a}")
        return sum(len(v) for (_side, cause), v in by_cause.items() if cause.startswith("unexplained"))


# -- main --------------------------------------------------------------------------------

def cursor_for(root: Path, hits: set[Key], name: str, lines: FileBytes) -> Key | None:
    """An occurrence the server takes for ``name`` (a keyword of its file's language is no
    name): from a file of a language with it, else any; sorted, so the choice is stable."""
    for rel, line, col in sorted(hits, key=lambda k: (language_for_path(k[0]) is None, k)):
        text = lines.line(rel, line).decode("utf-8", "replace").rstrip("\r")
        cur = definitions.cursor_at(text, col, language_for_path(rel))
        if cur is not None and cur.name == name:
            return rel, line, col
    return None


def uri_path(root: Path, uri: str) -> str:
    return Path(unquote(urlsplit(uri).path)).relative_to(root).as_posix()


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def cold_index(root: Path, base: Path, runs: int, keep: bool, tree: Path | None = None) -> tuple[Path, Path, bool]:
    """Part 1 and 2: the interleaved cold runs, the sizes; the last folders of each stay."""
    new_tree, base_tree = (tree / "server" if tree else corpora.SERVER), base / "server"
    what = f"{git_short(tree)} ({tree})" if tree else f"this tree ({corpora.git_head()})"
    print(f"\n== cold index: A = {what}, B = base {git_short(base)} ({base}), "
          f"{runs} runs each, interleaved")
    results: dict[str, list[dict]] = {"A": [], "B": []}
    last: dict[str, Path] = {}
    for i in range(max(runs, 1)):
        for side, tree in (("A", new_tree), ("B", base_tree)):
            d = corpora.fresh_index_dir(f"refs-{side}")
            r = run_index(tree, root, d)
            results[side].append(r)
            print(f"  run {i + 1} {side}: wall {r['wall']:6.2f}s  CPU {r['cpu']:6.2f}s (main process "
                  f"{r['main_cpu']:5.2f}s, peak RSS {corpora.human(r['main_peak'])})  engine {r['engine']:.2f}s,"
                  f" {r['files']} files   load {r['load']:.2f} before")
            if side in last and not keep:
                shutil.rmtree(last[side], ignore_errors=True)
            last[side] = d
    ok = True
    if runs:
        print(f"  [{corpora.load_line()}]")
        for what in ("wall", "cpu", "main_cpu"):
            a, b = med([r[what] for r in results["A"]]), med([r[what] for r in results["B"]])
            print(f"  median {what:<8} A {a:6.2f}s   B {b:6.2f}s (baseline)   A/B {a / b:.3f}"
                  f" ({(a / b - 1) * 100:+.1f}%)"
                  f"   min A {min(r[what] for r in results['A']):.2f}s  B {min(r[what] for r in results['B']):.2f}s")
        a, b = med([r["wall"] for r in results["A"]]), med([r["wall"] for r in results["B"]])
        ok = a / b - 1 <= TIME_TARGET
        print(f"{'PASS' if ok else 'MISS'}: cold index <= +{TIME_TARGET:.0%} over the base (median wall "
              f"{(a / b - 1) * 100:+.1f}%; CPU "
              f"{(med([r['cpu'] for r in results['A']]) / med([r['cpu'] for r in results['B']]) - 1) * 100:+.1f}%)")
    return last["A"], last["B"], ok


def sizes(a: Path, b: Path) -> bool:
    ta, tb = corpora.dir_bytes(a), corpora.dir_bytes(b)
    occ, payload, how = occurrences_bytes(a)
    growth = ta / tb - 1
    print("\n== index size")
    print(f"  this commit  {corpora.human(ta):>10}   base (baseline) {corpora.human(tb):>10}"
          f"   growth {growth * 100:+.1f}%")
    print(f"  occurrences table {corpora.human(occ)} ({how}; blobs {corpora.human(payload)}), "
          f"{occ / ta:.1%} of the folder; the folder without it {corpora.human(ta - occ)} "
          f"({(ta - occ) / tb - 1:+.1%} against the base)")
    for d in (a, b):
        parts = {p.name: (corpora.dir_bytes(p) if p.is_dir() else p.stat().st_size) for p in d.iterdir()}
        print(f"  {'A' if d == a else 'B'}: " + ", ".join(f"{k} {corpora.human(v)}" for k, v in sorted(parts.items())))
    ok = growth <= SIZE_TARGET
    print(f"{'PASS' if ok else 'MISS'}: index <= +{SIZE_TARGET:.0%} over the base ({growth * 100:+.1f}%)")
    return ok


class Answers(NamedTuple):
    timings: dict[str, dict[str, list[float]]]  # group -> way (stdio, in-process, rg) -> ms
    agree: dict[str, Agreement]  # group -> Sylk against rg
    stdio_agree: Agreement  # stdio against in-process
    no_cursor: list[str]  # names not asked over stdio
    per_common: list[str]  # a printed line per common name


def ask_all(client: Client, root: Path, ws: Workspace, groups: dict[str, list[str]], parts: list[list[str]],
            lines: FileBytes) -> Answers:
    """Part 5 and 6: every name of ``groups`` asked over stdio, in process and of rg, timed
    and compared."""
    t0 = time.perf_counter()
    while not client.request("sylk/status", {})["result"].get("ready"):
        time.sleep(0.05)
    print(f"\n== latency: server ready in {time.perf_counter() - t0:.1f}s; rg over {sum(map(len, parts))} files in "
          f"{len(parts)} process(es) per query")

    t0 = time.perf_counter()
    _ = ws.references.table
    inproc_first = (time.perf_counter() - t0) * 1000
    # The name counts and file lines the bench holds would make every collection the
    # in-process baseline triggers slower than the server's: out of the collector's sight.
    gc.collect()
    gc.freeze()

    def ask(rel: str, line: int, col: int) -> tuple[float, list[dict]]:
        t = time.perf_counter()
        r = client.request("textDocument/references", {
            "textDocument": {"uri": (root / rel).as_uri()}, "position": {"line": line, "character": col},
            "context": {"includeDeclaration": True}})
        return (time.perf_counter() - t) * 1000, r.get("result") or []

    timings: dict[str, dict[str, list[float]]] = {g: defaultdict(list) for g in groups}
    agree = {g: Agreement(f"{g} ({len(names)} names)") for g, names in groups.items()}
    stdio_agree = Agreement("stdio against in-process", "in-process", "stdio")
    no_cursor: list[str] = []
    first_done = False
    per_common: list[str] = []
    for group, names in groups.items():
        for name in names:
            rg_ms, by_rg = rg(root, parts, name, lines)
            at = cursor_for(root, by_rg, name, lines)
            sylk = engine_set(ws, name) if at is None else None  # (after the timed calls otherwise)
            if at is None and sylk:
                at = cursor_for(root, sylk, name, lines)
            if at is None:
                agree[group].add(name, sylk or set(), by_rg)
                no_cursor.append(name)
                continue
            if not first_done:  # the server builds its table on the first request
                first_ms, _ = ask(*at)
                print(f"  first request ({name!r}, builds the table): {first_ms:.0f} ms;"
                      f" in-process first build {inproc_first:.0f} ms")
                first_done = True
            ms, result = ask(*at)
            t = time.perf_counter()
            found = ws.find_references(name, first=at[0])
            inproc_ms = (time.perf_counter() - t) * 1000
            sylk = sylk if sylk is not None else engine_set(ws, name)
            agree[group].add(name, sylk, by_rg)
            got = {(uri_path(root, loc["uri"]), loc["range"]["start"]["line"],
                    loc["range"]["start"]["character"]) for loc in result}
            if not found.truncated:
                stdio_agree.add(name, got, sylk)
            timings[group]["stdio"].append(ms)
            timings[group]["in-process"].append(inproc_ms)
            timings[group]["rg"].append(rg_ms)
            if group == "common":
                per_common.append(f"  {name!r:<14} {len(sylk):>8} found ({len(by_rg)} by rg), {len(result)} "
                                  f"returned over stdio{' (cut at the limit)' if found.truncated else ''} "
                                  f"from {at[0]}:{at[1] + 1}   stdio {ms:7.1f}  in-process {inproc_ms:7.1f}  "
                                  f"rg {rg_ms:7.1f} ms")
    return Answers(timings, agree, stdio_agree, no_cursor, per_common)


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] in ("--probe-table", "--probe-table-traced"):
        probe_table(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[1].endswith("traced"))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="stdlib")
    ap.add_argument("--names", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=2, help="cold index runs of each tree (0: one each, not timed)")
    ap.add_argument("--base", type=Path, default=DEFAULT_BASE, help="a checkout of the base commit (67e8068)")
    ap.add_argument("--tree", type=Path, default=None, help="a checkout to measure as A (default: this tree)")
    ap.add_argument("--index-dir", type=Path, help="query this index as it is: no cold runs, no size comparison")
    ap.add_argument("--table-runs", type=int, default=3)
    ap.add_argument("--examples", type=int, default=6, help="differences shown per kind and group")
    ap.add_argument("--keep", action="store_true", help="keep the index folders")
    ap.add_argument("--attribute", action="store_true",
                    help="also time the tags walk with and without marks and occurrences.extract in process")
    args = ap.parse_args()
    root = corpora.prepare(args.corpus)
    corpora.header("sylk textDocument/references")
    print(f"# corpus {root}")
    ok = True
    made: list[Path] = []
    try:
        if args.index_dir:
            index_dir = args.index_dir.resolve()
        else:
            if not (args.base / "server" / "sylk").is_dir():
                raise SystemExit(f"no base checkout at {args.base}: git worktree add {args.base} 67e8068")
            index_dir, base_dir, timed = cold_index(root, args.base, args.runs, args.keep, args.tree)
            made += [index_dir, base_dir]
            ok &= timed
            ok &= sizes(index_dir, base_dir)

        print(f"\n== the reference table on first use (a fresh process each, {args.table_runs} runs)")
        *probes, traced = measure_table(root, index_dir, args.table_runs)
        for p in probes:
            print(f"  build {p['wall']:.2f}s (CPU {p['cpu']:.2f}s)   RSS {corpora.human(p['rss_before'])} before"
                  f" (the workspace open), peak {corpora.human(p['hwm'])}, {corpora.human(p['rss_after'])} after,"
                  f" {corpora.human(p['rss_trimmed'])} after malloc_trim   {p['files']} files")
        print(f"  median build {med([p['wall'] for p in probes]):.2f}s; peak RSS +"
              f"{corpora.human(max(p['hwm'] - p['rss_before'] for p in probes))} over the open workspace, held +"
              f"{corpora.human(med([p['rss_after'] - p['rss_before'] for p in probes]))} after, +"
              f"{corpora.human(med([p['rss_trimmed'] - p['rss_before'] for p in probes]))} after malloc_trim"
              f"   [{corpora.load_line()}]")
        print(f"  tracemalloc (Python objects and numpy arrays): the table holds "
              f"{corpora.human(traced['traced_held'])}, peak {corpora.human(traced['traced_peak'])} while built"
              f" ({traced['wall']:.2f}s traced)")

        ws = Workspace(root, Settings(index_dir=str(index_dir)), writable=False)
        records = ws.manifest.files()
        files = sorted(p for p in records if not is_virtual(p))
        replaced = {p for p, r in records.items() if r.replaced}
        if args.attribute:
            print("\n== what the occurrences add to a cold index")
            attribute(root, files, ws.settings.max_file_size)
        t0 = time.perf_counter()
        counts = count_names(root, files)
        sample = sample_names(counts, args.names, args.seed)
        common = common_names(counts)
        uni = unicode_names(counts, args.seed)
        limit = ws.settings.references.limit
        print(f"\n== names: {len(counts)} distinct identifiers, {sum(counts.values())} occurrences in "
              f"{len(files)} indexed files (counted in {time.perf_counter() - t0:.1f}s)")
        print(f"  sample of {len(sample)} (seed {args.seed}): " + ", ".join(
            f"{sum(lo <= counts[w] <= hi for w in sample)} with {lo}-{hi}" for lo, hi in BUCKETS))
        print("  common: " + ", ".join(f"{w} ({counts[w]})" for w in common) + f"; references.limit {limit}")
        print("  non-ASCII: " + ", ".join(f"{w} ({counts[w]})" for w in uni))

        parts = chunks(files)
        lines = FileBytes(root)
        env = {**os.environ, "SYLK_INDEX_DIR": str(index_dir)}
        env["PYTHONPATH"] = str(corpora.SERVER) + os.pathsep + env.get("PYTHONPATH", "")
        client = Client(root, env, {"embedding": {"enabled": False}, "navigation": {"skipLanguages": []}})
        try:
            answers = ask_all(client, root, ws, {"sample": sample, "common": common, "non-ASCII": uni}, parts, lines)
        finally:
            client.close()
            ws.close()
        timings, agree, stdio_agree = answers.timings, answers.agree, answers.stdio_agree
        no_cursor, per_common = answers.no_cursor, answers.per_common

        print(f"\n  textDocument/references, ms            p50      p95      max   [{corpora.load_line()}]")
        for group in ("sample", "non-ASCII"):
            tm = timings[group]
            if not tm["stdio"]:
                continue
            print(f"  {group} ({len(tm['stdio'])} names)")
            for how in ("stdio", "in-process", "rg"):
                xs = tm[how]
                note = "" if how == "stdio" else "   (baseline)"
                print(f"    {how:<12} {pct(xs, .5):8.2f} {pct(xs, .95):8.2f} {max(xs):8.1f}{note}")
        print(f"  common names (limit {limit}):")
        print("\n".join(per_common))
        if no_cursor:
            print(f"  not asked over stdio (no occurrence the server takes for a name: a keyword everywhere): "
                  f"{', '.join(no_cursor)}")

        print(f"\n== recall and precision against rg -w -F -o -n --column on the {len(files)} indexed files "
              f"({len(replaced)} of them with invalid UTF-8)")
        unexplained = {g: a.report(root, replaced, args.examples) for g, a in agree.items()}
        stdio_agree.report(root, replaced, args.examples)
        targets = ("sample", "common")
        exact = all(round(agree[g].recall, 2) == 1.0 and round(agree[g].precision, 2) == 1.0
                    and not unexplained[g] for g in targets)
        print(f"{'PASS' if exact else 'MISS'}: recall and precision 1.00 (two decimals) with no unexplained difference"
              f" on the sample and the common names ("
              + "; ".join(f"{g} {agree[g].recall:.5f}/{agree[g].precision:.5f}, {unexplained[g]} unexplained"
                          for g in targets) + "; the non-ASCII names are not a target)")
        same = stdio_agree.only_left == stdio_agree.only_right == 0
        print(f"{'PASS' if same else 'MISS'}: the stdio answers are the in-process ones (names not cut by the limit)")
        ok &= exact and same
        print(f"# done -- {corpora.load_line()}")
        return 0 if ok else 1
    finally:
        if not args.keep:
            for d in made:
                shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
