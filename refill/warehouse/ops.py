"""The reads and writes of the ops relations (run log, attempts, outbox, ledger), in
portable SQL on a connection of the warehouse boundary (refill.warehouse.engine).

The relations themselves are created by dbt (macros/ops/refill_create_ops_relations.sql,
their one home). `connect`, `read_warehouse` and `check_readable` are the boundary's, on the
warehouse at a path: connections are short, and every read goes through the lock protocol.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import socket
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from refill.errors import FailedStep
from refill.rules.catalog import Dataset
from refill.warehouse import locking
from refill.warehouse.diff import quoted
from refill.warehouse.engine import warehouse_at


def utc_now() -> datetime:
    """Wall-clock time for bookkeeping (when something ran), never for a partition's date."""
    return datetime.now(UTC).replace(tzinfo=None)


def check_readable(warehouse: Path) -> None:
    """A reading command's first step: refuse, in one line and before anything else runs,
    a warehouse that is missing, a folder or not a DuckDB file. Creates nothing."""
    warehouse_at(warehouse).check_readable()


def read_warehouse(
    warehouse: Path,
    *,
    reader: str = "read",
    wait_seconds: float = locking.DEFAULT_READ_WAIT_SECONDS,
    on_wait=None,
) -> contextlib.AbstractContextManager:
    """refill's one way to read the warehouse (the boundary's `Warehouse.read`): under the
    warehouse lock, read-only, at most `wait_seconds` of waiting for a write in progress."""
    return warehouse_at(warehouse).read(reader=reader, wait_seconds=wait_seconds, on_wait=on_wait)


@contextlib.contextmanager
def connect(
    warehouse: Path, read_only: bool = False, wait_seconds: float | None = None
) -> Iterator:
    """A short connection. Read-only: `read_warehouse` (the readers' protocol). Read-write:
    for a writer that holds the warehouse lock (the boundary's `Warehouse.connect`)."""
    store = warehouse_at(warehouse)
    if read_only:
        wait = locking.DEFAULT_READ_WAIT_SECONDS if wait_seconds is None else wait_seconds
        with store.read(wait_seconds=wait) as connection:
            yield connection
        return
    with store.connect(wait_seconds=wait_seconds) as connection:
        yield connection


def has_table(connection, schema: str, name: str) -> bool:
    (count,) = connection.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
        [schema, name],
    ).fetchone()
    return count > 0


def has_ops(connection) -> bool:
    return has_table(connection, "ops", "partition_ledger")


def published_models(store) -> set[str]:
    """The models with a day published in the warehouse `store` (none when it does not
    exist yet): a model without one has no table there yet."""
    if not store.exists():
        return set()
    with store.read(reader="plan") as connection:
        if not has_ops(connection):
            return set()
        rows = connection.execute("select distinct model_name from ops.partition_ledger")
        return {name for (name,) in rows.fetchall()}


def seeds_are_loaded(connection, seeds: dict[str, tuple[str, str]], load_key: str) -> bool:
    """True when every seed (unique id -> schema, table) is in the warehouse, loaded by the
    flows with `load_key` (ops.seed_loads, written by the seeds' post-hook)."""
    if not has_table(connection, "ops", "seed_loads"):  # a warehouse from before it
        return False
    loaded = dict(connection.execute("select seed_id, load_key from ops.seed_loads").fetchall())
    tables = set(
        connection.execute(
            "select table_schema, table_name from information_schema.tables"
        ).fetchall()
    )
    return has_ops(connection) and all(
        loaded.get(seed_id) == load_key and relation in tables
        for seed_id, relation in seeds.items()
    )


# -- latest state per key ------------------------------------------------------------------


def latest_per_key(relation: str, key: str, newest_first: str) -> str:
    """`relation` as a subquery with one row per `key`: its newest state by `newest_first`
    (an ORDER BY list). On DuckDB a key's row is updated in place, so it has one row anyway;
    on an append-only engine (Spark's parquet: no update) each later state of a key is an
    appended row, and every reader goes through this to see one row per key. The arguments
    are the callers' constant names, never values."""
    return (
        f"(select * from (select *, row_number() over (partition by {key} "
        f"order by {newest_first}) as state_rank from {relation}) as states "
        f"where state_rank = 1) as latest"
    )


# ops.run_log, one row per run: its closing row when it has one.
RUN_LOG_LATEST = latest_per_key(
    "ops.run_log", "run_id", "case when ended_at is null then 1 else 0 end, ended_at desc"
)
# ops.notification_outbox, one row per key: sent first, then the most delivery attempts.
OUTBOX_LATEST = latest_per_key(
    "ops.notification_outbox",
    "idempotency_key",
    "case when sent_at is null then 1 else 0 end, delivery_attempts desc, "
    "case when last_error is null then 1 else 0 end, "
    "case when claimed_at is null then 1 else 0 end, claimed_at desc",
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
    values = [utc_now(), outcome, sorted(set(partitions)), message, run_id]
    if getattr(connection, "append_only", False):
        # an engine without update (Spark's parquet): the closing row is appended, a copy
        # of the opening one with the end filled in; readers take the latest row per run
        connection.execute(
            "insert into ops.run_log select run_id, command, command_line, parameters, "
            "user_name, host, started_at, ?, ?, ?, ? from ops.run_log "
            "where run_id = ? and outcome = 'running'",
            values,
        )
        return
    connection.execute(
        "update ops.run_log set ended_at = ?, outcome = ?, partitions_touched = ?, message = ? "
        "where run_id = ?",
        values,
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
    return has_column(connection, "partition_attempts", "failed_step")


def has_column(connection, table: str, column: str) -> bool:
    """Whether the ops table has the column (one added after warehouses were created with
    the table; a build's on-run-start adds it)."""
    (count,) = connection.execute(
        "select count(*) from information_schema.columns where table_schema = 'ops' "
        "and table_name = ? and column_name = ?",
        [table, column],
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
    # what the partition read of the seeds (refill.rules.reference); None on a row of a
    # warehouse from before it was recorded
    reference_fingerprint: str | None = None


def read_ledger(connection, start: date, end: date) -> list[LedgerRow]:
    has_reference = has_column(connection, "partition_ledger", "reference_fingerprint")
    reference = "reference_fingerprint" if has_reference else "null"
    rows = connection.execute(
        "select model_name, partition_date, run_id, git_commit, code_version, "
        "source_fingerprint, rows_written, source_records, is_backfill, published_at, "
        f"{reference} from ops.partition_ledger where status = 'published' "
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


def read_published_totals(
    connection, dataset: Dataset, start: date, end: date
) -> dict[date, tuple[int, float]]:
    """Rows and total (its `totals` column; 0 when it declares none) per day in the
    dataset's facts: what readers see now; none when its facts were never built. The names
    come from the dbt manifest (refill.warehouse.catalog), quoted."""
    if not has_table(connection, "main", dataset.facts_model):
        return {}
    day = quoted(dataset.partition_column)
    total = f"sum({quoted(dataset.totals_column)})" if dataset.totals_column else "0"
    rows = connection.execute(
        f"select {day}, count(*), coalesce({total}, 0) "
        f"from main.{quoted(dataset.facts_model)} where {day} between ? and ? group by 1",
        [start, end],
    ).fetchall()
    return {day: (count, float(total)) for day, count, total in rows}


def published_totals(
    warehouse: Path, datasets: Sequence[Dataset], start: date, end: date
) -> dict[Dataset, dict[date, tuple[int, float]]]:
    """read_published_totals of each dataset, on one read of its own (the readers'
    protocol, through `connect`: the harness pauses its concurrent reader around the flows'
    read-only connections)."""
    with connect(warehouse, read_only=True) as connection:
        return {d: read_published_totals(connection, d, start, end) for d in datasets}


def read_hourly_counts(
    connection, dataset: Dataset, start: date, end: date
) -> dict[date, dict[int, int]]:
    """Events per hour of each day in the dataset's facts (its `hours` column; none when it
    declares none, or the facts are not built yet): what `refill gaps` finds holes in."""
    if dataset.hours_column is None or not has_table(connection, "main", dataset.facts_model):
        return {}
    day, hour = quoted(dataset.partition_column), quoted(dataset.hours_column)
    rows = connection.execute(
        f"select {day}, hour({hour}), count(*) from main.{quoted(dataset.facts_model)} "
        f"where {day} between ? and ? group by 1, 2",
        [start, end],
    ).fetchall()
    hourly: dict[date, dict[int, int]] = {}
    for day, hour, count in rows:
        hourly.setdefault(day, {})[hour] = count
    return hourly


def read_rows_written(connection, model: str, start: date, end: date, run_id: str) -> int:
    """The rows `run_id` published for `model` on those days (a chunk's reported rows)."""
    return connection.execute(
        "select coalesce(sum(rows_written), 0) from ops.partition_ledger "
        "where model_name = ? and partition_date between ? and ? and run_id = ?",
        [model, start, end, run_id],
    ).fetchone()[0]


def read_published_days(connection, model: str) -> list[date]:
    """The days the ledger says `model` (a relation: a version's table) is published for."""
    rows = connection.execute(
        "select partition_date from ops.partition_ledger "
        "where model_name = ? and status = 'published' order by 1",
        [model],
    ).fetchall()
    return [day for (day,) in rows]
