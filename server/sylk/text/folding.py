"""Case folding for exact and regex search (``ingest.grams``, ``search.pattern``).

The trigram index holds the trigrams of each file's *folded* text, and a pattern's
literals are looked up folded the same way, so one index answers case-sensitive and
case-insensitive searches alike (a case-sensitive match is also a folded one; the
candidates are verified against the text afterwards).

For that to find every candidate, two characters that Python's ``re.IGNORECASE``
takes as equal must fold alike. ``str.casefold`` does for every code point but two:
``İ`` (U+0130) and ``ı`` (U+0131), which ``re`` takes as ``i``/``I`` and casefold
does not; they are mapped to ``i`` first. (``tests/test_grep.py`` checks the whole
of Unicode.) Folding is per character, with no context (unlike ``str.lower`` on a
final sigma), so the folding of a substring is a substring of the folded text.
"""

from __future__ import annotations

_DOTTED = str.maketrans({"\u0130": "i", "\u0131": "i"})


def fold(text: str) -> str:
    """``text`` folded for case-insensitive comparison (see the module docstring)."""
    if text.isascii():
        return text.lower()
    if "\u0130" in text or "\u0131" in text:  # (translate walks the text in Python's loop: only if needed)
        text = text.translate(_DOTTED)
    return text.casefold()
