"""semble's public code-search benchmark, run against ``sylk/search`` over stdio (by hand, never in CI).

    python bench/semble_bench.py [--data ../shared/semble] [--mirrors /work/.mirror]
                                 [--repos fastapi,chi,...] [--modes hybrid,lexical,semantic]
                                 [--settings JSON] [--json FILE] [--baseline FILE] [--show-misses N]
                                 [--keep] [--reuse]

The data (``--data``, default ``../shared/semble`` beside the repository): ``repos.json``
(name, language, url, pinned revision, ``benchmark_root``), ``annotations/<name>.json``
(natural queries with their ``relevant`` and ``secondary`` targets, a path or a path and a
1-based line span, and a ``category``), ``peers.json`` (other tools' NDCG@10 per repository).

Per repository:
1. **Export** ``benchmark_root`` at the pinned revision from a bare git mirror
   (``--mirrors``: ``<owner>+<name>/repo``, as ``fetch`` leaves them, or ``<name>.git``)
   or, where there is none, a ``git clone --mirror`` of the url into the work folder. A
   mirror that lacks the pinned commit is exported at its newest commit and the row is
   marked ``newest``; nothing but ``benchmark_root`` is ever indexed.
2. **Index** it with ``sylk serve --stdio`` (a fresh index folder; no file watching; no
   embedding when no mode needs it) and wait on ``sylk/status`` until the text index is
   ready and, for the semantic modes, every chunk is embedded. The index must cover every
   file Sylk's own scan lists (indexed, or left out for a reason ``sylk/status`` names):
   a repository where it does not is a failure, never a score.
3. **Search**: every query in every mode, ``sylk/search`` with ``limit: 10``.
4. **Score** as semble does: a target's rank is the first hit whose path matches (equal,
   or one ends with ``/`` + the other, relative to the benchmark root) and, for a target
   with a span, whose lines overlap it; NDCG@10 with binary gains over ``relevant`` +
   ``secondary``, ideal = min(10, number of targets). A repository's score is the mean
   over its queries; a category's, the mean over repositories of their category means;
   the headline, the mean over repositories.

Printed: per repository, per language, per category and the mean over repositories,
each mode beside the peers' figures on the same repositories (from ``peers.json``:
semble, CodeRankEmbed hybrid, BM25 with semble's ranking, BM25 alone). A repository
whose targets are not all in its export (a ``newest`` export that lost them) is printed
but left out of the means, and said so. ``--json`` writes every query's hits and score;
``--baseline`` prints each figure's change from such a file (the engine before a change).

``--keep`` leaves the exports and indexes in ``--work``; ``--reuse`` then searches them
without exporting or indexing again, so a ranking change costs seconds per repository.

Exit status 0 whatever the scores; 1 when a repository failed (export, index, searches).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402  (puts server/ on sys.path)
from search_latency import Client  # noqa: E402

MODES = ("hybrid", "lexical", "semantic")
K = 10
PEERS = (("semble", "semble"), ("CRE-hybrid", "CRE hyb"), ("semble-bm25", "bm25+rank"), ("bm25-raw", "bm25"))
CATEGORIES = ("architecture", "semantic", "symbol")
DEFAULT_DATA = HERE.parent.parent / "shared" / "semble"
DEFAULT_MIRRORS = Path("/work/.mirror")


# -- the data ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Target:
    path: str
    start: int | None = None  # 1-based, inclusive
    end: int | None = None

    @classmethod
    def parse(cls, raw: str | dict) -> Target:
        if isinstance(raw, str):
            return cls(raw)
        start, end = raw.get("start_line"), raw.get("end_line")
        return cls(str(raw["path"]), None if start is None else int(start), None if end is None else int(end))


@dataclass(frozen=True)
class Task:
    query: str
    category: str
    targets: tuple[Target, ...]  # relevant, then secondary: every one has gain 1


@dataclass(frozen=True)
class Repo:
    name: str
    language: str
    url: str
    revision: str
    root: str | None  # benchmark_root; None: the whole repository
    tasks: tuple[Task, ...]


def load_repos(data: Path) -> list[Repo]:
    repos = []
    for spec in json.loads((data / "repos.json").read_text(encoding="utf-8")):
        raw = json.loads((data / "annotations" / f"{spec['name']}.json").read_text(encoding="utf-8"))
        tasks = tuple(Task(t["query"], t.get("category") or "unknown",
                           tuple(Target.parse(x) for x in [*t.get("relevant", []), *t.get("secondary", [])]))
                      for t in raw)
        repos.append(Repo(spec["name"], spec["language"], spec["url"], spec["revision"],
                          spec.get("benchmark_root"), tasks))
    return repos


# -- scoring (semble's rules, see the module docstring) ---------------------------------------------

@dataclass(frozen=True)
class Hit:
    path: str
    start: int  # 1-based, inclusive
    end: int


def path_matches(hit: str, target: str) -> bool:
    hit, target = hit.strip("/"), target.strip("/")
    return hit == target or hit.endswith("/" + target) or target.endswith("/" + hit)


def covers(hit: Hit, target: Target) -> bool:
    if not path_matches(hit.path, target.path):
        return False
    if target.start is None or target.end is None:
        return True
    return hit.start <= target.end and target.start <= hit.end


def ndcg(hits: list[Hit], targets: tuple[Target, ...], k: int = K) -> float:
    if not targets:
        return 0.0
    gains = [0] * k
    for t in targets:
        rank = next((i for i, h in enumerate(hits[:k]) if covers(h, t)), None)
        if rank is not None:
            gains[rank] = 1
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(targets))))
    return dcg / ideal


def mean(xs) -> float:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


# -- export ------------------------------------------------------------------------------------------

@dataclass
class Export:
    path: Path
    commit: str
    pinned: bool
    files: int


def git(git_dir: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "--git-dir", str(git_dir), "-c", "core.fsmonitor=false", *args],
                          capture_output=True, **kw)


def mirror_of(repo: Repo, mirrors: Path, work: Path) -> Path:
    owner_name = repo.url.split("github.com/")[-1].removesuffix(".git")
    for cand in (mirrors / owner_name.replace("/", "+") / "repo", mirrors / f"{repo.name}.git",
                 work / "git" / f"{repo.name}.git"):
        if (cand / "HEAD").exists():
            return cand
    dest = work / "git" / f"{repo.name}.git"
    dest.parent.mkdir(parents=True, exist_ok=True)
    print(f"  cloning {repo.url} (no mirror in {mirrors})", flush=True)
    r = subprocess.run(["git", "clone", "-q", "--mirror", repo.url, str(dest)], capture_output=True, text=True)
    if r.returncode:
        shutil.rmtree(dest, ignore_errors=True)
        raise RuntimeError(f"no mirror of {repo.url} and git clone failed: {r.stderr.strip()[-300:]}")
    return dest


def export(repo: Repo, mirrors: Path, work: Path) -> Export:
    """``benchmark_root`` at the pinned revision (else the newest commit) into a fresh folder."""
    git_dir = mirror_of(repo, mirrors, work)
    pinned = git(git_dir, "cat-file", "-e", f"{repo.revision}^{{commit}}").returncode == 0
    commit = repo.revision if pinned else git(git_dir, "rev-parse", "HEAD", text=True).stdout.strip()
    dest = work / "src" / repo.name
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    tree = f"{commit}:{repo.root}" if repo.root else commit
    archive = git(git_dir, "archive", "--format=tar", tree)
    if archive.returncode:
        raise RuntimeError(f"git archive {tree}: {archive.stderr.decode(errors='replace').strip()[-300:]}")
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    files = sum(len(fs) for _, _, fs in os.walk(dest))
    return Export(dest, commit, pinned, files)


# -- indexing and searching over stdio ----------------------------------------------------------------

@dataclass
class RepoRun:
    repo: Repo
    export: Export | None = None
    error: str | None = None
    files: int = 0
    chunks: int = 0
    index_s: float = 0.0
    embed_s: float = 0.0
    targets_missing: int = 0
    scores: dict[str, list[float]] = field(default_factory=dict)  # mode -> per task
    hits: dict[str, list[list[Hit]]] = field(default_factory=dict)
    ms: dict[str, list[float]] = field(default_factory=dict)

    @property
    def scored(self) -> bool:
        return self.error is None and self.targets_missing == 0 and bool(self.scores)

    def score(self, mode: str) -> float:
        return mean(self.scores[mode])

    def category(self, mode: str, cat: str) -> float:
        return mean(s for s, t in zip(self.scores[mode], self.repo.tasks) if t.category == cat)


def expected_files(root: Path) -> int:
    """The files Sylk's own scan lists under ``root`` (what a complete index must account for)."""
    from sylk.ingest.scan import scan_workspace

    return len(scan_workspace(root).files)


def wait_indexed(client: Client, embed: bool, timeout_s: float) -> tuple[dict, float, float]:
    """Poll ``sylk/status`` until the text index is ready (and, with ``embed``, every chunk
    embedded); returns the status and the seconds to each."""
    t0 = time.monotonic()
    t_index = None
    while time.monotonic() - t0 < timeout_s:
        st = client.request("sylk/status", {})["result"]
        if st.get("ready") and not st.get("indexing"):
            if t_index is None:
                t_index = time.monotonic() - t0
            sem = (st.get("semantic") or {}).get("state")
            if not embed:
                return st, t_index, 0.0
            if sem in ("off", "unavailable"):
                raise RuntimeError(f"semantic search is {sem}: {(st.get('semantic') or {}).get('message')}")
            if sem == "ready" and not st.get("pending") and st.get("embedded", 0) >= st.get("chunks", 0):
                return st, t_index, time.monotonic() - t0 - t_index
        time.sleep(0.2)
    raise RuntimeError(f"not indexed{' and embedded' if embed else ''} within {timeout_s:.0f} s")


def hits_of(result: dict) -> list[Hit]:
    out = []
    for h in result.get("hits", []):
        rng = h.get("range")
        if not h.get("path") or not rng:
            out.append(Hit("", 0, -1))  # a commit or a virtual document: never a target, still a rank
            continue
        end = rng["end"]["line"] + (0 if rng["end"]["character"] == 0 and rng["end"]["line"] > rng["start"]["line"]
                                    else 1)
        out.append(Hit(h["path"], rng["start"]["line"] + 1, end))
    return out


def merged(base: dict, extra: dict) -> dict:
    out = dict(base)
    for key, value in extra.items():
        out[key] = merged(out.get(key, {}), value) if isinstance(value, dict) else value
    return out


def kept_export(repo: Repo, work: Path) -> Export | None:
    """The export and index an earlier ``--keep`` run left, if both are there."""
    stamp = work / "src" / f"{repo.name}.json"
    if not stamp.exists() or not (work / "index" / repo.name).is_dir():
        return None
    about = json.loads(stamp.read_text(encoding="utf-8"))
    return Export(work / "src" / repo.name, about["commit"], about["pinned"], about["files"])


def run_repo(repo: Repo, args: argparse.Namespace) -> RepoRun:
    run = RepoRun(repo)
    index_dir = args.work / "index" / repo.name
    ex = kept_export(repo, args.work) if args.reuse else None
    if ex is None:
        try:
            ex = export(repo, args.mirrors, args.work)
        except (RuntimeError, subprocess.CalledProcessError) as e:
            run.error = f"export: {e}"
            return run
        shutil.rmtree(index_dir, ignore_errors=True)
        (args.work / "src" / f"{repo.name}.json").write_text(
            json.dumps({"commit": ex.commit, "pinned": ex.pinned, "files": ex.files}), encoding="utf-8")
    run.export = ex
    present = {p.relative_to(ex.path).as_posix() for p in ex.path.rglob("*") if p.is_file()}
    run.targets_missing = sum(1 for t in {t.path for task in repo.tasks for t in task.targets}
                              if not any(path_matches(p, t) for p in present))
    embed = any(m != "lexical" for m in args.modes)
    env = {**os.environ, "SYLK_INDEX_DIR": str(index_dir)}
    options = merged({"watch": False, "reconcileMinutes": 0, **({} if embed else {"embedding": {"enabled": False}})},
                     args.settings)
    client = Client(ex.path, env, options)
    try:
        st, run.index_s, run.embed_s = wait_indexed(client, embed, args.timeout)
        run.files, run.chunks = st.get("files", 0), st.get("chunks", 0)
        expected = expected_files(ex.path)
        scan_skips = {"too-large", "unreadable", "symlink-loop", "symlink-outside", "special-file"}
        left_out = sum(r["count"] for r in (st.get("skipped") or {}).get("byReason", [])
                       if r["reason"] not in scan_skips)
        if run.files + left_out < expected:
            run.error = (f"incomplete index: {run.files} files indexed + {left_out} left out for a named reason, "
                         f"of {expected} that the scan lists")
            return run
        for mode in args.modes:
            run.scores[mode], run.hits[mode], run.ms[mode] = [], [], []
            for task in repo.tasks:
                t = time.perf_counter()
                r = client.request("sylk/search", {"query": task.query, "mode": mode, "limit": K})
                run.ms[mode].append((time.perf_counter() - t) * 1000)
                if "result" not in r:
                    raise RuntimeError(f"sylk/search {task.query!r} ({mode}): {r.get('error')}")
                hits = hits_of(r["result"])
                run.hits[mode].append(hits)
                run.scores[mode].append(ndcg(hits, task.targets))
    except RuntimeError as e:
        run.error = str(e)
    finally:
        try:
            client.close()
        except Exception:  # a dead server is reported by the error above
            client.p.kill()
        if not args.keep:
            shutil.rmtree(index_dir, ignore_errors=True)
            shutil.rmtree(ex.path, ignore_errors=True)
            (args.work / "src" / f"{repo.name}.json").unlink(missing_ok=True)
    return run


# -- the report ----------------------------------------------------------------------------------------

def peer(peers: dict, method: str, repo: str, cat: str | None = None) -> float | None:
    r = peers["methods"].get(method, {}).get("repos", {}).get(repo)
    if r is None:
        return None
    return r.get("ndcg10") if cat is None else (r.get("by_category") or {}).get(cat)


def fmt(x: float | None, width: int = 7) -> str:
    return f"{'-':>{width}}" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:>{width}.3f}"


def delta(x: float | None, base: float | None) -> str:
    if x is None or base is None or math.isnan(x) or math.isnan(base):
        return ""
    return f" ({x - base:+.3f})"


def group_rows(title: str, groups: dict[str, list[RepoRun]], modes: list[str], peers: dict,
               cat: str | None, base: dict | None) -> None:
    print(f"\n{title:<22}{'repos':>6}" + "".join(f"{m:>16}" for m in modes) + "".join(f"{p:>10}" for _, p in PEERS))
    for name, runs in groups.items():
        line = f"{name:<22}{len(runs):>6}"
        for m in modes:
            xs = [r.score(m) if cat is None else r.category(m, cat) for r in runs]
            xs = [x for x in xs if not math.isnan(x)]
            value = mean(xs) if xs else None
            b = None
            if base is not None:
                bs = [base.get(r.repo.name, {}).get(m, {}).get("ndcg10" if cat is None else cat) for r in runs]
                b = mean(bs) if all(v is not None for v in bs) and bs else None
            line += f"{fmt(value, 9)}{delta(value, b):<7}"
        for method, _ in PEERS:
            vs = [peer(peers, method, r.repo.name, cat) for r in runs]
            vs = [v for v in vs if v is not None]
            line += fmt(mean(vs) if vs else None, 10)
        print(line)


def report(runs: list[RepoRun], modes: list[str], peers: dict, base: dict | None, show_misses: int) -> None:
    print(f"\n{'repository':<20}{'lang':<11}{'files':>6}{'chunks':>7}{'index s':>8}{'embed s':>8}"
          + "".join(f"{m:>10}" for m in modes) + "".join(f"{p:>10}" for _, p in PEERS) + "  note")
    for r in runs:
        note = []
        if r.export is not None and not r.export.pinned:
            note.append(f"newest {r.export.commit[:10]} (pin not in the mirror)")
        if r.targets_missing:
            note.append(f"{r.targets_missing} target files missing: left out of the means")
        if r.error:
            print(f"{r.repo.name:<20}{r.repo.language:<11}  FAILED: {r.error}" + (f"; {'; '.join(note)}" if note else ""))
            continue
        line = (f"{r.repo.name:<20}{r.repo.language:<11}{r.files:>6}{r.chunks:>7}{r.index_s:>8.1f}{r.embed_s:>8.1f}"
                + "".join(fmt(r.score(m), 10) for m in modes)
                + "".join(fmt(peer(peers, meth, r.repo.name), 10) for meth, _ in PEERS))
        print(line + ("  " + "; ".join(note) if note else ""))
    scored = [r for r in runs if r.scored]
    if not scored:
        return
    by_lang: dict[str, list[RepoRun]] = {}
    for r in sorted(scored, key=lambda r: r.repo.language):
        by_lang.setdefault(r.repo.language, []).append(r)
    group_rows("language", by_lang, modes, peers, None, base)
    for cat in CATEGORIES:
        group_rows(f"category {cat}", {"all": [r for r in scored if any(t.category == cat for t in r.repo.tasks)]},
                   modes, peers, cat, base)
    group_rows("MEAN over repos", {"all": scored}, modes, peers, None, base)
    n_q = sum(len(r.repo.tasks) for r in scored)
    print(f"\n{len(scored)} repositories scored ({n_q} queries); {sum(1 for r in runs if r.error)} failed; "
          f"{sum(1 for r in runs if not r.error and r.targets_missing)} left out (targets missing)")
    for m in modes:
        ms = [x for r in scored for x in r.ms[m]]
        print(f"  {m:<9} sylk/search over stdio: p50 {statistics.median(ms):.1f} ms, "
              f"p95 {sorted(ms)[int(0.95 * (len(ms) - 1))]:.1f} ms")
    if show_misses:
        for m in modes:
            print(f"\nworst queries, {m} (score, repository, query -> first target; top 3 hits):")
            worst = sorted(((s, r, i) for r in scored for i, s in enumerate(r.scores[m])), key=lambda t: t[0])
            for s, r, i in worst[:show_misses]:
                task = r.repo.tasks[i]
                top = ", ".join(f"{h.path}:{h.start}" for h in r.hits[m][i][:3])
                print(f"  {s:.2f} {r.repo.name:<16} {task.query!r} -> {task.targets[0].path}   [{top}]")


def to_json(runs: list[RepoRun], modes: list[str]) -> dict:
    out = {}
    for r in runs:
        row: dict = {"language": r.repo.language, "error": r.error, "files": r.files, "chunks": r.chunks,
                     "index_s": round(r.index_s, 2), "embed_s": round(r.embed_s, 2),
                     "commit": r.export.commit if r.export else None,
                     "pinned": r.export.pinned if r.export else None, "targets_missing": r.targets_missing}
        for m in modes if r.scores else ():
            row[m] = {"ndcg10": r.score(m), **{c: r.category(m, c) for c in CATEGORIES
                                               if any(t.category == c for t in r.repo.tasks)},
                      "queries": [{"query": t.query, "ndcg10": s, "hits": [[h.path, h.start, h.end] for h in hits]}
                                  for t, s, hits in zip(r.repo.tasks, r.scores[m], r.hits[m])]}
        out[r.repo.name] = row
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    ap.add_argument("--work", type=Path, default=corpora.BENCH_ROOT / "semble")
    ap.add_argument("--repos", help="comma-separated names (default: every one in repos.json)")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--settings", type=json.loads, default={}, metavar="JSON",
                    help='initializationOptions for the server, e.g. \'{"embedding": {"modelPath": "DIR"}}\'')
    ap.add_argument("--timeout", type=float, default=3600, help="seconds to wait for one repository's index")
    ap.add_argument("--json", type=Path, help="write every query's hits and score here")
    ap.add_argument("--baseline", type=Path, help="a --json file of an earlier run: print the change")
    ap.add_argument("--show-misses", type=int, default=0, metavar="N", help="print the N worst queries per mode")
    ap.add_argument("--keep", action="store_true", help="keep the exports and indexes in --work")
    ap.add_argument("--reuse", action="store_true",
                    help="search the exports and indexes a --keep run left (the server brings each index up to "
                         "date, which finds nothing to do): a ranking change is measured in seconds per repository")
    args = ap.parse_args()
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if bad := [m for m in args.modes if m not in MODES]:
        ap.error(f"unknown mode(s) {', '.join(bad)}; known: {', '.join(MODES)}")
    if not (args.data / "repos.json").exists():
        ap.error(f"{args.data}: no repos.json (the benchmark's data; see --data)")
    repos = load_repos(args.data)
    if args.repos:
        wanted = [n.strip() for n in args.repos.split(",")]
        unknown = sorted(set(wanted) - {r.name for r in repos})
        if unknown:
            ap.error(f"unknown repositories: {', '.join(unknown)}")
        repos = [r for r in repos if r.name in wanted]
    peers = json.loads((args.data / "peers.json").read_text(encoding="utf-8"))
    base = json.loads(args.baseline.read_text(encoding="utf-8")) if args.baseline else None
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"# semble benchmark, development half: {len(repos)} repositories, "
          f"{sum(len(r.tasks) for r in repos)} queries; modes {', '.join(args.modes)}; settings {json.dumps(args.settings)}; "
          f"sylk {corpora.git_head()}; {time.strftime('%Y-%m-%d %H:%M')}; {corpora.load_line()}", flush=True)
    runs = []
    t_all = time.perf_counter()
    for repo in repos:
        t0 = time.perf_counter()
        run = run_repo(repo, args)
        runs.append(run)
        status = (f"FAILED: {run.error}" if run.error else
                  " ".join(f"{m} {run.score(m):.3f}" for m in args.modes))
        print(f"  {repo.name:<20} {time.perf_counter() - t0:6.1f}s  {status}   [{corpora.load_line()}]", flush=True)
    print(f"\n{time.perf_counter() - t_all:.0f} s in all")
    report(runs, args.modes, peers, base, args.show_misses)
    if args.json:
        args.json.write_text(json.dumps(to_json(runs, args.modes), indent=1), encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 1 if any(r.error for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
