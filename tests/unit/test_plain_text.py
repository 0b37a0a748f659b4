"""Readiness tells a text part file the line reader streams, and by which line ending, from
one the row rule must read whole, a block at a time: what crosses a block boundary counts
too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from refill.rules import landed_files, readiness


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
    # GIVEN a day folder with a part file, another file, and a link named like a part,
    # each judged by the readiness rule
    day = tmp_path / "payments" / "dt=2025-04-02"
    day.mkdir(parents=True)
    (day / "part-0000.jsonl").write_bytes(b"ab\n")
    (day / "notes.txt").write_bytes(b"ab\n")
    (day / "part-0002.jsonl").symlink_to(day / "notes.txt")
    folder = "payments/dt=2025-04-02"
    readiness.part_summary(day / "part-0000.jsonl")

    # WHEN the line reader asks for each, just before it reads
    # THEN a judged part file is handed over with how it is streamed
    try:
        engine_path, ending = readiness.hold_part(tmp_path, f"{folder}/part-0000.jsonl")
        assert ending == "\n" and Path(engine_path).read_bytes() == b"ab\n"
        # AND a path that is not a judged part file of the landing is refused, naming it
        for path in (
            f"{folder}/part-0001.jsonl",  # no file, so no verdict
            f"{folder}/notes.txt",
            f"{folder}/part-0002.jsonl",
            "../x/dt=2025-04-02/part-0000.jsonl",
            f"/{folder}/part-0000.jsonl",
            f"{day}/part-0000.jsonl",
            "part-0000.jsonl",
            f"payments/x/{folder}/part-0000.jsonl",
        ):
            with pytest.raises(readiness.LandedFileProblem, match="part"):
                readiness.hold_part(tmp_path, path)
    finally:
        landed_files.release_held()


@pytest.mark.parametrize("swap", ["symbolic link", "FIFO", "another file"])
def test_the_engine_reads_the_judged_file_whatever_its_path_names_after_the_hold(
    tmp_path: Path, swap: str
):
    # GIVEN a judged part file, held for the engine
    day = tmp_path / "payments" / "dt=2025-04-02"
    day.mkdir(parents=True)
    part = day / "part-0000.jsonl"
    part.write_bytes(b"checked\n")
    secret = tmp_path / "secret"
    secret.write_bytes(b"secret\n")
    readiness.part_summary(part)
    engine_path, _ = readiness.hold_part(tmp_path, "payments/dt=2025-04-02/part-0000.jsonl")

    # WHEN the part's path is swapped for something else
    staged = day / ".staged"
    if swap == "symbolic link":
        staged.symlink_to(secret)
    elif swap == "FIFO":
        os.mkfifo(staged)
    else:
        staged.write_bytes(b"secret\n")
    os.replace(staged, part)

    # THEN the engine's path still reads the checked bytes, without blocking
    assert Path(engine_path).read_bytes() == b"checked\n"
    # AND the release refuses the build: the held file was unlinked from the landing
    assert landed_files.release_held() == ["part file part-0000.jsonl changed while it was read"]


def test_a_part_file_changed_after_its_verdict_is_refused_before_the_engine_opens_it(
    tmp_path: Path,
):
    # GIVEN a judged part file, then grown in place (the same inode)
    day = tmp_path / "payments" / "dt=2025-04-02"
    day.mkdir(parents=True)
    part = day / "part-0000.jsonl"
    part.write_bytes(b"checked\n")
    readiness.part_summary(part)
    with part.open("ab") as stream:
        stream.write(b"grown\n")

    # WHEN the line reader asks for it THEN it is refused, naming it
    with pytest.raises(readiness.LandedFileProblem, match="part-0000.jsonl changed after its"):
        readiness.hold_part(tmp_path, "payments/dt=2025-04-02/part-0000.jsonl")
    assert landed_files.release_held() == []
