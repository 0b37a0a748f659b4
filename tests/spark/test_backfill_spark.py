"""`DBT_TARGET=spark refill backfill` publishes exactly the source: the same per-day counts,
amounts and quarantine as DuckDB on the same landing, newest-first, and the attempts Spark
recorded pass the harness's chunks_within_limit.

Spark runs twice on that landing, at concurrency 1 and at 2 (two chunks at once in two
worker processes, each with its own catalog: the staging tables' folders are the window's
own, spark__location_clause), and both must equal DuckDB; at 2 at least two chunks must
really have overlapped in time, never more than 2 at once.

Each backfill runs as a user runs it, `refill backfill` in its own process (Spark's JVM is
the process's); the Spark warehouse's parquet files are read back with DuckDB's parquet
reader, which shares no code with either build."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest

pytest.importorskip("pyspark")

from harness.concurrency import (  # noqa: E402
    Write,
    check_chunks_within_limit,
    writes_from_rows,
)
from refill.sample_data import DaySpec, write_days  # noqa: E402
from tests.helpers import expected_day  # noqa: E402

D1 = date(2026, 2, 1)
DAYS = 4
CHUNK_DAYS = 2


def refill(arguments: list[str], **environment: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false", **environment}
    return subprocess.run(
        [sys.executable, "-m", "refill", *arguments],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )


def parquet(folder: Path) -> str:
    return f"read_parquet('{folder}/**/*.parquet', hive_partitioning = true)"


def spark_days(warehouse: Path) -> dict:
    """Per day: (published rows, amount, quarantined lines) from Spark's files."""
    with duckdb.connect() as connection:
        facts = connection.execute(
            f"select cast(event_date as date), count(*), sum(amount) "
            f"from {parquet(warehouse / 'main.db/fct_payments')} group by 1"
        ).fetchall()
        quarantine = dict(
            connection.execute(
                f"select cast(landed_date as date), count(*) "
                f"from {parquet(warehouse / 'main.db/payments_quarantine')} group by 1"
            ).fetchall()
        )
    return {day: (rows, amount, quarantine.get(day, 0)) for day, rows, amount in facts}


def duckdb_days(warehouse: Path) -> dict:
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        facts = connection.execute(
            "select event_date, count(*), sum(amount) from main.fct_payments group by 1"
        ).fetchall()
        quarantine = dict(
            connection.execute(
                "select landed_date, count(*) from main.payments_quarantine group by 1"
            ).fetchall()
        )
    return {day: (rows, amount, quarantine.get(day, 0)) for day, rows, amount in facts}


def spark_writes(warehouse: Path) -> list[Write]:
    with duckdb.connect() as connection:
        rows = connection.execute(
            "select run_id, partition_date, chunk_start, chunk_end, attempt, started_at, "
            f"ended_at from {parquet(warehouse / 'ops.db/partition_attempts')} "
            "where attempt > 0"
        ).fetchall()
    return writes_from_rows(rows)


def overlapping(writes: list[Write]) -> list[tuple[Write, Write]]:
    return [
        (first, second)
        for n, first in enumerate(writes)
        for second in writes[n + 1 :]
        if first.started_at < second.ended_at and second.started_at < first.ended_at
    ]


def test_spark_backfill_at_concurrency_1_and_2_publishes_what_duckdb_does(tmp_path):
    landing = tmp_path / "landing"
    write_days(landing, D1, DAYS, DaySpec(payments=60))
    window = ["backfill", "--start", str(D1), "--end", str(D1 + timedelta(DAYS - 1))]
    # Two-day chunks: two chunks a run, enough for an order and an overlap, and each chunk
    # on Spark costs tens of seconds here (CI time).
    window += ["--chunk-days", str(CHUNK_DAYS)]

    on_duckdb = refill(
        window,
        DBT_TARGET="duckdb",
        REFILL_LANDING=str(landing),
        REFILL_WAREHOUSE=str(tmp_path / "duck" / "refill.duckdb"),
    )
    assert on_duckdb.returncode == 0, on_duckdb.stderr[-2000:]
    reference = duckdb_days(tmp_path / "duck" / "refill.duckdb")
    assert sorted(reference) == [D1 + timedelta(n) for n in range(DAYS)]
    for day, (rows, amount, _) in reference.items():  # DuckDB's is the oracle's
        truth = expected_day(landing, day)
        assert (rows, amount) == (truth.published, truth.amount), day

    walls = {}
    for concurrency in (1, 2):
        spark_warehouse = tmp_path / f"spark-{concurrency}"
        began = time.monotonic()
        on_spark = refill(
            [*window, "--max-concurrency", str(concurrency)],
            DBT_TARGET="spark",
            REFILL_LANDING=str(landing),
            REFILL_SPARK_WAREHOUSE=str(spark_warehouse),
            REFILL_SPARK_MASTER="local[1]",
        )
        walls[concurrency] = time.monotonic() - began
        assert on_spark.returncode == 0, on_spark.stderr[-4000:]
        assert spark_days(spark_warehouse) == reference, concurrency

        writes = spark_writes(spark_warehouse)
        assert len(writes) == DAYS // CHUNK_DAYS, writes
        assert check_chunks_within_limit(writes, concurrency) == []
        if concurrency == 1:
            # newest-first: the newest day's chunk was built first
            newest_first = [D1 + timedelta(n) for n in reversed(range(0, DAYS, CHUNK_DAYS))]
            assert [w.chunk_start for w in writes] == newest_first
        else:  # it really ran two chunks at once
            assert overlapping(writes), [str(w) for w in writes]
    print(f"spark backfill wall: concurrency 1 {walls[1]:.1f} s, 2 {walls[2]:.1f} s")
