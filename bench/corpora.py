"""Corpora for the benchmarks in this folder (run by hand, not in CI).

``prepare(name)`` turns a corpus name into a directory:

    stdlib   a copy of the running interpreter's standard library, without
             site-packages and __pycache__ (copied once to /tmp/sylk-bench/stdlib)
    go       the Go 1.19 standard library sources (Debian golang-1.19-src)
    rust     rustc 1.63's sources (Debian rust-src: 36,700 files, 255 MB), the large
             corpus; fetched into /tmp/corpora, never into the repository:
             apt-get download rust-src && dpkg-deb -x rust-src_*.deb /tmp/corpora/rust
    PATH     any directory, used in place

Also the small helpers the benchmarks share: a fresh index folder per cold run,
the load average line, median/min formatting.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

BENCH_ROOT = Path(os.environ.get("SYLK_BENCH_DIR", "/tmp/sylk-bench"))
SERVER = Path(__file__).resolve().parents[1] / "server"
GO_SRC_CANDIDATES = ("/usr/share/go-1.19/src", "/usr/lib/go-1.19/src", "/usr/share/go/src", "/usr/lib/go/src")
RUST_SRC_CANDIDATES = ("/tmp/corpora/rust/usr/src/rustc-1.63.0", "/usr/src/rustc-1.63.0")

if str(SERVER) not in sys.path:
    sys.path.insert(0, str(SERVER))


def _copy_stdlib(dest: Path) -> Path:
    src = Path(sysconfig.get_paths()["stdlib"])
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src, tmp, symlinks=True,
                    ignore=lambda d, names: [n for n in names if n in ("site-packages", "__pycache__")])
    # a stamp so a half-finished copy is never mistaken for a corpus
    (tmp / ".sylk-bench-source").write_text(f"{src}\n", encoding="utf-8")
    os.replace(tmp, dest)
    return dest


def prepare(name: str) -> Path:
    """The directory of corpus ``name`` (see the module docstring)."""
    if name == "stdlib":
        dest = BENCH_ROOT / "stdlib"
        if not (dest / ".sylk-bench-source").exists():
            BENCH_ROOT.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(dest, ignore_errors=True)
            print(f"copying {sysconfig.get_paths()['stdlib']} to {dest} (once)", file=sys.stderr)
            _copy_stdlib(dest)
        return dest
    if name == "go":
        for cand in GO_SRC_CANDIDATES:
            if Path(cand, "go", "ast").is_dir():
                return Path(cand)
        raise SystemExit("Go sources not found; install them: apt-get install -y golang-1.19-src")
    if name == "rust":
        for cand in RUST_SRC_CANDIDATES:
            if Path(cand, "library", "core").is_dir():
                return Path(cand)
        raise SystemExit("rustc sources not found; fetch them: cd /tmp && apt-get download rust-src && "
                         "dpkg-deb -x rust-src_*.deb /tmp/corpora/rust")
    path = Path(name).expanduser()
    if not path.is_dir():
        raise SystemExit(f"{name}: not a corpus name (stdlib, go) nor a directory")
    return path.resolve()


def count_files(root: Path) -> tuple[int, int]:
    """(all files, bytes) under ``root`` that are regular files, .git excluded."""
    n = size = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for fn in filenames:
            p = os.path.join(dirpath, fn)
            if os.path.isfile(p) and not os.path.islink(p):
                n += 1
                size += os.path.getsize(p)
    return n, size


def fresh_index_dir(tag: str) -> Path:
    BENCH_ROOT.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"index-{tag}-", dir=BENCH_ROOT))


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def load_line() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def header(title: str) -> None:
    print(f"# {title} -- {time.strftime('%Y-%m-%d %H:%M')} -- {load_line()}")
    print(f"# python {sys.version.split()[0]} ({sys.executable}), sylk at {git_head()}")


def git_head() -> str:
    import subprocess
    repo = SERVER.parent
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "server"],
                               capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown commit"
    return head + (" (server/ has uncommitted changes)" if dirty else "")


def med_min(xs: list[float]) -> tuple[float, float]:
    return statistics.median(xs), min(xs)


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)
