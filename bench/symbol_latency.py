"""workspace/symbol latency and ranking over stdio, against in-process search (run by hand).

    python bench/symbol_latency.py [--corpus stdlib|go|PATH] [--queries 200] [--seed 1]
                                   [--index-dir DIR]

Starts ``python -m sylk.cli serve --stdio`` from a pygls LanguageClient that
advertises window.workDoneProgress, with the corpus as the workspace and a fresh
SYLK_INDEX_DIR (or ``--index-dir``, e.g. a pre-built one: then the start is warm).

0. From ``initialized``, it asks for ``get`` every 50 ms until an answer is not empty:
   the first answer after a cold start (target <= 1 s).
1. While the initial index runs (between progress ``begin`` and ``end``) it sends a
   workspace/symbol request every ``--during-every`` seconds and reports whether and
   how fast each was answered, and with how many results.
2. After ``end``: the first query (it pays for building the search structure), then,
   with embedding on (the default), a wait until the background pass writes vectors
   (its model loaded), then ``--queries`` queries drawn with a seeded random generator from the indexed
   symbol names, in five classes: exact names, prefixes (first 3-6 characters),
   camel-hump initials (``hrp`` for HttpRetryPolicy, ``gubi`` for get_user_by_id),
   lower-case inner substrings, and 1-2 character queries.
3. The baseline, in this process and interleaved query by query with the stdio
   ones: the same queries answered by ``Workspace.search_symbols`` on the same index
   (opened read-only), so stdio/in-process is the cost of the protocol.

Prints p50/p95/p99/max per class and overall, result counts, the fraction of
exact/prefix/hump queries whose intended name is in the top 10 results, and a
PASS/MISS line for the target (p95 <= 20 ms over stdio).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import re
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402
from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from pygls.protocol import LanguageServerProtocol  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402
from sylk import settings_sources  # noqa: E402
from sylk.engine.workspace import Workspace  # noqa: E402
from sylk.text.words import split_words  # noqa: E402

FIRST_TARGET_S = 1.0  # issue 14: the first answer after a cold start
FIRST_QUERY = "get"  # a name every Python (or Go) tree has many of
P95_TARGET_MS = 10.0  # issue 14: with the background embedding pass running
TOP = 10
# class -> share of the queries
MIX = {"exact": 0.30, "prefix": 0.25, "hump": 0.20, "substring": 0.15, "short": 0.10}
DURING_QUERIES = ["parse", "Thread", "get", "rhl", "ctx", "Test", "os", "read_line"]
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# -- queries ----------------------------------------------------------------
def make_queries(names: list[str], n: int, seed: int) -> list[tuple[str, str, str | None]]:
    """(class, query, intended name or None), deterministic for a seed and a name list.

    ``names`` has one entry per symbol, so a common name is drawn more often, as it is
    searched more often."""
    rng = random.Random(seed)
    pool = sorted(x for x in names if IDENT.match(x) and not x.startswith("__") and len(x) >= 2)
    # three words or more: two initials ("gs") match hundreds of names in any big workspace
    humpable = [x for x in pool if len(split_words(x)) >= 3]
    long_names = [x for x in pool if len(x) >= 8]
    out: list[tuple[str, str, str | None]] = []
    counts = {k: round(v * n) for k, v in MIX.items()}
    counts["exact"] += n - sum(counts.values())
    for cls, k in counts.items():
        for _ in range(k):
            if cls == "exact":
                name = rng.choice(pool)
                out.append((cls, name, name))
            elif cls == "prefix":
                name = rng.choice([x for x in (rng.choice(pool) for _ in range(50)) if len(x) > 3] or pool)
                out.append((cls, name[: rng.randint(3, min(6, len(name) - 1))], name))
            elif cls == "hump":
                name = rng.choice(humpable)
                words = split_words(name)
                # mostly bare initials; sometimes two letters of the first word, as people type
                q = "".join(w[0] for w in words).lower()
                if rng.random() < 0.3 and len(words[0]) > 1:
                    q = words[0][:2].lower() + q[1:]
                out.append((cls, q, name))
            elif cls == "substring":
                name = rng.choice(long_names)
                ln = rng.randint(4, min(8, len(name) - 2))
                start = rng.randint(1, len(name) - ln)
                out.append((cls, name[start:start + ln].lower(), None))
            else:
                if rng.random() < 0.5:
                    q = rng.choice(pool)[: rng.randint(1, 2)].lower()
                else:
                    q = "".join(rng.choice("abcdefghilmnoprstu") for _ in range(rng.randint(1, 2)))
                out.append((cls, q, None))
    rng.shuffle(out)
    return out


# -- stats ------------------------------------------------------------------
def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    if not s:
        return float("nan")
    return s[min(len(s) - 1, max(0, math.ceil(p / 100 * len(s)) - 1))]


def row(label: str, xs: list[float]) -> str:
    return (f"{label:<11} {len(xs):>4}  p50 {pct(xs, 50):7.2f}  p95 {pct(xs, 95):7.2f}  "
            f"p99 {pct(xs, 99):7.2f}  max {max(xs):7.2f}  ms")


# -- the client -------------------------------------------------------------
class RawSymbols(LanguageServerProtocol):
    """The client's protocol, leaving workspace/symbol answers as the JSON they arrive as
    (as an editor's client does): pygls would first build lsprotocol records of them with
    cattrs, 1-4 ms per answer of 100 symbols on this machine, which is the bench client's
    cost, not the server's."""

    def get_result_type(self, method: str) -> type | None:
        return None if method == types.WORKSPACE_SYMBOL else super().get_result_type(method)


class Bench:
    def __init__(self) -> None:
        self.client = LanguageClient("sylk-bench", "0", protocol_cls=RawSymbols)
        self.begin = asyncio.Event()
        self.end = asyncio.Event()
        self.end_message = ""
        self.last_pct: int | None = None
        self.t_begin = self.t_end = 0.0
        self.stderr: list[str] = []

        # pygls 2 calls a client's handlers with the params only
        @self.client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create(params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @self.client.feature(types.PROGRESS)
        def progress(params: types.ProgressParams) -> None:
            v = params.value
            kind = v.get("kind") if isinstance(v, dict) else getattr(v, "kind", None)
            if kind == "begin":
                self.t_begin = time.perf_counter()
                self.begin.set()
            elif kind == "report":
                p = v.get("percentage") if isinstance(v, dict) else getattr(v, "percentage", None)
                if p is not None:
                    self.last_pct = p
            elif kind == "end":
                self.t_end = time.perf_counter()
                self.end_message = (v.get("message") if isinstance(v, dict) else getattr(v, "message", "")) or ""
                self.end.set()

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def log_message(params: types.LogMessageParams) -> None:
            pass

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def show_message(params: types.ShowMessageParams) -> None:
            print(f"  server says: {params.message}")

    async def _drain_stderr(self) -> None:
        server = getattr(self.client, "_server", None)
        if server is None or server.stderr is None:
            return
        while line := await server.stderr.readline():
            self.stderr.append(line.decode(errors="replace").rstrip())

    async def start(self, root: Path, index_dir: Path, embedding: bool) -> None:
        env = dict(os.environ, SYLK_INDEX_DIR=str(index_dir))
        env["PYTHONPATH"] = str(corpora.SERVER) + os.pathsep + env.get("PYTHONPATH", "")
        await self.client.start_io(sys.executable, "-m", "sylk.cli", "serve", "--stdio", env=env, cwd=str(root))
        self._stderr_task = asyncio.create_task(self._drain_stderr())
        self.t_start = time.perf_counter()
        await self.client.initialize_async(types.InitializeParams(
            process_id=os.getpid(),
            root_uri=from_fs_path(str(root)),
            workspace_folders=[types.WorkspaceFolder(uri=from_fs_path(str(root)), name=root.name)],
            capabilities=types.ClientCapabilities(
                window=types.WindowClientCapabilities(work_done_progress=True),
                workspace=types.WorkspaceClientCapabilities(
                    symbol=types.WorkspaceSymbolClientCapabilities(dynamic_registration=False)),
            ),
            # the default settings embed in the background after the index, and the
            # queries must not wait for it (issue 14); --no-embedding measures without
            initialization_options=None if embedding else {"embedding": {"enabled": False}},
        ))
        self.client.initialized(types.InitializedParams())
        self.t_initialized = time.perf_counter()

    async def first_answer(self, query: str, every_s: float = 0.05, within_s: float = 120.0) -> float | None:
        """Seconds from ``initialized`` to the first non-empty answer to ``query`` (asked
        every ``every_s``), or None if none came within ``within_s``."""
        while time.perf_counter() - self.t_initialized < within_s:
            _ms, res = await self.symbol(query)
            if res:
                return time.perf_counter() - self.t_initialized
            await asyncio.sleep(every_s)
        return None

    async def symbol(self, query: str) -> tuple[float, list[dict]]:
        """(milliseconds, the SymbolInformation answers as JSON)."""
        t0 = time.perf_counter()
        res = await self.client.protocol.send_request_async(types.WORKSPACE_SYMBOL,
                                                           types.WorkspaceSymbolParams(query=query))
        return (time.perf_counter() - t0) * 1000, list(res or [])

    async def embedded(self) -> str:
        """'embedded/chunks' from sylk/status."""
        status = await self.client.protocol.send_request_async("sylk/status", {})
        running = " (embedding running)" if getattr(status, "embedding", False) else ""
        return f"{getattr(status, 'embedded', '?')}/{getattr(status, 'chunks', '?')}{running}"

    async def embedding_started(self, within_s: float = 300.0) -> float | None:
        """Seconds until sylk/status counts more embedded chunks than now (the model has
        loaded and the background pass is writing vectors), or None if not within ``within_s``."""
        t0 = time.perf_counter()
        first = getattr(await self.client.protocol.send_request_async("sylk/status", {}), "embedded", 0)
        while time.perf_counter() - t0 < within_s:
            await asyncio.sleep(0.5)
            if getattr(await self.client.protocol.send_request_async("sylk/status", {}), "embedded", 0) > first:
                return time.perf_counter() - t0
        return None

    async def stop(self) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), 30)
            self.client.exit(None)
        finally:
            await asyncio.wait_for(self.client.stop(), 30)


async def run(args: argparse.Namespace) -> int:
    root = corpora.prepare(args.corpus)
    fresh = args.index_dir is None
    index_dir = corpora.fresh_index_dir(f"lsp-{args.corpus if args.corpus in ('stdlib', 'go') else 'path'}") \
        if fresh else Path(args.index_dir).resolve()
    corpora.header("sylk workspace/symbol latency")
    print(f"corpus {args.corpus}: {root}   index {index_dir} ({'fresh, cold start' if fresh else 'given'})")
    bench = Bench()
    try:
        await bench.start(root, index_dir, args.embedding)
        first = await bench.first_answer(FIRST_QUERY)
        first_ok = first is not None and first <= FIRST_TARGET_S
        print(f"\n{'PASS' if first_ok else 'MISS'}: first non-empty workspace/symbol answer ({FIRST_QUERY!r}, asked "
              f"every 50 ms) {'never' if first is None else f'{first:.2f}s'} after initialized "
              f"(target <= {FIRST_TARGET_S:g} s{', cold start' if fresh else ''})")
        print(f"\n-- during the initial index (a query every {args.during_every:g}s until progress end)")
        try:
            await asyncio.wait_for(bench.begin.wait(), 60)
        except asyncio.TimeoutError:
            print("  no progress begin within 60 s (does the server send work-done progress?);"
                  " waiting for sylk/status ready instead")
            while not (await bench.client.protocol.send_request_async("sylk/status", {})).get("ready"):
                await asyncio.sleep(0.5)
            bench.t_begin = bench.t_end = time.perf_counter()
            bench.end.set()
        during: list[tuple[float, float, int, int | None]] = []  # (t since begin, ms, results, pct)
        i = 0
        while not bench.end.is_set():
            q = DURING_QUERIES[i % len(DURING_QUERIES)]
            i += 1
            sent = time.perf_counter()
            try:
                ms, res = await asyncio.wait_for(bench.symbol(q), 120)
            except asyncio.TimeoutError:
                print(f"  {q!r}: no answer within 120 s")
                break
            during.append((sent - bench.t_begin, ms, len(res), bench.last_pct))
            print(f"  t+{sent - bench.t_begin:5.1f}s  {q!r:<12} answered in {ms:8.1f} ms, {len(res):>3} results"
                  f"  (last progress {bench.last_pct if bench.last_pct is not None else '-'}%)")
            try:
                await asyncio.wait_for(bench.end.wait(), args.during_every)
            except asyncio.TimeoutError:
                pass
        await asyncio.wait_for(bench.end.wait(), 1800)
        index_s = bench.t_end - bench.t_begin
        print(f"  progress end after {index_s:.2f}s (server start to end {bench.t_end - bench.t_start:.2f}s): "
              f"{bench.end_message}")
        if during:
            ms = [d[1] for d in during]
            print(f"  {len(during)} queries during indexing, all answered: median {statistics.median(ms):.1f} ms,"
                  f" max {max(ms):.1f} ms; results {min(d[2] for d in during)}-{max(d[2] for d in during)}")
        else:
            print("  no query was sent during indexing (it ended first)")

        # the in-process baseline: the same index, opened read-only beside the server
        settings, _ = settings_sources.resolve(root, None, dict(os.environ, SYLK_INDEX_DIR=str(index_dir)))
        ws = Workspace(root, settings, writable=False)
        limit = settings.symbols.limit
        names = [s.name for syms in ws.manifest.symbols_by_path().values() for s in syms]
        queries = make_queries(names, args.queries, args.seed)
        print(f"\n-- after the index: {len(names)} symbols, {len(set(names))} distinct names; "
              f"{len(queries)} queries, seed {args.seed}, limit {limit}   [{corpora.load_line()}]")

        first_ms, first_res = await bench.symbol(queries[0][1])
        t0 = time.perf_counter()
        ws.search_symbols(queries[0][1], limit)
        first_inproc = (time.perf_counter() - t0) * 1000
        print(f"first query after end (builds the search structure): stdio {first_ms:.1f} ms "
              f"({len(first_res)} results), in-process {first_inproc:.1f} ms")

        if args.embedding:  # the target holds while the pass runs: time the queries once it does
            started = await bench.embedding_started()
            print("background embedding " + (f"writing vectors after {started:.1f} s more" if started is not None
                                             else "not writing vectors within 300 s: queries timed without it"))
        embedded_before = await bench.embedded()
        lat: dict[str, list[float]] = defaultdict(list)
        base: dict[str, list[float]] = defaultdict(list)
        nres: dict[str, list[int]] = defaultdict(list)
        top_hit: dict[str, list[bool]] = defaultdict(list)
        any_hit: dict[str, list[bool]] = defaultdict(list)
        mismatch = 0
        for cls, q, target in queries:
            ms, res = await bench.symbol(q)
            t0 = time.perf_counter()
            hits = ws.search_symbols(q, limit)
            base[cls].append((time.perf_counter() - t0) * 1000)
            lat[cls].append(ms)
            nres[cls].append(len(res))
            if [r["name"] for r in res] != [h.symbol.name for h in hits]:
                mismatch += 1
            if target is not None:
                top_hit[cls].append(any(r["name"] == target for r in res[:TOP]))
                any_hit[cls].append(any(r["name"] == target for r in res))
        embedded_after = await bench.embedded()
        print(f"background embedding while the queries ran: {embedded_before} -> {embedded_after} chunks embedded"
              + ("" if args.embedding else " (embedding off)"))
        all_lat = [x for v in lat.values() for x in v]
        all_base = [x for v in base.values() for x in v]

        print("\nworkspace/symbol over stdio (client send -> response read as JSON):")
        for cls in MIX:
            if lat[cls]:
                print("  " + row(cls, lat[cls]) + f"   results median {statistics.median(nres[cls]):.0f},"
                      f" max {max(nres[cls])}")
        print("  " + row("all", all_lat))
        print("in-process Workspace.search_symbols (baseline, same queries, interleaved):")
        for cls in MIX:
            if base[cls]:
                print("  " + row(cls, base[cls]))
        print("  " + row("all", all_base))
        print(f"stdio / in-process: p50 {pct(all_lat, 50) / pct(all_base, 50):.1f}x   "
              f"p95 {pct(all_lat, 95) / pct(all_base, 95):.1f}x   "
              f"(protocol + conversion: p50 +{pct(all_lat, 50) - pct(all_base, 50):.2f} ms)")
        if mismatch:
            print(f"NOTE: {mismatch} queries gave different result names over stdio than in-process")
        print(f"ranking: intended name in the top {TOP} (and anywhere in the {limit} results):")
        for cls in MIX:
            xs, ys = top_hit.get(cls), any_hit.get(cls)
            if xs:
                print(f"  {cls:<9} top {TOP}: {sum(xs)}/{len(xs)} = {sum(xs) / len(xs):.2f}"
                      f"   in results: {sum(ys)}/{len(ys)} = {sum(ys) / len(ys):.2f}")
        p95 = pct(all_lat, 95)
        ok = p95 <= P95_TARGET_MS
        print(f"\n{'PASS' if ok else 'MISS'}: workspace/symbol p95 <= {P95_TARGET_MS:g} ms over stdio"
              f" ({p95:.2f} ms on {args.corpus})")
        print(f"# done -- {corpora.load_line()}")
        ws.close()
        if args.show_misses:
            print("\nmisses (intended name not in the top 10):")
            for cls, q, target in queries:
                if target is None:
                    continue
                _ms, res = await bench.symbol(q)
                if not any(r["name"] == target for r in res[:TOP]):
                    print(f"  {cls:<7} {q!r:<16} wanted {target!r:<28} got {[r['name'] for r in res[:5]]}")
        return 0 if ok and first_ok else 1
    finally:
        try:
            await bench.stop()
        except Exception as exc:  # the numbers are printed; a slow exit is only noted
            print(f"(server stop: {exc!r})")
        if fresh and not args.keep:
            shutil.rmtree(index_dir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="stdlib", help="stdlib, go or a directory")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--index-dir", help="use this index folder (default: a fresh one, so the start is cold)")
    ap.add_argument("--during-every", type=float, default=1.0, help="seconds between queries while indexing")
    ap.add_argument("--keep", action="store_true", help="keep the fresh index folder")
    ap.add_argument("--show-misses", action="store_true", help="list ranking misses")
    ap.add_argument("--no-embedding", dest="embedding", action="store_false",
                    help="turn embedding off (by default the server embeds in the background, as it does for users)")
    return asyncio.run(run(ap.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
