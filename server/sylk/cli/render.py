"""Terminal rendering shared by the commands, and the JSON only the CLI shows."""

from __future__ import annotations

import sys
from typing import Any

import attrs

from .. import wire
from ..config import camel
from ..engine.status import SkippedFiles
from ..search.grep import GrepResult, LineHit
from ..search.results import Explanation, Hit
from ..store.integrity import SAMPLES, Verification
from ..text.positions import utf16_to_index


def human_size(n: float) -> str:
    """Bytes as ``512 B``, ``1.5 KiB`` ... ``3.2 GiB``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


# integrity.DriftCounts' fields, as people read them
DRIFT_LABELS = {
    "files_not_indexed": "files on disk, not indexed",
    "files_gone": "indexed files gone from disk",
    "files_changed": "indexed files changed on disk",
    "chunks_without_document": "chunks without a text document",
    "orphan_documents": "orphan text documents",
    "duplicate_documents": "duplicate text documents",
    "vectors_without_chunk": "vectors without a chunk",
    "vectors_not_embedded": "vectors of chunks not marked embedded",
    "embedded_without_vector": "embedded chunks without a vector",
    "stale_merkle_root": "stale Merkle root in the manifest",
}


def _samples(check: Verification) -> dict[str, list[str]]:
    """Some of the paths behind the counts, by DriftCounts field."""
    return {"files_not_indexed": check.not_indexed[:SAMPLES], "files_gone": check.gone[:SAMPLES],
            "files_changed": check.changed[:SAMPLES]}


def verification_json(check: Verification) -> dict[str, Any]:
    """``sylk status --verify --format json``'s ``verify`` block."""
    return {
        "clean": check.clean,
        "drift": wire.camel_dict(check.counts()),
        "damage": check.damage,
        "samples": {camel(k): v for k, v in _samples(check).items()},
        "merkleRoot": {"manifest": check.manifest_root, "disk": check.disk_root},
        "writerActive": check.writer_active,
    }


def print_verification(check: Verification) -> None:
    if check.clean:
        print("verify        clean: the manifest, the text index, the vectors and the disk agree")
    else:
        print("verify        drift found ('sylk index --repair' fixes it)")
    samples = _samples(check)
    for key, n in attrs.asdict(check.counts()).items():
        shown = ", ".join(samples.get(key, []))
        print(f"  {DRIFT_LABELS[key]:<38} {n:>6}  {shown}".rstrip())
    for problem in check.damage:
        print(f"  damaged: {problem}")
    if check.disk_root != check.manifest_root:
        print(f"  disk Merkle root {check.disk_root} differs")
    if check.writer_active:
        print("  (another Sylk process is writing this index: some drift may be work in progress)")


# after a hit whose file changed since it was indexed and whose chunk is not in it any more
STALE_MARK = "  [stale: the file changed since it was indexed; 'sylk index' updates it]"


def explain_line(h: Hit) -> str:
    """``sylk search --explain``: what each side said of a hit."""
    lex = f"lexical #{h.lexical_rank} bm25 {h.lexical_score:.2f}" if h.lexical_score is not None else "lexical -"
    sem = f"semantic #{h.semantic_rank} cos {h.semantic_score:.3f}" if h.semantic_score is not None else "semantic -"
    return f"{lex} | {sem} | score {h.score:.4f}"


def explanation_line(e: Explanation) -> str:
    """``sylk search --explain``: how the query was read and fused."""
    parts = [f"query read as {e.style}"]
    if e.identifiers:
        parts.append("identifiers " + " ".join(e.identifiers))
    if e.words:
        parts.append("words " + " ".join(e.words))
    if e.dropped:
        parts.append("stop words left out " + " ".join(e.dropped))
    if e.fusion == "convex":
        parts.append(f"fused convex, lexical share {e.alpha:.2f}, {e.depth} candidates a side")
    elif e.fusion == "rrf":
        parts.append(f"fused by reciprocal rank, {e.depth} candidates a side")
    if e.min_score:
        parts.append(f"relevance floor {e.min_score:g} left out {e.below_min_score} hits only the semantic side "
                     "found")
    parts.append("ranked by " + (", ".join(e.ranking) if e.ranking else "no stage"))
    return "; ".join(parts)


SKIPPED_INLINE = 5  # skipped files named on a reason's line, without --skipped


def print_skipped(skipped: SkippedFiles, every: bool) -> None:
    """``sylk status``'s skipped files: a line per reason with its count and the first
    few files; with ``every``, every file on a line of its own."""
    if not skipped.total:
        return
    print(f"skipped       {skipped.total} files")
    cut = False
    for r in skipped.by_reason:
        if every:
            print(f"  {r.reason:<18} {r.count:>5}")
            for path in r.files:
                print(f"    {path}")
            continue
        shown = ", ".join(r.files[:SKIPPED_INLINE])
        if r.count > SKIPPED_INLINE:
            shown += f", ... ({r.count - SKIPPED_INLINE} more)"
            cut = True
        print(f"  {r.reason:<18} {r.count:>5}  {shown}")
    if cut:
        print("              ('sylk status --skipped' lists every skipped file)")


# rg's colours: path, line number, match
_PATH, _LINE, _MATCH, _RESET = "\x1b[35m", "\x1b[32m", "\x1b[1;31m", "\x1b[0m"


def matching_line(h: LineHit, color: bool) -> str:
    """``path:line:col:text``, columns 1-based in UTF-16 units as in the language server
    (rg counts bytes), the first match's column; matches in colour on a terminal."""
    col = h.matches[0][0] + 1 if h.matches else 1
    if not color:
        return f"{h.path}:{h.line + 1}:{col}:{h.text}"
    return f"{_PATH}{h.path}{_RESET}:{_LINE}{h.line + 1}{_RESET}:{col}:{_painted(h)}"


def _painted(h: LineHit) -> str:
    text, out, at = h.text, [], 0
    for a16, b16 in h.matches:
        a, b = utf16_to_index(text, a16), utf16_to_index(text, b16)
        out += [text[at:a], _MATCH, text[a:b], _RESET]
        at = b
    return "".join(out) + text[at:]


def print_line_notes(result: GrepResult) -> None:
    """What stderr says of a line search that read every file or was cut short."""
    if result.message and (result.scanned or result.partial):
        print(f"sylk: {result.message}", file=sys.stderr)
