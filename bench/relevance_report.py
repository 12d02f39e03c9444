"""The tables, targets, variants and JSON of ``relevance.py``.

Scores are MRR@10, recall@10 (answer in the top 10) and the top-3 rate (answer at
rank 1-3), over all of a style's queries (an error counts as a miss).
"""

from __future__ import annotations

import random
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

from relevance_queries import NONSENSE, STYLES

SINGLE = ("lexical", "semantic")
HYBRID_OVER_SINGLE = 1.15
HYBRID_OVER_RG = 2.0
LEXICAL_GAIN = 1.30  # against --baseline, sentence and keyword queries
TYPO_TOP3 = 0.90


@dataclass(frozen=True)
class Score:
    mrr: float
    recall: float
    top3: float
    n: int
    p50_ms: float
    errors: int
    no_hits: float = 0.0  # the share of queries answered with no hits at all

    @classmethod
    def of(cls, ranks: list[int | None], ms: list[float], errors: int, no_hits: int = 0) -> Score:
        n = len(ranks)
        d = n or 1
        return cls(mrr=round(sum(1.0 / r for r in ranks if r) / d, 4),
                   recall=round(sum(1 for r in ranks if r) / d, 4),
                   top3=round(sum(1 for r in ranks if r and r <= 3) / d, 4), n=n,
                   p50_ms=round(statistics.median(ms), 2) if ms else 0.0, errors=errors,
                   no_hits=round(no_hits / d, 4))


# -- the relevance floor (issue 17) ----------------------------------------------------------------

FLOORS = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)  # what the calibration table tries


@dataclass
class FloorRun:
    """What the relevance floor (``minScore``) is judged on, for one language.

    ``cosines``: per style, and ``nonsense`` for the NONSENSE queries, each query's
    (nearest chunk, the answer when in the top 10) cosine similarity in mode semantic
    with no floor. ``nonsense_hits``: per mode and variant, the hits each NONSENSE query
    got."""
    cosines: dict[str, list[tuple[float | None, float | None]]]
    nonsense_hits: dict[str, list[int]]

    def no_hits(self, name: str) -> float:
        """The share of the nonsense queries ``name`` answered with no hits."""
        got = self.nonsense_hits[name]
        return round(sum(1 for n in got if not n) / (len(got) or 1), 4)


def _pct(values: list[float], q: float) -> str:
    if not values:
        return "    -"
    values = sorted(values)
    return f"{values[min(len(values) - 1, int(q * len(values)))]:5.3f}"


def print_floor(lang: str, run: FloorRun) -> None:
    """The cosine similarities a floor would cut, and the nonsense queries' answers."""
    print(f"\n-- {lang} / relevance floor: cosine similarity in mode semantic, no floor")
    print(f"{'queries':<10} {'n':>4}   nearest chunk p10   p50   p90   max   the answer in the top 10: "
          f"{'n':>4}    p1    p5   p10   p50")
    for style, rows in run.cosines.items():
        near = [a for a, _ in rows if a is not None]
        line = f"{style:<10} {len(rows):4d}   {'':>13}" + " ".join(_pct(near, q) for q in (0.1, 0.5, 0.9)) + \
            f" {max(near, default=0):5.3f}"
        if style != "nonsense":
            ans = [b for _, b in rows if b is not None]
            line += f"   {'':>25}{len(ans):4d} " + " ".join(_pct(ans, q) for q in (0.01, 0.05, 0.1, 0.5))
        print(line)
    print("  mode semantic at each floor: nonsense answered with no hits | answers (in the top 10 with no "
          "floor) lost, per style")
    for f in FLOORS:
        near = [a for a, _ in run.cosines["nonsense"]]
        cut = sum(1 for a in near if a is None or a < f)
        lost = "  ".join(f"{style} {sum(1 for _, b in rows if b is not None and b < f):3d}/"
                         f"{sum(1 for _, b in rows if b is not None):3d}"
                         for style, rows in run.cosines.items() if style != "nonsense")
        print(f"    {f:4.2f}   {cut:2d}/{len(near)} ({cut / (len(near) or 1):4.0%})  |  {lost}")
    print(f"  the {len(NONSENSE)} nonsense queries answered with no hits: " + ", ".join(
        f"{name} {sum(1 for n in got if not n)}/{len(got)}" for name, got in run.nonsense_hits.items()))


# -- variants --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Variant:
    """A hybrid request with some SearchRequest fields changed (``weights.semantic`` reaches
    into a nested record)."""
    name: str
    changes: dict[str, object]

    def request(self, base):
        import attrs
        req = base
        for key, value in self.changes.items():
            head, _, sub = key.partition(".")
            if sub:
                value = attrs.evolve(getattr(req, head), **{sub: value})
            req = attrs.evolve(req, **{head: value})
        return req

    def __str__(self) -> str:
        return f"{self.name} (" + ", ".join(f"{k}={v}" for k, v in self.changes.items()) + ")"


def parse_value(text: str) -> object:
    """int, then float, then true/false, else the bare string."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def parse_variant(spec: str, reserved: set[str]) -> Variant:
    """``convex:fusion=convex,alpha=0.3`` -> Variant; a key that is not a SearchRequest field
    (or a value it refuses) is a ValueError, raised before anything runs."""
    import attrs
    from sylk.search.query import SearchRequest

    name, sep, rest = spec.partition(":")
    if not sep or not name or not rest:
        raise ValueError(f"{spec!r}: expected NAME:key=value[,key=value...]")
    if name in reserved:
        raise ValueError(f"{spec!r}: the name {name!r} is taken by a mode")
    changes: dict[str, object] = {}
    for item in rest.split(","):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ValueError(f"{spec!r}: {item!r} is not key=value")
        head, _, sub = key.partition(".")
        fields = attrs.fields_dict(SearchRequest)
        if head not in fields:
            raise ValueError(f"{spec!r}: {head!r} is not a SearchRequest field "
                             f"(fields: {', '.join(fields)})")
        if sub:
            nested = type(getattr(SearchRequest("x"), head))
            if not attrs.has(nested) or sub not in attrs.fields_dict(nested):
                raise ValueError(f"{spec!r}: {key!r}: {head} has no field {sub!r}")
        changes[key] = parse_value(value.strip())
    variant = Variant(name, changes)
    try:
        variant.request(SearchRequest("x", "hybrid"))
    except (TypeError, ValueError) as e:
        raise ValueError(f"{spec!r}: SearchRequest refuses it: {e}") from None
    return variant


# -- per language ----------------------------------------------------------------------------------

def _first(*ranks: int | None) -> int | None:
    found = [r for r in ranks if r]
    return min(found) if found else None


def print_language(lang: str, runs, n_files: int, show_fails: int, seed: int) -> None:
    for run in runs:
        qs, m = run.queries, run.modes
        print(f"\n-- {lang} / {run.style}: {len(qs)} queries")
        print(f"{'mode':<30} {'MRR@10':>7} {'recall@10':>10} {'top-3':>7} {'errors':>7} {'p50 ms':>8} "
              f"{'no hits':>8}")
        for name, mr in m.items():
            s = mr.score()
            label = f"sylk {name}" if name in ("lexical", "semantic", "hybrid") else \
                "rg -i (file level)" if name == "rg" else f"variant {name}"
            print(f"{label:<30} {s.mrr:7.3f} {s.recall:10.3f} {s.top3:7.3f} {s.errors:7d} {s.p50_ms:8.1f} "
                  f"{'-' if name == 'rg' else f'{s.no_hits:.1%}':>8}")
        if run.style == STYLES[0]:
            print(f"  sylk rows are chunk level (the function's own chunk); rg only has to rank the right "
                  f"file among {n_files} (-c -F -w, stopwords dropped, files by matching lines)")
        print("  per project, MRR@10 lexical / semantic / hybrid / rg:")
        for proj in sorted({q.project for q in qs}):
            idx = [i for i, q in enumerate(qs) if q.project == proj]
            vals = [Score.of([m[k].ranks[i] for i in idx], [], 0).mrr for k in ("lexical", "semantic", "hybrid", "rg")]
            print(f"    {proj:<20} {len(idx):4d} queries  " + "  ".join(f"{v:.3f}" for v in vals))
        lx, sm, hy = m["lexical"].ranks, m["semantic"].ranks, m["hybrid"].ranks
        rows = list(zip(lx, sm, hy))
        both = sum(1 for a, b, _ in rows if a and b)
        only_l = sum(1 for a, b, _ in rows if a and not b)
        only_s = sum(1 for a, b, _ in rows if b and not a)
        print(f"  top-10 overlap: both {both}, lexical only {only_l}, semantic only {only_s}, neither "
              f"{len(rows) - both - only_l - only_s}; hybrid found {sum(1 for h in hy if h)}")
        lost = [(a, b) for a, b, h in rows if not h and (a or b)]
        worse = sum(1 for a, b, h in rows if _first(a, b) and (not h or h > _first(a, b)))
        better = sum(1 for a, b, h in rows if h and (not _first(a, b) or h < _first(a, b)))
        print(f"  hybrid misses that one side had in its top 10: {len(lost)} (lexical rank 1-3: "
              f"{sum(1 for a, _ in lost if a and a <= 3)}, semantic rank 1-3: "
              f"{sum(1 for _, b in lost if b and b <= 3)}); hybrid worse than the better side on {worse} "
              f"queries, better on {better}")
        if run.style == STYLES[0] and show_fails:
            fails = [i for i, h in enumerate(hy) if not h]
            pick = sorted(random.Random(seed).sample(fails, min(show_fails, len(fails))))
            print(f"  hybrid misses, {len(pick)} of {len(fails)} (seeded sample; rank in lexical / semantic / rg):")
            for i in pick:
                q = qs[i]
                print(f"    {q.text!r}")
                print(f"      wanted {q.target.path}:{q.target.line + 1} {q.target.name}   lexical {lx[i]} "
                      f"semantic {sm[i]} rg {m['rg'].ranks[i]}")
                for h in m["hybrid"].hits[i]:
                    print(f"      got    {h.path}:{h.start_line + 1}-{h.end_line + 1} {h.kind} {h.symbol} "
                          f"(lex {h.lexical_rank}, sem {h.semantic_rank})")


# -- summary, baseline, targets, JSON -------------------------------------------------------------

def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else ("inf" if a else "-")


def report(results: dict, config: dict, baseline: dict | None, baseline_path: Path | None,
           variants: list, floors: dict[str, FloorRun] | None = None) -> dict:
    """Prints the summary, the comparison with the baseline and the targets; returns the JSON
    data (config, scores, targets, the relevance floor's numbers, and each query's rank per
    mode, for diffs between runs)."""
    scores = {lang: {run.style: {name: mr.score() for name, mr in run.modes.items()} for run in runs}
              for lang, runs in results.items()}
    print("\nsummary, MRR@10 (hyb/single: hybrid over the better of lexical and semantic; hyb/rg: over the "
          "rg file-level baseline):")
    print(f"{'language':<9} {'style':<9} {'queries':>7} {'lexical':>8} {'semantic':>9} {'hybrid':>7} {'rg':>7} "
          f"{'hyb/single':>11} {'hyb/rg':>7} {'hybrid top-3':>13}")
    for lang, by_style in scores.items():
        for style, s in by_style.items():
            single = max(s["lexical"].mrr, s["semantic"].mrr)
            print(f"{lang:<9} {style:<9} {s['hybrid'].n:7d} {s['lexical'].mrr:8.3f} {s['semantic'].mrr:9.3f} "
                  f"{s['hybrid'].mrr:7.3f} {s['rg'].mrr:7.3f} {_ratio(s['hybrid'].mrr, single):>11} "
                  f"{_ratio(s['hybrid'].mrr, s['rg'].mrr):>7} {s['hybrid'].top3:13.3f}")
    for v in variants:
        print(f"variant {v}:")
        for lang, by_style in scores.items():
            for style, s in by_style.items():
                single = max(s["lexical"].mrr, s["semantic"].mrr)
                vs = s[v.name]
                print(f"{lang:<9} {style:<9} {vs.n:7d} {'':>8} {'':>9} {vs.mrr:7.3f} {s['rg'].mrr:7.3f} "
                      f"{_ratio(vs.mrr, single):>11} {_ratio(vs.mrr, s['rg'].mrr):>7} {vs.top3:13.3f}"
                      f"   (hybrid {s['hybrid'].mrr:.3f})")
    floors = floors or {}
    if floors:
        names = list(next(iter(floors.values())).nonsense_hits)
        print(f"\nthe {len(NONSENSE)} nonsense queries (relevance_queries.NONSENSE) answered with no hits:")
        print(f"{'language':<9} " + " ".join(f"{n:>{max(8, len(n))}}" for n in names))
        for lang, fr in floors.items():
            print(f"{lang:<9} " + " ".join(f"{fr.no_hits(n):>{max(8, len(n))}.0%}" for n in names))

    before = None
    if baseline is not None:
        before = baseline.get("results", {})
        bc = baseline.get("config", {})
        print(f"\ncompared with {baseline_path} ({bc.get('date')}, sylk at {bc.get('sylk')}, engine at "
              f"{bc.get('engine', '?')}), MRR@10 before -> after:")
        for key in ("max_queries", "seed", "min_words"):
            if bc.get(key) != config.get(key):
                print(f"  note: {key} was {bc.get(key)}, is {config.get(key)}: the queries differ")
        for lang in scores:
            old_pk = bc.get("corpora", {}).get(lang, {}).get("packages")
            if old_pk is not None and old_pk != config["corpora"][lang]["packages"]:
                print(f"  note: {lang} packages differ: the queries differ")
        for lang, by_style in scores.items():
            for style, s in by_style.items():
                for name, sc in s.items():
                    old = before.get(lang, {}).get(style, {}).get(name)
                    if old is not None:
                        print(f"  {lang:<9} {style:<9} {name:<12} {old['mrr']:.3f} -> {sc.mrr:.3f}  "
                              f"{_ratio(sc.mrr, old['mrr'])}")

    targets = []

    def check(name: str, lang: str, style: str, row: str, ok: bool | None, text: str) -> None:
        targets.append({"target": name, "language": lang, "style": style, "row": row,
                        "result": "n/a" if ok is None else "PASS" if ok else "MISS", "detail": text})

    for lang, by_style in scores.items():
        for style, s in by_style.items():
            single = max(s["lexical"].mrr, s["semantic"].mrr)
            best = "lexical" if s["lexical"].mrr >= s["semantic"].mrr else "semantic"
            for row in ["hybrid", *(v.name for v in variants)]:
                h = s[row]
                check("hybrid>=1.15x single", lang, style, row, h.mrr >= HYBRID_OVER_SINGLE * single,
                      f"{row} MRR@10 {h.mrr:.3f} >= {HYBRID_OVER_SINGLE} x {best} {single:.3f} = "
                      f"{HYBRID_OVER_SINGLE * single:.3f} ({_ratio(h.mrr, single)})")
                check("hybrid>=2x rg", lang, style, row, h.mrr >= HYBRID_OVER_RG * s["rg"].mrr,
                      f"{row} MRR@10 {h.mrr:.3f} >= {HYBRID_OVER_RG} x rg {s['rg'].mrr:.3f} = "
                      f"{HYBRID_OVER_RG * s['rg'].mrr:.3f} ({_ratio(h.mrr, s['rg'].mrr)})")
                if style == "typo":
                    check("typo top-3>=90%", lang, style, row, h.top3 >= TYPO_TOP3,
                          f"{row} has the intended definition in its top 3 for {h.top3:.1%} of {h.n} "
                          f"(>= {TYPO_TOP3:.0%})")
            if style in ("sentence", "keywords"):
                old = (before or {}).get(lang, {}).get(style, {}).get("lexical")
                lx = s["lexical"].mrr
                check("lexical +30%", lang, style, "lexical", None if old is None else lx >= LEXICAL_GAIN * old["mrr"],
                      "no --baseline to compare with" if old is None else
                      f"lexical MRR@10 {lx:.3f} >= {LEXICAL_GAIN} x before {old['mrr']:.3f} = "
                      f"{LEXICAL_GAIN * old['mrr']:.3f} ({_ratio(lx, old['mrr'])})")
    print("\ntargets (issue 12), per language and query style:")
    for t in targets:
        print(f"{t['result']:<4}  {t['language']}/{t['style']:<9} {t['target']:<21} {t['detail']}")
    counts = {r: sum(1 for t in targets if t["result"] == r) for r in ("PASS", "MISS", "n/a")}
    print("targets: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    return {"config": config,
            "results": {lang: {style: {name: asdict(sc) for name, sc in s.items()} for style, s in by_style.items()}
                        for lang, by_style in scores.items()},
            "targets": targets,
            "floor": {lang: {"nonsense_no_hits": {n: fr.no_hits(n) for n in fr.nonsense_hits},
                             "cosines": fr.cosines} for lang, fr in floors.items()},
            "queries": {lang: {run.style: [{"query": q.text, "path": q.target.path, "line": q.target.line + 1,
                                            "name": q.target.name,
                                            "ranks": {name: mr.ranks[i] for name, mr in run.modes.items()}}
                                           for i, q in enumerate(run.queries)] for run in runs}
                        for lang, runs in results.items()}}
