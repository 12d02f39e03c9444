"""The symbol table frozen into arrays: built from the manifest's rows at the end of an
index run, saved beside the index (``store.array_file``) and opened memory-mapped, so the
first ``workspace/symbol`` after opening a large index does not wait for hundreds of
thousands of Python objects to be built.

Entries are sorted by name; per entry: its name's position, static rank, file, kind,
original name and container (positions in lists of distinct strings), range and
selection, whether it is exported, and where its signature and doc start in two UTF-8 blobs (read for a hit
only). Each file carries the manifest's stamp of its row (``Manifest.symbol_stamps``):
a table opened from a snapshot compares stamps and serves the files that changed since
from its live layer. A file that changes is hidden here (``hide``), never rewritten.
"""

from __future__ import annotations

import gc
from array import array
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from itertools import chain
from pathlib import Path

import numpy as np

from ..ingest.symbols import (
    ROW_CONTAINER,
    ROW_DOC,
    ROW_EXPORTED,
    ROW_KIND,
    ROW_NAME,
    ROW_RANGE,
    ROW_SIGNATURE,
    Symbol,
    symbol_rows,
)
from ..store.array_file import ArrayFile, read_array_file, write_array_file
from ..store.manifest import FileSymbolData
from .name_index import (
    KIND_ORDER,
    NO_RANK,
    Lines,
    NameArrays,
    NameIndex,
    Scored,
    holding,
    is_subsequence,
    line_starts,
    path_rank,
    static_key,
    word_line,
)

KIND = "symbols/3"  # the format; a file of another is built again
_TEXT = ("utf-8", "surrogatepass")
# string columns saved as a blob and the starts of its lines
_STRINGS = ("paths", "stamps", "kinds", "originals", "containers")
_LISTED = frozenset({"paths", "kinds", "originals", "containers"})
_NAME_TEXT = ("blob", "wblob", "lblob")
_NAME_ARRAYS = ("starts", "wstarts", "lstarts", "by_len", "masks", "initials", "bigrams")


def _ints(a: np.ndarray, code: str) -> Sequence[int]:
    """Fast element access to an integer array (a memoryview yields Python ints; none can
    be cast from an empty array)."""
    return memoryview(np.ascontiguousarray(a)).cast("B").cast(code) if a.size else array(code)


def _text(blob: str) -> np.ndarray:
    return np.frombuffer(blob.encode(*_TEXT), dtype=np.uint8)


def _untext(a: np.ndarray) -> str:
    return a.tobytes().decode(*_TEXT)


def _split(blob: str, starts: np.ndarray) -> list[str]:
    """The lines of a blob as a list (``Lines`` when a line holds a newline itself)."""
    if len(starts) < 2:
        return []
    lines = blob.split("\n")
    return lines if len(lines) == len(starts) - 1 else list(Lines(blob, starts))


def _blob(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Texts as one UTF-8 blob and the byte offset where each starts (then the end). The
    blob is encoded once; a text's byte length is its length when it is ASCII (which
    ``str.isascii`` knows without a scan), else its encoding's."""
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter((len(t) if t.isascii() else len(t.encode(*_TEXT)) for t in texts), dtype=np.int64,
                          count=len(texts)), out=offsets[1:])
    return np.frombuffer("".join(texts).encode(*_TEXT), dtype=np.uint8), offsets


class FrozenSymbols:
    """An immutable symbol table over arrays, with files hidden as they change."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self._arrays = arrays
        # the strings a query touches most as lists (a string object each); the rest by line
        lists = {name: (_split if name in _LISTED else Lines)(_untext(arrays[name]), arrays[f"{name}_starts"])
                 for name in _STRINGS}
        self._paths, self._stamps = lists["paths"], lists["stamps"]
        self._kinds = lists["kinds"]
        self._originals, self._containers = lists["originals"], lists["containers"]
        names = NameArrays(**{f: _untext(arrays[f"name_{f}"]) for f in _NAME_TEXT},
                           **{f: arrays[f"name_{f}"] for f in _NAME_ARRAYS})
        self._name_starts = arrays["name_entries"]
        self._e_key, self._e_path = arrays["entry_key"], arrays["entry_path"]
        self._ns = _ints(self._name_starts, "q")
        self._key, self._path = _ints(self._e_key, "q"), _ints(self._e_path, "i")
        self._kind, self._orig = _ints(arrays["entry_kind"], "B"), _ints(arrays["entry_original"], "i")
        self._cont = _ints(arrays["entry_container"], "i")
        self._exported = _ints(arrays["entry_exported"], "B")
        self._ranges = _ints(arrays["entry_ranges"], "i")
        self._sig, self._doc = _ints(arrays["signature_starts"], "q"), _ints(arrays["doc_starts"], "q")
        self._sig_text, self._doc_text = _ints(arrays["signatures"], "B"), _ints(arrays["docs"], "B")
        self._path_order, self._path_starts = arrays["path_entries"], _ints(arrays["path_entry_starts"], "q")
        self._dead: set[int] = set()  # files hidden: their entries match nothing
        self._hidden = 0
        self._path_ids: dict[str, int] | None = None
        best = (np.minimum.reduceat(self._e_key, self._name_starts[:-1]) if len(self._e_key)
                else np.zeros(0, dtype=np.int64))
        self.index = NameIndex(names, self, _split(names.blob, names.starts), _split(names.wblob, names.wstarts),
                               best.astype(np.int64))

    # building, saving, opening ------------------------------------------------
    @classmethod
    def build(cls, files: Iterable[FileSymbolData]) -> FrozenSymbols:
        # a million short-lived lists: the cyclic collector would walk them again and again
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            return cls._build(files)
        finally:
            if gc_was_on:
                gc.enable()

    @classmethod
    def _build(cls, files: Iterable[FileSymbolData]) -> FrozenSymbols:
        paths: list[str] = []
        stamps: list[str] = []
        rows: list[list] = []
        row_path: list[int] = []
        for f in files:
            decoded = symbol_rows(f.data)
            if not decoded:
                continue
            row_path.extend([len(paths)] * len(decoded))
            paths.append(f.path)
            stamps.append(f.stamp)
            rows.extend(decoded)
        n = len(rows)
        lower = [r[ROW_NAME].lower() for r in rows]
        names = sorted(set(lower))
        position = {name: i for i, name in enumerate(names)}
        kinds = sorted({r[ROW_KIND] for r in rows})
        originals = sorted({r[ROW_NAME] for r in rows})
        containers = sorted({r[ROW_CONTAINER] for r in rows})
        kind_id = {k: i for i, k in enumerate(kinds)}
        orig_id = {name: i for i, name in enumerate(originals)}
        cont_id = {c: i for i, c in enumerate(containers)}
        columns = {
            "entry_path": np.asarray(row_path, dtype=np.int32).reshape(n),
            "entry_kind": np.fromiter((kind_id[r[ROW_KIND]] for r in rows), dtype=np.uint8, count=n),
            "entry_original": np.fromiter((orig_id[r[ROW_NAME]] for r in rows), dtype=np.int32, count=n),
            "entry_container": np.fromiter((cont_id[r[ROW_CONTAINER]] for r in rows), dtype=np.int32, count=n),
            "entry_ranges": np.fromiter(chain.from_iterable([r[ROW_RANGE:ROW_SIGNATURE] for r in rows]),
                                        dtype=np.int32, count=8 * n).reshape(n, 8),
            "entry_exported": np.fromiter((r[ROW_EXPORTED] for r in rows), dtype=np.uint8, count=n),
        }
        e_name = np.fromiter((position[name] for name in lower), dtype=np.int32, count=n)
        depth = np.fromiter(map(path_rank, paths), dtype=np.int64, count=len(paths))
        kind_rank = np.fromiter((KIND_ORDER.get(k, 99) for k in kinds), dtype=np.int64, count=len(kinds))
        name_length = np.fromiter(map(len, originals), dtype=np.int64, count=len(originals))
        columns["entry_key"] = static_key(kind_rank[columns["entry_kind"]], name_length[columns["entry_original"]],
                                          depth[columns["entry_path"]], columns["entry_exported"] != 0).astype(np.int64)
        # by name, then in a search's order within a name (rank, path, line, column), so a
        # name with thousands of entries (``main``) stops after the best (``emit``'s cap)
        path_order = np.zeros(len(paths), dtype=np.int64)
        path_order[sorted(range(len(paths)), key=paths.__getitem__)] = np.arange(len(paths))
        ranges = columns["entry_ranges"]
        order = np.lexsort((ranges[:, 1], ranges[:, 0], path_order[columns["entry_path"]], columns["entry_key"],
                            e_name))
        arrays: dict[str, np.ndarray] = {name: column[order] for name, column in columns.items()}
        e_name, e_path = e_name[order], arrays["entry_path"]
        rows = [rows[i] for i in order.tolist()]
        first_of_name = np.searchsorted(e_name, np.arange(len(names)))
        wlines = [word_line(rows[int(i)][ROW_NAME]) for i in first_of_name.tolist()]
        arrays["name_entries"] = np.searchsorted(e_name, np.arange(len(names) + 1)).astype(np.int64)
        arrays["path_entries"] = np.argsort(e_path, kind="stable").astype(np.int64)
        arrays["path_entry_starts"] = np.searchsorted(np.sort(e_path), np.arange(len(paths) + 1)).astype(np.int64)
        arrays["signatures"], arrays["signature_starts"] = _blob([r[ROW_SIGNATURE] for r in rows])
        arrays["docs"], arrays["doc_starts"] = _blob([r[ROW_DOC] for r in rows])
        for name, strings in zip(_STRINGS, (paths, stamps, kinds, originals, containers), strict=True):
            arrays[name], arrays[f"{name}_starts"] = _text("\n".join(strings)), line_starts(strings)
        built = NameArrays.build(names, wlines)
        for f in _NAME_TEXT:
            arrays[f"name_{f}"] = _text(getattr(built, f))
        for f in _NAME_ARRAYS:
            arrays[f"name_{f}"] = getattr(built, f)
        return cls(arrays)

    def save(self, path: Path) -> int:
        """Write the snapshot (atomically); the bytes written."""
        return write_array_file(path, ArrayFile(KIND, {"symbols": len(self._e_key)}, self._arrays))

    @classmethod
    def load(cls, path: Path) -> FrozenSymbols:
        """Open a snapshot; raises ArrayFileError for a missing or damaged file."""
        return cls(read_array_file(path, KIND).arrays)

    # what it holds --------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._e_key) - self._hidden

    def stamps(self) -> dict[str, str]:
        """Each file's stamp as the snapshot was built (hidden files included)."""
        return dict(zip(self._paths, self._stamps, strict=True))

    def paths(self) -> list[str]:
        return [p for i, p in enumerate(self._paths) if i not in self._dead]

    def _ids(self) -> dict[str, int]:
        if self._path_ids is None:
            self._path_ids = {p: i for i, p in enumerate(self._paths)}
        return self._path_ids

    def hide(self, path: str) -> None:
        """``path`` changed or went: its entries match nothing from now on."""
        pid = self._ids().get(path)
        if pid is None or pid in self._dead:
            return
        self._dead.add(pid)
        entries = self._path_order[self._path_starts[pid]:self._path_starts[pid + 1]]
        self._hidden += len(entries)
        names = np.searchsorted(self._name_starts, entries, side="right") - 1
        for i in set(names.tolist()):
            self.index.rerank(i)

    # Entries for the NameIndex ------------------------------------------------------
    def emit(self, i: int, tier: int, sub: int, query: str, container_q: str, out: list[Scored],
             cap: int) -> int:
        """(Entries.emit.) A name's entries are in a search's order but for the case of the
        match, so at most ``cap`` of each case are worth adding."""
        dead, epath, paths, ranges = self._dead, self._path, self._paths, self._ranges
        exact = folded = 0
        for e in range(self._ns[i], self._ns[i + 1]):
            p = epath[e]
            if dead and p in dead:
                continue
            if container_q and not is_subsequence(container_q, self._containers[self._cont[e]].lower()):
                continue
            case = 0 if query in self._originals[self._orig[e]] else 1
            if case:
                if folded >= cap:
                    continue
                folded += 1
            else:
                exact += 1
            out.append(((tier, sub, case, self._key[e], paths[p], ranges[8 * e], ranges[8 * e + 1]), self, e))
            if exact >= cap:
                break  # every entry left ranks below these
        return exact + folded

    def best_rank(self, i: int) -> int:
        dead, epath, key = self._dead, self._path, self._key
        return min((key[e] for e in range(self._ns[i], self._ns[i + 1]) if epath[e] not in dead), default=NO_RANK)

    def hit(self, e: int) -> tuple[str, Symbol]:
        r = self._ranges[8 * e:8 * e + 8].tolist()
        sym = Symbol(self._originals[self._orig[e]], self._kinds[self._kind[e]], self._containers[self._cont[e]],
                     tuple(r[:4]), tuple(r[4:]),  # type: ignore[arg-type]
                     str(self._sig_text[self._sig[e]:self._sig[e + 1]], *_TEXT),
                     str(self._doc_text[self._doc[e]:self._doc[e + 1]], *_TEXT), self._exported[e] == 1)
        return self._paths[self._path[e]], sym

    def named_in(self, name: str, paths: AbstractSet[str]) -> list[tuple[str, Symbol]]:
        """Every (path, symbol) named ``name`` (lower-cased) in one of ``paths``."""
        i = self.index.position(name)
        if i is None:
            return []
        ids = {self._ids()[p] for p in paths if p in self._ids()} - self._dead
        epath = self._path
        return [self.hit(e) for e in range(self._ns[i], self._ns[i + 1]) if epath[e] in ids] if ids else []

    def holds(self, path: str) -> bool:
        """Whether the snapshot serves the symbols of ``path``."""
        pid = self._ids().get(path)
        return pid is not None and pid not in self._dead

    def enclosing(self, path: str, line: int, kinds: AbstractSet[str] | None = None) -> Symbol | None:
        """The innermost symbol of ``path`` (of one of ``kinds``) whose range holds ``line``."""
        if not self.holds(path):
            return None
        pid = self._ids()[path]
        entries = self._path_order[self._path_starts[pid]:self._path_starts[pid + 1]]
        for i in holding(self._arrays["entry_ranges"][entries], line).tolist():
            sym = self.hit(int(entries[i]))[1]
            if kinds is None or sym.kind in kinds:
                return sym
        return None

    def top(self, limit: int) -> list[Scored]:
        """The ``limit`` best-ranked entries, keyed (rank, path, line, column)."""
        keys = self._e_key
        if self._dead:
            keys = np.where(np.isin(self._e_path, np.fromiter(self._dead, dtype=np.int32)), NO_RANK, keys)
        if not len(keys) or limit <= 0:
            return []
        k = min(limit, len(keys)) - 1
        cut = np.partition(keys, k)[k]
        if cut >= NO_RANK:
            cut = NO_RANK - 1
        chosen = np.flatnonzero(keys <= cut).tolist()
        items = [((self._key[e], self._paths[self._path[e]], self._ranges[8 * e], self._ranges[8 * e + 1]), self, e)
                 for e in chosen]
        items.sort(key=lambda t: t[0])
        return items[:limit]
