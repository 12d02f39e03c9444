"""Time to the first semantic answers after a cold start, over stdio.

Run by hand (never in CI):

    python bench/first_semantic.py [--corpus stdlib|go|PATH] [--open REL] [--changed REL]

Issue 3's target: on the stdlib workspace, the first semantic answers come within
60 seconds of start, for the files open in the editor and the files changed most
recently first. The run:

1. a fresh index folder (so nothing is indexed or embedded yet, and the embedding
   cache is empty); one file is touched just before the start (``--changed``, the
   "recently changed" file);
2. ``sylk serve --stdio`` starts; right after ``initialized`` the client opens
   another file (``--open``) with ``textDocument/didOpen``;
3. every 0.5 s the client asks ``sylk/search`` in semantic mode for a sentence
   taken from each of the two files (a docstring) and notes when the answer first
   holds a hit from that file, and when ``sylk/status`` first says the lexical
   index is ready.

Baseline in the same run: the time the lexical index took (status ready); the
semantic answers can come no earlier than that plus the model's load.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import load_line, prepare  # noqa: E402
from search_latency import Client  # noqa: E402

TARGET_S = 60.0


def a_docstring(path: Path) -> str:
    """The first sentence of the longest function docstring in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    best = ""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node) or ""
            first = doc.strip().split("\n\n")[0].split(". ")[0].replace("\n", " ")
            if len(first) > len(best):
                best = first
    if not best:
        raise SystemExit(f"{path}: no function docstring to query with")
    return best[:120]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="stdlib")
    ap.add_argument("--open", default="json/decoder.py", help="the file the editor opens")
    ap.add_argument("--changed", default="http/cookiejar.py", help="the file touched just before the start")
    ap.add_argument("--timeout", type=float, default=180.0)
    args = ap.parse_args()
    root = prepare(args.corpus)
    scratch = Path(tempfile.mkdtemp(prefix="sylk-first-sem-"))
    env = {**os.environ, "SYLK_INDEX_DIR": str(scratch / "index")}
    opened, changed = root / args.open, root / args.changed
    queries = {args.open: a_docstring(opened), args.changed: a_docstring(changed)}
    print(f"# first semantic answers -- {time.strftime('%Y-%m-%d %H:%M')} -- {load_line()}")
    print(f"corpus {root}; open {args.open}; changed {args.changed}")
    for rel, q in queries.items():
        print(f"  query for {rel}: {q!r}")
    os.utime(changed)  # the most recently modified file of the workspace
    first: dict[str, float] = {}
    lexical_ready = None
    embedded_at_end = 0
    t0 = time.perf_counter()
    client = Client(root, env)
    try:
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": opened.as_uri(), "languageId": "python", "version": 1,
            "text": opened.read_text(encoding="utf-8", errors="replace")}})
        while len(first) < len(queries) and time.perf_counter() - t0 < args.timeout:
            status = client.request("sylk/status", {})["result"]
            now = time.perf_counter() - t0
            if lexical_ready is None and status.get("ready"):
                lexical_ready = now
            for rel, q in queries.items():
                if rel in first:
                    continue
                r = client.request("sylk/search", {"query": q, "mode": "semantic", "limit": 10})["result"]
                if any(h["path"] == rel for h in r["hits"]):
                    first[rel] = time.perf_counter() - t0
                    embedded_at_end = r["index"]["embedded"]
                    print(f"  {first[rel]:6.1f}s  semantic hit in {rel} "
                          f"(index: {r['index']['embedded']}/{r['index']['chunks']} chunks embedded)")
            time.sleep(0.5)
        status = client.request("sylk/status", {})["result"]
    finally:
        client.close()
        shutil.rmtree(scratch, ignore_errors=True)
    total = time.perf_counter() - t0
    print(f"lexical index ready at {lexical_ready:.1f}s" if lexical_ready is not None
          else "lexical index not ready before the end")
    ok = True
    for rel in queries:
        t = first.get(rel)
        ok &= t is not None and t <= TARGET_S
        shown = f"{t:.1f}s" if t is not None else f"none within {args.timeout:.0f}s"
        print(f"{'PASS' if t is not None and t <= TARGET_S else 'MISS'}: first semantic answer from {rel} "
              f"within {TARGET_S:.0f}s of start ({shown})")
    if lexical_ready is not None and first and embedded_at_end:
        print(f"({embedded_at_end} chunks embedded when the last file answered; run ended at {total:.1f}s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
