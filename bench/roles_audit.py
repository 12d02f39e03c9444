"""What the role rules (``sylk.search.roles``) label in a real corpus (run by hand).

    python bench/roles_audit.py [--corpus stdlib|go|PATH ...] [--samples 15] [--seed 1]
                                [--show-names test]

Parses every file of each corpus with Sylk's own symbol extraction, asks
``roles_of`` for the roles of every symbol, and prints per role: how many symbols
it labels, and a seeded sample of them to judge by eye.

For ``test`` it also prints where the false positives and negatives hide:
- labelled ``test`` in a file that is not a test file (the name alone decided:
  ``should_retry``-like misfires live here), with every distinct name;
- not labelled ``test`` although the name looks like a test's (``test_*``,
  ``Test*``, ``*Tests``, ``should*``): the false negatives, if any, are among them.

The precision figures in the report are judged from these lists; nothing here
knows the truth.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import prepare  # noqa: E402
from sylk.ingest.symbols import extract_for_path  # noqa: E402
from sylk.languages import language_for_path  # noqa: E402
from sylk.model import ROLES  # noqa: E402
from sylk.search import roles  # noqa: E402

MAX_BYTES = 1 << 20


class Labelled(NamedTuple):
    corpus: str
    path: str
    kind: str
    name: str
    container: str
    roles: tuple[str, ...]


def walk(corpus: str, root: Path) -> list[Labelled]:
    out: list[Labelled] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        for fn in sorted(filenames):
            full = Path(dirpath, fn)
            rel = full.relative_to(root).as_posix()
            if language_for_path(rel) is None:
                continue
            try:
                if full.stat().st_size > MAX_BYTES:
                    continue
                source = full.read_bytes()
            except OSError:
                continue
            for s in extract_for_path(rel, source):
                out.append(Labelled(corpus, rel, s.kind, s.name, s.container,
                                    roles.roles_of(s.kind, s.name, s.container, rel)))
    return out


def show(rows: list[Labelled], n: int, rng: random.Random) -> None:
    for r in sorted(rng.sample(rows, min(n, len(rows)))):
        where = f"{r.container}." if r.container else ""
        print(f"    {r.corpus:<7} {r.kind:<10} {where}{r.name}  ({r.path})")


# names a reader might take for a test's: the candidates for a missed test
LOOKS_LIKE_TEST = re.compile(r"^(?:test|Test|should|it_)|(?:Test|Tests|TestCase|_test|_tests)$")


def show_names(rows: list[Labelled], limit: int = 400) -> None:
    groups: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for r in rows:
        groups[(r.kind, r.container, r.name)].append(r.path)
    for (kind, container, name), paths in sorted(groups.items())[:limit]:
        where = f"{container}." if container else ""
        print(f"    {kind:<10} {where}{name}  x{len(paths)}  ({paths[0]})")
    if len(groups) > limit:
        print(f"    ... {len(groups) - limit} more")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", action="append", help="stdlib, go or a directory (repeatable; default stdlib, go)")
    ap.add_argument("--samples", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rows: list[Labelled] = []
    for name in args.corpus or ["stdlib", "go"]:
        root = prepare(name)
        got = walk(name if name in ("stdlib", "go") else Path(name).name, root)
        print(f"{name}: {root}  {len({r.path for r in got})} files, {len(got)} symbols")
        rows.extend(got)
    rng = random.Random(args.seed)
    by_role: dict[str, list[Labelled]] = defaultdict(list)
    for r in rows:
        for role in r.roles:
            by_role[role].append(r)
    print(f"\n{len(rows)} symbols, {sum(1 for r in rows if r.roles)} with a role")
    for role in ROLES:
        got = by_role.get(role, [])
        print(f"\n== {role}: {len(got)} symbols")
        show(got, args.samples, rng)

    name_only = [r for r in rows if "test" in r.roles and not roles.is_test_path(r.path)]
    print(f"\n== test outside test files (decided by the name): {len(name_only)} symbols")
    show_names(name_only)
    looks = [r for r in rows if "test" not in r.roles and LOOKS_LIKE_TEST.search(r.name)]
    print(f"\n== not test, but the name looks like one (false negatives hide here): {len(looks)} symbols")
    show_names(looks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
