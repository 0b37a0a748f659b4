"""The bad-input table: every kind of bad landing and command-line misuse, one row each.

Each row gives the input, the one line refill must say, the exit status, and what must
be true of the warehouse afterwards:

- an error (exit 1, or 2 for argparse's usage errors) leaves the warehouse as it was.
  A refused command line never opens it: its file's checksum is unchanged. A day that is
  not ready fails the run before any data is written, but the run records the refusal
  in the ops trail (its attempt, the run log, the "not ready" notification) by design,
  so there the checksum of everything published (every table in `main` and the
  partition ledger) is unchanged instead;
- a malformed line is not an error: the run succeeds, the line is quarantined with its
  reason (the one line to expect), and the rest of the day publishes and reconciles.

Every case starts from the same warehouse, with one day already published.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest

from harness.hostile import write_special_part
from refill.cli import main
from refill.rules.readiness import MANIFEST_NAME, day_folder
from refill.sample_data import (
    DATASET,
    INJECTED_SQL,
    ODD_TRANSACTION_IDS,
    OMIT,
    DaySpec,
    not_utf8_line,
    write_day,
    write_landed_day,
)
from tests.conftest import Workspace
from tests.helpers import PAYMENTS_CATALOG, DayTruth, expected_day, query

pytestmark = pytest.mark.usefixtures("prefect_harness")

PUBLISHED_DAY = date(2025, 4, 1)  # published before every case
BAD_DAY = date(2025, 4, 2)  # where the bad exports land
VALID_LINES = 10
FACTS = PAYMENTS_CATALOG.primary.facts_model  # a daily run reports its rows by its name
RUN = ["--wait", "0", "--retries", "1", "--retry-delay", "0", "--lock-wait", "30"]


def payment(number: int, day: date = BAD_DAY, **changes) -> dict:
    record = {
        "transaction_id": f"tx-{day:%Y%m%d}-{number:06d}",
        "event_ts": f"{day}T{number % 24:02d}:15:00Z",
        "amount": 10 + number,
        "currency": "EUR",
        "market": "DE",
        "status": "captured",
    }
    record.update(changes)
    return record


def valid_lines(day: date = BAD_DAY) -> list[str]:
    return [json.dumps(payment(n, day)) for n in range(VALID_LINES)]


def write_export(
    landing: Path,
    day: date,
    parts: list[list[str]],
    manifest: dict | str | None = "agrees",
    final_newline: bool = True,
) -> None:
    """Write a day's part files as given and, last, its manifest (or none)."""
    folder = day_folder(landing, DATASET, day)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for index, lines in enumerate(parts):
        text = "\n".join(lines) + ("\n" if final_newline and lines else "")
        (folder / f"part-{index:04d}.jsonl").write_text(text)
    if manifest is None:
        return
    if manifest == "agrees":
        manifest = {"files": len(parts), "records": sum(len(lines) for lines in parts)}
    if isinstance(manifest, dict):
        manifest = json.dumps(
            {"dt": day.isoformat(), "exported_at": "2025-04-03T02:13:00Z"} | manifest
        )
    (folder / MANIFEST_NAME).write_text(manifest)


def with_bad_line(line: str) -> Callable[[Path], None]:
    def prepare(landing: Path) -> None:
        lines = valid_lines()
        write_export(landing, BAD_DAY, [lines[:5], [*lines[5:], line]])

    return prepare


def truncated_mid_line(landing: Path) -> None:
    lines = valid_lines()
    cut = lines[-1][: len(lines[-1]) // 2]  # the exporter died inside the last line
    write_export(landing, BAD_DAY, [[*lines[:-1], cut]], {"files": 1, "records": VALID_LINES})


def truncated_lines_lost(landing: Path) -> None:
    lines = valid_lines()
    write_export(landing, BAD_DAY, [lines[:6]], {"files": 1, "records": VALID_LINES})


def conflicting_versions(landing: Path) -> None:
    lines = valid_lines()
    conflict = json.dumps(payment(3, amount=999))  # same id as line 4, other content
    write_export(landing, BAD_DAY, [[*lines, conflict]])


def manifest(value: dict | str | None, day: date = BAD_DAY) -> Callable[[Path], None]:
    def prepare(landing: Path) -> None:
        write_export(landing, day, [valid_lines(day)], value)

    return prepare


def empty_day(landing: Path) -> None:
    write_day(landing, BAD_DAY, DaySpec(payments=0))


def nothing(landing: Path) -> None:
    pass


def hostile_manifest(fields: dict | bytes) -> Callable[[Path], None]:
    def prepare(landing: Path) -> None:
        write_landed_day(landing, BAD_DAY, [valid_lines()], fields)

    return prepare


def hostile_part_name(landing: Path) -> None:
    name = f"part-0000{INJECTED_SQL}.jsonl"
    write_landed_day(landing, BAD_DAY, [valid_lines()], part_names=[name])


def special_part(kind: str) -> Callable[[Path], None]:
    """Two ordinary part files and a third that is not a regular file of the landing (a
    link, a FIFO, a folder), the manifest's counts raised to what the third reads as."""

    def prepare(landing: Path) -> None:
        lines = valid_lines()
        outside = landing.parent / "outside.jsonl"
        outside.write_text(json.dumps(payment(50)) + "\n")
        write_export(landing, BAD_DAY, [lines[:5], lines[5:]], {"files": 3, "records": 11})
        write_special_part(day_folder(landing, DATASET, BAD_DAY) / "part-0002.jsonl", kind, outside)

    return prepare


def a_line_not_utf8(landing: Path) -> None:
    lines = valid_lines()
    write_landed_day(landing, BAD_DAY, [lines[:5], [*lines[5:], not_utf8_line(BAD_DAY, 98)]])


def odd_ids(landing: Path) -> None:
    lines = [json.dumps(payment(n, transaction_id=tx)) for n, tx in enumerate(ODD_TRANSACTION_IDS)]
    write_landed_day(landing, BAD_DAY, [lines])


def oracle_day(landing: Path, day: date, scratch: Path) -> DayTruth:
    """tests.helpers.expected_day, which reads lines as text, over a copy of the day in
    which a line that is not UTF-8 stands as a line that is not JSON: both are quarantined."""
    copy = day_folder(scratch, DATASET, day)
    copy.mkdir(parents=True)
    for part in day_folder(landing, DATASET, day).glob("part-*.jsonl"):
        lines = []
        for line in part.read_bytes().split(b"\n"):
            try:
                lines.append(line.decode())
            except UnicodeDecodeError:
                lines.append("not UTF-8")
        (copy / part.name).write_text("\n".join(lines))
    return expected_day(scratch, day)


@dataclass(frozen=True)
class Case:
    name: str
    prepare: Callable[[Path], None]
    argv: list[str]
    message: str  # the one line to expect (stderr on an error; the quarantine reason)
    exit: int
    unchanged: str | None = None  # "file" | "published" | None (not an error)
    quarantined: int = 0  # lines of BAD_DAY the run quarantines


DAILY_BAD = ["daily", "--date", str(BAD_DAY), *RUN]
DAILY_PUBLISHED = ["daily", "--date", str(PUBLISHED_DAY), *RUN]
BACKFILL = ["backfill", "--start", str(PUBLISHED_DAY), "--end", str(PUBLISHED_DAY)]
NOT_READY = f"daily {BAD_DAY}: payments not ready"


def malformed(name: str, line: str, reason: str) -> Case:
    return Case(f"malformed: {name}", with_bad_line(line), DAILY_BAD, reason, 0, quarantined=1)


CASES = [
    # -- malformed lines: quarantined with their reason, the rest published ------------------
    malformed("not JSON", '{"transaction_id": "tx-x", "amount": 1', "not valid JSON"),
    malformed("not an object", "[1, 2, 3]", "not a JSON object"),
    malformed(
        "transaction_id missing",
        json.dumps({k: v for k, v in payment(90).items() if k != "transaction_id"}),
        "transaction_id missing",
    ),
    malformed(
        "a field missing",
        json.dumps({k: v for k, v in payment(91).items() if k != "market"}),
        "market missing",
    ),
    malformed("wrong type", json.dumps(payment(92, amount="twelve")), "amount is not a number"),
    malformed("unknown currency", json.dumps(payment(93, currency="XXX")), "unknown currency XXX"),
    malformed("unknown market", json.dumps(payment(94, market="ZZ")), "unknown market ZZ"),
    malformed(
        "unknown status", json.dumps(payment(95, status="pending")), "unknown status pending"
    ),
    malformed(
        "bad timestamp",
        json.dumps(payment(96, event_ts="yesterday")),
        "event_ts is not an ISO-8601 timestamp",
    ),
    malformed(
        "event on another day",
        json.dumps(payment(97, event_ts=f"{PUBLISHED_DAY}T12:00:00Z")),
        f"event_ts {PUBLISHED_DAY}T12:00:00Z is not on the partition day",
    ),
    Case(
        "conflicting versions of one transaction",
        conflicting_versions,
        DAILY_BAD,
        f"conflicting versions of transaction tx-{BAD_DAY:%Y%m%d}-000003",
        0,
        quarantined=2,
    ),
    Case(
        "malformed: not UTF-8",
        a_line_not_utf8,
        DAILY_BAD,
        "not valid UTF-8",
        0,
        quarantined=1,
    ),
    Case(
        "truncated part file, cut inside its last line",
        truncated_mid_line,
        DAILY_BAD,
        "not valid JSON",
        0,
        quarantined=1,
    ),
    # -- a day that is not ready: the run fails before writing any data ----------------------
    Case(
        "truncated part file, lines lost",
        truncated_lines_lost,
        DAILY_BAD,
        f"{NOT_READY} (_SUCCESS lists {VALID_LINES} records, files hold 6)",
        1,
        "published",
    ),
    Case(
        "manifest disagrees: records",
        manifest({"files": 1, "records": 99}),
        DAILY_BAD,
        f"{NOT_READY} (_SUCCESS lists 99 records, files hold {VALID_LINES})",
        1,
        "published",
    ),
    Case(
        "manifest disagrees: files",
        manifest({"files": 3, "records": VALID_LINES}),
        DAILY_BAD,
        f"{NOT_READY} (_SUCCESS lists 3 files, found 1)",
        1,
        "published",
    ),
    Case(
        "manifest disagrees: another day",
        manifest({"dt": str(PUBLISHED_DAY), "files": 1, "records": VALID_LINES}),
        DAILY_BAD,
        f"{NOT_READY} (_SUCCESS names dt {PUBLISHED_DAY})",
        1,
        "published",
    ),
    Case(
        "manifest is not a manifest",
        manifest("done"),
        DAILY_BAD,
        f"{NOT_READY} (_SUCCESS is not a JSON object with dt, files, records and exported_at)",
        1,
        "published",
    ),
    Case(
        "manifest disagrees on a re-export of a published day",
        manifest({"files": 1, "records": 7}, PUBLISHED_DAY),
        DAILY_PUBLISHED,
        f"daily {PUBLISHED_DAY}: payments not ready (_SUCCESS lists 7 records, files hold "
        f"{VALID_LINES})",
        1,
        "published",
    ),
    Case(
        "missing manifest",
        manifest(None),
        DAILY_BAD,
        f"{NOT_READY} (no _SUCCESS manifest)",
        1,
        "published",
    ),
    Case(
        "missing manifest, backfill",
        manifest(None),
        ["backfill", "--start", str(BAD_DAY), "--end", str(BAD_DAY), *RUN],
        f"not ready: {BAD_DAY}",
        1,
        "published",
    ),
    Case("nothing landed", nothing, DAILY_BAD, f"{NOT_READY} (no landing folder)", 1, "published"),
    # -- hostile or malformed manifest values and file names: refused by name, nothing run --
    Case(
        "manifest: exported_at closes the SQL text and drops a table",
        hostile_manifest({"exported_at": f"2025-04-03T02:13:00Z{INJECTED_SQL}"}),
        DAILY_BAD,
        f"{NOT_READY} (_SUCCESS exported_at \"2025-04-03T02:13:00Z'); drop table main.fct_payments;"
        ' --" is not an ISO-8601 UTC time, YYYY-MM-DDTHH:MM:SS[.ffffff]Z)',
        1,
        "published",
    ),
    Case(
        "manifest: exported_at missing",
        hostile_manifest({"exported_at": OMIT}),
        DAILY_BAD,
        f"{NOT_READY} (_SUCCESS has no exported_at)",
        1,
        "published",
    ),
    Case(
        "manifest: exported_at not in UTC",
        hostile_manifest({"exported_at": "2025-04-03T04:13:00+02:00"}),
        DAILY_BAD,
        f'{NOT_READY} (_SUCCESS exported_at "2025-04-03T04:13:00+02:00" is not an ISO-8601 UTC',
        1,
        "published",
    ),
    Case(
        "manifest: files is a string",
        hostile_manifest({"files": "1"}),
        DAILY_BAD,
        f'{NOT_READY} (_SUCCESS files "1" is not a whole number >= 0)',
        1,
        "published",
    ),
    Case(
        "manifest: records is a boolean",
        hostile_manifest({"records": True}),
        DAILY_BAD,
        f"{NOT_READY} (_SUCCESS records true is not a whole number >= 0)",
        1,
        "published",
    ),
    Case(
        "manifest: records is negative",
        hostile_manifest({"records": -1}),
        DAILY_BAD,
        f"{NOT_READY} (_SUCCESS records -1 is not a whole number >= 0)",
        1,
        "published",
    ),
    Case(
        "manifest: dt closes the SQL text",
        hostile_manifest({"dt": f"{BAD_DAY}{INJECTED_SQL}"}),
        DAILY_BAD,
        f'{NOT_READY} (_SUCCESS names dt "{BAD_DAY}\'); drop table main.fct_payments; --")',
        1,
        "published",
    ),
    Case(
        "manifest: not UTF-8",
        hostile_manifest(b'{"dt": "\xff"}'),
        DAILY_BAD,
        f"{NOT_READY} (_SUCCESS is not a JSON object with dt, files, records and exported_at)",
        1,
        "published",
    ),
    Case(
        "part file name closes the SQL text",
        hostile_part_name,
        DAILY_BAD,
        f'{NOT_READY} (part file name "part-0000\'); drop table main.fct_payments; --.jsonl" '
        "is not part-<1 to 64 letters, digits, - or _>.jsonl)",
        1,
        "published",
    ),
    *[
        Case(
            f"part file: {kind}",
            special_part(kind),
            DAILY_BAD,
            f"{NOT_READY} (part file part-0002.jsonl is {what}; a part file must be a regular "
            "file inside the landing)",
            1,
            "published",
        )
        for kind, what in (
            ("symlink to the environment", "a symbolic link"),
            ("hard link outside", "hard-linked (2 links)"),
            ("fifo", "a FIFO"),
            ("folder", "a folder"),
        )
    ],
    # -- odd but valid: exported_at to the microsecond, ids that are not plain words -------
    Case(
        "manifest: exported_at with a fraction of a second",
        hostile_manifest({"exported_at": "2025-04-03T02:13:00.123456Z"}),
        DAILY_BAD,
        f"daily {BAD_DAY}: published {VALID_LINES} rows of {FACTS}",
        0,
    ),
    Case(
        "ids with quotes, a semicolon, backslashes and unicode",
        odd_ids,
        DAILY_BAD,
        f"daily {BAD_DAY}: published {len(ODD_TRANSACTION_IDS)} rows of {FACTS}",
        0,
    ),
    # -- an empty day: ready, and published as empty -----------------------------------------
    Case("an empty day", empty_day, DAILY_BAD, f"daily {BAD_DAY}: published 0 rows of {FACTS}", 0),
    # -- command-line misuse: usage errors (exit 2), refused before the warehouse is opened -
    Case("no range", nothing, ["backfill"], "a backfill needs an explicit range", 2, "file"),
    Case(
        "half a range",
        nothing,
        ["backfill", "--start", str(PUBLISHED_DAY)],
        "--end is required",
        2,
        "file",
    ),
    Case(
        "reversed range",
        nothing,
        ["backfill", "--start", str(BAD_DAY), "--end", str(PUBLISHED_DAY)],
        f"--end {PUBLISHED_DAY} is before --start {BAD_DAY}",
        2,
        "file",
    ),
    Case(
        "unparsable date",
        nothing,
        ["backfill", "--start", "2025-02-30", "--end", "2025-03-02"],
        "--start '2025-02-30' is not an ISO date (YYYY-MM-DD)",
        2,
        "file",
    ),
    Case(
        "unparsable logical date",
        nothing,
        ["daily", "--date", "tomorrow"],
        "--date 'tomorrow' is not an ISO date (YYYY-MM-DD)",
        2,
        "file",
    ),
    Case(
        "zero chunk size",
        nothing,
        [*BACKFILL, "--chunk-days", "0"],
        "--chunk-days must be a whole number of days >= 1, got 0",
        2,
        "file",
    ),
    Case(
        "chunk size not a number",
        nothing,
        [*BACKFILL, "--chunk-days", "x"],
        "argument --chunk-days: invalid int value: 'x'",
        2,
        "file",
    ),
    Case(
        "unknown order",
        nothing,
        [*BACKFILL, "--order", "random"],
        "argument --order: invalid choice: 'random'",
        2,
        "file",
    ),
    Case(
        "unknown model",
        nothing,
        [*BACKFILL, "--select", "no_such_model"],
        "--select 'no_such_model' matches no model",
        2,
        "file",
    ),
    Case(
        "unknown model version",
        nothing,
        [*BACKFILL, "--select", "fct_daily_revenue.v9"],
        "--select 'fct_daily_revenue.v9' matches no model",
        2,
        "file",
    ),
    Case(
        "cutover of an unknown model",
        nothing,
        ["cutover", "no_such_model", "--to", "2"],
        "no_such_model is not a versioned model",
        1,
        "file",
    ),
    Case(
        "cutover to an unknown version",
        nothing,
        ["cutover", "fct_daily_revenue", "--to", "9", "--dry-run"],
        "fct_daily_revenue_v9 does not exist",
        1,
        "file",
    ),
    Case("unknown command", nothing, ["refresh"], "invalid choice: 'refresh'", 2, "file"),
]


def file_checksum(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def published_checksum(warehouse: Path) -> str:
    """Everything a reader can see: every table in `main`, and the partition ledger."""
    tables = query(
        warehouse,
        "select table_schema || '.' || table_name from information_schema.tables "
        "where (table_schema = 'main' and table_type = 'BASE TABLE') "
        "or (table_schema = 'ops' and table_name = 'partition_ledger') order by 1",
    )
    digest = hashlib.sha256()
    for (table,) in tables:
        digest.update(f"{table}={query(warehouse, f'select * from {table} order by all')}".encode())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def base(tmp_path_factory, prefect_harness) -> Workspace:
    """A warehouse with one published day, built once; each case works on a copy."""
    root = tmp_path_factory.mktemp("bad-input-base")
    workspace = Workspace(root / "landing", root / "warehouse" / "refill.duckdb")
    write_export(workspace.landing, PUBLISHED_DAY, [valid_lines(PUBLISHED_DAY)])
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REFILL_LANDING", str(workspace.landing))
        patch.setenv("REFILL_WAREHOUSE", str(workspace.warehouse))
        assert main(DAILY_PUBLISHED) == 0
    return workspace


@pytest.fixture
def copy(base: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    workspace = Workspace(tmp_path / "landing", tmp_path / "warehouse" / "refill.duckdb")
    shutil.copytree(base.landing, workspace.landing)
    workspace.warehouse.parent.mkdir()
    shutil.copy2(base.warehouse, workspace.warehouse)
    monkeypatch.setenv("REFILL_LANDING", str(workspace.landing))
    monkeypatch.setenv("REFILL_WAREHOUSE", str(workspace.warehouse))
    return workspace


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_bad_input(case: Case, copy: Workspace, capsys, tmp_path: Path):
    # GIVEN the bad input, on a warehouse with one published day
    case.prepare(copy.landing)
    file_before = file_checksum(copy.warehouse)
    published_before = published_checksum(copy.warehouse)
    published_day_before = query(
        copy.warehouse,
        "select * exclude (_run_id) from main.fct_payments where event_date = ? order by all",
        [PUBLISHED_DAY],
    )
    capsys.readouterr()

    # WHEN refill runs
    try:
        status = main(case.argv)
    except SystemExit as exit_:
        status = exit_.code
    out, err = capsys.readouterr()

    # THEN it exits as expected and says the one line
    assert status == case.exit, (out, err)
    if case.exit != 0:
        error = err.strip()
        assert "\n" not in error and error.startswith("refill: error: "), error
        assert case.message in error
    # AND an error leaves the warehouse as it was
    if case.unchanged == "file":
        assert file_checksum(copy.warehouse) == file_before
    elif case.unchanged == "published":
        assert published_checksum(copy.warehouse) == published_before
    else:
        # a success quarantines exactly the bad lines, with the reason, and publishes the rest
        assert case.exit == 0
        reasons = query(
            copy.warehouse,
            "select quarantine_reason from main.payments_quarantine where landed_date = ?",
            [BAD_DAY],
        )
        assert reasons == [(case.message,)] * case.quarantined
        if not case.quarantined:
            assert case.message in out
        truth = oracle_day(copy.landing, BAD_DAY, tmp_path / "oracle")
        published = query(
            copy.warehouse,
            "select count(*), coalesce(sum(amount), 0) from main.fct_payments where event_date = ?",
            [BAD_DAY],
        )
        assert published == [(truth.published, truth.amount)]
        assert truth.quarantined == case.quarantined
        ledger = query(
            copy.warehouse,
            "select rows_written, source_records from ops.partition_ledger "
            "where model_name = 'fct_payments' and partition_date = ?",
            [BAD_DAY],
        )
        assert ledger == [(truth.published, truth.lines)]
        # AND the published day is untouched
        assert (
            query(
                copy.warehouse,
                "select * exclude (_run_id) from main.fct_payments where event_date = ? "
                "order by all",
                [PUBLISHED_DAY],
            )
            == published_day_before
        )
