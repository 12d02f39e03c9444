"""The ranking stack: what happens to the candidates after the two sides are fused
(fusion.py; in modes lexical and semantic, one side's list) and before they are paged.

Each stage is a small function of the scored list, the chunks' records and the query
(``RankQuery``), that scales some scores and sorts again (stable: equal scores keep their
order). They run in the order of ``STAGES``, each for the queries ``APPLIES`` gives it;
``search.rankingOff`` (or a request's ``ranking_off``) switches any of them off, which is
how bench/semble_bench.py and bench/relevance.py measure each one (bench/README.md has
both tables).

Which queries a stage serves was measured on both benchmarks, whose answers differ:
semble's are the chunks that answer a question (several of one file, often), and
relevance.py's the one function a sentence describes. A *question* (a query that opens
with how, what, where, why, when, which or who: ``how does dependency injection work``)
gets every stage; a name typed alone gets those that find its definition; a description
in words (``parse a url into its parts``, ``retry policy``) is ranked by its text and
meaning, with members and code only: lifting the files its words name, the definitions of
the names it mentions, or whole files, puts other functions above the one it describes.

``members``
    a class chunk is its header and its members' signatures: when one of its members is
    a candidate too, the member (the more precise answer) takes the class's place and the
    class falls back; not when the query's words are all in the class's name (``retry
    policy``: ``HttpRetryPolicy``). Words and questions.
``definition``
    the chunk that defines a name typed (``APIRouter``, ``parse_url``; in a question also
    among words: ``how does APIRouter include routes``), most of all in the file named
    after it. Names and questions.
``path``
    a query word that names the file or its folder (``websocket endpoint``:
    ``websockets.py``; ``dependency injection``: ``dependencies/utils.py``;
    ``model configuration``: ``config.py``). Names and questions.
``code``
    tests, examples, documentation, benchmarks, build set-up and generated or vendored
    code behind the code itself, unless the query asks for them (``retry tests``;
    file_class.py). Words and questions.
``coherence``
    a file several chunks of which are candidates lifted as a whole (its best chunk).
    Questions.
``spread``
    near-duplicate chunks of one file (overlapping lines) and a file's later chunks
    scaled down, so that one file does not fill the page. Questions.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

import attrs

from ..ingest.chunks import CONTAINER_KINDS
from ..model import RANKING_STAGES
from ..store.manifest import ChunkRecord
from ..text.query_terms import IDENTIFIER, QueryTerms
from ..text.words import name_key, split_words
from .file_class import CODE, asked_classes, file_class
from .fusion import Fused

# The factors were chosen on semble's benchmark, development half (bench/semble_bench.py;
# bench/README.md has each stage's ablation); a change within about 0.005 NDCG@10 of
# another value was noise there.
# members: a container chunk whose member is a candidate too is scaled by this
# (bench/relevance.py, Python sentences: MRR@10 0.516 -> 0.533)
CONTAINER_YIELD = 0.6
# definition: the chunk defining a name typed, or a chunk of a file named after it
DEFINITION_BOOST = 3.0
# ... and a definition in the file named after it, this much more
OWN_FILE = 1.5
# path: a query word naming the file (its stem), or a folder on its path (half as much)
PATH_BOOST = 0.5
# code: a test, example, doc ... chunk for a question in words
NON_CODE = 0.5
# coherence: a file's best chunk gains this share of what its other candidates among the
# first COHERENCE_DEPTH score above the lowest of them
COHERENCE = 0.4
COHERENCE_DEPTH = 50
# spread: each further chunk of a file already ranked, and a chunk overlapping one ranked before it
FILE_DECAY = 0.5
OVERLAP = 0.5


# the words that open a question about how or where something works (RankQuery.question)
QUESTION_WORDS = frozenset({"how", "what", "where", "why", "when", "which", "who"})


@attrs.frozen
class RankQuery:
    """What the stages need to know of the query."""

    style: str  # text.query_terms: identifier, natural or mixed
    words: tuple[str, ...] = ()  # lower case: the words searched for and the identifiers' words
    names: tuple[str, ...] = ()  # name keys (text.words.name_key) of the names typed alone
    asks: frozenset[str] = frozenset()  # the file classes the query asks for (file_class.py)
    question: bool = False  # opens with a question word (QUESTION_WORDS)

    @classmethod
    def of(cls, terms: QueryTerms, text: str = "") -> RankQuery:
        """From the query's analysis and its ``text`` as typed (``APIRouter`` is one name,
        though its words are two)."""
        idents = [w.lower() for i in terms.identifiers for w in split_words(i.text)]
        words = tuple(dict.fromkeys([*terms.words, *idents]))
        # the names typed: every identifier (also among words: "how APIRouter includes
        # routes"), and a query of one token whatever it looks like ("Router")
        names = [name_key(i.parts[-1]) for i in terms.identifiers]
        if terms.style == IDENTIFIER:
            typed = {i.text for i in terms.identifiers}
            names += [name_key(t) for t in text.split() if t not in typed and not t.endswith("*")]
        opening = text.split(maxsplit=1)[:1]
        return cls(terms.style, words, tuple(n for n in dict.fromkeys(names) if n), asked_classes(words),
                   bool(opening) and opening[0].lower() in QUESTION_WORDS)

    @property
    def name_alone(self) -> bool:
        return self.style == IDENTIFIER


Records = Mapping[int, ChunkRecord]
Stage = Callable[[list[Fused], Records, RankQuery], list[Fused]]


def _scaled(fused: Sequence[Fused], factors: Mapping[int, float]) -> list[Fused]:
    """``fused`` with the scores of the candidates in ``factors`` multiplied, sorted again
    (stable); the list itself when nothing changes."""
    if not factors:
        return list(fused)
    out = [attrs.evolve(f, score=f.score * factors[i]) if i in factors else f for i, f in enumerate(fused)]
    return sorted(out, key=lambda f: -f.score)


def members_first(fused: list[Fused], records: Records, query: RankQuery) -> list[Fused]:
    """A container chunk yields its place to its best member among the candidates and
    falls back, unless the query's words are all in its name (``retry policy``:
    ``HttpRetryPolicy`` is asked for). The file keeps its place: in a language whose every
    definition sits in a module or class (Elixir, Scala, PHP) the container's chunk is the
    file's opening, and dropping it dropped the file."""
    best: dict[tuple[str, str], int] = {}  # (path, container's name) -> its best member
    for i, f in enumerate(fused):
        r = records[f.id]
        if r.container:
            best.setdefault((r.path, r.container.rsplit(".", 1)[-1]), i)
    asked = {stem(w) for w in query.words}

    def named(symbol: str) -> bool:
        return bool(asked) and asked <= {stem(w) for w in split_words(symbol)}

    factors: dict[int, float] = {}
    for i, f in enumerate(fused):
        r = records[f.id]
        m = best.get((r.path, r.symbol)) if r.kind in CONTAINER_KINDS else None
        if m is None or named(r.symbol):
            continue
        factors[i] = CONTAINER_YIELD
        if m > i and fused[m].score > 0:  # the member takes the container's place
            factors[m] = max(factors.get(m, 1.0), f.score / fused[m].score)
    return _scaled(fused, factors)


def definitions_first(fused: list[Fused], records: Records, query: RankQuery) -> list[Fused]:
    """The chunks defining a name typed, and the chunks of a file named after it (one
    class a file, as in Java, C# or Scala; or a language Sylk has no symbols for); a
    definition in the file named after it most (``Router``: the module of ``router.ex``
    before a function ``router`` of ``phx.routes.ex``)."""
    if not query.names:
        return fused
    names = set(query.names)
    factors: dict[int, float] = {}
    for i, f in enumerate(fused):
        r = records[f.id]
        defines = bool(r.symbol) and name_key(r.symbol) in names
        named = _file_stem_key(r.path) in names
        if defines or named:
            factors[i] = DEFINITION_BOOST * (OWN_FILE if defines and named else 1.0)
    return _scaled(fused, factors)


def _file_stem_key(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name_key(name.split(".", 1)[0] if not name.startswith(".") else name)


_PATH_PART = re.compile(r"[^/]+")


def stem(word: str) -> str:
    """A word's rough stem, enough to meet a file name: ``dependencies``, ``dependency``
    -> ``dependenc``; ``routes``, ``routing``, ``route`` -> ``rout``."""
    w = word.lower()
    for suffix, keep in (("ies", 1), ("ing", 3), ("es", 3), ("ed", 3), ("s", 3), ("y", 3), ("e", 3)):
        if w.endswith(suffix) and len(w) - len(suffix) >= keep + 1:
            return w[:-len(suffix)]
    return w


def path_words(path: str) -> dict[str, float]:
    """The stems of the words of a path with their weight: the file's name (extension
    left out) 1, each folder 0.5."""
    parts = _PATH_PART.findall(path)
    out: dict[str, float] = {}
    for n, part in enumerate(parts):
        last = n == len(parts) - 1
        name = part.rsplit(".", 1)[0] if last and "." in part[1:] else part
        for w in split_words(name):
            s = stem(w)
            if len(s) >= 3:
                out[s] = max(out.get(s, 0.0), 1.0 if last else 0.5)
    return out


PREFIX_MIN = 4  # letters a stem needs to meet a longer one it begins (config: configuration)


def _named(word: str, path: dict[str, float]) -> float:
    """How strongly a path names a query word (a stem): the weight of the path word equal
    to it, or, with PREFIX_MIN letters or more, beginning it or begun by it."""
    best = path.get(word, 0.0)
    if len(word) >= PREFIX_MIN:
        for p, weight in path.items():
            if weight > best and len(p) >= PREFIX_MIN and (word.startswith(p) or p.startswith(word)):
                best = weight
    return best


def path_match(fused: list[Fused], records: Records, query: RankQuery) -> list[Fused]:
    stems = {stem(w) for w in query.words if len(w) >= 3}
    if not stems:
        return fused
    by_path: dict[str, float] = {}
    factors: dict[int, float] = {}
    for i, f in enumerate(fused):
        path = records[f.id].path
        if path not in by_path:
            words = path_words(path)
            by_path[path] = min(1.0, sum(_named(s, words) for s in stems))
        if by_path[path]:
            factors[i] = 1.0 + PATH_BOOST * by_path[path]
    return _scaled(fused, factors)


def code_first(fused: list[Fused], records: Records, query: RankQuery) -> list[Fused]:
    classes: dict[str, str] = {}
    factors: dict[int, float] = {}
    for i, f in enumerate(fused):
        path = records[f.id].path
        cls = classes.get(path) or classes.setdefault(path, file_class(path))
        if cls != CODE and cls not in query.asks:
            factors[i] = NON_CODE
    return _scaled(fused, factors)


def file_coherence(fused: list[Fused], records: Records, query: RankQuery) -> list[Fused]:
    """A file's best chunk gains COHERENCE times what its other chunks among the first
    COHERENCE_DEPTH candidates score above the lowest of those: a file many chunks of
    which match well is the answer more often than one a single chunk of which matches a
    little better. Measured from the lowest, so that a side whose scores crowd into a
    narrow band (cosine similarity) lifts no more than one whose scores spread."""
    head = fused[:COHERENCE_DEPTH]
    if len(head) < 2:
        return fused
    low = min(f.score for f in head)
    best: dict[str, int] = {}
    extra: dict[str, float] = defaultdict(float)
    for i, f in enumerate(head):
        path = records[f.id].path
        if path in best:
            extra[path] += f.score - low
        else:
            best[path] = i
    factors = {best[p]: 1.0 + COHERENCE * add / fused[best[p]].score
               for p, add in extra.items() if add > 0 and fused[best[p]].score > 0}
    return _scaled(fused, factors)


def spread(fused: list[Fused], records: Records, query: RankQuery) -> list[Fused]:
    seen: dict[str, list[tuple[int, int]]] = defaultdict(list)
    factors: dict[int, float] = {}
    for i, f in enumerate(fused):
        r = records[f.id]
        spans = seen[r.path]
        factor = FILE_DECAY ** len(spans)
        if any(r.start_line <= end and start <= r.end_line for start, end in spans):
            factor *= OVERLAP
        if factor != 1.0:
            factors[i] = factor
        spans.append((r.start_line, r.end_line))
    return _scaled(fused, factors)


STAGES: dict[str, Stage] = {
    "members": members_first,
    "definition": definitions_first,
    "path": path_match,
    "code": code_first,
    "coherence": file_coherence,
    "spread": spread,
}
assert tuple(STAGES) == RANKING_STAGES, "model.RANKING_STAGES names the stages, in order"

# The queries each stage serves (the module's docstring says why)
APPLIES: dict[str, Callable[[RankQuery], bool]] = {
    "members": lambda q: not q.name_alone,
    "definition": lambda q: bool(q.names) and (q.name_alone or q.question),
    "path": lambda q: q.name_alone or q.question,
    "code": lambda q: not q.name_alone,
    "coherence": lambda q: q.question,
    "spread": lambda q: q.question,
}
assert tuple(APPLIES) == RANKING_STAGES


def stages_for(query: RankQuery, off: Sequence[str] = ()) -> tuple[str, ...]:
    """The stages that rank ``query``: those that serve it, but those in ``off``."""
    return tuple(name for name in RANKING_STAGES if name not in off and APPLIES[name](query))


def rank(fused: list[Fused], records: Records, query: RankQuery, off: Sequence[str] = ()) -> list[Fused]:
    """``fused`` through the stages that serve ``query`` (stages_for)."""
    for name in stages_for(query, off):
        if fused:
            fused = STAGES[name](fused, records, query)
    return fused
