"""Kill -9 `sylk index` at random moments, restart, and count what was lost or doubled.

    python bench/kill_restart.py [--rounds 50] [--seed 7] [--files 60] [--keep]

Each round changes the workspace (files added, rewritten, renamed, deleted; every
generated file defines one unique marker function), starts `sylk index` (embedding on
in two rounds of three) and SIGKILLs it: after a random delay in even rounds (while
it starts, scans, parses, commits Tantivy, writes the manifest, loads the model,
embeds or saves FAISS), at a crash point in odd rounds (DRIVER: inside or right after
a Tantivy commit, after a manifest write, while parsing, after an embedding batch,
before the embedded flags commit, mid FAISS save, between its two renames), then:

1. reads the stores as the kill left them (orphan and duplicate Tantivy documents,
   manifest chunks without a document, stale vectors, chunks marked embedded
   without a vector) -- what a restart must repair;
2. restarts: opens the index as Sylk does (store.integrity.check_on_open repairs) and
   checks the invariants: manifest chunk ids == Tantivy chunk ids with no duplicate,
   vectors are a subset of the chunks, embedded flag => vector;
3. converges: an uninterrupted `sylk index --no-embed`, then counts *lost* documents
   (a file on disk whose content the index lacks: hash differs, missing, or a
   marker the lexical search does not find in its file) and *duplicated* ones
   (Tantivy documents beyond one per manifest chunk, and markers found twice).

Target (issue 4): zero lost or duplicated documents across 50 rounds, and no round
whose invariants fail after the restart. Prints one line per round and a summary;
exits 1 on a MISS. tests/test_crash.py runs the same loop for 16 rounds (steps 1-2
each round, step 3 once at the end).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "server"
FIXTURE = ROOT / "fixtures" / "workspace"
if str(SERVER) not in sys.path:
    sys.path.insert(0, str(SERVER))

import faiss  # noqa: E402
from sylk.config import Settings  # noqa: E402
from sylk.engine.workspace import Workspace  # noqa: E402
from sylk.search.query import SearchRequest  # noqa: E402
from sylk.store.lexical import LexicalIndex  # noqa: E402

EXCLUDED = ("ignored_dir/", "node_modules/")  # what the fixture's ignore rules leave out


# --- the workspace ------------------------------------------------------------------------


def module_text(marker: str, rng: random.Random) -> str:
    """A Python module of a few functions (a chunk each), one named ``marker``."""
    names = [f"helper_{rng.randrange(10**6)}_{i}" for i in range(rng.randint(4, 10))]
    names.insert(rng.randrange(len(names) + 1), marker)
    parts = ['"""A generated module."""\n']
    for name in names:
        a, b = rng.randrange(100), rng.randrange(100)
        parts.append(f"\n\ndef {name}(x, y={a}):\n    \"\"\"Combine x and y, then scale by {b}.\"\"\"\n"
                     f"    total = x + y * {b}\n    return total - {a}\n")
    return "".join(parts)


class Site:
    """A workspace (the fixture plus generated modules) and its index folder."""

    def __init__(self, base: Path, files: int, seed: int, cache: Path | None = None) -> None:
        self.root = base / "workspace"
        self.index = base / "index"
        # where the packaged model is assembled (once); the index is in ``index``
        self.cache = cache or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        self.rng = random.Random(seed)
        self.markers: dict[str, str] = {}  # path -> the marker function it defines
        self.dead: set[str] = set()  # markers no file defines any more
        self.counter = 0
        shutil.copytree(FIXTURE, self.root, symlinks=True)
        for _ in range(files):
            self._write(f"gen/pkg{self.rng.randrange(4)}/mod{self._next()}.py")

    def copy_to(self, base: Path) -> Site:
        """A private copy (copytree keeps mtimes: the copied index matches its files)."""
        new = object.__new__(Site)
        new.__dict__.update(self.__dict__)
        new.root, new.index = base / "workspace", base / "index"
        new.rng = random.Random(self.counter)  # every copy mutates alike: deterministic tests
        new.markers, new.dead = dict(self.markers), set(self.dead)
        shutil.copytree(self.root, new.root, symlinks=True)
        if self.index.exists():
            shutil.copytree(self.index, new.index, symlinks=True)
        return new

    def _next(self) -> int:
        self.counter += 1
        return self.counter

    def _write(self, rel: str) -> None:
        old = self.markers.get(rel)
        if old:
            self.dead.add(old)
        marker = f"marker_{self._next()}_{self.rng.randrange(10**6)}"
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(module_text(marker, self.rng))
        self.markers[rel] = marker

    def mutate(self, scale: int = 1) -> str:
        """Add, rewrite, rename and delete a few generated modules (``scale`` times more
        added and rewritten); returns what was done."""
        rng, done = self.rng, Counter()
        for _ in range(rng.randint(1, 3 * scale)):
            self._write(f"gen/pkg{rng.randrange(4)}/mod{self._next()}.py")
            done["added"] += 1
        paths = sorted(self.markers)
        for rel in rng.sample(paths, min(len(paths), rng.randint(1, 3 * scale))):
            self._write(rel)
            done["rewritten"] += 1
        if rng.random() < 0.4 and len(self.markers) > 5:
            rel = rng.choice(sorted(self.markers))
            new = f"gen/moved/mod{self._next()}.py"
            (self.root / new).parent.mkdir(parents=True, exist_ok=True)
            os.replace(self.root / rel, self.root / new)
            self.markers[new] = self.markers.pop(rel)
            done["renamed"] += 1
        if rng.random() < 0.5 and len(self.markers) > 5:
            rel = rng.choice(sorted(self.markers))
            (self.root / rel).unlink()
            self.dead.add(self.markers.pop(rel))
            done["deleted"] += 1
        return ", ".join(f"{n} {k}" for k, n in sorted(done.items()))

    def env(self) -> dict[str, str]:
        return {**os.environ, "SYLK_INDEX_DIR": str(self.index), "XDG_CACHE_HOME": str(self.cache),
                "HF_HUB_OFFLINE": "1"}

    def sylk(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "sylk.cli", *args], capture_output=True, text=True,
                              env=self.env(), timeout=600)

    def open(self, writable: bool = True) -> Workspace:
        return Workspace(self.root, Settings(index_dir=str(self.index)), writable=writable)

    def run_killed(self, delay: float, embed: bool) -> tuple[bool, float]:
        """`sylk index`, SIGKILLed after ``delay`` seconds unless it finished (the indexer
        alone: its parser workers must notice and exit); returns (killed, seconds it ran)."""
        args = [sys.executable, "-m", "sylk.cli", "index", str(self.root)] + ([] if embed else ["--no-embed"])
        return run_and_kill(args, self.env(), delay)

    def run_to_point(self, point: str, nth: int, embed: bool) -> tuple[bool, float]:
        """`sylk index` killing itself the ``nth`` time it reaches ``point`` (see DRIVER)."""
        args = [sys.executable, "-c", DRIVER, point, str(nth), "index", str(self.root)]
        return run_and_kill(args + ([] if embed else ["--no-embed"]), self.env(), None)


def run_and_kill(args: list[str], env: dict[str, str], delay: float | None) -> tuple[bool, float]:
    """Run ``args`` in a new process group; SIGKILL the process after ``delay`` seconds
    (None: it kills itself). Then wait for its children (pool workers hold its stderr):
    they must exit on their own within 10 s, else RuntimeError (the group is killed)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    killed = False
    try:
        _out, err = proc.communicate(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        killed = True
    ran = time.monotonic() - t0
    if killed:
        try:
            _out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise RuntimeError("parser workers outlived the killed indexer") from None
    elif proc.returncode == -signal.SIGKILL:
        killed = True
    if not killed and proc.returncode != 0:
        raise RuntimeError(f"{args[1:4]} failed ({proc.returncode}): {err.decode().strip()}")
    return killed, ran


# `python -c DRIVER POINT N index ...` runs `sylk.cli.main(argv)` with one store call patched to SIGKILL the process at the
# n-th time it is reached (after the call returns, or a millisecond into it).
DRIVER = r"""
import os, signal, sys, threading
import faiss
import sylk.cli, sylk.engine.embedding as embedding, sylk.engine.indexer as indexer
from sylk.store.lexical import LexicalIndex
from sylk.store.manifest import Manifest

point, nth, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
seen = [0]

def die():
    os.kill(os.getpid(), signal.SIGKILL)

def reached():
    seen[0] += 1
    return seen[0] == nth

def after(owner, name):
    orig = getattr(owner, name)
    def wrapper(*a, **kw):
        out = orig(*a, **kw)
        if reached():
            die()
        return out
    setattr(owner, name, wrapper)

def during(owner, name):
    orig = getattr(owner, name)
    def wrapper(*a, **kw):
        if reached():
            threading.Timer(0.001, die).start()
        return orig(*a, **kw)
    setattr(owner, name, wrapper)

if point == "parsing":
    parse_all = indexer.Indexer._parse_all
    def killed_parse_all(self, *a, **kw):
        for parsed in parse_all(self, *a, **kw):
            yield parsed
            if reached():
                die()
    indexer.Indexer._parse_all = killed_parse_all
elif point == "during-text-commit":
    during(LexicalIndex, "commit")
elif point == "after-text-commit":
    after(LexicalIndex, "commit")
elif point == "after-manifest-write":
    after(Manifest, "apply")
elif point == "embedding":
    after(embedding, "embed_cached")
elif point == "after-embedded-flags":
    after(Manifest, "set_embedded")
elif point == "faiss-write":
    after(faiss, "write_index")  # sylk.store.vectors looks it up at each call
elif point == "between-faiss-renames":
    replace = os.replace
    def killed_replace(src, dst, *a, **kw):
        if str(dst).endswith("vectors.json") and reached():
            die()
        return replace(src, dst, *a, **kw)
    os.replace = killed_replace
else:
    raise SystemExit(f"unknown crash point {point}")
sys.exit(sylk.cli.main(argv))
"""


CRASH_POINTS = ("parsing", "during-text-commit", "after-text-commit", "after-manifest-write", "embedding",
                "after-embedded-flags", "faiss-write", "between-faiss-renames")
EMBED_POINTS = ("embedding", "after-embedded-flags", "faiss-write", "between-faiss-renames")


# --- the stores, read directly ------------------------------------------------------------


def disk_hashes(root: Path) -> dict[str, str]:
    out = {}
    for p in root.rglob("*"):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(EXCLUDED):
            out[rel] = hashlib.blake2b(p.read_bytes(), digest_size=16).hexdigest()
    return out


def read_stores(index: Path) -> dict:
    """The chunk ids of each store and the manifest's files, read without Sylk's checks."""
    db = sqlite3.connect(index / "manifest.sqlite3")
    try:
        chunks = {i: bool(e) for i, e in db.execute("SELECT id, embedded FROM chunks")}
        files = dict(db.execute("SELECT path, hash FROM files"))
    finally:
        db.close()
    docs = LexicalIndex(index / "tantivy", index / "grams", writable=False).chunk_ids()
    path = index / "vectors" / "vectors.faiss"
    vectors: set[int] = set()
    if path.exists():
        try:
            fx = faiss.read_index(str(path))
            vectors = set(faiss.vector_to_array(fx.id_map).tolist())
        except RuntimeError:
            vectors = {-1}  # unreadable: counted as a problem by drift()
    return {"chunks": chunks, "files": files, "docs": docs, "vectors": vectors}


def drift(stores: dict) -> Counter:
    """How the stores disagree (all zero when the invariants hold)."""
    chunks, docs, vectors = stores["chunks"], stores["docs"], stores["vectors"]
    in_docs = Counter(docs)
    out = Counter()
    out["orphan docs"] = sum(n for cid, n in in_docs.items() if cid not in chunks)
    out["duplicate docs"] = sum(n - 1 for cid, n in in_docs.items() if cid in chunks and n > 1)
    out["chunks without doc"] = sum(1 for cid in chunks if cid not in in_docs)
    out["vectors without chunk"] = len(vectors - chunks.keys())
    out["embedded without vector"] = sum(1 for cid, e in chunks.items() if e and cid not in vectors)
    return +out


def convergence(site: Site) -> Counter:
    """After an uninterrupted run: lost and duplicated documents against the disk."""
    stores = read_stores(site.index)
    disk = disk_hashes(site.root)
    out = drift(stores)
    out["lost files"] = sum(1 for rel, h in disk.items() if stores["files"].get(rel) != h)
    out["stale files"] = sum(1 for rel in stores["files"] if rel not in disk)
    ws = site.open(writable=False)
    try:
        for rel, marker in site.markers.items():
            paths = [h.path for h in ws.search(SearchRequest(marker, "lexical", limit=10, context_lines=0)).hits]
            if rel not in paths:
                out["lost markers"] += 1
            out["duplicated markers"] += max(0, paths.count(rel) - 1)
            out["markers in other files"] += sum(1 for p in paths if p != rel)
        for marker in site.dead:
            out["dead markers found"] += bool(ws.search(SearchRequest(marker, "lexical", limit=1)).hits)
    finally:
        ws.close()
    return +out


def restart(site: Site) -> tuple[str | None, Counter]:
    """Open the index as Sylk does after the kill (the repair runs) and close it; returns
    what it said and the drift left afterwards."""
    ws = site.open()
    try:
        note = ws.repair_note or (f"rebuilt: {ws.rebuilt_reason}" if ws.rebuilt_reason else None)
    finally:
        ws.close()
    return note, drift(read_stores(site.index))


# --- the loop -----------------------------------------------------------------------------


def run(site: Site, rounds: int, seed: int, *, converge_each_round: bool = True,
        delays: tuple[float, float] = (0.4, 3.5), scale: int = 4, points: bool = True, log=print) -> dict:
    """The loop on ``site`` (indexed or not): ``rounds`` rounds of ``site.mutate(scale)``,
    then `sylk index` killed after a delay drawn from ``delays`` seconds (it needs about
    half a second to start) or, every other round with ``points``, at the next of
    CRASH_POINTS in turn (the first time it is reached; after the 1st to 10th parsed
    file): a random delay rarely lands in the short windows that leave work to repair.
    Returns the site, the totals, the final drift and the failures."""
    rng = random.Random(seed + 1)
    totals: Counter = Counter()
    failures: list[str] = []
    for n in range(rounds):
        change = site.mutate(scale) if n or site.index.exists() else f"{len(site.markers)} generated files"
        embed = n % 3 != 1
        delay = rng.uniform(*delays)
        point = CRASH_POINTS[n // 2 % len(CRASH_POINTS)] if points and n % 2 else None
        nth = rng.randint(1, 10) if point == "parsing" else 1  # one commit and one save per small run
        embed = embed or point in EMBED_POINTS
        if point is not None:
            killed, ran = site.run_to_point(point, nth, embed)
            totals[f"point {point}: {'killed' if killed else 'not reached'}"] += 1
        else:
            killed, ran = site.run_killed(delay, embed)
        left = drift(read_stores(site.index)) if (site.index / "manifest.sqlite3").exists() else Counter()
        note, after = restart(site)
        totals["killed"] += killed
        totals["repaired on open"] += note is not None
        totals.update({f"left by kill: {k}": v for k, v in left.items()})
        if after:
            failures.append(f"round {n}: invariants fail after the restart: {dict(after)}")
        how = f"at {point} #{nth}" if point else "after a delay"
        line = (f"round {n:>2}: {change:<38} {'embed' if embed else 'no-embed':<8} "
                f"{'killed' if killed else 'done'} at {ran:4.2f}s {how}; left {dict(left) or '{}'}")
        if note:
            line += f"; restart: {note}"
        if converge_each_round:
            r = site.sylk("index", str(site.root), "--no-embed")
            if r.returncode != 0:
                failures.append(f"round {n}: sylk index failed: {r.stderr.strip()}")
            bad = convergence(site)
            totals.update(bad)
            if bad:
                failures.append(f"round {n}: after an uninterrupted run: {dict(bad)}")
                line += f"; NOT CONVERGED {dict(bad)}"
        log(line)
    r = site.sylk("index", str(site.root))  # the last run, with embedding, uninterrupted
    if r.returncode != 0:
        failures.append(f"final sylk index failed: {r.stderr.strip()}")
    final = convergence(site)
    verify = site.sylk("status", str(site.root), "--verify")
    if verify.returncode != 0:
        failures.append(f"final verify is not clean:\n{verify.stdout}")
    if final:
        failures.append(f"final state: {dict(final)}")
    return {"site": site, "totals": totals, "final": final, "failures": failures}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--files", type=int, default=60, help="generated modules at the start")
    ap.add_argument("--keep", action="store_true", help="keep the workspace and index folder")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="sylk-kill-"))
    t0 = time.perf_counter()
    try:
        result = run(Site(base, args.files, args.seed), args.rounds, args.seed)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    totals = result["totals"]
    lost = sum(v for k, v in totals.items() if k.startswith(("lost", "chunks without doc")) and "kill" not in k)
    dup = sum(v for k, v in totals.items() if k.startswith(("duplicate", "orphan", "duplicated")) and "kill" not in k)
    print(f"\n{args.rounds} rounds in {time.perf_counter() - t0:.0f}s (seed {args.seed}), "
          f"load {os.getloadavg()[0]:.2f}")
    for key in sorted(totals):
        print(f"  {key:<40} {totals[key]}")
    print(f"lost documents: {lost}, duplicated documents: {dup}, rounds failing invariants: "
          f"{sum('invariants' in f for f in result['failures'])}")
    for f in result["failures"]:
        print("  " + f)
    ok = not result["failures"] and lost == 0 and dup == 0
    print(f"{'PASS' if ok else 'MISS'} zero lost or duplicated documents across {args.rounds} kill/restart rounds")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
