"""Relevance of ``sylk/search``, CodeSearchNet style (run by hand, never in CI).

    python bench/relevance.py [--languages python,go] [--corpus stdlib|PATH] [--packages email,asyncio,...]
                              [--go-corpus go|PATH] [--go-packages net/http,encoding/json,...]
                              [--max-queries 600] [--seed 1] [--min-words 5] [--show-fails 5]
                              [--variant NAME:key=value,...]... [--settings JSON] [--json FILE]
                              [--baseline FILE] [--keep]

Per language (Python: six stdlib packages; Go: twelve std packages, see
relevance_queries.LANGUAGES): the functions and methods with a doc text are the
answers; the indexed copy has the docs stripped (line numbers unchanged). Three
query styles per function: ``sentence`` (the doc's first sentence; in Go without
the leading function name), ``keywords`` (3-5 of its content words, seeded) and
``typo`` (the function's own name with one seeded edit). Every query runs in the
lexical, semantic and hybrid modes (and each ``--variant``, a hybrid request with
fields changed), against an ``rg`` file-level baseline. MRR@10, recall@10, top-3
rate, p50 ms and the share answered with no hits per language, style and mode;
PASS/MISS lines for the targets of issue 12. Then the relevance floor (``minScore``,
issue 17): each query's cosine similarity to its nearest chunk and to its answer in
mode semantic with no floor, what each floor would cut, and the share of the 50
NONSENSE queries (relevance_queries.py) every mode and variant answers with no hits.
Exit status 0 whatever the targets say (these are measurements); 1 or 2 only when
the run itself fails. bench/README.md has the rules in full.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import attrs

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402  (puts server/ on sys.path)
from relevance_queries import (  # noqa: E402
    LANGUAGES,
    NONSENSE,
    STYLES,
    Language,
    Query,
    build_queries,
    words_of,
)
from relevance_report import FloorRun, Score, Variant, parse_variant, print_floor, print_language, report  # noqa: E402

MODES = ("lexical", "semantic", "hybrid")
K = 10


@dataclass
class ModeRun:
    """One mode's (or variant's) answers to one style's queries."""
    name: str
    ranks: list[int | None] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)
    errors: int = 0
    hits: list[list] = field(default_factory=list)

    def score(self) -> Score:
        return Score.of(self.ranks, self.ms, self.errors, sum(1 for h in self.hits if not h))


@dataclass
class StyleRun:
    style: str
    queries: list[Query]
    modes: dict[str, ModeRun]  # lexical, semantic, hybrid, variants..., rg


# -- scoring ---------------------------------------------------------------------------------------

def correct(hit, q: Query) -> bool:
    t = q.target
    if hit.path != t.path:
        return False
    if hit.symbol != t.name and not hit.symbol.endswith("." + t.name):
        return False
    return hit.start_line <= t.end and hit.end_line >= t.line


def rank_of(hits, q: Query) -> int | None:
    for r, h in enumerate(hits[:K], 1):
        if correct(h, q):
            return r
    return None


def rg_rank(root: Path, q: Query, rg: str, glob: str) -> int | None:
    if not q.rg_words:
        return None
    cmd = [rg, "-i", "-c", "-F", "-w", "--no-messages", "-g", glob]
    for w in q.rg_words:
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
        if path == q.target.path:
            return r
    return None


# -- one language ----------------------------------------------------------------------------------

def empty_index_dir(path: Path) -> None:
    """Everything but the embedding cache goes, so the vectors of unchanged chunks are reused.
    The schema stamp stays too: the engine wipes a folder without one, cache included."""
    from sylk.store.embedding_cache import EmbeddingCache
    from sylk.store.layout import META_FILE

    path.mkdir(parents=True, exist_ok=True)
    for p in path.iterdir():
        if p.name.startswith(EmbeddingCache.FILENAME) or p.name == META_FILE:
            continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()


def cache_count(index_dir: Path) -> int:
    from sylk.store.embedding_cache import EmbeddingCache
    with EmbeddingCache.open(index_dir) as cache:
        return cache.count()


def floor_run(ws, requests: dict, queries: dict[str, list[Query]]) -> FloorRun:
    """The relevance floor's numbers (issue 17): each query's cosine similarity to its
    nearest chunk and to its answer in mode semantic with no floor, and the hits every
    mode and variant gives each NONSENSE query."""
    off = attrs.evolve(requests["semantic"], min_score=None)
    cosines: dict[str, list[tuple[float | None, float | None]]] = {}
    for style in STYLES:
        rows = []
        for q in queries[style]:
            hits = ws.search(attrs.evolve(off, query=q.text)).hits  # mode semantic: a hit's score is its cosine
            r = rank_of(hits, q)
            rows.append((hits[0].score if hits else None, hits[r - 1].score if r else None))
        cosines[style] = rows
    cosines["nonsense"] = []
    for text in NONSENSE:
        hits = ws.search(attrs.evolve(off, query=text)).hits
        cosines["nonsense"].append((hits[0].score if hits else None, None))
    got = {name: [len(ws.search(attrs.evolve(base, query=text)).hits) for text in NONSENSE]
           for name, base in requests.items()}
    return FloorRun(cosines, got)


def run_language(lang: Language, src_root: Path, packages: list[str], args, variants: list[Variant],
                 rg: str) -> tuple[dict, list[StyleRun], FloorRun]:
    from sylk.config import merge_layers, structure
    from sylk.engine.workspace import Workspace
    from sylk.search.query import SearchRequest

    t_start = time.perf_counter()
    files = lang.files(src_root, packages)
    root = corpora.BENCH_ROOT / f"relevance-{lang.name}-corpus"
    index_dir = corpora.BENCH_ROOT / f"relevance-{lang.name}-index"
    shutil.rmtree(root, ignore_errors=True)
    defs, corpus_words = [], set()
    n_lines = n_bytes = 0
    for p in files:
        rel = p.relative_to(src_root).as_posix()
        src = p.read_text(encoding="utf-8", errors="replace")
        defs.extend(lang.definitions(src, rel))
        out = lang.strip(src)
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(out, encoding="utf-8")
        corpus_words |= words_of(out)
        n_lines += out.count("\n")
        n_bytes += len(out.encode("utf-8"))
    queries, st = build_queries(lang, defs, corpus_words, min_words=args.min_words,
                                max_queries=args.max_queries, seed=args.seed)
    print(f"\n== {lang.name}: {src_root}: {', '.join(packages)} -> {len(files)} files, {n_lines} lines, "
          f"{n_bytes / 1e6:.1f} MB (docs stripped, copy in {root})")
    print(f"functions {st.functions}, with a doc {st.with_doc}; skipped: {st.short} first sentence "
          f"< {args.min_words} words, {st.generic} generic (< 3 content words), {st.ambiguous} ambiguous "
          f"(same sentence on 2+ functions) -> {st.candidates} candidates")
    print(f"typo: of those, {st.typo_short} names < 5 letters, {st.typo_not_unique} names defined 2+ times "
          f"(skipped: the intended definition is ambiguous), {st.typo_collides} typos that are a word of the "
          f"corpus -> {st.typo_candidates} typo candidates")
    print("queries  " + ", ".join(f"{s} {len(queries[s])}" for s in STYLES)
          + f" (seed {args.seed}, at most {args.max_queries} per style)")
    for s in STYLES:
        for q in queries[s][:2]:
            print(f"  {s:<9} {q.text!r} -> {q.target.path}:{q.target.line + 1} {q.target.name}")

    empty_index_dir(index_dir)
    ws = Workspace(root, structure(merge_layers({"indexDir": str(index_dir)}, args.settings)))
    try:
        t0 = time.perf_counter()
        ix = ws.index()
        t_index = time.perf_counter() - t0
        cached_before = cache_count(index_dir)  # after the open, which may have started the folder over
        print(f"index    {t_index:.2f}s: {ix.summary()}")
        t0 = time.perf_counter()
        note = ws.load_semantic()
        t_load = time.perf_counter() - t0
        if not ws.semantic_ready:
            raise SystemExit(f"semantic search unavailable: {note or ws.semantic_message}")
        t_embed0 = last = time.perf_counter()

        def progress(done: int, total: int) -> None:
            nonlocal last
            now = time.perf_counter()
            if now - last >= 30 or (done == total and total):
                print(f"  embedded {done}/{total}  {done / max(now - t_embed0, 1e-9):.1f} chunks/s  "
                      f"[{corpora.load_line()}]", flush=True)
                last = now

        embedded = ws.embed_pending(progress=progress)
        t_embed = time.perf_counter() - t_embed0
        fresh = cache_count(index_dir) - cached_before
        print(f"embed    model loaded in {t_load:.2f}s; {embedded} chunks in {t_embed:.1f}s "
              f"({fresh} new vectors in the embedding cache, {embedded - fresh} reused; {index_dir})   "
              f"[{corpora.load_line()}]")
        state = ws.index_state()
        print(f"index state: {state}")

        requests = {m: SearchRequest("", m, limit=K, context_lines=0) for m in MODES}
        requests.update({v.name: v.request(requests["hybrid"]) for v in variants})
        runs: list[StyleRun] = []
        t_search = t_rg = 0.0
        for style in STYLES:
            qs = queries[style]
            modes = {name: ModeRun(name) for name in [*requests, "rg"]}
            for q in qs:
                for name, base in requests.items():
                    run = modes[name]
                    t0 = time.perf_counter()
                    try:
                        hits = ws.search(attrs.evolve(base, query=q.text)).hits
                    except Exception:  # a query the engine cannot take is a miss, counted
                        run.errors += 1
                        hits = []
                    run.ms.append((time.perf_counter() - t0) * 1000)
                    run.ranks.append(rank_of(hits, q))
                    run.hits.append(hits[:3])
            t_search += sum(sum(m.ms) for n, m in modes.items() if n != "rg")
            for q in qs:
                t0 = time.perf_counter()
                modes["rg"].ranks.append(rg_rank(root, q, rg, lang.glob))
                modes["rg"].ms.append((time.perf_counter() - t0) * 1000)
            t_rg += sum(modes["rg"].ms)
            runs.append(StyleRun(style, qs, modes))
        floor = floor_run(ws, requests, queries)
        t_all = time.perf_counter() - t_start
        print(f"time: {t_all:.1f}s in all (index {t_index:.1f}s, embed {t_embed:.1f}s, searches "
              f"{t_search / 1000:.1f}s, rg {t_rg / 1000:.1f}s)   [{corpora.load_line()}]")
        info = {"corpus": str(src_root), "packages": packages, "files": len(files), "lines": n_lines,
                "chunks": state.chunks, "query_stats": asdict(st),
                "seconds": {"all": round(t_all, 1), "index": round(t_index, 2), "embed": round(t_embed, 1),
                            "embedded": embedded, "computed": fresh}}
        return info, runs, floor
    finally:
        ws.close()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
            empty_index_dir(index_dir)


def engine_commit() -> str:
    """The last commit that changed server/ (the bench's own commits do not move it)."""
    try:
        out = subprocess.run(["git", "-C", str(corpora.SERVER.parent), "log", "-1", "--format=%h", "--", "server"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out + (" (uncommitted changes)" if "server/" in corpora.git_head() else "")


# -- main ------------------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--languages", default="python,go", help="python, go or both (comma-separated)")
    ap.add_argument("--corpus", default="stdlib", help="the Python corpus (corpora.prepare name or a folder)")
    ap.add_argument("--packages", default=",".join(LANGUAGES["python"].default_packages))
    ap.add_argument("--go-corpus", default="go", help="the Go corpus (corpora.prepare name or a folder)")
    ap.add_argument("--go-packages", default=",".join(LANGUAGES["go"].default_packages),
                    help="package folders, each without its subpackages")
    ap.add_argument("--max-queries", type=int, default=600, help="per language and style")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-words", type=int, default=5)
    ap.add_argument("--show-fails", type=int, default=5)
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:key=value,...",
                    help="a hybrid row with SearchRequest fields changed (repeatable)")
    ap.add_argument("--json", type=Path, help="write every metric and the config here")
    ap.add_argument("--baseline", type=Path, help="a --json file of an earlier run to compare with")
    ap.add_argument("--settings", type=json.loads, default={}, metavar="JSON",
                    help='settings over the defaults, camelCase as in .sylk.toml, e.g. another model: '
                         '\'{"embedding": {"modelPath": "DIR"}}\' (a search.* setting does not reach the '
                         'requests: use --variant)')
    ap.add_argument("--keep", action="store_true", help="keep the stripped copies and the index folders")
    args = ap.parse_args()

    langs = [x for x in args.languages.split(",") if x]
    for name in langs:
        if name not in LANGUAGES:
            ap.error(f"--languages: {name!r} is not one of {', '.join(LANGUAGES)}")
    try:
        variants = [parse_variant(spec, reserved={*MODES, "rg"}) for spec in args.variant]
    except ValueError as e:
        ap.error(f"--variant: {e}")
    from sylk.config import SettingsError, structure
    try:
        structure(args.settings)
    except SettingsError as e:
        ap.error(f"--settings: {e}")
    if len({v.name for v in variants}) < len(variants):
        ap.error("--variant: two variants with the same name")
    baseline = json.loads(args.baseline.read_text(encoding="utf-8")) if args.baseline else None
    rg = shutil.which("rg")
    if rg is None:
        raise SystemExit("ripgrep not found: apt-get install -y ripgrep")
    rg_version = subprocess.run([rg, "--version"], capture_output=True, text=True).stdout.split("\n")[0]

    corpora.header("sylk relevance benchmark (CodeSearchNet style, issue 12)")
    engine = engine_commit()
    print(f"engine: server/ last changed at {engine}")
    print(f"config: languages {', '.join(langs)}; --max-queries {args.max_queries} --seed {args.seed} "
          f"--min-words {args.min_words}; settings {json.dumps(args.settings)}; "
          f"variants: {', '.join(str(v) for v in variants) or 'none'}; {rg_version}")
    t0 = time.perf_counter()
    infos, results, floors = {}, {}, {}
    for name in langs:
        lang = LANGUAGES[name]
        src_root = corpora.prepare(args.corpus if name == "python" else args.go_corpus)
        packages = [p for p in (args.packages if name == "python" else args.go_packages).split(",") if p]
        infos[name], results[name], floors[name] = run_language(lang, src_root, packages, args, variants, rg)
        print_language(name, results[name], infos[name]["files"], args.show_fails, args.seed)
        print_floor(name, floors[name])

    config = {"date": time.strftime("%Y-%m-%d %H:%M"), "sylk": corpora.git_head(), "engine": engine, "rg": rg_version,
              "languages": langs, "max_queries": args.max_queries, "seed": args.seed,
              "min_words": args.min_words, "settings": args.settings,
              "variants": {v.name: v.changes for v in variants},
              "corpora": infos, "seconds": round(time.perf_counter() - t0, 1)}
    data = report(results, config, baseline, args.baseline, variants, floors)
    print(f"# done in {config['seconds']:.0f}s -- {corpora.load_line()}")
    if args.json:
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
