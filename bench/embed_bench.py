"""Embedding throughput: Sylk's pipeline against the bare fastembed model (by hand).

    python bench/embed_bench.py [--corpus /tmp/stdlib] [--n 2000] [--max-tokens 256]
                                [--batch-size 4] [--threads 0]

Chunks are the functions and methods of a real corpus (default: the Python
standard library in /tmp/stdlib, else the copy ``corpora.prepare("stdlib")``
makes), one chunk per definition's source text, a seeded random sample of --n so
lengths are mixed as they are in a workspace. Each contender runs in its own
subprocess on the same texts, so peak RSS (VmHWM) is its own:

    pipeline      sylk.embed.embedder: load_embedder + Embedder.embed (truncation at
                  max_tokens, batches grouped by token length, input order kept); the
                  packaged model runs on Sylk's own session (onnx_encoder), not fastembed
    bare          fastembed TextEmbedding(...).embed(texts) with its defaults
                  (batch 256, truncation at the model's 512 tokens, input order)
    bare@max      the same, with fastembed's tokenizer truncated at max_tokens:
                  the same work per text as the pipeline, without the grouping

Both load the packaged model directory, so only the pipeline differs. ``bare``
runs only when asked for (``--only pipeline,bare``): with batch 256 padded to 512
tokens onnxruntime reached 22 GB peak RSS on 400 stdlib chunks on the 2-core
24 GB machine (bare@max: 6 GB), enough to push a shared machine into the OOM killer.
Printed: load time, chunks/s (and per CPU-second, steadier on a shared machine),
ratio pipeline/bare (target >= 0.85), peak RSS, agreement of the vectors (cosine
to bare@max, which should be ~1), and the projected time to embed the whole corpus
and 100k chunks.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVER = HERE.parent / "server"
if str(SERVER) not in sys.path:
    sys.path.insert(0, str(SERVER))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

DEFAULT_CORPUS = Path("/tmp/stdlib")


def _rss_mb() -> tuple[float, float]:
    """(current, peak) resident set size of this process in MB."""
    fields = {}
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def _cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def corpus_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    if DEFAULT_CORPUS.is_dir():
        return DEFAULT_CORPUS
    import corpora

    return corpora.prepare("stdlib")


def function_chunks(root: Path) -> list[str]:
    """The source text of every function and method under ``root`` (.py files)."""
    from sylk.ingest import symbols

    out: list[str] = []
    for path in sorted(root.rglob("*.py")):
        if "site-packages" in path.parts:
            continue
        try:
            source = path.read_bytes()
        except OSError:
            continue
        lines = source.decode("utf-8", "replace").splitlines()
        for sym in symbols.extract(source, "python"):
            if sym.kind in ("function", "method", "constructor"):
                text = "\n".join(lines[sym.range[0] : sym.range[2] + 1]).strip()
                if text:
                    out.append(text)
    return out


# --- workers (one per subprocess) ---------------------------------------------------


def worker(kind: str, texts_file: Path, out_file: Path, args: argparse.Namespace) -> None:
    import numpy as np

    texts = json.loads(texts_file.read_text(encoding="utf-8"))
    rss_start, _ = _rss_mb()
    t0 = time.perf_counter()
    from sylk import config
    from sylk.embed import embedder as embed
    from sylk.embed import loading, packaged

    cache_root = Path(args.cache_root)
    settings = config.EmbeddingSettings(max_tokens=args.max_tokens, batch_size=args.batch_size,
                                       threads=args.threads)
    if kind == "pipeline":
        embedder, message = loading.load_embedder(settings, cache_root)
        if embedder is None:
            raise SystemExit(message)
        load_s = time.perf_counter() - t0
        rss_loaded, _ = _rss_mb()
        t1, c1 = time.perf_counter(), _cpu_s()
        vectors = embedder.embed(texts)
        embed_s, cpu_s = time.perf_counter() - t1, _cpu_s() - c1
    else:
        from fastembed import TextEmbedding

        model_dir, reason = packaged.assemble_packaged_model(cache_root)
        if model_dir is None:
            raise SystemExit(reason)
        model = TextEmbedding(config.MODEL_ID_DEFAULT, specific_model_path=str(model_dir),
                              cache_dir=str(cache_root / "fastembed"),
                              threads=args.threads or None)
        if kind == "bare@max":
            model.model.tokenizer.enable_truncation(max_length=args.max_tokens)
        list(model.embed([embed.PROBE_TEXT]))  # the pipeline's load runs one probe too
        load_s = time.perf_counter() - t0
        rss_loaded, _ = _rss_mb()
        t1, c1 = time.perf_counter(), _cpu_s()
        vectors = np.asarray(list(model.embed(texts)), dtype=np.float32)
        embed_s, cpu_s = time.perf_counter() - t1, _cpu_s() - c1
    _, peak = _rss_mb()
    np.save(out_file.with_suffix(".npy"), vectors)
    out_file.write_text(json.dumps({
        "kind": kind, "n": len(texts), "load_s": load_s, "embed_s": embed_s, "cpu_s": cpu_s,
        "rss_start_mb": rss_start, "rss_loaded_mb": rss_loaded, "peak_rss_mb": peak,
    }), encoding="utf-8")


def run_worker(kind: str, texts_file: Path, tmp: Path, args: argparse.Namespace) -> dict:
    out = tmp / f"{kind.replace('@', '_')}.json"
    cmd = [sys.executable, __file__, "--worker", kind, "--texts", str(texts_file), "--out", str(out),
           "--max-tokens", str(args.max_tokens), "--batch-size", str(args.batch_size),
           "--threads", str(args.threads), "--cache-root", args.cache_root]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    subprocess.run(cmd, check=True, env=env)
    return json.loads(out.read_text(encoding="utf-8"))


def _fmt_duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--only", help="comma-separated subset of pipeline,bare,bare@max")
    ap.add_argument("--cache-root", default=str(Path(tempfile.gettempdir()) / "sylk-bench" / "embed-cache"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--texts", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, Path(args.texts), Path(args.out), args)
        return

    import numpy as np

    root = corpus_dir(args.corpus)
    t = time.perf_counter()
    chunks = function_chunks(root)
    print(f"corpus {root}: {len(chunks)} functions/methods ({time.perf_counter() - t:.1f} s to extract)")
    sample = random.Random(args.seed).sample(chunks, min(args.n, len(chunks)))
    with tempfile.TemporaryDirectory(prefix="sylk-embed-bench-") as tmp_name:
        tmp = Path(tmp_name)
        texts_file = tmp / "texts.json"
        texts_file.write_text(json.dumps(sample), encoding="utf-8")

        from sylk import config
        from sylk.embed import loading

        counter = loading.load_embedder(config.EmbeddingSettings(max_tokens=512), Path(args.cache_root))[0]
        assert counter is not None
        full = counter.token_lengths(sample)
        print(f"{len(sample)} chunks: tokens median {np.median(full):.0f}, mean {full.mean():.0f}, "
              f"p90 {np.percentile(full, 90):.0f}, {np.mean(full >= 512):.0%} at the model's 512, "
              f"{np.mean(full > args.max_tokens):.0%} over max_tokens={args.max_tokens}")
        print(f"settings: max_tokens={args.max_tokens} batch_size={args.batch_size} "
              f"threads={args.threads or 'all cores'} cpus={os.cpu_count()} "
              f"load average {os.getloadavg()[0]:.2f}")
        kinds = (args.only or "pipeline,bare@max").split(",")
        results = {}
        for kind in kinds:
            results[kind] = run_worker(kind, texts_file, tmp, args)
            r = results[kind]
            print(f"  {kind:9s} load {r['load_s']:5.2f} s  embed {r['embed_s']:7.1f} s  "
                  f"{r['n'] / r['embed_s']:6.1f} chunks/s ({r['n'] / r['cpu_s']:5.1f} per CPU-s)  "
                  f"peak RSS {r['peak_rss_mb']:6.0f} MB "
                  f"(after load {r['rss_loaded_mb']:.0f} MB)", flush=True)
        vectors = {k: np.load(tmp / f"{k.replace('@', '_')}.npy") for k in results}

    rate = {k: r["n"] / r["embed_s"] for k, r in results.items()}
    if "pipeline" in rate:
        for base in ("bare@max", "bare"):
            if base in rate:
                print(f"ratio pipeline / {base}: {rate['pipeline'] / rate[base]:.2f} (target >= 0.85)")
        if "bare@max" in vectors:
            cos = np.sum(vectors["pipeline"] * vectors["bare@max"], axis=1)
            print(f"agreement with bare@max: cosine min {cos.min():.4f}, mean {cos.mean():.5f}")
        if "bare" in vectors:
            short = full < min(args.max_tokens, 512)
            cos = np.sum(vectors["pipeline"][short] * vectors["bare"][short], axis=1)
            if short.any():
                print(f"agreement with bare on the {short.sum()} chunks under max_tokens: "
                      f"cosine min {cos.min():.4f}")
        per = 1 / rate["pipeline"]
        print(f"projected at {rate['pipeline']:.1f} chunks/s: this corpus ({len(chunks)} functions) "
              f"{_fmt_duration(len(chunks) * per)}, 10k chunks {_fmt_duration(1e4 * per)}, "
              f"100k chunks {_fmt_duration(1e5 * per)}")


if __name__ == "__main__":
    main()
