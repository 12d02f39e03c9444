"""Symbol recall of sylk.ingest.symbols against universal-ctags (run by hand).

    python bench/recall.py DIR [--lang L] [--examples N]

Runs ``ctags`` (universal-ctags) and ``sylk.ingest.symbols.extract`` over the same
files under DIR and prints, per language, how many ctags definitions of the
"headline" kinds (functions, classes, methods, ...) there are and which fraction
of their (name, 1-based line) pairs we also report, with a few misses, plus the
throughput of both tools.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from sylk import languages
from sylk.ingest import symbols  # noqa: E402

# Our language -> ctags kinds (long names, ``--fields=+K``) that we must find.
CTAGS_KINDS: dict[str, frozenset[str]] = {
    "python": frozenset({"class", "function", "member"}),
    "javascript": frozenset({"class", "function", "method", "generator"}),
    "typescript": frozenset({"class", "function", "method", "interface", "enum", "generator"}),
    "tsx": frozenset({"class", "function", "method", "interface", "enum", "generator"}),
    "go": frozenset({"func", "struct", "interface", "type", "talias", "methodSpec"}),
    "java": frozenset({"class", "interface", "enum", "method", "annotation"}),
    "rust": frozenset({"module", "struct", "interface", "function", "enum", "typedef", "macro", "method"}),
    "c": frozenset({"function", "struct", "union", "enum", "typedef", "macro"}),
    "cpp": frozenset({"function", "class", "struct", "union", "enum", "typedef", "namespace", "macro"}),
    "ruby": frozenset({"class", "module", "method", "singletonMethod"}),
    "csharp": frozenset({"class", "interface", "struct", "enum", "method", "namespace", "property"}),
}
SKIP_DIRS = {".git", ".hg", ".svn"}
# ctags' JavaScript/TypeScript parser calls every object literal a "class"
# (``const opts = {...}``, even nested ones and locals): those are not classes, so
# a JS/TS "class" tag counts only when its line has the ``class`` keyword.
CLASS_KEYWORD_ONLY = frozenset({"javascript", "typescript", "tsx"})
CLASS_WORD = re.compile(rb"\bclass\b")


def files_under(root: Path, only: str | None, max_bytes: int) -> dict[str, str]:
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for fn in filenames:
            path = os.path.join(dirpath, fn)
            lang = languages.language_for_path(path)
            if lang is None or (only and lang != only) or lang not in CTAGS_KINDS:
                continue
            try:
                if os.path.getsize(path) > max_bytes or os.path.islink(path):
                    continue
            except OSError:
                continue
            out[path] = lang
    return out


Tag = tuple[str, int, str, str]  # name, line, kind, scope


def run_ctags(paths: list[str], ctags: str) -> tuple[dict[str, set[Tag]], float]:
    tags: dict[str, set[Tag]] = collections.defaultdict(set)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [ctags, "--output-format=json", "--fields=+nKz", "--extras=-F", "-f", "-", "-L", "-"],
        input="\n".join(paths).encode(), capture_output=True, check=False,
    )
    elapsed = time.perf_counter() - t0
    for line in proc.stdout.splitlines():
        try:
            tag = json.loads(line)
        except ValueError:
            continue
        if tag.get("_type") != "tag":
            continue
        scope = f'{tag.get("scopeKind", "")}:{tag.get("scope", "")}' if "scope" in tag else ""
        tags[tag["path"]].add((tag["name"], int(tag.get("line", 0)), tag.get("kind", ""), scope))
    return tags, elapsed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", type=Path)
    ap.add_argument("--lang", help="only this language (sylk name: python, go, typescript, ...)")
    ap.add_argument("--examples", type=int, default=8, help="misses to print per language")
    ap.add_argument("--max-bytes", type=int, default=2_000_000, help="skip larger files")
    ap.add_argument("--ctags", default="ctags")
    ap.add_argument("--misses", type=Path, help="write every miss (path:line kind name scope) to this file")
    args = ap.parse_args(argv)

    files = files_under(args.dir, args.lang, args.max_bytes)
    if not files:
        print("no files", file=sys.stderr)
        return 1
    paths = sorted(files)
    ctags_tags, ctags_time = run_ctags(paths, args.ctags)

    ours: dict[str, set[tuple[str, int]]] = {}
    n_symbols = n_bytes = 0
    t0 = time.perf_counter()
    for path in paths:
        source = Path(path).read_bytes()
        n_bytes += len(source)
        syms = symbols.extract(source, files[path])
        n_symbols += len(syms)
        ours[path] = {(s.name, s.selection[0] + 1) for s in syms} | {(s.name, s.range[0] + 1) for s in syms}
    our_time = time.perf_counter() - t0

    by_lang: dict[str, list[str]] = collections.defaultdict(list)
    for path in paths:
        by_lang[files[path]].append(path)
    all_misses: list[str] = []
    print(f"{'language':<11} {'files':>6} {'ctags':>7} {'found':>7} {'recall':>7}")
    for lang, lpaths in sorted(by_lang.items()):
        kinds = CTAGS_KINDS[lang]
        total = found = 0
        misses: list[str] = []
        miss_kinds: collections.Counter[str] = collections.Counter()
        for path in lpaths:
            mine = ours[path]
            lines = None
            for name, line, kind, scope in sorted(ctags_tags.get(path, ()), key=lambda t: t[1]):
                # ctags' made-up names for anonymous functions and classes
                if kind not in kinds or name.startswith(("AnonymousFunction", "__anon")):
                    continue
                if kind == "class" and lang in CLASS_KEYWORD_ONLY:
                    if lines is None:
                        lines = Path(path).read_bytes().split(b"\n")
                    if line > len(lines) or not CLASS_WORD.search(lines[line - 1]):
                        continue
                total += 1
                if (name, line) in mine:
                    found += 1
                else:
                    miss_kinds[kind] += 1
                    miss = f"{path}:{line} {kind} {name} {scope}".rstrip()
                    all_misses.append(miss)
                    if len(misses) < args.examples:
                        misses.append("    " + miss)
        recall = found / total if total else 1.0
        print(f"{lang:<11} {len(lpaths):>6} {total:>7} {found:>7} {recall:>7.3f}")
        if misses:
            print("  misses by kind:", dict(miss_kinds.most_common()))
            print("\n".join(misses))
    if args.misses:
        args.misses.write_text("\n".join(all_misses) + "\n")
    mb = n_bytes / 1e6
    print(f"\nsylk:  {n_symbols} symbols from {len(paths)} files ({mb:.1f} MB) in {our_time:.2f}s"
          f" = {n_symbols / our_time:,.0f} symbols/s, {mb / our_time:.1f} MB/s (parse + query, one thread)")
    print(f"ctags: {sum(len(v) for v in ctags_tags.values())} tags in {ctags_time:.2f}s"
          f" = {mb / ctags_time:.1f} MB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
