"""Opening the symbol table of a large index (issue 14 #7): the first `workspace/symbol`
answer after opening an index of ~600k symbols, and the memory it takes.

The symbols are a real corpus's (its index is built once with `sylk index --no-embed`,
or given with --index-dir), copied under --copies path prefixes to reach the size
(rustc's 201k symbols x 3 = 603k). Each side runs in a fresh process, so its RSS is
its own:

  rebuild    what every open did before the snapshot: decode the manifest's rows,
             build the table of Python objects, then the first query (the baseline);
  snapshot   open the saved snapshot (memory-mapped), then the first query.

Printed: seconds to the first answer, the process's RSS after it and its peak, the
snapshot's size and build time, and PASS/MISS against <= 1 s and <= 400 MiB.
Run by hand: python bench/symbol_open.py [--corpus rust] [--copies 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import corpora

OPEN_TARGET_S = 1.0
RSS_TARGET_MIB = 400
QUERY = "parse"


def _rss_mib() -> tuple[float, float]:
    """(current, peak) RSS of this process in MiB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def _rows(index_dir: Path, copies: int) -> list:
    from sylk.store.layout import MANIFEST_FILE
    from sylk.store.manifest import FileSymbolData, Manifest

    manifest = Manifest(index_dir / MANIFEST_FILE)
    rows = manifest.symbol_rows()
    manifest.close()
    return [FileSymbolData(f"copy{k}/{r.path}", r.stamp, r.data) for k in range(copies) for r in rows]


def child(side: str, index_dir: Path, copies: int, snapshot: Path) -> None:
    """One side, in its own process: prints a JSON line."""
    from sylk.ingest.symbols import decode_symbols
    from sylk.search.frozen_symbols import FrozenSymbols
    from sylk.search.symbol_search import SymbolTable

    if side == "rebuild":
        rows = _rows(index_dir, copies)  # read before the clock: the snapshot side reads no rows
        t0 = time.perf_counter()
        table = SymbolTable()
        table.replace_all({r.path: decode_symbols(r.data) for r in rows})
        del rows
    else:
        t0 = time.perf_counter()
        table = SymbolTable(FrozenSymbols.load(snapshot))
    hits = table.search(QUERY, 100)
    seconds = time.perf_counter() - t0
    rss, peak = _rss_mib()
    print(json.dumps({"seconds": seconds, "rss": rss, "peak": peak, "symbols": len(table), "hits": len(hits)}))


def run_child(side: str, index_dir: Path, copies: int, snapshot: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", side, "--index-dir", str(index_dir),
                          "--copies", str(copies), "--snapshot", str(snapshot)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="rust", help="stdlib, go, rust or a directory")
    ap.add_argument("--index-dir", help="an index of the corpus (default: built once with sylk index --no-embed)")
    ap.add_argument("--copies", type=int, default=3, help="copies of the corpus's symbols (default 3)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--child", choices=["rebuild", "snapshot"], help=argparse.SUPPRESS)
    ap.add_argument("--snapshot", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, Path(args.index_dir), args.copies, Path(args.snapshot))
        return 0

    from sylk.search.frozen_symbols import FrozenSymbols

    root = corpora.prepare(args.corpus)
    index_dir = Path(args.index_dir) if args.index_dir else corpora.BENCH_ROOT / f"symbol-open-{args.corpus}"
    if not args.index_dir and not (index_dir / "manifest.sqlite3").exists():
        print(f"indexing {root} into {index_dir} (once)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "sylk", "index", "--no-embed", str(root)], check=True,
                       env=dict(os.environ, SYLK_INDEX_DIR=str(index_dir)), stdout=subprocess.DEVNULL)
    corpora.header("sylk symbol table: open a large index")
    rows = _rows(index_dir, args.copies)
    with tempfile.TemporaryDirectory(prefix="sylk-symbol-open-") as tmp:
        snapshot = Path(tmp) / "symbols.bin"
        t0 = time.perf_counter()
        frozen = FrozenSymbols.build(rows)
        built = time.perf_counter() - t0
        size = frozen.save(snapshot)
        saved = time.perf_counter() - t0 - built
        print(f"corpus {args.corpus} x {args.copies}: {len(frozen):,} symbols in {len(rows):,} files; snapshot "
              f"built in {built:.2f} s, saved in {saved:.2f} s, {size / 2**20:.1f} MiB   [{corpora.load_line()}]")
        del frozen, rows
        results: dict[str, list[dict]] = {"rebuild": [], "snapshot": []}
        for _ in range(args.runs):
            for side in results:  # interleaved, so both see the same machine
                results[side].append(run_child(side, index_dir, args.copies, snapshot))
    print(f"\n{'side':<10} {'first answer s (min/median)':>28} {'RSS MiB':>9} {'peak MiB':>9}")
    for side, runs in results.items():
        med, low = corpora.med_min([r["seconds"] for r in runs])
        print(f"{side:<10} {low:>13.2f} / {med:<12.2f} {min(r['rss'] for r in runs):>9.0f} "
              f"{min(r['peak'] for r in runs):>9.0f}")
    snap = results["snapshot"]
    seconds = corpora.med_min([r["seconds"] for r in snap])[0]
    rss = max(r["rss"] for r in snap)
    base = corpora.med_min([r["seconds"] for r in results["rebuild"]])[0]
    ok_time, ok_rss = seconds <= OPEN_TARGET_S, rss <= RSS_TARGET_MIB
    print(f"\n{'PASS' if ok_time else 'MISS'}: first answer {seconds:.2f} s after opening the snapshot "
          f"(target <= {OPEN_TARGET_S:g} s; rebuilding the table: {base:.2f} s, {base / seconds:.0f}x)")
    print(f"{'PASS' if ok_rss else 'MISS'}: RSS {rss:.0f} MiB with the table open (target <= {RSS_TARGET_MIB} MiB)")
    return 0 if ok_time and ok_rss else 1


if __name__ == "__main__":
    sys.exit(main())
