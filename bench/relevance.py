"""Relevance of ``sylk/search``, CodeSearchNet style (run by hand, never in CI).

    python bench/relevance.py [--corpus stdlib|PATH] [--packages email,asyncio,...]
                              [--max-queries 600] [--seed 1] [--min-words 5]
                              [--keep] [--show-fails 5]

Corpus: a few packages of a real code base (default: ``email``, ``asyncio``,
``http``, ``urllib``, ``json`` and ``logging`` from the stdlib copy that
``corpora.prepare("stdlib")`` makes), ``.py`` files only, test folders excluded.

Queries: for every function or method with a docstring, the first sentence of
its first paragraph is the query and the function (path, name, ``def`` line) is
the answer. Sentences of fewer than --min-words words, with fewer than three
words that are not stopwords, or found on more than one function (ambiguous) are
skipped; above --max-queries a ``random.Random(seed)`` sample is kept.

Index: a copy of the corpus with every docstring (module, class, function)
replaced by an empty string literal ``""`` on its first line and blank lines for
the rest, so line numbers are unchanged, the code still parses, and the query
text is not in what is indexed. ``Workspace.index()``, ``load_semantic()`` and
``embed_pending()`` on a fresh index folder (throughput printed).

Scoring: ``ws.search(SearchRequest(query, mode, limit=10))`` per mode. A hit is
correct when its path is the answer's, its symbol is the function's name (or
ends with ``.name``) and its line range overlaps the function's lines (so a part
of a long function counts, the enclosing class chunk does not). MRR@10 and
recall@10 (share of queries answered in the top 10).

Baseline, same run, same (docstring-free) files: ``rg -i -c -F -w -e w1 -e w2 ...``
with the query's words minus stopwords, files ranked by matching line count
(ties by path); the answer's file rank is the hit rank. File level, which is an
easier task than finding the chunk (a file holds ~50 functions here).

Target: hybrid MRR@10 beats both lexical-only and semantic-only (PASS/MISS, exit
1 on a MISS).
"""

from __future__ import annotations

import argparse
import ast
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402  (puts server/ on sys.path)

DEFAULT_PACKAGES = ("email", "asyncio", "http", "urllib", "json", "logging")
MODES = ("lexical", "semantic", "hybrid")
K = 10

STOPWORDS = frozenset("""
a an the and or but if then else of to in on at by for with from as is are was were be been being
this that these those it its it's into onto than not no nor so such can could should would will
may might must do does did done has have had having which who whom whose what when where why how
all any each every both either neither some other another same own only also just very too more most
there here their them they we you your our us he she his her i me my one ones e g eg ie etc
""".split())


# -- corpus and queries ---------------------------------------------------------------------------

def corpus_files(root: Path, packages: list[str]) -> list[Path]:
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


def _docstring_node(node: ast.AST) -> ast.Expr | None:
    body = getattr(node, "body", None)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[0]
    return None


def strip_docstrings(src: str) -> str:
    """``src`` with every docstring replaced by ``""`` (same line count)."""
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
        first = lines[l0].encode("utf-8")
        last = lines[l1].encode("utf-8")
        head = first[:c0].decode("utf-8")
        tail = last[c1:].decode("utf-8")
        lines[l0:l1 + 1] = [head + '""' + tail] + [""] * (l1 - l0)
    out = "\n".join(lines)
    ast.parse(out)  # still valid Python
    return out


_SENTENCE = re.compile(r"^(.+?[.!?])(?=\s|$)")


def first_sentence(doc: str) -> str:
    para = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0]
    para = " ".join(para.split())
    m = _SENTENCE.match(para)
    return (m.group(1) if m else para).strip()


def content_words(text: str) -> list[str]:
    return [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text.lower())
            if w not in STOPWORDS and len(w) > 1]


def build_queries(root: Path, files: list[Path], min_words: int) -> tuple[list[dict], dict]:
    cands: list[dict] = []
    stats = {"functions": 0, "with_docstring": 0, "short": 0, "generic": 0, "ambiguous": 0}
    for p in files:
        rel = p.relative_to(root).as_posix()
        tree = ast.parse(p.read_text(encoding="utf-8", errors="replace"))
        for n in ast.walk(tree):
            if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            stats["functions"] += 1
            doc = ast.get_docstring(n)
            if not doc:
                continue
            stats["with_docstring"] += 1
            q = first_sentence(doc)
            if len(q.split()) < min_words:
                stats["short"] += 1
                continue
            if len(content_words(q)) < 3:
                stats["generic"] += 1
                continue
            cands.append({"query": q, "path": rel, "name": n.name, "line": n.lineno - 1,
                          "end": n.end_lineno - 1, "project": rel.split("/")[0]})
    seen: dict[str, int] = {}
    for c in cands:
        key = " ".join(c["query"].lower().split())
        seen[key] = seen.get(key, 0) + 1
    out = []
    for c in cands:
        if seen[" ".join(c["query"].lower().split())] > 1:
            stats["ambiguous"] += 1
        else:
            out.append(c)
    return out, stats


def copy_stripped(root: Path, files: list[Path], dest: Path) -> tuple[int, int]:
    n_lines = n_bytes = 0
    for p in files:
        rel = p.relative_to(root)
        src = p.read_text(encoding="utf-8", errors="replace")
        out = strip_docstrings(src)
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(out, encoding="utf-8")
        n_lines += out.count("\n")
        n_bytes += len(out.encode("utf-8"))
    return n_lines, n_bytes


# -- scoring ---------------------------------------------------------------------------------------

def correct(hit, q: dict) -> bool:
    if hit.path != q["path"]:
        return False
    if hit.symbol != q["name"] and not hit.symbol.endswith("." + q["name"]):
        return False
    return hit.start_line <= q["end"] and hit.end_line >= q["line"]


def rank_of(hits, q: dict) -> int | None:
    for r, h in enumerate(hits[:K], 1):
        if correct(h, q):
            return r
    return None


def rg_rank(root: Path, q: dict, rg: str) -> int | None:
    words = list(dict.fromkeys(content_words(q["query"])))
    if not words:
        return None
    cmd = [rg, "-i", "-c", "-F", "-w", "--no-messages", "-g", "*.py"]
    for w in words:
        cmd += ["-e", w]
    cmd.append(".")
    res = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    counts = []
    for line in res.stdout.splitlines():
        path, _, n = line.rpartition(":")
        path = path[2:] if path.startswith("./") else path
        counts.append((-int(n), path))
    counts.sort()
    for r, (_n, path) in enumerate(counts[:K], 1):
        if path == q["path"]:
            return r
    return None


def metrics(ranks: list[int | None]) -> tuple[float, float]:
    n = len(ranks) or 1
    return sum(1.0 / r for r in ranks if r) / n, sum(1 for r in ranks if r) / n


# -- main ------------------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="stdlib")
    ap.add_argument("--packages", default=",".join(DEFAULT_PACKAGES))
    ap.add_argument("--max-queries", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-words", type=int, default=5)
    ap.add_argument("--show-fails", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="keep the stripped copy and the index folder")
    args = ap.parse_args()

    from sylk.config import Settings
    from sylk.engine.workspace import Workspace
    from sylk.search.query import SearchRequest

    rg = shutil.which("rg")
    if rg is None:
        raise SystemExit("ripgrep not found: apt-get install -y ripgrep")
    rg_version = subprocess.run([rg, "--version"], capture_output=True, text=True).stdout.split("\n")[0]

    corpora.header("sylk relevance benchmark (CodeSearchNet style)")
    src_root = corpora.prepare(args.corpus)
    packages = [p for p in args.packages.split(",") if p]
    files = corpus_files(src_root, packages)
    queries, stats = build_queries(src_root, files, args.min_words)
    n_cands = len(queries)
    if len(queries) > args.max_queries:
        queries = random.Random(args.seed).sample(queries, args.max_queries)
    queries.sort(key=lambda q: (q["path"], q["line"]))
    per_project: dict[str, int] = {}
    for q in queries:
        per_project[q["project"]] = per_project.get(q["project"], 0) + 1

    work = Path(tempfile.mkdtemp(prefix="relevance-", dir=corpora.BENCH_ROOT))
    root = work / "corpus"
    index_dir = work / "index"
    try:
        n_lines, n_bytes = copy_stripped(src_root, files, root)
        print(f"corpus   {src_root}: {', '.join(packages)} -> {len(files)} .py files, {n_lines} lines, "
              f"{n_bytes / 1e6:.1f} MB (docstrings removed, copy in {root})")
        print(f"functions {stats['functions']}, with a docstring {stats['with_docstring']}; skipped: "
              f"{stats['short']} first sentence < {args.min_words} words, {stats['generic']} generic "
              f"(< 3 content words), {stats['ambiguous']} ambiguous (same sentence on 2+ functions)")
        print(f"queries  {len(queries)} of {n_cands} candidates (seed {args.seed}): "
              + ", ".join(f"{k} {v}" for k, v in sorted(per_project.items())))

        ws = Workspace(root, Settings(index_dir=str(index_dir)))
        t0 = time.perf_counter()
        report = ws.index()
        t_index = time.perf_counter() - t0
        print(f"index    {t_index:.2f}s: {report.summary()}")
        t0 = time.perf_counter()
        note = ws.load_semantic()
        t_load = time.perf_counter() - t0
        if not ws.semantic_ready:
            raise SystemExit(f"semantic search unavailable: {note or ws.semantic_message}")
        last = [time.perf_counter(), 0]
        t_embed0 = time.perf_counter()

        def progress(done: int, total: int) -> None:
            now = time.perf_counter()
            if now - last[0] >= 30 or done == total:
                rate = done / max(now - t_embed0, 1e-9)
                print(f"  embedded {done}/{total}  {rate:.1f} chunks/s  [{corpora.load_line()}]", flush=True)
                last[0] = now

        embedded = ws.embed_pending(progress=progress)
        t_embed = time.perf_counter() - t_embed0
        print(f"embed    model loaded in {t_load:.2f}s; {embedded} chunks in {t_embed:.1f}s = "
              f"{embedded / max(t_embed, 1e-9):.1f} chunks/s   [{corpora.load_line()}]")
        state = ws.index_state()
        print(f"index state: {state}")

        ranks: dict[str, list[int | None]] = {m: [] for m in MODES}
        took: dict[str, list[float]] = {m: [] for m in MODES}
        errors: dict[str, int] = {m: 0 for m in MODES}
        details: list[dict] = []
        for q in queries:
            row = {"q": q}
            for mode in MODES:
                t0 = time.perf_counter()
                try:
                    res = ws.search(SearchRequest(q["query"], mode, limit=K, context_lines=0))
                    hits = res.hits
                except Exception as exc:  # a query the engine cannot take is a miss, counted
                    errors[mode] += 1
                    hits = []
                    row[mode + "_error"] = repr(exc)
                took[mode].append((time.perf_counter() - t0) * 1000)
                r = rank_of(hits, q)
                ranks[mode].append(r)
                row[mode] = r
                row[mode + "_hits"] = hits
            details.append(row)
        t0 = time.perf_counter()
        rg_ranks = [rg_rank(root, q, rg) for q in queries]
        t_rg = time.perf_counter() - t0

        print()
        print(f"{'mode':<26} {'MRR@10':>7} {'recall@10':>10} {'queries':>8} {'errors':>7} {'p50 ms':>8}")
        for mode in MODES:
            mrr, rec = metrics(ranks[mode])
            ms = sorted(took[mode])[len(took[mode]) // 2]
            print(f"sylk {mode:<21} {mrr:7.3f} {rec:10.3f} {len(queries):8d} {errors[mode]:7d} {ms:8.1f}")
        mrr, rec = metrics(rg_ranks)
        print(f"{'rg -i (file level)':<26} {mrr:7.3f} {rec:10.3f} {len(queries):8d} {0:7d} "
              f"{t_rg * 1000 / max(len(queries), 1):8.1f}")
        print(f"  sylk modes are chunk level (the function's own chunk); the rg baseline only has to rank the "
              f"right file among {len(files)} ({rg_version}, -c -F -w, stopwords dropped, files by matching lines)")
        print("per project, MRR@10 lexical / semantic / hybrid / rg:")
        for proj in sorted(per_project):
            idx = [i for i, q in enumerate(queries) if q["project"] == proj]
            vals = [metrics([ranks[m][i] for i in idx])[0] for m in MODES] + [metrics([rg_ranks[i] for i in idx])[0]]
            print(f"  {proj:<12} {len(idx):4d} queries  " + "  ".join(f"{v:.3f}" for v in vals))
        both = sum(1 for d in details if d["lexical"] and d["semantic"])
        only_l = sum(1 for d in details if d["lexical"] and not d["semantic"])
        only_s = sum(1 for d in details if d["semantic"] and not d["lexical"])
        print(f"top-10 overlap: both {both}, lexical only {only_l}, semantic only {only_s}, "
              f"neither {len(details) - both - only_l - only_s}; hybrid found {sum(1 for d in details if d['hybrid'])}")
        lost = [d for d in details if not d["hybrid"] and (d["lexical"] or d["semantic"])]
        print(f"hybrid misses that one side had in its top 10: {len(lost)} (lexical rank 1-3: "
              f"{sum(1 for d in lost if d['lexical'] and d['lexical'] <= 3)}, semantic rank 1-3: "
              f"{sum(1 for d in lost if d['semantic'] and d['semantic'] <= 3)}); hybrid worse than the better side "
              f"on {sum(1 for d in details if (d['lexical'] or d['semantic']) and (not d['hybrid'] or d['hybrid'] > min(r for r in (d['lexical'], d['semantic']) if r)))} queries, better on "
              f"{sum(1 for d in details if d['hybrid'] and (not (d['lexical'] or d['semantic']) or d['hybrid'] < min(r for r in (d['lexical'], d['semantic']) if r)))}")
        print(f"time: index {t_index:.1f}s, embed {t_embed:.1f}s ({embedded} chunks), searches "
              f"{sum(sum(v) for v in took.values()) / 1000:.1f}s, rg {t_rg:.1f}s   [{corpora.load_line()}]")

        h = metrics(ranks["hybrid"])[0]
        lx = metrics(ranks["lexical"])[0]
        sm = metrics(ranks["semantic"])[0]
        ok = h > lx and h > sm
        print(f"{'PASS' if ok else 'MISS'}: hybrid MRR@10 beats both lexical-only and semantic-only "
              f"({h:.3f} vs lexical {lx:.3f}, semantic {sm:.3f})")

        fails = [d for d in details if not d["hybrid"]]
        if fails and args.show_fails:
            print(f"\nhybrid misses, {min(args.show_fails, len(fails))} of {len(fails)} "
                  f"(seeded sample; rank in lexical / semantic / rg shown):")
            for d in random.Random(args.seed).sample(fails, min(args.show_fails, len(fails))):
                q = d["q"]
                print(f"  {q['query']!r}")
                print(f"    wanted {q['path']}:{q['line'] + 1} {q['name']}   lexical {d['lexical']} "
                      f"semantic {d['semantic']} rg {rg_ranks[queries.index(q)]}")
                for h_ in d["hybrid_hits"][:3]:
                    print(f"    got    {h_.path}:{h_.start_line + 1}-{h_.end_line + 1} {h_.kind} "
                          f"{h_.symbol} (lex {h_.lexical_rank}, sem {h_.semantic_rank})")
        print(f"# done -- {corpora.load_line()}")
        ws.close()
        return 0 if ok else 1
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
