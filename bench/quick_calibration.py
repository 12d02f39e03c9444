"""How a search ranks while the quick pass stands in for part of the index (issue 31 item 3).

Run by hand (never in CI), after ``python bench/relevance.py`` has built its indexes with
the packaged MiniLM (they stay in ``$SYLK_BENCH_DIR``):

    python bench/quick_calibration.py [--languages python,go] [--coverage 0,0.1,0.3,0.5,0.7,0.9,1]
                                      [--corpus stdlib|PATH] [--go-corpus go|PATH]

For each language, the relevance index's chunks with their MiniLM vectors, and the same
chunks embedded by the quick pass's packaged static model. A share ``c`` of the chunks
(a seeded random draw) counts as embedded by MiniLM, the rest as quick-pass only; the
queries are bench/relevance.py's (same seed and rules) and each is answered by the
semantic side alone (no words, no ranking stack), exactly over every chunk, four ways:

``model only``
    the MiniLM vectors of the covered chunks, the rest unsearched (no quick pass: Sylk
    before it);
``raw``
    both spaces' cosines mixed as they are;
``calibrated``
    search/nearest.py's rule: a quick hit's cosine in standard deviations over the
    query's typical score in its space (a sample of SAMPLE vectors), on the model's
    scale;
MRR@10 per query style and coverage. ``c = 0`` is the static model alone, ``c = 1``
MiniLM alone.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402  (puts server/ on sys.path)
from relevance_queries import LANGUAGES, STYLES, build_queries, words_of  # noqa: E402

K = 10


def queries_for(name: str, corpus: str, min_words: int, max_queries: int, seed: int):
    lang = LANGUAGES[name]
    src_root = corpora.prepare(corpus)
    defs, words = [], set()
    for p in lang.files(src_root, list(lang.default_packages)):
        rel = p.relative_to(src_root).as_posix()
        src = p.read_text(encoding="utf-8", errors="replace")
        defs.extend(lang.definitions(src, rel))
        words |= words_of(lang.strip(src))
    queries, _ = build_queries(lang, defs, words, min_words=min_words, max_queries=max_queries, seed=seed)
    return queries


def chunks_of(index_dir: Path):
    """(ids, paths, start lines, end lines, embed texts) of the index's chunks, read-only."""
    db = sqlite3.connect(f"file:{index_dir / 'manifest.sqlite3'}?mode=ro", uri=True)
    rows = db.execute("SELECT id, path, start_line, end_line, embed_text FROM chunks ORDER BY id").fetchall()
    db.close()
    return rows


def mrr(scores: np.ndarray, ok: np.ndarray) -> float:
    top = np.argpartition(-scores, K)[:K] if len(scores) > K else np.arange(len(scores))
    top = top[np.argsort(-scores[top])]
    for r, i in enumerate(top, 1):
        if ok[i]:
            return 1.0 / r
    return 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--languages", default="python,go")
    ap.add_argument("--coverage", default="0,0.1,0.3,0.5,0.7,0.9,1")
    ap.add_argument("--max-queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--corpus", default="stdlib", help="the Python corpus, as bench/relevance.py takes it")
    ap.add_argument("--go-corpus", default="go", help="the Go corpus, as bench/relevance.py takes it")
    ap.add_argument("--min-words", type=int, default=5)
    args = ap.parse_args()

    from sylk.config import EmbeddingSettings, cache_root
    from sylk.embed.loading import load_embedder, load_quick_embedder
    from sylk.search.nearest import SAMPLE
    from sylk.store.vectors import VectorIndex

    model, why = load_embedder(EmbeddingSettings(), cache_root())
    quick, why_quick = load_quick_embedder()
    if model is None or quick is None:
        print(f"cannot load the models: {why or why_quick}")
        return 2
    shares = [float(c) for c in args.coverage.split(",")]
    for name in args.languages.split(","):
        index_dir = corpora.BENCH_ROOT / f"relevance-{name}-index"
        vectors = VectorIndex.open(index_dir / "vectors", model.model_id, model.dim)
        rows = chunks_of(index_dir)
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        if len(vectors) != len(ids):
            print(f"{index_dir}: {len(vectors)} vectors for {len(ids)} chunks; run bench/relevance.py first")
            return 2
        main_vectors = vectors.vectors_for(ids)
        quick_vectors = quick.embed([r[4] or "" for r in rows])
        corpus = args.go_corpus if name == "go" else args.corpus
        queries = queries_for(name, corpus, args.min_words, args.max_queries, args.seed)
        order = np.random.default_rng(7).permutation(len(ids))
        print(f"\n== {name}: {len(ids)} chunks ({index_dir}); {model.model_id} and {quick.model_id}")
        print("| style | covered by MiniLM | model only | raw | calibrated |")
        print("|---|---|---|---|---|")
        for style in STYLES:
            qs = queries[style]
            sm = np.stack([model.embed_query(q.text) for q in qs]) @ main_vectors.T
            sq = np.stack([quick.embed_query(q.text) for q in qs]) @ quick_vectors.T
            oks = [np.array([p == q.target.path and a <= q.target.end and b >= q.target.line
                             for _i, p, a, b, _t in rows]) for q in qs]
            for c in shares:
                covered = np.zeros(len(ids), dtype=bool)
                covered[order[:int(round(c * len(ids)))]] = True
                main_sample = np.flatnonzero(covered)
                quick_sample = np.flatnonzero(~covered)
                main_sample = main_sample[np.linspace(0, len(main_sample) - 1, min(SAMPLE, len(main_sample))).astype(
                    int)] if len(main_sample) else main_sample
                quick_sample = quick_sample[np.linspace(0, len(quick_sample) - 1, min(SAMPLE, len(quick_sample))
                                                        ).astype(int)] if len(quick_sample) else quick_sample
                got = {"model only": [], "raw": [], "calibrated": []}
                for i in range(len(qs)):
                    m, s, ok = sm[i], sq[i], oks[i]
                    got["model only"].append(mrr(np.where(covered, m, -9.0), ok))
                    got["raw"].append(mrr(np.where(covered, m, s), ok))
                    if len(main_sample) and len(quick_sample):
                        mu, sd = m[main_sample].mean(), m[main_sample].std() + 1e-6
                        qmu, qsd = s[quick_sample].mean(), s[quick_sample].std() + 1e-6
                        got["calibrated"].append(mrr(np.where(covered, m, mu + sd * (s - qmu) / qsd), ok))
                    else:
                        got["calibrated"].append(got["raw"][-1])
                print(f"| {style} | {c:.0%} | " + " | ".join(f"{np.mean(v):.3f}" for v in got.values()) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
