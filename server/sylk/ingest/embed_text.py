"""What the embedding model reads of a chunk, and its cache key: the path, the kind and
qualified name (with the words of its identifiers), the doc, then the body lines
without indentation or bare punctuation, cut at a character budget (see ``chunks``)."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence

from ..text.words import split_words

# lines that say nothing to an embedding model
_NOISE = frozenset({"{", "}", "(", ")", "[", "]", "};", "});", "})", "),", "},", "];", "],", ");",
                    "/*", "*/", "*", "//", "#", '"""', "'''", "end", "fi", "done", "esac", "---"})

_blake = hashlib.blake2b


def text_hash(embed_text: str) -> str:
    return _blake(embed_text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def embed_text(head: list[str], doc: str, texts: Sequence[str], lo: int, hi: int, budget: int) -> str:
    """``head`` lines, the doc, then ``texts[lo:hi]`` without indentation, blank lines and lines of
    bare punctuation (``}``, ``});``), cut at ``budget`` characters."""
    out = "\n".join(head)
    if doc and len(out) < budget:
        out += "\n" + " ".join(doc[:budget].split())[: budget // 2]
    # about as many lines as the rest of the budget holds, more when they were short
    while lo < hi and len(out) < budget:
        j = min(hi, lo + (budget - len(out)) // 32 + 2)
        body = [t for t in map(str.strip, texts[lo:j]) if t and t not in _NOISE]
        lo = j
        if body:
            out = out + "\n" + "\n".join(body) if out else "\n".join(body)
    if len(out) > budget:
        out = out[:budget].rstrip()
    return out


@functools.lru_cache(maxsize=65536)
def _lower_words(name: str) -> tuple[str, ...]:
    if name.islower() and name.replace("_", "").isalpha():  # snake_case: the common case, fast
        return tuple(name.replace("_", " ").split())
    if name.isalpha() and name.isupper():
        return (name.lower(),)
    return tuple(w.lower() for w in split_words(name))


def title(kind: str, name: str, container: str) -> str:
    q = f"{container}.{name}" if container else name
    words = _lower_words(name)
    cwords = _lower_words(container.rpartition(".")[2]) if container else ()
    if len(words) > 1 or len(cwords) > 1:
        return f"{kind} {q} ({' '.join(cwords + words)})"
    return f"{kind} {q}"
