"""The flows' reads and writes of the ops relations (run log, attempts, outbox, ledger).

The relations themselves are created by dbt (macros/ops/refill_create_ops_relations.sql,
their one home). Connections are short: DuckDB lets one process write a file, and a
connection left open would lock out the next dbt invocation or another run. Every read goes
through `read_warehouse` (under the warehouse lock, read-only), so a reader never makes a
writer fail.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb

from refill.errors import FailedStep, RefillError
from refill.warehouse import locking


def utc_now() -> datetime:
    """Wall-clock time for bookkeeping (when something ran), never for a partition's date."""
    return datetime.now(UTC).replace(tzinfo=None)


# A reader waits this long for a write in progress (one chunk of a backfill, a daily run's
# window) to end; writers take the lock per chunk, and let waiting readers in first.
DEFAULT_READ_WAIT_SECONDS = 300.0


def check_readable(warehouse: Path) -> None:
    """A reading command's first step: refuse, in one line and before anything else runs,
    a warehouse that is missing, a folder or not a DuckDB file. Creates nothing."""
    locking.check_location(warehouse, create=False)


@contextlib.contextmanager
def read_warehouse(
    warehouse: Path,
    *,
    reader: str = "read",
    wait_seconds: float = DEFAULT_READ_WAIT_SECONDS,
    on_wait=None,
) -> Iterator:
    """refill's one way to read the warehouse: take the warehouse lock briefly (as a reader:
    a backfill lets it in between two chunks, a build in progress makes it wait, at most
    `wait_seconds`), open the file read-only, read, close, let go. A reader's connection
    never makes a writer fail, because no writer opens the file while a reader holds the
    lock. The warehouse must exist: a reader never creates the file or its folder, and a
    path that is missing, a folder or not a DuckDB file is refused in one line. `on_wait` is
    told once whom the read waits for (locking.warehouse_lock's)."""
    deadline = time.monotonic() + wait_seconds
    with locking.warehouse_lock(
        warehouse,
        run_id=f"{reader}-{os.getpid()}",
        command=reader,
        priority=locking.READ,
        wait_seconds=wait_seconds,
        on_wait=on_wait,
    ):
        try:
            connection = _open(warehouse, True, max(deadline - time.monotonic(), 0))
        except duckdb.ConnectionException:
            # This process writes it now (a read inside its own write): DuckDB allows one
            # configuration per file in a process, so read on a connection like the writer's.
            try:
                connection = _open(warehouse, False, 0)
            except duckdb.ConnectionException as error:
                raise RefillError(f"cannot read the warehouse {warehouse}: {error}") from None
        try:
            yield connection
        finally:
            connection.close()


@contextlib.contextmanager
def connect(
    warehouse: Path, read_only: bool = False, wait_seconds: float | None = None
) -> Iterator:
    """A short DuckDB connection. Read-only: `read_warehouse` (the readers' protocol).
    Read-write: for a writer that holds the warehouse lock; it waits (bounded) while a
    process outside refill has the file open, then says which one."""
    if read_only:
        wait = DEFAULT_READ_WAIT_SECONDS if wait_seconds is None else wait_seconds
        with read_warehouse(warehouse, wait_seconds=wait) as connection:
            yield connection
        return
    connection = _open(warehouse, False, 60 if wait_seconds is None else wait_seconds)
    try:
        yield connection
    finally:
        connection.close()


def _open(warehouse: Path, read_only: bool, wait_seconds: float):
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            return duckdb.connect(str(warehouse), read_only=read_only)
        except duckdb.IOException as error:
            outside = locking.file_holder(error)
            if outside is None:
                raise RefillError(f"cannot open the warehouse {warehouse}: {error}") from None
            if time.monotonic() >= deadline:
                raise locking.WarehouseOpenElsewhere(
                    f"warehouse {warehouse.name} is open in {outside.describe()}; waited "
                    f"{wait_seconds:g}s. Retry when it closes the file"
                ) from None
            time.sleep(locking.FILE_POLL_SECONDS)


def has_ops(connection) -> bool:
    found = connection.execute(
        "select count(*) from information_schema.tables "
        "where table_schema = 'ops' and table_name = 'partition_ledger'"
    ).fetchone()
    return bool(found and found[0])


def seeds_are_loaded(connection, seeds: dict[str, tuple[str, str]], load_key: str) -> bool:
    """True when every seed (unique id -> schema, table) is in the warehouse, loaded by the
    flows with `load_key` (ops.seed_loads, written by the seeds' post-hook)."""
    try:
        loaded = dict(connection.execute("select seed_id, load_key from ops.seed_loads").fetchall())
        tables = set(
            connection.execute(
                "select table_schema, table_name from information_schema.tables"
            ).fetchall()
        )
    except duckdb.CatalogException:  # a warehouse from before ops.seed_loads
        return False
    return has_ops(connection) and all(
        loaded.get(seed_id) == load_key and relation in tables
        for seed_id, relation in seeds.items()
    )


# -- run log -------------------------------------------------------------------------------


def record_run_start(
    connection, run_id: str, command: str, command_line: str, parameters: dict
) -> None:
    connection.execute(
        "insert into ops.run_log (run_id, command, command_line, parameters, user_name, host, "
        "started_at, outcome) values (?, ?, ?, ?, ?, ?, ?, 'running')",
        [
            run_id,
            command,
            command_line,
            json.dumps(parameters, default=str),
            _user(),
            socket.gethostname(),
            utc_now(),
        ],
    )


def record_run_end(
    connection, run_id: str, outcome: str, partitions: list[date], message: str
) -> None:
    connection.execute(
        "update ops.run_log set ended_at = ?, outcome = ?, partitions_touched = ?, message = ? "
        "where run_id = ?",
        [utc_now(), outcome, sorted(set(partitions)), message, run_id],
    )


def run_is_alive(warehouse: Path, run_id: str) -> bool | None:
    """Whether the process of a run whose run-log row says "running" is still alive: True,
    False (it was killed or interrupted without closing its row), or None when nobody can
    tell. A run holds an OS lock for its lifetime (refill/warehouse/run_liveness.py); the kernel
    releases it when the process ends, however it ends."""
    try:
        from refill.warehouse import run_liveness
    except ImportError:  # a checkout without run liveness: nobody can tell
        return None
    return run_liveness.is_alive(warehouse, run_id)


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


# -- attempts ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    run_id: str
    command: str
    chunk_start: date
    chunk_end: date
    attempt: int
    outcome: str  # published | failed | not ready
    message: str
    started_at: datetime
    ended_at: datetime
    # Where a failed attempt stopped (FAILED_STEPS); None when it published, or when a
    # warehouse from before the column recorded it (the board then reads the message).
    failed_step: str | None = None


FAILED_STEPS = tuple(FailedStep)
ATTEMPT_COLUMNS = (
    "run_id, command, partition_date, chunk_start, chunk_end, attempt, outcome, message, "
    "started_at, ended_at"
)


def has_failed_step(connection) -> bool:
    """ops.partition_attempts records failed_step (warehouses from before it do not)."""
    (count,) = connection.execute(
        "select count(*) from information_schema.columns where table_schema = 'ops' "
        "and table_name = 'partition_attempts' and column_name = 'failed_step'"
    ).fetchone()
    return count > 0


def record_attempt(connection, days: list[date], attempt: Attempt) -> None:
    if attempt.failed_step is not None and attempt.failed_step not in FAILED_STEPS:
        raise ValueError(f"failed_step {attempt.failed_step!r} is not one of {FAILED_STEPS}")
    columns, values = ATTEMPT_COLUMNS, "?, ?, ?, ?, ?, ?, ?, ?, ?, ?"
    with_step = has_failed_step(connection)
    if with_step:
        columns, values = columns + ", failed_step", values + ", ?"
    rows = []
    for day in days:
        row = [
            attempt.run_id,
            attempt.command,
            day,
            attempt.chunk_start,
            attempt.chunk_end,
            attempt.attempt,
            attempt.outcome,
            attempt.message,
            attempt.started_at,
            attempt.ended_at,
        ]
        rows.append([*row, attempt.failed_step] if with_step else row)
    connection.executemany(
        f"insert into ops.partition_attempts ({columns}) values ({values})", rows
    )


# -- reads ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LedgerRow:
    model_name: str
    partition_date: date
    run_id: str
    git_commit: str
    code_version: str
    source_fingerprint: str | None
    rows_written: int
    source_records: int | None
    is_backfill: bool
    published_at: datetime


def read_ledger(connection, start: date, end: date) -> list[LedgerRow]:
    rows = connection.execute(
        "select model_name, partition_date, run_id, git_commit, code_version, "
        "source_fingerprint, rows_written, source_records, is_backfill, published_at "
        "from ops.partition_ledger where status = 'published' "
        "and partition_date between ? and ? order by partition_date, model_name",
        [start, end],
    ).fetchall()
    return [LedgerRow(*row) for row in rows]


def read_latest_attempts(connection, start: date, end: date) -> dict[date, Attempt]:
    rows = connection.execute(
        f"select partition_date, {_attempt_fields(connection)} from ops.partition_attempts "
        "where partition_date between ? and ? "
        "qualify row_number() over (partition by partition_date order by ended_at desc) = 1",
        [start, end],
    ).fetchall()
    return {row[0]: Attempt(*row[1:]) for row in rows}


def read_attempts(connection, start: date, end: date) -> dict[date, list[Attempt]]:
    """Every attempt at each day of the range, oldest first."""
    rows = connection.execute(
        f"select partition_date, {_attempt_fields(connection)} from ops.partition_attempts "
        "where partition_date between ? and ? order by partition_date, ended_at",
        [start, end],
    ).fetchall()
    attempts: dict[date, list[Attempt]] = {}
    for row in rows:
        attempts.setdefault(row[0], []).append(Attempt(*row[1:]))
    return attempts


def _attempt_fields(connection) -> str:
    """An Attempt's fields in order (partition_date aside)."""
    failed_step = "failed_step" if has_failed_step(connection) else "null"
    return (
        "run_id, command, chunk_start, chunk_end, attempt, outcome, message, started_at, "
        f"ended_at, {failed_step}"
    )


def read_days_ever_late(connection, start: date, end: date) -> set[date]:
    rows = connection.execute(
        "select distinct partition_date from ops.partition_attempts "
        "where outcome = 'not ready' and partition_date between ? and ?",
        [start, end],
    ).fetchall()
    return {row[0] for row in rows}


def read_data_as_of(connection) -> list[tuple]:
    return connection.execute(
        "select model_name, data_as_of, published_at from ops.data_as_of order by model_name"
    ).fetchall()


def read_published_totals(connection, start: date, end: date) -> dict[date, tuple[int, float]]:
    """Rows and USD total per day in fct_payments: what readers see now."""
    rows = connection.execute(
        "select event_date, count(*), coalesce(sum(amount_usd), 0) from main.fct_payments "
        "where event_date between ? and ? group by 1",
        [start, end],
    ).fetchall()
    return {day: (count, float(total)) for day, count, total in rows}
