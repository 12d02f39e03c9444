"""Refining a static table on code (tools/build_static_model.py ``--refine N``).

A distilled table knows each token alone; code is read in context. Refining fits the
table so that the mean of a code window's token rows points where the teacher's own
embedding of the window points:

1. **Windows.** ``N`` windows of source code (``WINDOW_LINES`` lines, blank-line
   trimmed) drawn evenly from the corpus folders' files, in a fixed order.
2. **Teacher.** Each window through the teacher (the text the teacher reads: its first
   128 tokens), mean-pooled and normalised, as Sylk embeds a chunk. Cached.
3. **Fit.** The rows of the tokens the windows hold, by Adam on the mean cosine
   distance between each window's student embedding (the normalised mean of its rows)
   and its teacher embedding, with an L2 pull toward the distilled rows (``--refine-l2``)
   so rare tokens do not wander. A tenth of the windows is held out: the fit stops when
   their mean cosine stops rising, and the figures before and after are printed.

numpy and onnxruntime only, as the rest of the build.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Iterable
from pathlib import Path

import numpy as np

WINDOW_LINES = 30
TEACHER_TOKENS = 128  # what MiniLM reads of a chunk (Sylk's default embedding.maxTokens)
HELD_OUT = 0.1


def windows(files: Iterable[Path], n: int, seed: int = 0) -> list[str]:
    """``n`` windows of code from ``files``: every file cut into WINDOW_LINES-line
    windows, then ``n`` of them drawn with a fixed seed."""
    pool: list[str] = []
    for path in files:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for start in range(0, len(lines), WINDOW_LINES):
            text = "\n".join(lines[start:start + WINDOW_LINES]).strip()
            if len(text) >= 80:
                pool.append(text)
    random.Random(seed).shuffle(pool)
    return pool[:n]


def teacher_embeddings(enc, texts: list[str], work: Path) -> np.ndarray:
    """Each text through the teacher (normalised, float32), cached by the texts' hash."""
    key = hashlib.sha1("\x00".join(texts).encode()).hexdigest()[:12]
    cached = work / f"teacher-{key}.npy"
    if cached.exists():
        return np.load(cached)
    out = np.zeros((len(texts), 384), dtype=np.float32)
    t0 = time.perf_counter()
    batch = 64
    for start in range(0, len(texts), batch):
        vecs = enc.encode(texts[start:start + batch])
        out[start:start + len(vecs)] = vecs
        if start // batch % 20 == 0:
            print(f"  teacher {start + len(vecs)}/{len(texts)}  {time.perf_counter() - t0:.0f}s", flush=True)
    work.mkdir(parents=True, exist_ok=True)
    np.save(cached, out)
    return out


class Bags:
    """The token ids of each text (its first ``limit``, no special tokens), concatenated,
    with what the sums over texts and over tokens need (numpy has no sparse product)."""

    def __init__(self, tokenizer, texts: list[str], limit: int) -> None:
        tokenizer.no_padding()
        tokenizer.enable_truncation(limit)
        enc = tokenizer.encode_batch(texts, add_special_tokens=False)
        per_text = [np.array(e.ids or [0], dtype=np.int64) for e in enc]
        self.sizes = np.array([len(x) for x in per_text], dtype=np.int64)
        self.ids = np.concatenate(per_text)
        self.rows = np.repeat(np.arange(len(texts)), self.sizes)
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)[:-1]])
        self.order = np.argsort(self.ids, kind="stable")
        self.tokens, self.token_starts = np.unique(self.ids[self.order], return_index=True)

    def __len__(self) -> int:
        return len(self.sizes)

    def means(self, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each text's mean row and that mean's norm."""
        sums = np.add.reduceat(table[self.ids], self.offsets, axis=0)
        means = sums / self.sizes[:, None]
        return means, np.maximum(np.linalg.norm(means, axis=1), 1e-12)

    def to_tokens(self, per_text: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each text's row of ``per_text`` spread over its tokens (divided by its size) and
        summed per token: the tokens, and their sums."""
        contrib = (per_text / self.sizes[:, None])[self.rows][self.order]
        return self.tokens, np.add.reduceat(contrib, self.token_starts, axis=0)


def mean_cosine(table: np.ndarray, bag: Bags, target: np.ndarray) -> float:
    means, norms = bag.means(table)
    return float(((means / norms[:, None]) * target).sum(axis=1).mean())


def fit(table: np.ndarray, bag_fit: Bags, target_fit: np.ndarray, bag_held: Bags, target_held: np.ndarray, *,
        steps: int = 200, lr: float = 2e-3, l2: float = 1e-3, log=print) -> tuple[np.ndarray, dict]:
    """Adam on the rows the fitting texts hold; returns the best table on the held-out
    texts and the figures."""
    t = table.astype(np.float32)
    start = t.copy()
    n = len(bag_fit)
    m = np.zeros_like(t)
    v = np.zeros_like(t)
    b1, b2 = 0.9, 0.999
    before = mean_cosine(t, bag_held, target_held)
    log(f"  refine: held-out mean cosine to the teacher {before:.4f} before")
    best, best_t, since, step = before, t.copy(), 0, 0
    for step in range(1, steps + 1):
        means, norms = bag_fit.means(t)
        s = means / norms[:, None]
        cos = (s * target_fit).sum(axis=1)
        # d(mean of 1 - cos)/d(each text's mean row), then to the rows through the mean
        g_means = (-(target_fit - cos[:, None] * s) / norms[:, None] / n).astype(np.float32)
        tokens, g_rows = bag_fit.to_tokens(g_means)
        grad = l2 * (t - start)
        grad[tokens] += g_rows
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad * grad
        t -= lr * (m / (1 - b1 ** step)) / (np.sqrt(v / (1 - b2 ** step)) + 1e-8)
        if step % 10 == 0:
            held = mean_cosine(t, bag_held, target_held)
            log(f"  refine step {step}: fitting {cos.mean():.4f}, held out {held:.4f}")
            if held > best + 1e-4:
                best, best_t, since = held, t.copy(), 0
            else:
                since += 1
                if since >= 3:
                    break
    return best_t, {"held_out_cosine_before": round(before, 4), "held_out_cosine_after": round(best, 4),
                    "steps": step}


def refine(enc, table: np.ndarray, files: Iterable[Path], n: int, work: Path, *, l2: float,
           steps: int, lr: float) -> tuple[np.ndarray, dict]:
    """The whole stage: windows, teacher, fit (see the module's docstring)."""
    texts = windows(files, n)
    enc.limit_tokens(TEACHER_TOKENS)
    target = teacher_embeddings(enc, texts, work)
    cut = int(len(texts) * (1 - HELD_OUT))
    bag_fit = Bags(enc.tokenizer, texts[:cut], TEACHER_TOKENS)
    bag_held = Bags(enc.tokenizer, texts[cut:], TEACHER_TOKENS)
    refined, figures = fit(table, bag_fit, target[:cut], bag_held, target[cut:], l2=l2, steps=steps, lr=lr)
    figures.update({"windows": len(texts), "window_lines": WINDOW_LINES, "l2": l2, "lr": lr,
                    "texts_sha1": hashlib.sha1("\x00".join(texts).encode()).hexdigest()[:12]})
    print("  refine: " + json.dumps(figures), flush=True)
    return refined, figures
