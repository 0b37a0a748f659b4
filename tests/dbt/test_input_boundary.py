"""The input boundary: values from the landing reach SQL only as data the engine parses.

Readiness (refill/rules/readiness.py) is the one definition of a valid manifest and of a valid
part-file name; a hostile or malformed value makes the day not ready, by name, and
changes nothing. Line content is data whatever it holds (quotes, odd characters, bytes
that are not UTF-8), and the host's time zone never changes what a line means.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path

import duckdb
import pytest

from bench.floor import declared_rule, rule_sql
from harness.hostile import SPECIAL_PART_FILES, write_special_part
from refill.rules import readiness
from refill.rules.window import window_vars
from refill.sample_data import (
    DATASET,
    INJECTED_SQL,
    ODD_TRANSACTION_IDS,
    OMIT,
    not_utf8_line,
    payment_line,
    write_landed_day,
)
from refill.settings import project_dir
from tests.helpers import expected_day, published_tables, query, snapshot

PUBLISHED_DAY = date(2025, 4, 1)
NEW_DAY = date(2025, 4, 2)


@pytest.fixture
def published(workspace, dbt_project):
    """A warehouse with one published day."""
    write_landed_day(
        workspace.landing, PUBLISHED_DAY, [[payment_line(PUBLISHED_DAY, n) for n in range(5)]]
    )
    assert dbt_project.build(window_vars(PUBLISHED_DAY, PUBLISHED_DAY)).success
    return workspace


# An exported_at that, pasted into the VALUES list staging once rendered, closed it and
# dropped fct_payments for good (reproduced on the code before the input boundary).
VALUES_LIST_EXPLOIT = (
    "2025-04-03T02:13:00Z', 'fp', []::varchar[])) as manifest_values (landed_date, "
    "manifest_files, manifest_records, exported_at, source_fingerprint, part_files)), "
    "final as (select landed_date, manifest_files, manifest_records, source_fingerprint, "
    "part_files, strptime(exported_at, '%Y-%m-%dT%H:%M:%SZ') as exported_at from manifests) "
    "select * from final); drop table main.fct_payments; select * from (with manifests as "
    "(select * from (values (date '2025-04-02', 1, 5, '2025-04-03T02:13:00Z"
)

HOSTILE_MANIFESTS = {
    "exported_at closes the VALUES list and drops fct_payments": (
        {"exported_at": VALUES_LIST_EXPLOIT},
        "exported_at",
    ),
    "exported_at closes the SQL text": (
        {"exported_at": f"2025-04-03T02:13:00Z{INJECTED_SQL}"},
        "exported_at",
    ),
    "exported_at missing": ({"exported_at": OMIT}, "exported_at"),
    "exported_at not a timestamp": ({"exported_at": "yesterday"}, "exported_at"),
    "exported_at not UTC": ({"exported_at": "2025-04-03T02:13:00+02:00"}, "exported_at"),
    "exported_at a number": ({"exported_at": 1743646380}, "exported_at"),
    "files a string": ({"files": "1"}, "files"),
    "records a boolean": ({"records": True}, "records"),
    "records a fraction": ({"records": 5.0}, "records"),
    "records negative": ({"records": -5}, "records"),
    "dt not the folder's day": ({"dt": f"{NEW_DAY}{INJECTED_SQL}"}, "dt"),
}


@pytest.mark.parametrize("fields, field", HOSTILE_MANIFESTS.values(), ids=list(HOSTILE_MANIFESTS))
def test_a_hostile_manifest_value_refuses_the_day_by_name_and_changes_nothing(
    published, dbt_project, fields, field
):
    # GIVEN a published day, and a new day whose manifest holds a hostile or malformed value
    lines = [payment_line(NEW_DAY, n) for n in range(5)]
    write_landed_day(published.landing, NEW_DAY, [lines], fields)
    before = published_tables(published.warehouse)

    # WHEN readiness judges the day, and a plain dbt build asks for it
    verdict = readiness.day_readiness(published.landing, DATASET, NEW_DAY)
    outcome = dbt_project.build(window_vars(NEW_DAY, NEW_DAY))

    # THEN every table is as it was
    assert published_tables(published.warehouse) == before
    # AND dbt refuses the day, naming it and the field
    assert not outcome.success
    assert "refill readiness:" in outcome.message, outcome.message
    assert f"{NEW_DAY} (" in outcome.message and field in outcome.message
    # AND readiness says why, on one line naming the field
    assert not verdict.is_ready
    assert field in verdict.reason and "\n" not in verdict.reason


def test_a_part_file_name_that_injects_sql_refuses_the_day_by_name(published, dbt_project):
    # GIVEN a new day whose part file's name closes a SQL string and appends a statement
    hostile_name = f"part-0000{INJECTED_SQL}.jsonl"
    lines = [payment_line(NEW_DAY, n) for n in range(5)]
    write_landed_day(published.landing, NEW_DAY, [lines], part_names=[hostile_name])
    before = published_tables(published.warehouse)

    # WHEN readiness judges it and a plain dbt build asks for it
    verdict = readiness.day_readiness(published.landing, DATASET, NEW_DAY)
    outcome = dbt_project.build(window_vars(NEW_DAY, NEW_DAY))

    # THEN the day is not ready because of the file's name, and nothing changed
    assert not verdict.is_ready and "part file name" in verdict.reason
    assert not outcome.success and f"{NEW_DAY} (part file name" in outcome.message
    assert published_tables(published.warehouse) == before


def test_exported_at_with_a_fraction_of_a_second_is_ready_and_parsed(workspace, dbt_project):
    # GIVEN a day exported at a time with fractional seconds (ISO-8601 UTC)
    write_landed_day(
        workspace.landing,
        NEW_DAY,
        [[payment_line(NEW_DAY, n) for n in range(3)]],
        {"exported_at": "2025-04-03T02:13:00.25Z"},
    )

    # WHEN it is built
    outcome = dbt_project.build(window_vars(NEW_DAY, NEW_DAY))

    # THEN it publishes, and staging holds the exporter's time to the microsecond
    assert outcome.success, outcome.message
    assert query(
        workspace.warehouse, "select exported_at from staging.stg_payments__manifests"
    ) == [(datetime(2025, 4, 3, 2, 13, 0, 250_000),)]


def test_odd_transaction_ids_flow_through_as_data(workspace, dbt_project):
    # GIVEN ids with quotes, a statement separator, backslashes, escapes and unicode, each
    # landed twice (an identical replay) and one of them in two conflicting versions
    lines = [
        payment_line(NEW_DAY, n, transaction_id=tx) for n, tx in enumerate(ODD_TRANSACTION_IDS)
    ]
    conflicting = payment_line(NEW_DAY, 0, transaction_id=ODD_TRANSACTION_IDS[0], amount=999)
    write_landed_day(workspace.landing, NEW_DAY, [lines, [*lines[1:], conflicting]])

    # WHEN the day is built
    outcome = dbt_project.build(window_vars(NEW_DAY, NEW_DAY))

    # THEN every id is published once, exactly as landed, and the conflict is quarantined
    assert outcome.success, outcome.message
    published_ids = query(
        workspace.warehouse, "select transaction_id from main.fct_payments order by 1"
    )
    assert published_ids == sorted((tx,) for tx in ODD_TRANSACTION_IDS[1:])
    assert (
        query(workspace.warehouse, "select quarantine_reason from main.payments_quarantine")
        == [(f"conflicting versions of transaction {ODD_TRANSACTION_IDS[0]}",)] * 2
    )
    truth = expected_day(workspace.landing, NEW_DAY)
    assert truth.published == len(ODD_TRANSACTION_IDS) - 1


def escaped(line: bytes) -> str:
    """The quarantine's text of a line that is not UTF-8: every byte outside printable
    ASCII, and the quote, double quote and backslash, written as \\xNN."""
    return "".join(
        chr(byte) if 0x20 <= byte < 0x7F and chr(byte) not in "'\"\\" else f"\\x{byte:02X}"
        for byte in line
    )


def test_a_line_that_is_not_utf8_is_quarantined_with_its_file_and_line(workspace, dbt_project):
    # GIVEN a day whose second part file holds one line that is not valid UTF-8
    good = [payment_line(NEW_DAY, n) for n in range(6)]
    bad = not_utf8_line(NEW_DAY, 99)
    write_landed_day(workspace.landing, NEW_DAY, [good[:3], [good[3], bad, *good[4:]]])

    # WHEN the day is built
    outcome = dbt_project.build(window_vars(NEW_DAY, NEW_DAY))

    # THEN the rest of the day publishes and the line is quarantined with its file and line
    assert outcome.success, outcome.message
    assert query(workspace.warehouse, "select count(*) from main.fct_payments") == [(len(good),)]
    quarantined = query(
        workspace.warehouse,
        "select file_name, line_number, quarantine_reason, line_text from main.payments_quarantine",
    )
    assert quarantined == [
        (
            f"{DATASET}/dt={NEW_DAY}/part-0001.jsonl",
            2,
            "not valid UTF-8",
            escaped(bad),
        )
    ]
    # AND the quarantined text gives the landed bytes back
    assert query(workspace.warehouse, "select line_text::blob from main.payments_quarantine") == [
        (bad,)
    ]
    # AND every landed line is accounted for: published + duplicate + quarantined = records
    assert query(
        workspace.warehouse,
        "select rows_written, source_records from ops.partition_ledger "
        "where model_name = 'fct_payments' and partition_date = ?",
        [NEW_DAY],
    ) == [(len(good), len(good) + 1)]


# -- host independence ------------------------------------------------------------------

# Timestamps whose meaning a session time zone could change: without a zone (UTC by the
# landing contract), near both ends of the day, and with explicit offsets.
ZONE_SENSITIVE_TIMESTAMPS = [
    f"{NEW_DAY}T00:30:00",
    f"{NEW_DAY}T03:59:59",
    f"{NEW_DAY}T21:30:00",
    f"{NEW_DAY}T23:59:59.5",
    f"{NEW_DAY}T12:00",
    f"{NEW_DAY}T23:30:00Z",
    f"{NEW_DAY}T23:30:00+02:00",
    f"{NEW_DAY}T01:30:00-05:00",
]
# Forms the engine also reads as explicit about their zone (the test oracle does not).
ENGINE_ONLY_TIMESTAMPS = [
    f"{NEW_DAY}T23:30:00 UTC",
    f"{NEW_DAY}T23:30:00 ",
    f"{NEW_DAY}T22:00:00+02",
]


def zone_sensitive_lines(timestamps: list[str] = ZONE_SENSITIVE_TIMESTAMPS) -> list[str]:
    return [payment_line(NEW_DAY, n, event_ts=moment) for n, moment in enumerate(timestamps)]


def test_the_line_rule_does_not_depend_on_the_session_time_zone():
    # GIVEN lines whose timestamps a session time zone could reinterpret
    raw_lines = [
        (NEW_DAY, "part-0000.jsonl", number + 1, line, True)
        for number, line in enumerate(
            zone_sensitive_lines(ZONE_SENSITIVE_TIMESTAMPS + ENGINE_ONLY_TIMESTAMPS)
        )
    ]
    relations = {"markets": "markets", "fx_rates_daily": "currencies"}
    rule = rule_sql("refill_classify_landed_lines", "raw_lines", declared_rule(DATASET, relations))

    # WHEN the rule classifies them in sessions set to three different zones
    results = {}
    for zone in ("UTC", "America/New_York", "Asia/Kolkata"):
        with duckdb.connect() as connection:
            connection.execute(f"set TimeZone = '{zone}'")
            connection.execute(
                "create table raw_lines (landed_date date, file_name varchar, "
                "line_number bigint, line_text varchar, is_valid_utf8 boolean)"
            )
            connection.executemany("insert into raw_lines values (?, ?, ?, ?, ?)", raw_lines)
            connection.execute("create table markets as select 'DE' as market")
            connection.execute("create table currencies as select 'EUR' as currency")
            results[zone] = connection.execute(f"{rule} order by line_number").fetchall()

    # THEN every zone gives the same rows, and a timestamp without a zone is read as UTC
    assert results["America/New_York"] == results["UTC"]
    assert results["Asia/Kolkata"] == results["UTC"]
    statuses = {row[2]: row[9] for row in results["UTC"]}
    assert statuses[3] == "published"  # 21:30 without a zone: UTC, on its day
    assert statuses[7] == "published"  # 23:30+02:00 is 21:30 UTC, on its day


def build_in_child(workspace_root: Path, landing: Path, zone: str) -> Path:
    """`dbt build` of NEW_DAY in a child process whose host time zone is `zone`."""
    warehouse = workspace_root / zone.replace("/", "_") / "refill.duckdb"
    warehouse.parent.mkdir(parents=True)
    environment = {
        **os.environ,
        "TZ": zone,
        "LC_ALL": "C",
        "REFILL_LANDING": str(landing),
        "REFILL_WAREHOUSE": str(warehouse),
    }
    vars_ = f"{{start_date: {NEW_DAY}, end_date: {NEW_DAY}}}"
    project = str(project_dir())
    finished = subprocess.run(
        [
            str(Path(sys.executable).with_name("dbt")),
            "build",
            "--vars",
            vars_,
            "--exclude-resource-type",
            "unit_test",
            "--project-dir",
            project,
            "--profiles-dir",
            project,
            "--log-path",
            str(workspace_root / "logs"),
            "--target-path",
            str(workspace_root / zone.replace("/", "_") / "target"),
        ],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert finished.returncode == 0, finished.stdout[-3000:]
    return warehouse


def test_the_same_landing_gives_the_same_warehouse_under_another_host_time_zone(tmp_path):
    # GIVEN a day of lines whose timestamps a host time zone could reinterpret
    landing = tmp_path / "landing"
    write_landed_day(landing, NEW_DAY, [zone_sensitive_lines()])

    # WHEN it is built on a UTC host and on a New York host
    in_utc = build_in_child(tmp_path, landing, "UTC")
    in_new_york = build_in_child(tmp_path, landing, "America/New_York")

    # THEN both warehouses hold the same data, line for line
    assert snapshot(in_new_york) == snapshot(in_utc)
    published_utc = query(in_utc, "select count(*) from main.fct_payments")
    assert published_utc == [(expected_day(landing, NEW_DAY).published,)]


# -- one definition: what readiness accepts, staging parses ------------------------------

ACCEPTED_EXPORTED_AT = {
    "2025-04-03T02:13:00Z": datetime(2025, 4, 3, 2, 13),
    "2025-04-03T02:13:00+00:00": datetime(2025, 4, 3, 2, 13),
    "2025-04-03T02:13:00.5Z": datetime(2025, 4, 3, 2, 13, 0, 500_000),
    "2025-04-03T02:13:00.000001Z": datetime(2025, 4, 3, 2, 13, 0, 1),
    "2024-02-29T23:59:59.999999+00:00": datetime(2024, 2, 29, 23, 59, 59, 999_999),
}
REFUSED_EXPORTED_AT = [
    "2025-04-03T02:13:00",  # no zone
    "2025-04-03T02:13:00+01:00",  # not UTC
    "2025-04-03T02:13:00.1234567Z",  # finer than the warehouse's microseconds
    "2025-04-03 02:13:00Z",
    "2025-02-30T02:13:00Z",
    "2025-04-03T24:00:00Z",
    "2025-04-03T02:13:00Z\n",
    "２０２５-04-03T02:13:00Z",
    "",
]


def test_every_exported_at_readiness_accepts_is_parsed_by_staging_to_the_same_time():
    # GIVEN the forms of exported_at readiness accepts, and some it refuses
    # WHEN readiness reads them and the engine parses what readiness hands on
    canonical = {text: readiness.canonical_exported_at(text) for text in ACCEPTED_EXPORTED_AT}
    with duckdb.connect() as connection:
        connection.execute("set TimeZone = 'America/New_York'")
        parsed = {
            text: connection.execute(
                'select (from_json(?, \'{"exported_at": "TIMESTAMP"}\')).exported_at',
                [f'{{"exported_at": "{value}"}}'],
            ).fetchone()[0]
            for text, value in canonical.items()
        }

    # THEN each accepted form reaches the warehouse as the instant it names, in UTC
    assert parsed == ACCEPTED_EXPORTED_AT
    # AND a form staging could misread is refused before it gets there
    assert [readiness.canonical_exported_at(text) for text in REFUSED_EXPORTED_AT] == [None] * len(
        REFUSED_EXPORTED_AT
    )


def test_a_landing_folder_with_a_quote_in_its_name_is_read_as_data(
    tmp_path, monkeypatch, dbt_project
):
    # GIVEN a landing folder whose path holds a quote and a semicolon
    landing = tmp_path / "o'brien; landing"
    monkeypatch.setenv("REFILL_LANDING", str(landing))
    monkeypatch.setenv("REFILL_WAREHOUSE", str(tmp_path / "warehouse" / "refill.duckdb"))
    write_landed_day(landing, NEW_DAY, [[payment_line(NEW_DAY, n) for n in range(3)]])

    # WHEN the day is built
    outcome = dbt_project.build(window_vars(NEW_DAY, NEW_DAY))

    # THEN it publishes its lines, with file names relative to that folder
    assert outcome.success, outcome.message
    assert query(
        tmp_path / "warehouse" / "refill.duckdb",
        "select distinct file_name from staging.stg_payments__lines",
    ) == [(f"{DATASET}/dt={NEW_DAY}/part-0000.jsonl",)]


def test_a_landing_folder_the_engine_would_read_as_a_pattern_is_refused(
    tmp_path, monkeypatch, dbt_project
):
    # GIVEN a landing folder whose path holds glob characters
    landing = tmp_path / "landing[*]"
    monkeypatch.setenv("REFILL_LANDING", str(landing))
    monkeypatch.setenv("REFILL_WAREHOUSE", str(tmp_path / "warehouse" / "refill.duckdb"))
    write_landed_day(landing, NEW_DAY, [[payment_line(NEW_DAY, n) for n in range(3)]])

    # WHEN the day is built
    outcome = dbt_project.build(window_vars(NEW_DAY, NEW_DAY))

    # THEN the build is refused naming the variable, on one line
    assert not outcome.success
    assert "refill input: REFILL_LANDING" in outcome.message and "glob" in outcome.message
    assert "\n" not in outcome.message


@pytest.mark.parametrize(
    "name",
    [
        "part-0 1.jsonl",
        "part-[01].jsonl",
        "part-*.jsonl",
        "part-é.jsonl",
        "part-.jsonl",
        "part-a.b.jsonl",
    ],
)
def test_a_part_file_name_outside_the_pattern_makes_the_day_not_ready(tmp_path, name):
    # GIVEN a day whose one part file has a name the engine could misread
    write_landed_day(tmp_path, NEW_DAY, [[payment_line(NEW_DAY, 1)]], part_names=[name])

    # WHEN readiness judges it
    verdict = readiness.day_readiness(tmp_path, DATASET, NEW_DAY)

    # THEN it is not ready, naming the file on one ASCII line
    assert not verdict.is_ready and verdict.reason.startswith("part file name ")
    assert verdict.reason.isascii() and "\n" not in verdict.reason


def test_folders_that_name_no_day_are_not_landed_days(tmp_path):
    # GIVEN a landing with a real day and folders that only look like days
    write_landed_day(tmp_path, NEW_DAY, [[payment_line(NEW_DAY, 1)]])
    for odd in ("dt=2025-02-30", "dt=２０２５-04-03", "dt=2025-04-04\n", "dt=2025-04-05.bak"):
        (tmp_path / DATASET / odd).mkdir()

    # WHEN the landed days are listed
    # THEN only the real day is one
    assert readiness.landed_days(tmp_path, DATASET) == [NEW_DAY]


# -- what a landed file is: a regular file inside the landing ------------------------------

OUTSIDE_LINE = b'{"transaction_id": "outside-the-landing", "secret": "s3cret"}\n'


def _outside_file(landing: Path) -> Path:
    outside = landing.parent / "outside" / "secret.jsonl"
    outside.parent.mkdir(exist_ok=True)
    outside.write_bytes(OUTSIDE_LINE)
    return outside


def land_with_special_part(landing: Path, kind: str) -> Path:
    """NEW_DAY with two ordinary part files and a third, part-0002.jsonl, of `kind`; the
    manifest's counts raised to match what the third reads as, so only its kind is wrong."""
    write_landed_day(landing, NEW_DAY, [[payment_line(NEW_DAY, n) for n in range(3)]] * 2)
    folder = readiness.day_folder(landing, DATASET, NEW_DAY)
    part = folder / "part-0002.jsonl"
    write_special_part(part, kind, _outside_file(landing))
    try:
        extra = readiness.count_lines(part.read_bytes()) if part.is_file() else 0
    except OSError:
        extra = 0
    manifest = json.loads((folder / readiness.MANIFEST_NAME).read_text())
    manifest.update(files=3, records=manifest["records"] + extra)
    (folder / readiness.MANIFEST_NAME).write_text(json.dumps(manifest))
    return part


@pytest.mark.parametrize("special", list(SPECIAL_PART_FILES))
def test_a_part_file_that_is_not_a_regular_file_of_the_landing_makes_the_day_not_ready(
    tmp_path, special
):
    # GIVEN a day whose third part file is not a regular file with one link
    landing = tmp_path / "landing"
    land_with_special_part(landing, special)
    kind = SPECIAL_PART_FILES[special][1]

    # WHEN readiness judges it
    verdict = readiness.day_readiness(landing, DATASET, NEW_DAY)

    # THEN it is not ready, naming the file and what it is, on one ASCII line
    assert not verdict.is_ready
    must = "a part file must be a regular file inside the landing"
    assert verdict.reason == f"part file part-0002.jsonl is {kind}; {must}"


@pytest.mark.parametrize("linked", ["_SUCCESS", "dt= folder", "dataset folder"])
def test_a_manifest_or_folder_that_is_a_symlink_makes_the_day_not_ready(tmp_path, linked):
    # GIVEN a ready day whose manifest, day folder or dataset folder is then made a link to
    # a copy of itself outside the landing
    landing = tmp_path / "landing"
    write_landed_day(landing, NEW_DAY, [[payment_line(NEW_DAY, n) for n in range(3)]])
    folder = readiness.day_folder(landing, DATASET, NEW_DAY)
    target = {"_SUCCESS": folder / "_SUCCESS", "dt= folder": folder}.get(linked, folder.parent)
    elsewhere = tmp_path / "elsewhere" / target.name
    elsewhere.parent.mkdir()
    target.rename(elsewhere)
    target.symlink_to(elsewhere)

    # WHEN readiness judges it
    verdict = readiness.day_readiness(landing, DATASET, NEW_DAY)

    # THEN it is not ready, naming what is a link
    assert not verdict.is_ready
    assert f"{target.name} is a symbolic link" in verdict.reason and "\n" not in verdict.reason


def test_a_part_file_linked_to_the_process_environment_never_lands(published, dbt_project):
    # GIVEN the symlink attack: part-0002.jsonl linked to /proc/self/environ (the webhook
    # token is in it), the manifest's counts raised to match
    land_with_special_part(published.landing, "symlink to the environment")
    before = published_tables(published.warehouse)

    # WHEN a plain dbt build asks for the day
    outcome = dbt_project.build(window_vars(NEW_DAY, NEW_DAY))

    # THEN dbt refuses the day, naming it and the file, and nothing was written
    assert not outcome.success
    assert "refill readiness:" in outcome.message
    assert f"{NEW_DAY} (part file part-0002.jsonl is a symbolic link" in outcome.message
    assert published_tables(published.warehouse) == before


def test_a_part_file_swapped_for_a_symlink_after_its_check_is_never_read(
    published, dbt_project, monkeypatch
):
    # GIVEN a ready day whose part file is swapped for a link outside the landing once the
    # readiness gate has judged the window three times (before any node runs, then at the
    # manifests model's compile time and in its statement),
    # before the line reader reads it: the check-then-read window
    write_landed_day(published.landing, NEW_DAY, [[payment_line(NEW_DAY, n) for n in range(3)]])
    part = readiness.day_folder(published.landing, DATASET, NEW_DAY) / "part-0000.jsonl"
    outside = _outside_file(published.landing)
    outside.write_bytes(b"".join(f'{{"n": {n}}}\n'.encode() for n in range(3)))  # same count
    judged = readiness.window_readiness
    calls = []

    def judged_then_swapped(*args, **kwargs):
        verdicts = judged(*args, **kwargs)
        calls.append(verdicts[0].is_ready)
        if len(calls) == 3:
            part.unlink()
            part.symlink_to(outside)
        return verdicts

    monkeypatch.setattr(readiness, "window_readiness", judged_then_swapped)
    before = published_tables(published.warehouse)

    # WHEN the day is built
    outcome = dbt_project.build(window_vars(NEW_DAY, NEW_DAY))

    # THEN the line reader refuses the swapped file by name, and nothing was written
    assert not outcome.success
    assert calls == [True, True, True]
    assert "refill readiness: part file part-0000.jsonl is a symbolic link" in outcome.message
    assert published_tables(published.warehouse) == before
