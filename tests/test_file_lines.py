"""Snippet lines kept between requests (search/file_lines.py): fresh after a change,
and bounded by what they weigh, however many or large the files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sylk.search import file_lines as fl


@pytest.fixture(autouse=True)
def small_budget(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(fl, "BUDGET", 20_000)
    monkeypatch.setattr(fl, "_lines", type(fl._lines)())
    monkeypatch.setattr(fl, "_held", 0)


def test_lines_stay_within_the_budget(tmp_path: Path):
    for i in range(40):
        p = tmp_path / f"f{i}.py"
        p.write_text("\n".join(f"line {n} of file {i}" for n in range(100)))
        assert fl.file_lines(p)[5] == f"line 5 of file {i}"
        assert fl.held() <= fl.BUDGET
    assert 0 < len(fl._lines) < 40  # the oldest went
    big = tmp_path / "big.py"
    big.write_text("x" * 50_000)  # alone over the budget: kept until the next one, never with others
    assert fl.file_lines(big) == ["x" * 50_000] and len(fl._lines) == 1
    assert fl.file_lines(tmp_path / "f39.py")[0] == "line 0 of file 39" and len(fl._lines) == 1


def test_a_changed_file_is_read_again_and_a_missing_one_is_none(tmp_path: Path):
    p = tmp_path / "a.py"
    p.write_text("one\ntwo")
    assert fl.file_lines(p) == ["one", "two"]
    p.write_text("one\ntwo\nthree")
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert fl.file_lines(p) == ["one", "two", "three"]
    assert fl.held() == fl._weight(["one", "two", "three"])
    assert fl.file_lines(tmp_path / "gone.py") is None
