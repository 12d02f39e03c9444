"""Symbol recall of sylk.ingest.symbols against a reference tagger (run by hand).

    python bench/recall.py DIR [--lang L] [--examples N] [--misses FILE]

Runs a reference tagger and ``sylk.ingest.symbols.extract`` over the same files
under DIR and prints, per language, how many reference definitions of the
"headline" kinds (functions, classes, methods, types ...) there are and which
fraction of their (name, 1-based line) pairs we also report, with a few misses,
plus the throughput of both tools. The reference, per language (``REFERENCE``):

``ctags``
    universal-ctags (5.9), the kinds in ``CTAGS_KINDS``; for the languages of
    ``CTAGS_PARSER`` ctags is told which parser to use (``--language-force``), so
    ``.bats``, ``.t``, ``.kts``, ``.rockspec`` ... are read as we read them. Tags
    that are ctags' own mistakes (not definitions in the source) are dropped by
    the named filters of ``FILTERS``; each is explained where it is defined, and
    the count each one dropped is printed, beside the raw recall.
``tags.scm``
    for a language ctags does not know (Scala, Swift): the grammar wheel's own
    ``queries/tags.scm``, i.e. every ``@name`` inside a ``@definition.*`` capture,
    run with py-tree-sitter over the same files; ``tags_scm_skip`` drops what
    that query calls a definition but that is not one we index (a package clause,
    a local ``val``), each explained.
``regex``
    for a language with neither (Zig: no ctags parser, the wheel ships no
    tags.scm): a line regex of that language's definition keywords, ``REGEX_DEFS``.

A reference definition counts as found when we report a symbol with the same
name whose name (selection) or definition range starts on the same line. For the
languages in ``QUALIFIED`` names are compared by their last part too (ctags
``Mojo::Base::attr``, ``Phoenix.Router.Route``, ``M.setup``, ours ``attr`` or
``Phoenix.Router.Route``: same line, same last part).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_references import (  # noqa: E402
    CLAUSE_RUNS, CTAGS_KINDS, CTAGS_PARSER, FILTERS, QUALIFIED, SKIP, SPANS, FileText, Tag, files_under, last_part,
    normalise, reference_of, run_ctags, run_regex, run_tags_scm)
from sylk.ingest import symbols  # noqa: E402

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", type=Path)
    ap.add_argument("--lang", help="only this language (sylk name: python, go, typescript, ...)")
    ap.add_argument("--examples", type=int, default=8, help="misses to print per language")
    ap.add_argument("--max-bytes", type=int, default=2_000_000, help="skip larger files")
    ap.add_argument("--ctags", default="ctags")
    ap.add_argument("--misses", type=Path, help="write every miss (path:line kind name scope) to this file, and"
                    " the dropped tags that we report all the same")
    args = ap.parse_args(argv)

    files = files_under(args.dir, args.lang, args.max_bytes)
    if not files:
        print("no files", file=sys.stderr)
        return 1
    paths = sorted(files)
    by_lang: dict[str, list[str]] = collections.defaultdict(list)
    for path in paths:
        by_lang[files[path]].append(path)

    # the reference, per language; its time per language
    ref_tags: dict[str, set[Tag]] = collections.defaultdict(set)
    ref_time: dict[str, float] = {}
    auto = [p for p in paths if reference_of(files[p]) == "ctags" and files[p] not in CTAGS_PARSER]
    if auto:
        got, elapsed = run_ctags(auto, args.ctags)
        ref_tags.update(got)
        for lang in {files[p] for p in auto}:  # one run for all of them: share its time by bytes
            ref_time[lang] = elapsed * sum(os.path.getsize(p) for p in by_lang[lang]) / sum(
                os.path.getsize(p) for p in auto)
    for lang, lpaths in by_lang.items():
        ref = reference_of(lang)
        if ref == "ctags" and lang in CTAGS_PARSER:
            got, ref_time[lang] = run_ctags(lpaths, args.ctags, CTAGS_PARSER[lang])
        elif ref == "tags.scm":
            got, ref_time[lang] = run_tags_scm(lpaths, lang)
        elif ref == "regex":
            got, ref_time[lang] = run_regex(lpaths, lang)
        else:
            continue
        ref_tags.update(got)

    ours: dict[str, set[tuple[str, int]]] = {}
    spans: dict[str, dict[str, list[tuple[int, int]]]] = {}
    our_time: dict[str, float] = collections.defaultdict(float)
    n_symbols: collections.Counter[str] = collections.Counter()
    n_bytes: collections.Counter[str] = collections.Counter()
    for path in paths:
        lang = files[path]
        source = Path(path).read_bytes()
        n_bytes[lang] += len(source)
        t0 = time.perf_counter()
        syms = symbols.extract(source, lang)
        our_time[lang] += time.perf_counter() - t0
        n_symbols[lang] += len(syms)
        mine = {(s.name, s.selection[0] + 1) for s in syms} | {(s.name, s.range[0] + 1) for s in syms}
        if lang in QUALIFIED:
            mine |= {(last_part(lang, name), line) for name, line in mine}
        if lang == "haskell":  # ctags names a module by its first component: `module Data.Aeson.Types` -> `Data`
            mine |= {(s.name.split(".")[0], s.selection[0] + 1) for s in syms if s.kind == "module"}
        ours[path] = mine
        if lang in SPANS:
            spans[path] = collections.defaultdict(list)
            for s in syms:
                spans[path][s.name].append((s.range[0] + 1, s.range[2] + 1))

    all_misses: list[str] = []
    print(f"{'language':<15} {'reference':<9} {'files':>6} {'raw':>7} {'defs':>7} {'found':>7} {'recall':>7}"
          f" {'raw rec':>7}")
    for lang, lpaths in sorted(by_lang.items()):
        ref = reference_of(lang)
        kinds = CTAGS_KINDS.get(lang)
        total = found = raw_total = raw_found = dropped_hit = 0
        dropped: collections.Counter[str] = collections.Counter()
        misses: list[str] = []
        miss_kinds: collections.Counter[str] = collections.Counter()
        for path in lpaths:
            mine = ours[path]
            text = None
            run: list = []  # CLAUSE_RUNS: [(name, kind), found, its miss line] of the current run
            for tag in sorted(ref_tags.get(path, ()), key=lambda t: (t[1], t[0], t[2])):
                if ref == "ctags" and tag[2] not in kinds:
                    continue
                if text is None and ref == "ctags":
                    text = FileText(path)
                tag = normalise(lang, tag, text)
                name, line, kind, scope = tag
                hit = (name, line) in mine or (lang in QUALIFIED and (last_part(lang, name), line) in mine) or (
                    lang in SPANS and any(a <= line <= b for a, b in spans[path].get(name, ())))
                raw_total += 1
                raw_found += hit
                if scope.startswith(SKIP):
                    dropped[scope.removeprefix(SKIP)] += 1
                    dropped_hit += hit
                    if hit:
                        all_misses.append(f"dropped ({scope.removeprefix(SKIP)}) but found: {path}:{line} {kind} {name}")
                    continue
                if ref == "ctags":
                    if text is None:
                        text = FileText(path)
                    why = next((label for label, f in FILTERS if f(lang, tag, text)), None)
                    if why:
                        dropped[why] += 1
                        dropped_hit += hit
                        if hit:
                            all_misses.append(f"dropped ({why}) but found: {path}:{line} {kind} {name} {scope}".rstrip())
                        continue
                    if lang in CLAUSE_RUNS:
                        if run and run[0] == (name, kind):  # a later clause of the run's definition
                            dropped["later-clause"] += 1
                            if hit and not run[1]:  # the definition is found after all: at this clause
                                run[1] = True
                                found += 1
                                all_misses.remove(run[2])
                                miss_kinds[run[0][1]] -= 1
                                if "    " + run[2] in misses:
                                    misses.remove("    " + run[2])
                            continue
                        run[:] = [(name, kind), hit, f"{path}:{line} {kind} {name} {scope}".rstrip()]
                total += 1
                if hit:
                    found += 1
                else:
                    miss_kinds[kind] += 1
                    miss = f"{path}:{line} {kind} {name} {scope}".rstrip()
                    all_misses.append(miss)
                    if len(misses) < args.examples:
                        misses.append("    " + miss)
        recall = found / total if total else 1.0
        raw_recall = raw_found / raw_total if raw_total else 1.0
        print(f"{lang:<15} {ref:<9} {len(lpaths):>6} {raw_total:>7} {total:>7} {found:>7} {recall:>7.3f}"
              f" {raw_recall:>7.3f}")
        if dropped:
            print("  not definitions (dropped from the reference):", dict(dropped.most_common()),
                  f"- of these we report {dropped_hit} (a check on the filters: should be ~0)")
        if found < total:
            print("  misses by kind:", dict((miss_kinds + collections.Counter()).most_common()))
            if misses:
                print("\n".join(misses))
    if args.misses:
        args.misses.write_text("\n".join(all_misses) + "\n")
    print()
    for lang in sorted(by_lang):
        mb = n_bytes[lang] / 1e6
        t, rt = our_time[lang], ref_time.get(lang, 0.0)
        print(f"{lang:<15} {len(by_lang[lang])} files ({mb:.2f} MB): sylk {n_symbols[lang]} symbols in {t:.2f}s ="
              f" {mb / t if t else 0:.1f} MB/s (parse + query, one thread); {reference_of(lang)}"
              f" {sum(len(ref_tags.get(p, ())) for p in by_lang[lang])} tags in {rt:.2f}s"
              f" = {mb / rt if rt else 0:.1f} MB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
