"""The flows' reads and writes of the ops relations (run log, attempts, outbox, ledger).

The relations themselves are created by dbt (macros/ops/refill_create_ops_relations.sql,
their one home). Connections are short: DuckDB lets one process write a file, and a
connection left open would lock out the next dbt invocation or another run.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb

from flows.errors import RefillError


def utc_now() -> datetime:
    """Wall-clock time for bookkeeping (when something ran), never for a partition's date."""
    return datetime.now(UTC).replace(tzinfo=None)


@contextlib.contextmanager
def connect(warehouse: Path, read_only: bool = False, wait_seconds: float = 60) -> Iterator:
    """A short DuckDB connection, waiting (bounded) while another process writes the file."""
    if read_only and not warehouse.exists():
        raise RefillError(f"no warehouse at {warehouse}: run `refill daily` or a backfill first")
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            connection = duckdb.connect(str(warehouse), read_only=read_only)
            break
        except duckdb.IOException as error:
            if "lock" not in str(error).lower() or time.monotonic() >= deadline:
                raise RefillError(f"warehouse {warehouse.name} is busy: {error}") from None
            time.sleep(0.2)
    try:
        yield connection
    finally:
        connection.close()


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


def record_attempt(connection, days: list[date], attempt: Attempt) -> None:
    connection.executemany(
        "insert into ops.partition_attempts values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            [
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
            for day in days
        ],
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
        "select partition_date, run_id, command, chunk_start, chunk_end, attempt, outcome, "
        "message, started_at, ended_at from ops.partition_attempts "
        "where partition_date between ? and ? "
        "qualify row_number() over (partition by partition_date order by ended_at desc) = 1",
        [start, end],
    ).fetchall()
    return {row[0]: Attempt(*row[1:]) for row in rows}


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
