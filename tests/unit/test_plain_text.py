"""Readiness tells a plain text part file (streamed by the line reader) from one the row
rule must read whole, a block at a time: what crosses a block boundary counts too."""

from __future__ import annotations

from pathlib import Path

import pytest

from refill.rules import readiness


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readiness, "SUMMARY_BLOCK_BYTES", 8)
    monkeypatch.setattr(readiness, "PLAIN_LINE_MAX_BYTES", 8)


@pytest.mark.parametrize(
    ("content", "is_plain"),
    [
        (b"ab\ncd\n", True),
        (b"", True),
        (b"ab\ncdef\xe2\x82\xac\n", True),  # a euro sign split across two blocks
        (b"abcdefg\nabcdefg\n", True),  # lines of the longest length allowed
        (b"abc\nabcdefgh\n", False),  # a line over the limit, across blocks
        (b"abcdefghijklmnopqrstuvwxyz", False),  # one long line without newline
        (b"abcdef\xe2\x82", False),  # a character cut short at the end
        (b"abcdefgh\xe9\n", False),  # Latin-1, in the second block
        (b"\xef\xbb\xbfab\n", False),  # a byte order mark
        (b"abcdefgh\r\n", False),
        (b"abcdefgh\x1f\n", False),
        (b"ab\x00\n", False),
    ],
)
def test_plain_text_is_told_a_block_at_a_time(small_blocks, tmp_path: Path, content, is_plain):
    part = tmp_path / "part-0000.jsonl"
    part.write_bytes(content)
    summary = readiness.part_summary(part)
    assert summary.is_plain_text is is_plain
    assert summary.lines == readiness.count_lines(content)


def test_a_path_that_is_not_a_part_file_of_the_landing_is_refused_before_the_read(tmp_path: Path):
    # GIVEN a day folder with a part file, another file, and a link named like a part
    day = tmp_path / "payments" / "dt=2025-04-02"
    day.mkdir(parents=True)
    (day / "part-0000.jsonl").write_bytes(b"ab\n")
    (day / "notes.txt").write_bytes(b"ab\n")
    (day / "part-0002.jsonl").symlink_to(day / "notes.txt")
    folder = "payments/dt=2025-04-02"

    # WHEN the line reader asks which are plain text, just before it reads
    # THEN a part file is told; no file is not plain (the read then fails on it)
    assert readiness.is_plain_text_part(tmp_path, f"{folder}/part-0000.jsonl")
    assert not readiness.is_plain_text_part(tmp_path, f"{folder}/part-0001.jsonl")
    # AND a path that is not a part file of the landing is refused, naming it
    for path in (
        f"{folder}/notes.txt",
        f"{folder}/part-0002.jsonl",
        "../x/dt=2025-04-02/part-0000.jsonl",
        f"/{folder}/part-0000.jsonl",
        f"{day}/part-0000.jsonl",
        "part-0000.jsonl",
        f"payments/x/{folder}/part-0000.jsonl",
    ):
        with pytest.raises(readiness.LandedFileProblem, match="part"):
            readiness.is_plain_text_part(tmp_path, path)
