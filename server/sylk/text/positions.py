"""The one place where positions change units.

tree-sitter reports (row, byte column); LSP speaks UTF-16 code units by default.
Everything Sylk stores is (line, UTF-16 column), converted here.
"""

from __future__ import annotations


class LineIndex:
    """Converts byte columns of one source text to UTF-16 columns."""

    __slots__ = ("_ascii", "_lines")

    def __init__(self, source: bytes) -> None:
        self._ascii = source.isascii()
        self._lines: list[bytes] | None = None if self._ascii else source.split(b"\n")

    def utf16_column(self, row: int, byte_col: int) -> int:
        if self._ascii or byte_col == 0:
            return byte_col
        lines = self._lines
        assert lines is not None
        if row >= len(lines):
            return byte_col
        prefix = lines[row][:byte_col]
        if prefix.isascii():
            return byte_col
        return utf16_len(prefix.decode("utf-8", errors="replace"))


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (characters beyond the BMP count twice)."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def utf16_to_index(text: str, col: int) -> int:
    """The index into ``text`` of the character at UTF-16 column ``col`` (past the end of
    the text when the column is)."""
    if text.isascii():
        return col
    units = 0
    for i, ch in enumerate(text):
        if units >= col:
            return i
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(text)
