"""The tree-sitter floor of a cold index (run by hand, or from index_bench.py).

    python bench/ts_floor.py DIR [--workers N]

What any tree-sitter indexer must pay, and nothing more: the files Sylk would
index (the same walk and ignore rules), each read, parsed with its grammar and run
through its tags query (every match taken), in N spawned worker processes (default:
one per core, as ``sylk index``), batches of 16 files. No symbol records, chunks,
text index or manifest. Prints one JSON line: wall seconds (process start to exit,
like ``sylk index`` in index_bench.py), CPU seconds of the workers and of this
process, and the files and bytes parsed.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import multiprocessing
import os
import resource
import sys
import time
from pathlib import Path

T0 = time.perf_counter()
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))

BATCH = 16


def parse_batch(root: str, batch: list[tuple[str, str]]) -> int:
    """Parse and query each file; the number of bytes parsed."""
    from sylk.ingest import symbols

    done = 0
    for rel, language in batch:
        try:
            source = Path(root, rel).read_bytes()
        except OSError:
            continue
        tree = symbols._parser(language).parse(source)
        for _match in symbols._cursor(language).matches(tree.root_node):
            pass
        done += len(source)
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    from sylk.ingest.scan import scan_workspace
    from sylk.languages import language_for_path

    root = args.root.resolve()
    files = [(e.rel, lang) for e in scan_workspace(root).files if (lang := language_for_path(e.rel)) is not None]
    batches = [files[i:i + BATCH] for i in range(0, len(files), BATCH)]
    with cf.ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        parsed = sum(pool.map(parse_batch, [str(root)] * len(batches), batches))
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"wall": time.perf_counter() - T0, "files": len(files), "bytes": parsed,
                      "workers": args.workers, "worker_cpu": children.ru_utime + children.ru_stime,
                      "main_cpu": me.ru_utime + me.ru_stime}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
