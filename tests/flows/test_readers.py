"""Readers never break a writer (refill's own readers and processes outside refill), and a
reading command refuses a warehouse path that cannot be read, in one line."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest

from flows.backfill import backfill
from flows.tasks import run_flow
from refill.cli import main
from refill.errors import RefillError
from refill.sample_data import DaySpec, write_days
from refill.views import status
from refill.warehouse import locking, ops
from tests.helpers import query

W1 = date(2026, 4, 6)
SPEC = DaySpec(payments=150)


def d(n: int) -> date:
    return W1 + timedelta(days=n - 1)


def run_backfill(**parameters):
    # One attempt per chunk: a chunk a reader broke fails the backfill instead of sleeping.
    settings = {"retries": 1, "retry_delay_seconds": [300], "lock_wait_seconds": 60}
    return run_flow(backfill, **{**settings, **parameters})


def attempt_outcomes(warehouse: Path) -> list[tuple[date, str, str | None]]:
    return query(
        warehouse,
        "select partition_date, outcome, message from ops.partition_attempts order by 1, 2",
    )


def python(code: str, *args: str) -> subprocess.Popen:
    """Another process running `code` (refill's environment: REFILL_* come from os.environ)."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


# A process outside refill (the duckdb CLI, a BI tool): opens the file read-only as soon as
# it can (after `after_a_chunk`, as soon as a backfill's chunk has started), holds it for
# `seconds`, closes it.
HOLD_THE_FILE = """
    import os, sys, time
    from pathlib import Path
    import duckdb
    from refill.warehouse import locking

    path, seconds, after_a_chunk = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3] == "1"
    if after_a_chunk:
        while not ((h := locking.read_holder(path)) and h.partitions):
            time.sleep(0.005)
    while True:
        try:
            connection = duckdb.connect(str(path), read_only=True)
            break
        except duckdb.IOException:
            time.sleep(0.005)
    print("open", os.getpid(), flush=True)
    time.sleep(seconds)
    connection.close()
    print("closed", flush=True)
"""


def hold_the_file(warehouse: Path, seconds: float, after_a_chunk: bool = False):
    process = python(HOLD_THE_FILE, str(warehouse), str(seconds), "1" if after_a_chunk else "0")
    if after_a_chunk:
        return process, None
    said, pid = process.stdout.readline().split()
    assert said == "open"
    return process, int(pid)


def make_warehouse(warehouse: Path) -> None:
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    duckdb.connect(str(warehouse)).close()


# -- a process outside refill holding the file ---------------------------------------------------


def test_a_writer_waits_for_an_outside_reader_naming_it_then_writes(tmp_path):
    # GIVEN a process outside refill with the warehouse open read-only for two seconds
    warehouse = tmp_path / "refill.duckdb"
    make_warehouse(warehouse)
    reader, pid = hold_the_file(warehouse, 2)
    told: list = []

    # WHEN a writer takes the warehouse
    started = time.monotonic()
    with locking.warehouse_lock(
        warehouse, run_id="w", command="backfill", priority=locking.HISTORY, on_wait=told.append
    ):
        # THEN it has waited for the reader, said whom it waited for, and can write
        waited = time.monotonic() - started
        with ops.connect(warehouse) as connection:
            connection.execute("create table written as select 1 as one")
    reader.wait(timeout=10)
    assert waited > 1
    assert [holder.pid for holder in told] == [pid]
    assert f"(PID {pid})" in told[0].describe()
    assert query(warehouse, "select one from written") == [(1,)]


def test_a_writer_gives_up_after_the_lock_wait_in_one_line_naming_the_pid(tmp_path):
    # GIVEN a process outside refill that keeps the warehouse open
    warehouse = tmp_path / "refill.duckdb"
    make_warehouse(warehouse)
    reader, pid = hold_the_file(warehouse, 60)
    try:
        # WHEN a writer waits at most one second
        with pytest.raises(locking.LockTimeout) as refused:
            with locking.warehouse_lock(
                warehouse, run_id="w", command="daily", priority=locking.LIVE, wait_seconds=1
            ):
                pass
    finally:
        reader.kill()
        reader.wait()

    # THEN it refuses in one line that names the process holding the file
    message = str(refused.value)
    assert f"(PID {pid})" in message and "\n" not in message
    assert "waited 1s" in message and "--lock-wait" in message


@pytest.mark.usefixtures("prefect_harness")
def test_an_outside_reader_during_a_backfill_delays_a_chunk_and_fails_none(workspace):
    # GIVEN a published day, and a five-day backfill in one-day chunks
    write_days(workspace.landing, d(1), 6, SPEC)
    run_backfill(start=d(1), end=d(1))
    # AND a process outside refill that opens the file between two chunks, for three seconds
    reader, _ = hold_the_file(workspace.warehouse, 3, after_a_chunk=True)

    # WHEN the backfill runs
    started = time.monotonic()
    try:
        report = run_backfill(start=d(2), end=d(6), chunk_days=1, order="oldest-first")
    finally:
        output, _ = reader.communicate(timeout=60)
    seconds = time.monotonic() - started

    # THEN the reader did hold the file during the backfill, and the writer waited for it:
    # every chunk published at its first attempt, none failed, no retry sleep
    assert output.startswith("open") and "closed" in output
    outcomes = attempt_outcomes(workspace.warehouse)
    assert [outcome for _, outcome, _ in outcomes] == ["published"] * 6, outcomes
    assert seconds < 120, report


# -- refill's own readers -------------------------------------------------------------------------

# refill status, refill gaps, the backfill planner and the board, reading in a loop.
READ_IN_A_LOOP = """
    import sys
    from datetime import date
    from pathlib import Path
    from refill.views import board
    from refill.warehouse import partition_status
    from refill.rules import planning
    from refill import settings
    from refill.views import status
    from refill.warehouse.dbt_runner import shared_project

    stop = Path(sys.argv[1])
    window = planning.DateRange(date.fromisoformat(sys.argv[2]), date.fromisoformat(sys.argv[3]))
    warehouse = settings.warehouse_path()
    catalog = shared_project().catalog
    reads = 0
    while not stop.exists():
        status.data_as_of_lines()  # refill status
        status.read_hourly_counts(window)  # refill gaps
        partition_status.collect(  # the backfill planner
            warehouse, settings.landing_root(), window, ["fct_payments"], {}, catalog
        )
        board.read_extras(warehouse, window)  # the board
        reads += 1
    print("reads", reads, flush=True)
"""


@pytest.mark.usefixtures("prefect_harness")
def test_status_gaps_planner_and_board_during_a_backfill_never_fail_a_chunk(workspace, tmp_path):
    # GIVEN a published day, and refill's readers reading in a loop in another process
    write_days(workspace.landing, d(1), 6, SPEC)
    run_backfill(start=d(1), end=d(1))
    stop = tmp_path / "stop"
    readers = python(READ_IN_A_LOOP, str(stop), str(d(1)), str(d(6)))

    # WHEN a five-day backfill runs in one-day chunks
    try:
        run_backfill(start=d(2), end=d(6), chunk_days=1, order="oldest-first")
    finally:
        stop.touch()
        output, _ = readers.communicate(timeout=120)

    # THEN the readers read throughout and every chunk published at its first attempt
    assert readers.returncode == 0, output[-2000:]
    assert int(output.split()[-1]) > 0
    outcomes = attempt_outcomes(workspace.warehouse)
    assert [outcome for _, outcome, _ in outcomes] == ["published"] * 6, outcomes


# -- reading commands and a warehouse path that cannot be read -----------------------------------


@pytest.fixture
def reading_commands(tmp_path):
    out = tmp_path / "board.html"
    span = ["--start", str(d(1)), "--end", str(d(2))]
    return {
        "status": ["status", *span],
        "gaps": ["gaps", *span],
        "board": ["board", *span, "--out", str(out)],
    }


def refuse(argv: list[str], capsys) -> str:
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("refill: error: ") and "\n" not in err, err
    return err


@pytest.mark.parametrize("command", ["status", "gaps", "board"])
def test_a_reading_command_refuses_a_missing_warehouse_and_creates_nothing(
    command, reading_commands, tmp_path, monkeypatch, capsys
):
    # GIVEN REFILL_WAREHOUSE naming a file in a folder that does not exist
    missing = tmp_path / "nowhere" / "refill.duckdb"
    monkeypatch.setenv("REFILL_WAREHOUSE", str(missing))
    monkeypatch.setenv("REFILL_LANDING", str(tmp_path))

    # WHEN a reading command runs, THEN it fails in one line naming the path
    assert str(missing) in refuse(reading_commands[command], capsys)
    # AND it created neither the folder nor any file
    assert not missing.parent.exists()


@pytest.mark.parametrize("command", ["status", "gaps", "board"])
def test_a_reading_command_refuses_a_folder_or_a_file_that_is_not_duckdb(
    command, reading_commands, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("REFILL_LANDING", str(tmp_path))
    # GIVEN REFILL_WAREHOUSE naming a folder
    folder = tmp_path / "warehouse"
    folder.mkdir()
    monkeypatch.setenv("REFILL_WAREHOUSE", str(folder))
    # THEN the command says it is a folder, not a DuckDB file
    assert f"warehouse {folder} is a folder, not a DuckDB file" in refuse(
        reading_commands[command], capsys
    )

    # GIVEN REFILL_WAREHOUSE naming a file that is not a DuckDB database
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 10)
    monkeypatch.setenv("REFILL_WAREHOUSE", str(text))
    # THEN the command says so, and the file is untouched
    assert f"warehouse {text} is not a DuckDB database file" in refuse(
        reading_commands[command], capsys
    )
    assert text.read_text() == "not a database\n" * 10


def test_a_writer_refuses_a_warehouse_folder_it_cannot_create_in_one_line(tmp_path):
    # GIVEN a warehouse path whose folder is a plain file
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    warehouse = blocker / "refill.duckdb"

    # WHEN a writer takes the warehouse, THEN it refuses in one line naming the folder
    with pytest.raises(RefillError, match=f"cannot create the warehouse folder {blocker}"):
        with locking.warehouse_lock(warehouse, run_id="w", command="daily", priority="live"):
            pass


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in any folder")
def test_a_writer_refuses_an_unwritable_warehouse_folder_in_one_line(tmp_path):
    # GIVEN a warehouse folder this user cannot write in
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        # WHEN a writer takes the warehouse, THEN it refuses in one line naming the folder
        with pytest.raises(RefillError, match=f"cannot write in the warehouse folder {folder}"):
            with locking.warehouse_lock(
                folder / "refill.duckdb", run_id="w", command="daily", priority="live"
            ):
                pass
    finally:
        folder.chmod(0o755)


HOLD_THE_LOCK = """
    import sys, time
    from pathlib import Path
    from refill.warehouse import locking

    with locking.warehouse_lock(Path(sys.argv[1]), run_id="bf-run", command="backfill",
                                priority="history", partitions=["2026-04-07"]):
        print("held", flush=True)
        time.sleep(float(sys.argv[2]))
"""


def test_a_reading_command_waits_for_a_build_in_progress_and_says_for_whom(
    tmp_path, monkeypatch, capsys
):
    # GIVEN a warehouse that a backfill's chunk holds for a second and a half
    warehouse = tmp_path / "refill.duckdb"
    make_warehouse(warehouse)
    monkeypatch.setenv("REFILL_WAREHOUSE", str(warehouse))
    holder = python(HOLD_THE_LOCK, str(warehouse), "1.5")
    assert holder.stdout.readline().strip() == "held"

    # WHEN `refill status` reads the data-as-of line
    started = time.monotonic()
    lines = status.data_as_of_lines()
    holder.wait(timeout=30)

    # THEN it waited for the chunk, said once whom it waited for, and then read
    assert time.monotonic() - started > 1
    said = capsys.readouterr().err
    assert said.count("refill: waiting for the warehouse, held by run bf-run") == 1
    assert lines == ["data as of: nothing published yet"]
