"""One ``sylk search`` from the terminal, as an agent shells out once per query.

Run by hand (never in CI):

    python bench/cli_search.py --corpus PATH [--rounds 10] [--index-dir DIR]
                               [--compare-server OTHER/server]

Issue 31's target: one hybrid ``sylk search`` on flask with a warm index in at most
0.3 s wall. The corpus is indexed once (``sylk index``, the model's vectors for every
chunk; ``--index-dir`` reuses a folder already indexed), then each round runs, in turn:

- ``sylk search QUERY --mode hybrid`` and ``--mode lexical`` (a query from ``QUERIES``,
  a different one each round), process start to exit;
- the same with ``--compare-server``'s code on ``PYTHONPATH`` (another checkout's
  ``server/``: the engine before a change), when given;
- the baselines: ``rg -l -i WORD`` over the corpus, ``sylk --version`` and
  ``python -c pass`` (the interpreter's own start).

Prints the median and min wall per command, and the load average: on a busy machine
every figure stretches, so compare rows of one run only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import SERVER, fresh_index_dir, header, load_line, med_min, prepare  # noqa: E402

QUERIES = ("how are blueprints registered", "url routing", "session cookie signing", "json response",
           "template rendering context", "error handler registration", "request context teardown",
           "static files", "configuration from environment", "test client")


def _wall(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    t = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - t
    if done.returncode not in (0, 1):  # 1: no hits
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()}")
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, help="stdlib, go or a directory (flask's sources for the target)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--index-dir", type=Path, help="an index folder to reuse (indexed when empty)")
    ap.add_argument("--compare-server", type=Path, help="another checkout's server/ folder, timed beside this one")
    args = ap.parse_args()
    root = prepare(args.corpus)
    index_dir = args.index_dir or fresh_index_dir("cli-search")
    env = {**os.environ, "SYLK_INDEX_DIR": str(index_dir), "PYTHONPATH": str(SERVER)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's imports come from cached bytecode
    header(f"one sylk search from the terminal on {root}")
    sylk = [sys.executable, "-m", "sylk.cli"]
    t = time.perf_counter()
    subprocess.run([*sylk, "index", str(root)], env=env, check=True, stdout=subprocess.DEVNULL)
    print(f"index (warm-up, or the first index) {time.perf_counter() - t:.1f}s, folder {index_dir}")
    rg = shutil.which("rg")
    servers = {"": env}
    if args.compare_server:
        servers[" (compare)"] = {**env, "PYTHONPATH": str(args.compare_server.resolve())}
    rows: dict[str, list[float]] = {}
    for n in range(args.rounds + 1):  # round 0 warms the caches and is not counted
        query = QUERIES[n % len(QUERIES)]
        runs: dict[str, list[str]] = {}
        for tag, e in servers.items():
            for mode in ("hybrid", "lexical"):
                runs[f"sylk search --mode {mode}{tag}"] = [*sylk, "search", query, "--mode", mode, "--limit", "10"]
        runs["sylk --version"] = [*sylk, "--version"]
        runs["python -c pass"] = [sys.executable, "-c", "pass"]
        if rg:
            runs["rg -l -i WORD"] = [rg, "-l", "-i", query.split()[0], str(root)]
        for name, cmd in runs.items():
            e = servers[" (compare)"] if name.endswith("(compare)") else env
            took = _wall(cmd, e, root)
            if n:
                rows.setdefault(name, []).append(took)
    print(f"{'command':<40} {'median':>8} {'min':>8}   ({args.rounds} rounds, interleaved)")
    for name, xs in rows.items():
        med, low = med_min(xs)
        print(f"{name:<40} {med:>7.3f}s {low:>7.3f}s")
    print(f"# {load_line()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
