"""Hover latency over stdio: definitions and related code on identifiers at call sites.

Run by hand (never in CI):

    python bench/hover_latency.py [--corpus DIR] [--hovers 150] [--seed 1]

1. Indexes and embeds the corpus (default: six stdlib packages, as search_latency.py)
   into a fresh index folder with ``sylk index``.
2. Picks ``--hovers`` call sites ``name(`` of functions the corpus defines (a seeded
   sample), starts ``sylk serve --stdio`` on it, waits until ``sylk/status`` is ready and
   the folder's semantic side is loaded, then sends ``textDocument/hover`` on each name,
   timing client send -> response parsed. Baseline in the same run: the same lookups in
   process (``related.definitions`` + ``chunk_of`` + ``similar``).
3. Prints p50/p95 both ways, how many hovers found a definition and related code, and
   the bar: **p95 <= 50 ms over stdio** (hover must feel instant; it reads stored
   vectors only, never the model).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import load_line  # noqa: E402
from search_latency import Client, pct, stdlib_corpus  # noqa: E402
from sylk.config import Settings  # noqa: E402
from sylk.engine.workspace import Workspace  # noqa: E402
from sylk.search import related  # noqa: E402

TARGET_MS = 50.0


def call_sites(root: Path, n: int, seed: int) -> list[tuple[Path, int, int, str]]:
    """(file, line, UTF-16 column, name) of calls to functions defined in the corpus."""
    defined: set[str] = set()
    texts: dict[Path, list[str]] = {}
    for p in sorted(root.rglob("*.py")):
        text = p.read_text(encoding="utf-8", errors="replace")
        texts[p] = text.split("\n")
        defined.update(re.findall(r"^\s*def (\w{5,})", text, re.M))
    sites = []
    for p, lines in texts.items():
        for i, line in enumerate(lines):
            if line.lstrip().startswith(("def ", "#")) or not line.isascii():
                continue
            for m in re.finditer(r"\b(\w{5,})\(", line):
                if m.group(1) in defined:
                    sites.append((p, i, m.start(1) + 1, m.group(1)))
    return random.Random(seed).sample(sites, min(n, len(sites)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--hovers", type=int, default=150)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="sylk-hover-"))
    try:
        root = args.corpus.resolve() if args.corpus else stdlib_corpus(scratch / "corpus")
        env = {**os.environ, "SYLK_INDEX_DIR": str(scratch / "index")}
        print(f"# hover latency -- {time.strftime('%Y-%m-%d %H:%M')} -- {load_line()}")
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "sylk.cli", "index", str(root)], env=env, capture_output=True,
                             text=True, check=True)
        print(f"index + embed: {time.perf_counter() - t0:.1f}s\n  " + out.stdout.strip().replace("\n", "\n  "))
        sites = call_sites(root, args.hovers, args.seed)
        ws = Workspace(root, Settings(index_dir=env["SYLK_INDEX_DIR"]), writable=False)
        ws.load_semantic()
        inproc: list[float] = []
        for _p, _line, _col, name in sites:
            t = time.perf_counter()
            defs = related.definitions(ws, name)
            if defs:
                chunk = related.chunk_of(ws, defs[0].path, defs[0].symbol.range[0], defs[0].symbol.name)
                if chunk is not None:
                    related.similar(ws, chunk)
            inproc.append((time.perf_counter() - t) * 1000)
        ws.close()
        client = Client(root, env)
        while True:
            st = client.request("sylk/status", {})["result"]
            if st.get("ready") and st.get("semantic", {}).get("state") in ("ready", "unavailable", "off"):
                break
            time.sleep(0.05)
        stdio: list[float] = []
        with_def = with_related = 0
        for p, line, col, _name in sites:
            t = time.perf_counter()
            r = client.request("textDocument/hover", {"textDocument": {"uri": p.as_uri()},
                                                      "position": {"line": line, "character": col}})
            stdio.append((time.perf_counter() - t) * 1000)
            value = ((r.get("result") or {}).get("contents") or {}).get("value", "")
            with_def += bool(value)
            with_related += "**Related code**" in value
        rss = client.rss_mib()
        client.close()
        print(f"\n{len(sites)} hovers on call sites of functions the corpus defines")
        print(f"stdio       p50 {pct(stdio, .5):7.1f}  p95 {pct(stdio, .95):7.1f} ms")
        print(f"in-process  p50 {pct(inproc, .5):7.1f}  p95 {pct(inproc, .95):7.1f} ms  "
              f"(stdio / in-process at p50: {pct(stdio, .5) / max(pct(inproc, .5), 1e-6):.1f}x)")
        print(f"with a definition {with_def}/{len(sites)}, with related code {with_related}/{len(sites)}; "
              f"server peak RSS {rss:.0f} MiB")
        p95 = pct(stdio, .95)
        print(f"{'PASS' if p95 <= TARGET_MS else 'MISS'}: hover p95 <= {TARGET_MS:.0f} ms over stdio ({p95:.1f} ms)")
        print(f"# done -- {load_line()}")
        return 0 if p95 <= TARGET_MS else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
