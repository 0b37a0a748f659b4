"""`DBT_TARGET=spark refill backfill` publishes exactly the source: the same per-day counts,
amounts and quarantine as DuckDB on the same landing, newest-first, and the attempts Spark
recorded pass the harness's chunks_within_limit.

At concurrency 2 the chunks do start at once on two workers, but the dbt side rebuilds one
shared staging table (staging.stg_payments__lines) per chunk, so two chunks at once fail
reading each other's files (FILE_NOT_EXIST): NOTES-spark-runtime.md. This test runs at 1.

Each backfill runs as a user runs it, `refill backfill` in its own process (Spark's JVM is
the process's); the Spark warehouse's parquet files are read back with DuckDB's parquet
reader, which shares no code with either build."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest

pytest.importorskip("pyspark")

from harness.concurrency import check_chunks_within_limit, writes_from_rows  # noqa: E402
from refill.sample_data import DaySpec, write_days  # noqa: E402
from tests.helpers import expected_day  # noqa: E402

D1 = date(2026, 2, 1)
DAYS = 4


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


def test_spark_backfill_publishes_what_duckdb_does(tmp_path):
    landing = tmp_path / "landing"
    write_days(landing, D1, DAYS, DaySpec(payments=60))
    window = ["backfill", "--start", str(D1), "--end", str(D1 + timedelta(DAYS - 1))]
    window += ["--chunk-days", "1"]

    on_duckdb = refill(
        window,
        DBT_TARGET="duckdb",
        REFILL_LANDING=str(landing),
        REFILL_WAREHOUSE=str(tmp_path / "duck" / "refill.duckdb"),
    )
    assert on_duckdb.returncode == 0, on_duckdb.stderr[-2000:]
    spark_warehouse = tmp_path / "spark"
    on_spark = refill(
        window,
        DBT_TARGET="spark",
        REFILL_LANDING=str(landing),
        REFILL_SPARK_WAREHOUSE=str(spark_warehouse),
        REFILL_SPARK_MASTER="local[1]",
    )
    assert on_spark.returncode == 0, on_spark.stderr[-4000:]

    reference = duckdb_days(tmp_path / "duck" / "refill.duckdb")
    assert sorted(reference) == [D1 + timedelta(n) for n in range(DAYS)]
    for day, (rows, amount, _) in reference.items():  # DuckDB's is the oracle's
        truth = expected_day(landing, day)
        assert (rows, amount) == (truth.published, truth.amount), day
    assert spark_days(spark_warehouse) == reference

    with duckdb.connect() as connection:
        rows = connection.execute(
            "select run_id, partition_date, chunk_start, chunk_end, attempt, started_at, "
            f"ended_at from {parquet(spark_warehouse / 'ops.db/partition_attempts')} "
            "where attempt > 0"
        ).fetchall()
    writes = writes_from_rows(rows)
    assert len(writes) == DAYS
    assert check_chunks_within_limit(writes, 1) == []
    # newest-first: the newest day's chunk was built first
    assert [w.chunk_start for w in writes] == [D1 + timedelta(n) for n in reversed(range(DAYS))]
