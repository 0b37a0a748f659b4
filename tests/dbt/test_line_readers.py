"""The two line readers give the same lines.

A text part file (valid UTF-8, no 0x1f or NUL byte, no byte order mark, no line over 1 MiB,
every line ended by LF with no carriage return, or every one by CRLF with no other) is
streamed by the engine's line reader, so a big day's memory does not grow with its files
(within DuckDB's memory budget); any other file is read whole by the row rule
(macros/rules/refill_split_landed_lines.sql), the one definition of a landed line. Both
must give every line with the same file, number, text and UTF-8 flag.
"""

from __future__ import annotations

from datetime import date

import duckdb
import pytest

from bench.floor import rule_sql
from refill import settings
from refill.cli import main
from refill.rules import readiness
from refill.rules.window import window_vars
from refill.sample_data import DATASET, not_utf8_line, payment_line, write_landed_day
from tests.helpers import expected_day, query

DAY = date(2025, 4, 3)
LONG_LINE = b"x" * (readiness.PLAIN_LINE_MAX_BYTES + 10)

# part file contents, and whether each is plain text (streamed) or read whole
PART_FILES = {
    "part-0000.jsonl": (
        payment_line(DAY, 1).encode()
        + b'\n\n  spaced  \n"quoted",x,"y\n\t\n{"cut": \nno final newline',
        True,
    ),
    "part-0001.jsonl": (b"one\ntwo\n\n", True),  # ends with an empty line
    "part-0002.jsonl": (b"\n", True),  # one empty line
    "part-0003.jsonl": (b"", True),  # no line
    "part-0004.jsonl": ("é ü \u20ac \U0001f600 \\x0A\n".encode(), True),
    "part-0005.jsonl": (b"a\r\nb\r\r\nc\rd\r\n", False),  # carriage returns
    "part-0006.jsonl": (not_utf8_line(DAY, 2) + b"\nafter\n", False),
    "part-0007.jsonl": (b'\xef\xbb\xbf{"x": 1}\n', False),  # a byte order mark
    "part-0008.jsonl": (b"a\x1fb\n", False),
    "part-0009.jsonl": (b"nul\x00byte\n", False),
    "part-0010.jsonl": (b"short\n" + LONG_LINE + b"\nshort\n", False),
    # every line ended by CRLF: streamed too (an empty line, no final newline)
    "part-0011.jsonl": (payment_line(DAY, 3).encode() + b"\r\n\r\n\xc3\xa9 \r\nlast", True),
    "part-0012.jsonl": (b"lf\ncrlf\r\n", False),  # mixed line endings
}


def test_plain_and_exact_readers_give_the_rule_s_lines(workspace, dbt_project, monkeypatch):
    # GIVEN a day whose part files hold every shape of line, plain text or not
    records = sum(readiness.count_lines(content) for content, _ in PART_FILES.values())
    write_landed_day(
        workspace.landing, DAY, [[] for _ in PART_FILES], manifest={"records": records}
    )
    folder = readiness.day_folder(workspace.landing, DATASET, DAY)
    for name, (content, _) in PART_FILES.items():
        (folder / name).write_bytes(content)
    assert readiness.day_readiness(workspace.landing, DATASET, DAY).is_ready
    # AND readiness tells the ones the line reader streams apart
    streamed = {
        name: readiness.part_summary(folder / name).line_ending is not None for name in PART_FILES
    }
    assert streamed == {name: is_streamed for name, (_, is_streamed) in PART_FILES.items()}
    held = spy_on_held_parts(monkeypatch)

    # WHEN the day is built
    outcome = dbt_project.build(window_vars(DAY, DAY))

    # THEN the engine read every file through a held descriptor, streaming the plain ones
    assert outcome.success, outcome.message
    assert sorted(held) == sorted(f"{DATASET}/dt={DAY}/{name}" for name in PART_FILES)
    assert {part.rsplit("/", 1)[1]: ending is not None for part, ending in held.items()} == streamed
    # AND the staged lines are exactly what the row rule gives for every file: each line's
    # place, and the text of every line kept (the quarantined ones)
    staged = query(
        workspace.warehouse,
        "select file_name, landed_date, line_number, line_status, line_text "
        "from staging.stg_payments__lines order by file_name, line_number",
    )
    rule = rule_lines(workspace.landing)
    assert [row[:3] for row in staged] == [row[:3] for row in rule]
    kept = {row[:3]: row[4] for row in staged if row[3] == "quarantined"}
    assert kept == {row[:3]: row[3] for row in rule if row[:3] in kept}
    assert len(kept) > len(PART_FILES)  # most of these lines are not payments
    assert len(staged) == records


def spy_on_held_parts(monkeypatch) -> dict:
    """part file -> the line ending the line reader streamed it by (None: read whole), as
    the readiness rule handed each one to the engine."""
    held = {}
    hold = readiness.hold_part

    def recorded(landing_root, relative_part):
        engine_path, ending = hold(landing_root, relative_part)
        held[relative_part] = ending
        return engine_path, ending

    monkeypatch.setattr(readiness, "hold_part", recorded)
    return held


def rule_lines(landing) -> list[tuple]:
    """Every line of the day's part files as the row rule reads them (whole files)."""
    split = rule_sql("refill_split_landed_lines", "files", landing.as_posix())
    folder = readiness.day_folder(landing, DATASET, DAY).as_posix()
    with duckdb.connect() as connection:
        return connection.execute(
            f"with files as (select filename, content from read_blob('{folder}/part-*.jsonl')), "
            f"lines as ({split}) "
            "select file_name, landed_date, line_number, line_text, is_valid_utf8 "
            "from lines order by file_name, line_number"
        ).fetchall()


# -- a window of one odd kind ---------------------------------------------------------------

ODD_WINDOW = (date(2025, 4, 7), date(2025, 4, 8))


def crlf_parts(day: date) -> list[bytes]:
    """Two part files whose every line ends with CRLF (a Windows export)."""
    lines = [payment_line(day, n).encode() for n in range(4)]
    return [
        b"".join(line + b"\r\n" for line in lines[:2]),
        b"".join(line + b"\r\n" for line in lines[2:]),
    ]


def not_utf8_parts(day: date) -> list[bytes]:
    """Two part files, each holding a line that is not UTF-8 among valid ones."""
    return [
        payment_line(day, 1).encode() + b"\n" + not_utf8_line(day, 2) + b"\n",
        not_utf8_line(day, 3) + b"\n" + payment_line(day, 4).encode() + b"\n",
    ]


ODD_KINDS = {"every part file CRLF": crlf_parts, "every part file not UTF-8": not_utf8_parts}


def land_odd_window(landing, parts_of) -> None:
    for day in ODD_WINDOW:
        parts = parts_of(day)
        records = sum(readiness.count_lines(part) for part in parts)
        write_landed_day(landing, day, [[] for _ in parts], manifest={"records": records})
        folder = readiness.day_folder(landing, DATASET, day)
        for index, content in enumerate(parts):
            (folder / f"part-{index:04d}.jsonl").write_bytes(content)
        assert readiness.day_readiness(landing, DATASET, day).is_ready


def assert_published_as_the_oracle_says(workspace) -> None:
    for day in ODD_WINDOW:
        truth = expected_day(workspace.landing, day)
        assert query(
            workspace.warehouse,
            "select count(*), coalesce(sum(amount), 0) from main.fct_payments where event_date = ?",
            [day],
        ) == [(truth.published, truth.amount)]
        assert query(
            workspace.warehouse,
            "select count(*) from main.payments_quarantine where landed_date = ?",
            [day],
        ) == [(truth.quarantined,)]


@pytest.mark.parametrize("parts_of", ODD_KINDS.values(), ids=list(ODD_KINDS))
def test_a_window_whose_every_part_file_is_not_plain_text_builds(workspace, dbt_project, parts_of):
    # GIVEN a window whose every part file is of one odd kind (CRLF: streamed; not UTF-8: whole)
    land_odd_window(workspace.landing, parts_of)

    # WHEN `dbt build --vars` builds the window
    outcome = dbt_project.build(window_vars(*ODD_WINDOW))

    # THEN it publishes every day as the oracle says
    assert outcome.success, outcome.message
    assert_published_as_the_oracle_says(workspace)


@pytest.mark.usefixtures("prefect_harness")
@pytest.mark.parametrize("parts_of", ODD_KINDS.values(), ids=list(ODD_KINDS))
def test_refill_daily_and_backfill_build_a_window_of_one_odd_kind(workspace, parts_of):
    # GIVEN a window whose every part file is of one odd kind (CRLF: streamed; not UTF-8: whole)
    land_odd_window(workspace.landing, parts_of)
    run = ["--retries", "1", "--retry-delay", "0", "--lock-wait", "30"]

    # WHEN refill daily builds its first day and refill backfill the whole window
    daily = main(["daily", "--date", str(ODD_WINDOW[0]), "--wait", "0", *run])
    backfill = main(
        ["backfill", "--start", str(ODD_WINDOW[0]), "--end", str(ODD_WINDOW[1]), "--yes", *run]
    )

    # THEN both succeed and every day is published as the oracle says
    assert (daily, backfill) == (0, 0)
    assert_published_as_the_oracle_says(workspace)


# -- a big day of CRLF files, in the memory budget ---------------------------------------------

BIG_CRLF_DAY = date(2025, 4, 11)
BIG_CRLF_LINES = 300_000  # two files of about 24 MB: the whole-file split needs about 4x that


def test_a_big_day_of_crlf_files_is_read_within_the_memory_budget(
    workspace, dbt_project, monkeypatch
):
    # GIVEN a day whose part files end every line with CRLF (a Windows export), each far
    # bigger than a quarter of DuckDB's memory budget, and a replay in each
    monkeypatch.setenv(settings.DUCKDB_MEMORY_LIMIT_ENV, "128MB")
    lines = [payment_line(BIG_CRLF_DAY, n).encode() for n in range(BIG_CRLF_LINES)]
    parts = [
        b"\r\n".join([*lines[: BIG_CRLF_LINES // 2], lines[0]]) + b"\r\n",
        b"\r\n".join([*lines[BIG_CRLF_LINES // 2 :], lines[-1]]) + b"\r\n",
    ]
    write_landed_day(
        workspace.landing, BIG_CRLF_DAY, [[], []], manifest={"records": BIG_CRLF_LINES + 2}
    )
    folder = readiness.day_folder(workspace.landing, DATASET, BIG_CRLF_DAY)
    for index, content in enumerate(parts):
        (folder / f"part-{index:04d}.jsonl").write_bytes(content)
    assert readiness.day_readiness(workspace.landing, DATASET, BIG_CRLF_DAY).is_ready

    # WHEN the day is built
    outcome = dbt_project.build(window_vars(BIG_CRLF_DAY, BIG_CRLF_DAY))

    # THEN it builds, every line read once with the CR dropped: the lines are the payments,
    # each published once, and the two replays are duplicates
    assert outcome.success, outcome.message
    assert query(
        workspace.warehouse,
        "select line_status, count(*) from staging.stg_payments__lines group by 1 order by 1",
    ) == [("duplicate", 2), ("published", BIG_CRLF_LINES)]
