"""Build Sylk's static embedding model from the packaged MiniLM (the model2vec technique).

    python tools/build_static_model.py --corpus DIR [--corpus DIR ...] [--out DIR]
                                       (then embedding.modelPath = DIR)
                                       [--dims 256] [--sif 1e-3] [--work /tmp/sylk-static]

A static model is a table with one vector per token of MiniLM's WordPiece vocabulary:
a text's embedding is the mean of its tokens' rows, normalised. No transformer runs at
index or query time, so embedding costs a tokenisation and a gather (tens of thousands
of chunks a second on one core instead of about a hundred).

How the table is made, from the teacher (the int8 all-MiniLM-L6-v2 that Sylk ships) with
onnxruntime and numpy alone:
1. **Token vectors.** Each vocabulary token alone (``[CLS] token [SEP]``) through the
   teacher, mean-pooled as the teacher pools a text, and normalised.
2. **Dimensions.** PCA down to ``--dims`` (the directions the vocabulary varies in most;
   the rest is mostly noise for a mean of many tokens), from the centred table.
3. **Weights.** Frequent tokens say little (``(``, ``self``, ``return``): each row is
   scaled by the SIF weight ``a / (a + p(token))``, ``p`` being the token's frequency in
   the ``--corpus`` folders (source code the model will see: never the benchmark's
   repositories). Tokens the corpus never holds keep the weight 1.
4. **Storage.** Each row as int8 times one float32 scale per row (its largest
   magnitude / 127): a chunk's embedding from the int8 table has cosine >= 0.9999 to
   the float one (the 2,911 chunks of bench/relevance.py's Python corpus), at a quarter
   of float32's size.
The result: ``vectors.npy`` (int8, vocabulary x dims, weights folded in), ``scales.npy``
(float32, one per row) and ``model.json`` (what it is, the teacher's and tokenizer's
sha256, the parameters, the corpus, the sha256 of both arrays). The tokenizer is MiniLM's own, shipped once in
``sylk/models/all-MiniLM-L6-v2``.

5. **Refinement** (``--refine N``, tools/refine_static.py): the weighted rows fitted so
   that the mean of a code window's rows points where the teacher's embedding of the
   window points, on N windows of the corpus (a tenth held out to stop the fit).
Stages are cached in ``--work`` (the teacher's token vectors, the corpus counts), so
trying other ``--dims`` or ``--sif`` takes seconds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from sylk.config import cache_root  # noqa: E402
from sylk.embed.onnx_encoder import OnnxEncoder  # noqa: E402
from sylk.embed.packaged import PACKAGED_MODEL_ID, PACKAGED_TOKENIZER_DIR, assemble_packaged_model, sha256  # noqa: E402
from sylk.embed.static_encoder import SCALES, VECTORS  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import refine_static  # noqa: E402

# the packaged table (sylk.embed.static_encoder.PACKAGED_STATIC_DIR): built with
# --corpus <the CPython 3.11 standard library> and the defaults below
DEFAULT_OUT = ROOT / "server" / "sylk" / "models" / "static-minilm-256"
CODE_SUFFIXES = frozenset(
    ".py .pyi .go .rs .java .kt .scala .c .h .cc .cpp .hpp .cs .js .mjs .ts .tsx .rb .php .swift .lua "
    ".ex .exs .hs .zig .sh .bash .md .rst".split())
CORPUS_LIMIT = 200 << 20  # characters read per corpus folder
BATCH = 256


def teacher() -> OnnxEncoder:
    path, reason = assemble_packaged_model(cache_root())
    if path is None:
        raise SystemExit(f"the packaged teacher model is not available: {reason}")
    return OnnxEncoder(path)


def token_vectors(enc: OnnxEncoder, work: Path) -> np.ndarray:
    """Stage 1: every vocabulary token through the teacher, pooled and normalised."""
    cached = work / "token_vectors.npy"
    if cached.exists():
        return np.load(cached)
    tok = enc.tokenizer
    size = tok.get_vocab_size()
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    out = np.zeros((size, 384), dtype=np.float32)
    t0 = time.perf_counter()
    inputs = {i.name for i in enc.session.get_inputs()}
    for start in range(0, size, BATCH):
        ids = np.arange(start, min(size, start + BATCH), dtype=np.int64)
        batch = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], axis=1)
        feed = {"input_ids": batch}
        if "attention_mask" in inputs:
            feed["attention_mask"] = np.ones_like(batch)
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros_like(batch)
        hidden = enc.session.run(None, feed)[0]
        pooled = hidden.mean(axis=1)
        out[ids] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        if start // BATCH % 20 == 0:
            print(f"  token vectors {start + len(ids)}/{size}  {time.perf_counter() - t0:.0f}s", flush=True)
    work.mkdir(parents=True, exist_ok=True)
    np.save(cached, out)
    return out


def corpus_files(folder: Path):
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if os.path.splitext(name)[1] in CODE_SUFFIXES:
                yield Path(dirpath) / name


def token_counts(enc: OnnxEncoder, corpora: list[Path], work: Path) -> tuple[np.ndarray, list[dict]]:
    """Stage 3's frequencies: how often each token occurs in the corpus folders."""
    key = hashlib.sha1(json.dumps([str(c.resolve()) for c in corpora]).encode()).hexdigest()[:12]
    cached, about = work / f"counts-{key}.npy", work / f"counts-{key}.json"
    if cached.exists() and about.exists():
        return np.load(cached), json.loads(about.read_text())
    tok = enc.tokenizer
    tok.no_truncation()
    counts = np.zeros(tok.get_vocab_size(), dtype=np.int64)
    described = []
    for folder in corpora:
        chars = files = 0
        texts: list[str] = []
        for path in corpus_files(folder):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            texts.append(text)
            chars += len(text)
            files += 1
            if len(texts) >= 512:
                for e in tok.encode_batch(texts, add_special_tokens=False):
                    counts += np.bincount(e.ids, minlength=len(counts))
                texts = []
            if chars >= CORPUS_LIMIT:
                break
        for e in tok.encode_batch(texts, add_special_tokens=False):
            counts += np.bincount(e.ids, minlength=len(counts))
        described.append({"folder": str(folder), "files": files, "characters": chars})
        print(f"  counted {folder}: {files} files, {chars / 1e6:.0f} M characters", flush=True)
    work.mkdir(parents=True, exist_ok=True)
    np.save(cached, counts)
    about.write_text(json.dumps(described))
    return counts, described


def assemble(vectors: np.ndarray, counts: np.ndarray, dims: int, sif: float,
             refine=None) -> np.ndarray:
    """Stages 2 and 3: PCA to ``dims``, then each row scaled by its SIF weight. With
    ``refine`` (a function of the weighted 384-dimensional table, refine_static.py), the
    weighted rows are refined before the projection, which stays the distilled table's."""
    mean = vectors.mean(axis=0)
    centred = vectors - mean
    p = counts / max(counts.sum(), 1)
    weights = (sif / (sif + p)).astype(np.float32)
    if dims < vectors.shape[1]:
        _, _, vt = np.linalg.svd(centred, full_matrices=False)
        basis = vt[:dims].T
    else:
        basis = np.eye(vectors.shape[1], dtype=np.float32)
    if refine is None:
        return ((centred @ basis) * weights[:, None]).astype(np.float32)
    weighted = refine(vectors * weights[:, None])
    # (v - mean) w = v w - mean w: the same centring, on the refined rows
    return ((weighted - mean[None, :] * weights[:, None]) @ basis).astype(np.float32)


def quantized(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Stage 4: (int8 rows, float32 scale per row); a row of zeros keeps the scale 0."""
    scales = (np.abs(table).max(axis=1) / 127).astype(np.float32)
    rows = np.round(table / np.where(scales > 0, scales, 1)[:, None])
    return np.clip(rows, -127, 127).astype(np.int8), scales


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, action="append", required=True,
                    help="a folder of source code for the token frequencies (repeatable)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--dims", type=int, default=256)
    ap.add_argument("--sif", type=float, default=1e-3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/sylk-static"))
    ap.add_argument("--refine", type=int, default=0, metavar="N",
                    help="refine the table on N windows of the corpus against the teacher (refine_static.py)")
    ap.add_argument("--refine-l2", type=float, default=1e-3)
    ap.add_argument("--refine-steps", type=int, default=200)
    ap.add_argument("--refine-lr", type=float, default=2e-3)
    args = ap.parse_args()
    enc = teacher()
    t0 = time.perf_counter()
    vectors = token_vectors(enc, args.work)
    counts, described = token_counts(enc, args.corpus, args.work)
    refined: dict = {}

    def refine(weighted: np.ndarray) -> np.ndarray:
        files = [f for folder in args.corpus for f in corpus_files(folder)]
        table, refined["figures"] = refine_static.refine(enc, weighted, files, args.refine, args.work,
                                                         l2=args.refine_l2, steps=args.refine_steps,
                                                         lr=args.refine_lr)
        return table

    table = assemble(vectors, counts, args.dims, args.sif, refine if args.refine else None)
    rows, scales = quantized(table)
    args.out.mkdir(parents=True, exist_ok=True)
    np.save(args.out / VECTORS, rows)
    np.save(args.out / SCALES, scales)
    teacher_dir, _ = assemble_packaged_model(cache_root())
    meta = {
        "name": "sylk static MiniLM",
        "technique": "model2vec-style distillation: token vectors of the teacher, PCA, SIF weights"
                     + (", rows refined on code windows against the teacher" if args.refine else ""),
        "teacher": PACKAGED_MODEL_ID,
        "teacher_onnx_sha256": sha256(teacher_dir / "model.onnx"),
        "tokenizer": "all-MiniLM-L6-v2 tokenizer.json (sylk/models/all-MiniLM-L6-v2)",
        "tokenizer_sha256": sha256(PACKAGED_TOKENIZER_DIR / "tokenizer.json"),
        "dims": int(table.shape[1]),
        "vocabulary": int(table.shape[0]),
        "sif": args.sif,
        "corpus": described,
        "refined": refined.get("figures"),
        "storage": "int8 rows times a float32 scale per row",
        "vectors_sha256": sha256(args.out / VECTORS),
        "scales_sha256": sha256(args.out / SCALES),
        "built_by": "tools/build_static_model.py",
    }
    (args.out / "model.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    size = sum((args.out / f).stat().st_size for f in (VECTORS, SCALES))
    print(f"wrote {args.out}: {table.shape[0]} x {table.shape[1]} int8 ({size / 2**20:.1f} MiB) "
          f"in {time.perf_counter() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
