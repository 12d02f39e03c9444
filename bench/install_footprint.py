"""What ``pip install sylk-search`` costs: install time, size on disk, dependencies, start-up (run by hand).

    python bench/install_footprint.py [--wheel PATH] [--ref REV] [--extras mcp] [--runs 10] [--keep]

Issue 10, "a lean, trustworthy install". Builds the wheel from the repository root
(``python -m build --wheel``; ``--ref REV`` builds from ``git archive REV`` instead,
``--wheel`` takes a built one), creates a fresh virtual environment and times
``pip install WHEEL`` from PyPI with an empty pip cache, then the same install into
a second fresh environment with the cache now warm (the baseline: what is left when
nothing is downloaded). If pip could cache nothing (answers without Cache-Control,
e.g. through a proxy) and downloaded it all again, it also times ``pip download`` of
the same and an install into a third environment with ``--no-index`` from those
wheels. For the first environment it prints the size on disk (each
inode counted once) beside the size of the empty environment, the number of
installed distributions and the ten largest (the files in each RECORD), checks that
no forbidden package came in (torch, triton, transformers, sentence-transformers,
nvidia-*), and times ``python -c "import sylk.cli"`` and ``sylk --version`` in new
processes, interleaved with ``python -c "pass"`` (interpreter start alone). PASS/MISS
lines against the targets; exit status 1 on a MISS.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402

REPO = corpora.SERVER.parent
# targets (issue 10)
VENV_MB_TARGET = 400.0  # what installing the wheel adds to a fresh venv, MB (10^6 bytes) on disk
VERSION_S_TARGET = 0.3  # median wall time of `sylk --version`, seconds
FORBIDDEN = ("torch", "triton", "transformers", "sentence-transformers")
FORBIDDEN_PREFIXES = ("nvidia-",)
TOP = 10
PIP_LINE = re.compile(r"\s*(?P<what>Downloading|Using cached|Processing) (?P<file>\S+)"
                      r"(?: \((?P<size>[\d.]+) (?P<unit>bytes|kB|MB|GB)\))?")
UNITS = {"bytes": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9}
BARE = 'python -c "pass"'
VERSION = "sylk --version"

# run by the environment's own interpreter: every installed distribution with the
# bytes of the files its RECORD lists (each inode once, missing files skipped)
INSPECT = r"""
import importlib.metadata as md, json, os, sys
out = []
for dist in md.distributions():
    seen, size, n = set(), 0, 0
    for f in dist.files or []:
        try:
            st = os.lstat(f.locate())
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        size += st.st_size
        n += 1
    out.append({"name": dist.metadata["Name"], "version": dist.version, "bytes": size, "files": n})
json.dump({"python": sys.version.split()[0], "dists": out}, sys.stdout)
"""


class Dist(TypedDict):
    name: str
    version: str
    bytes: int  # the files its RECORD lists
    files: int


@dataclass
class Tree:
    """Sizes of a directory tree, each inode counted once, symlinks not followed."""

    allocated: int = 0  # st_blocks * 512 (what du reports)
    apparent: int = 0  # st_size of regular files
    files: int = 0


def tree_size(root: Path) -> Tree:
    tree = Tree()
    seen: set[tuple[int, int]] = set()
    todo = [str(root)]
    while todo:
        with os.scandir(todo.pop()) as it:
            for entry in it:
                st = entry.stat(follow_symlinks=False)
                if (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
                tree.allocated += st.st_blocks * 512
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    tree.apparent += st.st_size
                    tree.files += 1
    return tree


def mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


def normalize(name: str) -> str:
    """PEP 503 normalized distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def clean_env(**extra: str) -> dict[str, str]:
    """The environment for the venv's processes: without this script's Python
    variables (which could change what gets imported); pip's own configuration
    (index, certificates, find-links) is kept, as an ordinary install would see it."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "PYTHONNOUSERSITE")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.update(extra)
    return env


def run_logged(cmd: list[str], log: Path, *, cwd: Path, env: dict[str, str] | None = None) -> float:
    """Run ``cmd`` with its output in ``log``; wall seconds. Exits with the log's tail on failure."""
    t0 = time.perf_counter()
    with log.open("wb") as fh:
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=cwd, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}), log {log}:\n{tail}")
    return wall


def source_tree(ref: str | None, work: Path) -> Path:
    """The repository root, or ``git archive ref`` unpacked under ``work``."""
    if ref is None:
        return REPO
    archive = work / "src.tar"
    subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", f"--output={archive}", ref], check=True)
    dest = work / "src"
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    archive.unlink()
    return dest


def build_wheel(src: Path, work: Path) -> tuple[Path, float]:
    outdir = work / "dist"
    wall = run_logged([sys.executable, "-m", "build", "--wheel", "--outdir", str(outdir), str(src)],
                      work / "build.log", cwd=src)
    wheels = sorted(outdir.glob("sylk_search-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"expected one sylk wheel in {outdir}, found {[w.name for w in wheels]}")
    return wheels[0], wall


def make_venv(path: Path) -> tuple[Path, float]:
    """A fresh environment at ``path`` (the interpreter running this script); its python."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, env=clean_env())
    return path / "bin" / "python", time.perf_counter() - t0


def pip_install(python: Path, args: list[str], cache: Path, log: Path) -> float:
    return run_logged([str(python), "-m", "pip", "install", "--no-input", *args], log, cwd=log.parent,
                      env=clean_env(PIP_CACHE_DIR=str(cache)))


@dataclass
class Fetched:
    """Where pip took each distribution from, read from its log."""

    downloaded: int = 0  # over the network
    downloaded_bytes: float = 0.0
    cached: int = 0  # from pip's cache ("Using cached")
    local: int = 0  # local files ("Processing PATH": find-links, file:// indexes), the sylk wheel aside
    local_bytes: int = 0

    def __str__(self) -> str:
        return (f"{self.downloaded} downloaded ({mb(self.downloaded_bytes)}), {self.cached} from pip's cache,"
                f" {self.local} from local files ({mb(self.local_bytes)})")


def fetched(log: Path, wheel: Path) -> Fetched:
    out = Fetched()
    for line in log.read_text(errors="replace").splitlines():
        m = PIP_LINE.match(line)
        if not m or m["file"].endswith(".metadata"):  # newer pips fetch the metadata first
            continue
        if m["what"] == "Downloading":
            out.downloaded += 1
            out.downloaded_bytes += float(m["size"]) * UNITS[m["unit"]] if m["size"] else 0.0
        elif m["what"] == "Using cached":
            out.cached += 1
        elif Path(m["file"]).name != wheel.name:
            out.local += 1
            try:
                out.local_bytes += (log.parent / m["file"]).stat().st_size  # absolute paths stay as they are
            except OSError:
                pass
    return out


def inspect(python: Path, cwd: Path) -> tuple[str, list[Dist]]:
    """(Python version, installed distributions) of an environment, asked of its interpreter."""
    out = subprocess.run([str(python), "-c", INSPECT], capture_output=True, text=True, check=True, cwd=cwd,
                         env=clean_env())
    found = json.loads(out.stdout)
    return found["python"], found["dists"]


def pip_version(python: Path) -> str:
    out = subprocess.run([str(python), "-m", "pip", "--version"], capture_output=True, text=True, env=clean_env())
    return out.stdout.split(" from ")[0].strip() or "pip ?"


def startup_times(venv: Path, runs: int, cwd: Path) -> dict[str, list[float]]:
    """Wall seconds of each command in a new process, ``runs`` rounds, interleaved
    (the order rotates each round so no command always follows the same one)."""
    python = str(venv / "bin" / "python")
    commands = {
        BARE: [python, "-c", "pass"],
        'python -c "import sylk.cli"': [python, "-c", "import sylk.cli"],
        VERSION: [str(venv / "bin" / "sylk"), "--version"],
    }
    env = clean_env()
    times: dict[str, list[float]] = {label: [] for label in commands}
    labels = list(commands)
    for i in range(runs):
        k = i % len(labels)
        for label in labels[k:] + labels[:k]:
            t0 = time.perf_counter()
            proc = subprocess.run(commands[label], capture_output=True, cwd=cwd, env=env)
            times[label].append(time.perf_counter() - t0)
            if proc.returncode != 0:
                raise SystemExit(f"{label} failed ({proc.returncode}):\n{proc.stderr.decode(errors='replace')}")
    return times


def dirty_note() -> str:
    out = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "pyproject.toml", "server"],
                         capture_output=True, text=True).stdout
    return f"{len(out.splitlines())} uncommitted change(s) under pyproject.toml and server/" if out else "clean"


def get_wheel(args: argparse.Namespace, work: Path) -> Path:
    if args.wheel:
        wheel = Path(args.wheel).expanduser().resolve()
        if not wheel.is_file():
            raise SystemExit(f"{wheel}: no such wheel")
        print(f"wheel               {wheel} (given)")
    else:
        src = source_tree(args.ref, work)
        what = f"git archive {args.ref}" if args.ref else f"working tree at {REPO} ({dirty_note()})"
        wheel, build_s = build_wheel(src, work)
        print(f"wheel               {wheel.name}, built in {build_s:.1f}s from the {what}")
    print(f"wheel size          {mb(wheel.stat().st_size)}")
    return wheel


def installs(wheel: Path, spec: str, label: str, work: Path) -> tuple[Path, list[Dist], Tree]:
    """Time the installs; the first environment's python, and the distributions and
    size of that environment before the install."""
    cache = work / "pip-cache"
    print(f"\n== pip install {label}   [{corpora.load_line()}]")
    py1, venv_s = make_venv(work / "venv-cold")
    py_version, empty = inspect(py1, work)
    empty_size = tree_size(work / "venv-cold")
    print(f"fresh venv          created in {venv_s:.1f}s: python {py_version}, {pip_version(py1)},"
          f" {len(empty)} distributions, {mb(empty_size.allocated)} on disk")
    cold_s = pip_install(py1, [spec], cache, work / "pip-cold.log")
    print(f"install, cold cache {cold_s:7.1f}s   (fresh venv, empty pip cache: {fetched(work / 'pip-cold.log', wheel)})"
          f"   [{corpora.load_line()}]")
    print(f"                    pip's cache now holds "
          f"{mb(tree_size(cache).allocated) if cache.exists() else 'nothing'}")
    py2, _ = make_venv(work / "venv-warm")
    warm_s = pip_install(py2, [spec], cache, work / "pip-warm.log")
    warm = fetched(work / "pip-warm.log", wheel)
    print(f"install, warm cache {warm_s:7.1f}s   (baseline: a second fresh venv, same cache: {warm})"
          f"   [{corpora.load_line()}]")
    if not warm.downloaded:
        print(f"cold/warm           {cold_s / warm_s:.1f}x   (the difference is resolving and downloading)")
        return py1, empty, empty_size
    # nothing was cacheable (answers without Cache-Control, e.g. through a proxy): measure
    # the install without the network apart, from a folder of the same wheels
    wheelhouse = work / "wheelhouse"
    dl_s = run_logged([str(py2), "-m", "pip", "download", "--no-input", "--dest", str(wheelhouse), spec],
                      work / "pip-download.log", cwd=work, env=clean_env(PIP_CACHE_DIR=str(cache)))
    print(f"download only       {dl_s:7.1f}s   (pip download, same again: {fetched(work / 'pip-download.log', wheel)};"
          f" {mb(tree_size(wheelhouse).apparent)} of wheels)")
    py3, _ = make_venv(work / "venv-offline")
    off_s = pip_install(py3, ["--no-index", "--find-links", str(wheelhouse), spec], cache, work / "pip-offline.log")
    print(f"install, offline    {off_s:7.1f}s   (baseline: a third fresh venv, --no-index from those wheels)"
          f"   [{corpora.load_line()}]")
    print(f"cold/offline        {cold_s / off_s:.1f}x   (the difference is resolving and downloading)")
    return py1, empty, empty_size


def footprint(python: Path, venv: Path, empty: list[Dist], empty_size: Tree, label: str, work: Path) -> bool:
    """Size, distributions, forbidden packages; True if both targets are met."""
    tree = tree_size(venv)
    dists = sorted(inspect(python, work)[1], key=lambda d: d["bytes"], reverse=True)
    base_names = sorted(normalize(d["name"]) for d in empty)
    added = [d for d in dists if normalize(d["name"]) not in base_names]
    print(f"\nvenv size on disk   {mb(tree.allocated)} ({tree.allocated / 2**20:.1f} MiB), {tree.files} files,"
          f" {mb(tree.apparent)} apparent   (baseline: the fresh venv {mb(empty_size.allocated)})")
    print(f"added by the install {mb(tree.allocated - empty_size.allocated)} on disk")
    print(f"distributions       {len(dists)} installed: {len(added)} added by the install,"
          f" {len(dists) - len(added)} came with the venv ({', '.join(base_names)})")
    print(f"largest {TOP} (bytes of the files in each RECORD):")
    for d in dists[:TOP]:
        print(f"  {d['name']:<28} {d['version']:<14} {d['bytes'] / 1e6:8.1f} MB  {d['files']:6d} files")
    rest = dists[TOP:]
    print(f"  {'the other ' + str(len(rest)):<43} {sum(d['bytes'] for d in rest) / 1e6:8.1f} MB")
    print("all: " + ", ".join(f"{d['name']} {d['version']}" for d in sorted(dists, key=lambda d: normalize(d["name"]))))

    bad = sorted(d["name"] for d in dists
                 if normalize(d["name"]) in FORBIDDEN or normalize(d["name"]).startswith(FORBIDDEN_PREFIXES))
    # The target is what installing the wheel puts on disk: pipx and uv give a tool a venv
    # without pip and setuptools of its own, a plain venv carries them (printed beside it).
    added_bytes = tree.allocated - empty_size.allocated
    size_ok = added_bytes / 1e6 <= VENV_MB_TARGET
    print(f"\n{'PASS' if size_ok else 'MISS'}: {label} installs <= {VENV_MB_TARGET:g} MB on disk"
          f" ({added_bytes / 1e6:.1f} MB = {added_bytes / 2**20:.1f} MiB; with the fresh venv's pip and"
          f" setuptools {tree.allocated / 1e6:.1f} MB = {tree.allocated / 2**20:.1f} MiB)")
    print(f"{'PASS' if not bad else 'MISS'}: no forbidden package ({', '.join(FORBIDDEN)}, nvidia-*):"
          f" {'found ' + ', '.join(bad) if bad else 'none installed'}")
    return size_ok and not bad


def startup(venv: Path, runs: int, work: Path) -> bool:
    """Start-up times against the bare interpreter; True if the target is met."""
    version = subprocess.run([str(venv / "bin" / "sylk"), "--version"], capture_output=True, text=True,
                             cwd=work, env=clean_env()).stdout.strip()
    print(f"\n== start-up of {version or 'sylk (no version printed)'}: {runs} runs each, interleaved,"
          f" a new process each time   [{corpora.load_line()}]")
    times = startup_times(venv, runs, work)
    base_med, _ = corpora.med_min(times[BARE])
    for name, xs in times.items():
        med, mn = corpora.med_min(xs)
        extra = "   (baseline)" if name == BARE else f"   +{med - base_med:.3f}s over the interpreter (medians)"
        print(f"  {name:<28} median {med:.3f}s  min {mn:.3f}s  first {xs[0]:.3f}s{extra}")
    ver_med, _ = corpora.med_min(times[VERSION])
    ok = ver_med <= VERSION_S_TARGET
    print(f"{'PASS' if ok else 'MISS'}: sylk --version median <= {VERSION_S_TARGET:g}s ({ver_med:.3f}s;"
          f" {BARE} {base_med:.3f}s)   [{corpora.load_line()}]")
    return ok


def report(args: argparse.Namespace, work: Path) -> bool:
    wheel = get_wheel(args, work)
    spec = f"{wheel}[{args.extras}]" if args.extras else str(wheel)
    label = f"sylk-search[{args.extras}]" if args.extras else "sylk-search"
    python, empty, empty_size = installs(wheel, spec, label, work)
    ok = footprint(python, work / "venv-cold", empty, empty_size, label, work)
    return startup(work / "venv-cold", args.runs, work) and ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheel", help="install this wheel instead of building one")
    ap.add_argument("--ref", help="build the wheel from `git archive REF` (default: the working tree)")
    ap.add_argument("--extras", help="install WHEEL[EXTRAS], e.g. mcp")
    ap.add_argument("--runs", type=int, default=10, help="start-up runs per command (default 10)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (venvs, pip cache, logs)")
    args = ap.parse_args(argv)
    if args.wheel and args.ref:
        ap.error("--wheel and --ref exclude each other")
    corpora.header("sylk install footprint")
    corpora.BENCH_ROOT.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="install-", dir=corpora.BENCH_ROOT))
    t0 = time.perf_counter()
    try:
        ok = report(args, work)
    finally:
        if args.keep:
            print(f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"# done in {time.perf_counter() - t0:.0f}s -- {corpora.load_line()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
