"""How soon search by meaning covers a workspace: the quick pass against the model's pass.

Run by hand (never in CI):

    python bench/quick_pass.py [--corpus stdlib|go|PATH] [--model-sample 400]

Issue 31's target: every chunk searchable by meaning within 2 s of the text index on
flask, 60 s on the CPython standard library, on a laptop's CPU. In process, on a fresh
index folder:

1. the text index (``Workspace.index``: parse, Tantivy, the manifest), timed;
2. the embedding model loaded (``load_semantic``; the quick pass's static model is
   loaded by the quick pass, when it first has chunks to embed), timed;
3. the quick pass (``quick_pass``): every chunk gets a static vector, timed, with the
   share of chunks a semantic search then covers;
4. the baseline from the same run: the embedding model (the packaged MiniLM) on a
   sample of ``--model-sample`` of the same chunks' texts, its rate, and the time it
   would take for all of them (what the first full semantic coverage cost before).

Prints the load average beside the figures: on a busy machine all of them stretch.
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import count_files, fresh_index_dir, load_line, prepare  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="stdlib")
    ap.add_argument("--model-sample", type=int, default=400, help="chunks the embedding model embeds for its rate")
    args = ap.parse_args()

    from sylk.config import Settings
    from sylk.engine.workspace import Workspace
    from sylk.search.query import SearchRequest

    root = prepare(args.corpus)
    files, size = count_files(root)
    index_dir = fresh_index_dir("quick-pass")
    print(f"corpus {root}: {files} files, {size / 1e6:.1f} MB; {load_line()}")
    ws = Workspace(root, Settings(index_dir=str(index_dir)))
    try:
        t0 = time.perf_counter()
        ws.index()
        t_text = time.perf_counter() - t0
        chunks = ws.manifest.chunk_counts()["chunks"]
        t0 = time.perf_counter()
        note = ws.load_semantic()
        t_load = time.perf_counter() - t0
        if not ws.semantic_ready or ws.stores.quick is None:
            print(f"no quick pass: {note or ws.semantic_message}")
            return 1
        t0 = time.perf_counter()
        quick = ws.quick_pass()
        t_quick = time.perf_counter() - t0
        state = ws.index_state()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        result = ws.search(SearchRequest("read the configuration from a file", "semantic", limit=5))

        ids = sorted(ws.manifest.all_chunk_ids())
        sample = random.Random(1).sample(ids, min(args.model_sample, len(ids)))
        texts = [r.embed_text or "" for r in ws.manifest.pending_rows(sample)]
        assert ws.embedder is not None
        t0 = time.perf_counter()
        ws.embedder.embed(texts)
        t_model = time.perf_counter() - t0
        rate = len(texts) / t_model
        print(f"{load_line()}")
        print()
        print("| step | chunks | seconds | chunks/s |")
        print("|---|---|---|---|")
        print(f"| text index ({files} files) | {chunks:,} | {t_text:.1f} | - |")
        print(f"| load the embedding model (the static one loads in the quick pass) | - | {t_load:.1f} | - |")
        print(f"| quick pass, {ws.stores.quick.model_id} | {quick:,} | {t_quick:.1f} | "
              f"{quick / max(t_quick, 1e-9):,.0f} |")
        print(f"| baseline: {ws.embedder.model_id} on {len(texts)} of them | {len(texts)} | {t_model:.1f} | "
              f"{rate:,.0f} |")
        print(f"| baseline projected to every chunk | {chunks:,} | {chunks / rate:,.0f} | {rate:,.0f} |")
        print()
        print(f"semantic coverage after the quick pass: {state.embedded + state.quick:,} of {chunks:,} chunks "
              f"({state.quick:,} quick); answer note: {result.notes!r}")
        print(f"peak RSS of this process {rss:.0f} MiB; index folder {index_dir}")
    finally:
        ws.close()
        shutil.rmtree(index_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
