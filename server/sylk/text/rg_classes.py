"""ripgrep's Unicode classes, for a Python regular expression that must match as rg's
does (``search.pattern``): its ``\\w`` and ``\\s`` are not Python's.

- rg's ``\\w`` (the Rust ``regex`` crate, Unicode on) is Alphabetic, every mark, decimal
  digits, connector punctuation and the two join controls. Python's is letters and
  every number (``str.isalnum``) and ``_``. So ``²``, ``½``, ``㊀`` (other numbers) are
  words to Python and not to rg, and combining marks (``é`` written as ``e`` + U+0301,
  ``f̅``), ``‿`` or the circled letters ``Ⓐ`` are words to rg and not to Python.
- rg's ``\\s`` is White_Space; Python's also takes U+001C to U+001F.

On ASCII but U+001C to U+001F the two agree (``python_agrees``), so only other text
needs these (slower) classes. Built on first use from ``unicodedata`` (about half a
second), then kept.
"""

from __future__ import annotations

import functools
import re
import unicodedata

# Other_Alphabetic characters outside the marks: circled and squared Latin letters
_OTHER_ALPHABETIC = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189))
_JOIN_CONTROLS = (0x200C, 0x200D)
_PYTHON_ONLY_SPACES = range(0x1C, 0x20)


def _is_word(c: str) -> bool:
    cat = unicodedata.category(c)
    return cat[0] in "LM" or cat in ("Nd", "Nl", "Pc")


@functools.cache
def _tables() -> tuple[str, str, str, str, str, str, str]:
    """Class bodies (``[...]`` without the brackets): rg's word characters, the others,
    rg's spaces, the others, the characters where Python's and rg's classes differ, and
    the words only to Python and only to rg."""
    every = "".join(map(chr, range(0x110000)))
    word = [_is_word(c) for c in every]
    for a, b in _OTHER_ALPHABETIC:
        word[a:b + 1] = [True] * (b - a + 1)
    for cp in _JOIN_CONTROLS:
        word[cp] = True
    python_word = re.compile(r"\w")
    in_python = [bool(python_word.match(c)) for c in every]
    differ = [w != p for w, p in zip(word, in_python, strict=True)]
    space = [c.isspace() for c in every]
    for cp in _PYTHON_ONLY_SPACES:
        space[cp] = False
        differ[cp] = True
    return (_body(word), _body([not w for w in word]), _body(space), _body([not s for s in space]),
            _body(differ), _body([p and not w for w, p in zip(word, in_python, strict=True)]),
            _body([w and not p for w, p in zip(word, in_python, strict=True)]))


def _body(member: list[bool]) -> str:
    """A class body of the code points where ``member`` is true, as ranges of escapes."""
    out = []
    start = None
    for cp, m in enumerate([*member, False]):
        if m and start is None:
            start = cp
        elif not m and start is not None:
            out.append(_escape(start) if cp - 1 == start else f"{_escape(start)}-{_escape(cp - 1)}")
            start = None
    return "".join(out)


def _escape(cp: int) -> str:
    return f"\\U{cp:08x}" if cp > 0xFFFF else f"\\u{cp:04x}"


_SEPARATORS = tuple(map(chr, _PYTHON_ONLY_SPACES))


def python_agrees(text: str) -> bool:
    """Whether Python reads ``\\w`` and ``\\s`` as rg does everywhere in ``text``
    (four ``in`` scans run at memory speed; a regex search of the text would not)."""
    return text.isascii() and not any(c in text for c in _SEPARATORS)


_CLASS_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\[wWsSbB]")


def holds_classes(source: str) -> bool:
    """Whether a Python regular expression holds one of ``\\w \\W \\s \\S \\b \\B``
    (cheap: no table is built)."""
    return bool(_CLASS_ESCAPE.search(source))


def rewritten(source: str) -> str | None:
    """``source`` (a Python regular expression) with ``\\w \\W \\s \\S \\b \\B`` spelt as rg
    reads them; None when it holds none of them."""
    if "\\" not in source:
        return None
    word, nonword, space, nonspace, _differ, python_only, rg_only = _tables()
    # Outside a class, Python's own \w and \s corrected by the few characters the two
    # engines class differently: a regex of the whole classes took 20 ms to compile
    w = f"(?:[{rg_only}]|(?![{python_only}])\\w)"
    nw = f"(?:[{python_only}]|(?![{rg_only}])\\W)"
    separators = "\\x1c-\\x1f"
    outside = {"w": w, "W": nw, "s": f"(?![{separators}])\\s", "S": f"(?:[{separators}]|\\S)",
               "b": f"(?:(?<!{w})(?={w})|(?<={w})(?!{w}))", "B": f"(?:(?<!{w})(?!{w})|(?<={w})(?={w}))"}
    inside = {"w": word, "W": nonword, "s": space, "S": nonspace}  # (\b in a class is a backspace)
    out: list[str] = []
    changed = False
    i, n = 0, len(source)
    in_class = False
    while i < n:
        c = source[i]
        if c == "\\" and i + 1 < n:
            e = source[i + 1]
            swap = (inside if in_class else outside).get(e)
            out.append(swap if swap is not None else source[i:i + 2])
            changed = changed or swap is not None
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            out.append(c)
            i += 1
            if source.startswith("^", i):
                out.append("^")
                i += 1
            if source.startswith("]", i):  # a "]" first in a class is one of its characters
                out.append("]")
                i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out) if changed else None


def warm() -> None:
    """Build the tables now (a long-running server, after its first index run, so that
    no search waits for them)."""
    differing()


@functools.cache
def differing() -> re.Pattern[str]:
    """A character Python's and rg's ``\\w`` or ``\\s`` class differently."""
    return re.compile(f"[{_tables()[4]}]")
