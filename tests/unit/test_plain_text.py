"""Readiness tells a text part file the line reader streams, and by which line ending, from
one the row rule must read whole, a block at a time: what crosses a block boundary counts
too."""

from __future__ import annotations

from pathlib import Path

import pytest

from refill.rules import readiness


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readiness, "SUMMARY_BLOCK_BYTES", 8)
    monkeypatch.setattr(readiness, "PLAIN_LINE_MAX_BYTES", 8)


@pytest.mark.parametrize(
    ("content", "line_ending"),
    [
        (b"ab\ncd\n", "\n"),
        (b"", "\n"),
        (b"ab\ncdef\xe2\x82\xac\n", "\n"),  # a euro sign split across two blocks
        (b"abcdefg\nabcdefg\n", "\n"),  # lines of the longest length allowed
        (b"abc\nabcdefgh\n", None),  # a line over the limit, across blocks
        (b"abcdefghijklmnopqrstuvwxyz", None),  # one long line without newline
        (b"abcdef\xe2\x82", None),  # a character cut short at the end
        (b"abcdefgh\xe9\n", None),  # Latin-1, in the second block
        (b"\xef\xbb\xbfab\n", None),  # a byte order mark
        (b"abcdefgh\x1f\n", None),
        (b"ab\x00\n", None),
        (b"abcdef\r\nabcdef\r\n", "\r\n"),  # CRLF, lines of the longest length allowed
        (b"ab\r\nabc\r\nxy\r\n", "\r\n"),  # a CRLF pair split across two blocks
        (b"ab\r\n\r\ncd", "\r\n"),  # an empty line, no final newline
        (b"\r\n", "\r\n"),
        (b"abcdefg\r\r\n", None),  # a CR before the CRLF
        (b"ab\r\ncd\n", None),  # LF and CRLF mixed
        (b"ab\ncd\r\n", None),
        (b"ab\rcd\r\n", None),  # a lone CR inside a line
        (b"abcdefg\r", None),  # a lone CR at a block's end, then the end
        (b"ab\r\ncd\r", None),  # a final lone CR
        (b"abcdefgh\r\n", None),  # a CRLF line over the limit
    ],
)
def test_streamed_text_and_its_line_ending_are_told_a_block_at_a_time(
    small_blocks, tmp_path: Path, content, line_ending
):
    part = tmp_path / "part-0000.jsonl"
    part.write_bytes(content)
    summary = readiness.part_summary(part)
    assert summary.line_ending == line_ending
    assert summary.is_plain_text is (line_ending == "\n")
    assert summary.lines == readiness.count_lines(content)


def test_a_path_that_is_not_a_part_file_of_the_landing_is_refused_before_the_read(tmp_path: Path):
    # GIVEN a day folder with a part file, another file, and a link named like a part
    day = tmp_path / "payments" / "dt=2025-04-02"
    day.mkdir(parents=True)
    (day / "part-0000.jsonl").write_bytes(b"ab\n")
    (day / "notes.txt").write_bytes(b"ab\n")
    (day / "part-0002.jsonl").symlink_to(day / "notes.txt")
    folder = "payments/dt=2025-04-02"

    # WHEN the line reader asks how each is streamed, just before it reads
    # THEN a part file is told; no file is not streamed (the read then fails on it)
    assert readiness.part_line_ending(tmp_path, f"{folder}/part-0000.jsonl") == "\n"
    assert readiness.part_line_ending(tmp_path, f"{folder}/part-0001.jsonl") is None
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
            readiness.part_line_ending(tmp_path, path)
