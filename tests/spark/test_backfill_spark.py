"""`refill backfill --max-concurrency 2` on the Spark cluster (`DBT_TARGET=spark-cluster`)
publishes exactly the source: per day, the counts, amounts and quarantined lines the
landing's bytes give (tests/helpers.py expected_day, the oracle DuckDB's own tests hold
DuckDB to, at every chunking), newest-first, and the attempts Spark recorded pass the
harness's chunks_within_limit.

Three chunks on an empty warehouse: the first builds alone (it creates the models' tables:
two sessions creating one table or view in the metastore at once fail), then the other two
at once, in two worker processes, each a client of the one cluster with its own Thrift
connections and its own work tables; never more than 2 at once, and no process of refill's
ran a JVM (the engine is the cluster's). Concurrency 1 on the cluster runs in the resume,
harness and cutover tests.

The backfill runs as a user runs it, `refill backfill` in its own process (on the session's
Prefect server); the cluster's parquet files are read back with DuckDB's parquet reader,
which shares no code with the build. Speed is the benchmark's (bench/spark.py), not this
test's."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import duckdb
import psutil
import pytest

from harness.concurrency import Write, check_chunks_within_limit, writes_from_rows
from refill.sample_data import DaySpec, write_days
from tests.helpers import expected_day

pytestmark = pytest.mark.spark

D1 = date(2026, 2, 1)
DAYS = 6
CHUNK_DAYS = 2


def refill(arguments: list[str], **environment: str) -> tuple[int, str, set[str]]:
    """`refill` run as a user runs it: (exit status, output, the names of every program its
    process tree ran, sampled while it ran)."""
    env = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false", **environment}
    process = subprocess.Popen(
        [sys.executable, "-m", "refill", *arguments],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen: set[str] = set()
    deadline = time.monotonic() + 1800
    while process.poll() is None and time.monotonic() < deadline:
        try:
            tree = [psutil.Process(process.pid), *psutil.Process(process.pid).children(True)]
            seen |= {Path(child.exe()).name for child in tree if child.is_running()}
        except psutil.Error:
            pass
        time.sleep(0.5)
    output, _ = process.communicate(timeout=max(deadline - time.monotonic(), 1))
    return process.returncode, output, seen


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


def oracle_days(landing: Path, days: list[date]) -> dict:
    """Per day: (published rows, amount, quarantined lines) as the landing's bytes give them
    (expected_day: no code of refill's or of either engine's)."""
    truths = {day: expected_day(landing, day) for day in days}
    return {
        day: (truth.published, truth.amount, truth.quarantined) for day, truth in truths.items()
    }


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


def test_spark_backfill_at_concurrency_2_publishes_exactly_the_source_sharing_the_cluster(
    cluster_workspace, prefect_api
):
    landing = cluster_workspace.landing
    write_days(landing, D1, DAYS, DaySpec(payments=60))
    window = ["backfill", "--start", str(D1), "--end", str(D1 + timedelta(DAYS - 1))]
    window += ["--chunk-days", str(CHUNK_DAYS), "--max-concurrency", "2"]

    code, output, programs = refill(window, **cluster_workspace.environment(), **prefect_api)
    assert code == 0, output[-4000:]
    every_day = [D1 + timedelta(n) for n in range(DAYS)]
    assert spark_days(cluster_workspace.tables) == oracle_days(landing, every_day)
    # the chunks are the cluster's clients: no JVM in refill's own processes
    assert "java" not in programs, programs

    writes = spark_writes(cluster_workspace.tables)
    assert len(writes) == DAYS // CHUNK_DAYS, writes
    assert check_chunks_within_limit(writes, 2) == []
    first, *others = sorted(writes, key=lambda write: write.started_at)
    # newest-first; the first, creating the tables, alone; the other two at once
    assert first.chunk_start == D1 + timedelta(DAYS - CHUNK_DAYS)
    assert [pair for pair in overlapping(writes) if first in pair] == []
    assert overlapping(others), [str(w) for w in writes]
