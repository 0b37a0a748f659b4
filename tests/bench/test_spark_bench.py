"""The benchmark's Spark section without Spark: its measuring of a process tree whose
descendants outlive it (pyspark's JVM), its ratios with Spark's start-up included and
subtracted, its per-day reconciliation on parquet folders laid out as Spark writes them,
and `python -m bench.run --spark --report-only` rendering the table from saved results.
(A run with Spark takes about 10 minutes here: `make bench-spark`.)"""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

import duckdb

from bench import spark, spark_report
from bench.measure import run_measured
from bench.run import main as bench_main

D1 = date(2025, 1, 1)
D2 = date(2025, 1, 2)


def test_cpu_of_a_descendant_still_running_when_the_command_exits_is_counted(tmp_path: Path):
    # GIVEN a command that starts a child burning 3 s of CPU and exits without waiting for
    # it (as pyspark leaves its JVM to finish after Python exits)
    burn = "import time\nend = time.process_time() + 3.0\nwhile time.process_time() < end: pass"
    command = [
        sys.executable,
        "-c",
        f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {burn!r}])",
    ]
    # WHEN the bench measures it
    measurement = run_measured(command, cwd=tmp_path, env={}, log=tmp_path / "log")
    # THEN the orphan's CPU is in the figure (before: only the parent's, about 0.05 s), and
    # the wall time ends when the command does
    assert measurement.cpu_seconds >= 2.9, measurement
    assert measurement.wall_seconds < 2.5, measurement


def test_a_fork_that_has_not_exec_d_yet_is_not_counted_twice(tmp_path: Path):
    # GIVEN a command holding 300 MiB that forks a copy of itself named after a thread,
    # as a JVM does before it execs a helper (the copy shows the same resident pages)
    script = (
        "import ctypes, os, time\n"
        "held = b'x' * (300 * 1024 * 1024)\n"
        "prctl = ctypes.CDLL(None).prctl\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    prctl(15, b'Executor task l', 0, 0, 0)  # PR_SET_NAME\n"
        "    time.sleep(1.5)\n"
        "    os._exit(0)\n"
        "os.waitpid(child, 0)\n"
    )
    # WHEN the bench measures it
    measurement = run_measured(
        [sys.executable, "-c", script], cwd=tmp_path, env={}, log=tmp_path / "log"
    )
    # THEN the peak is the one copy of the memory, not two
    assert 300 * 1024**2 < measurement.peak_rss_bytes < 450 * 1024**2, measurement
    assert measurement.processes.get("Executor task l") == 1, measurement


def run(contender: str, wall: float, cpu: float, days: int = 4, peak_mib: int = 500) -> dict:
    return {
        "contender": contender,
        "label": contender,
        "days": days,
        "wall_seconds": wall,
        "cpu_seconds": cpu,
        "peak_rss_bytes": peak_mib * 1024**2,
        "other_cores": 0.5,
        "published": {},
        "details": {},
    }


RUNS = [
    run("spark-startup", 20.0, 18.0, days=0),
    run("refill-c1", 120.0, 98.0),
    run("refill-c2", 140.0, 158.0, peak_mib=1500),
    run("microbatch", 70.0, 58.0),
]


def test_ratios_side_by_side_with_the_start_up_included_and_subtracted():
    summary = spark_report.summarise(RUNS, {}, {})
    c1_over_mb = summary["ratios"]["refill-c1/microbatch"]
    assert round(c1_over_mb["wall"], 3) == round(120 / 70, 3)
    assert c1_over_mb["wall_without_startup"] == (120 - 20) / (70 - 20)
    assert c1_over_mb["cpu_without_startup"] == (98 - 18) / (58 - 18)
    c2_over_c1 = summary["ratios"]["refill-c2/refill-c1"]
    assert c2_over_c1["wall_without_startup"] == (140 - 20) / (120 - 20)
    assert summary["contenders"]["refill-c2"]["peak_rss_bytes"] == 1500 * 1024**2
    # nothing left after the start-up: no ratio rather than a negative one
    assert spark_report.ratio(15.0, 70.0, 20.0) is None


def write_warehouse(folder: Path, payments: list[tuple], quarantine: list[tuple], microbatch: bool):
    """Parquet folders as the Spark contenders leave them (hive partitions by day)."""
    (folder / "main.db").mkdir(parents=True)
    with duckdb.connect() as connection:
        connection.execute(
            "create table facts (transaction_id varchar, event_ts timestamp, amount decimal(18,2),"
            " currency varchar, amount_usd decimal(18,2), market varchar, status varchar, "
            "event_date date)"
        )
        connection.executemany("insert into facts values (?, ?, ?, ?, ?, ?, ?, ?)", payments)
        connection.execute(
            "copy facts to ? (format parquet, partition_by (event_date))",
            [str(folder / "main.db" / "fct_payments")],
        )
        lines = "stg_payments__lines" if microbatch else "payments_quarantine"
        connection.execute(
            "create table lines (transaction_id varchar, quarantine_reason varchar, "
            "line_status varchar, landed_date date)"
        )
        connection.executemany("insert into lines values (?, ?, ?, ?)", quarantine)
        connection.execute(
            "copy lines to ? (format parquet, partition_by (landed_date))",
            [str(folder / "main.db" / lines)],
        )


def payment(number: int, day: date, amount: str = "10.00") -> tuple:
    return (f"t{number}", f"{day} 12:00:00", amount, "EUR", amount, "DE", "captured", day)


def test_per_day_reconciliation_on_spark_folders_finds_the_day_that_differs(tmp_path: Path):
    # GIVEN refill's warehouse and a microbatch one (its quarantine: the classified lines)
    refill_rows = [payment(1, D1), payment(2, D1), payment(3, D2)]
    quarantined = [("t9", "not valid JSON", "quarantined", D2)]
    write_warehouse(tmp_path / "refill", refill_rows, quarantined, microbatch=False)
    same_lines = [*quarantined, ("t1", None, "published", D1)]
    write_warehouse(tmp_path / "same", refill_rows, same_lines, microbatch=True)
    # one payment of D2 with another amount
    other_rows = [payment(1, D1), payment(2, D1), payment(3, D2, "11.00")]
    write_warehouse(tmp_path / "other", other_rows, same_lines, microbatch=True)

    # WHEN the bench reads them back per day
    refill_days = spark.published_days(spark.refill_tables(tmp_path / "refill"), D1, D2)
    same_days = spark.published_days(spark.microbatch_tables(tmp_path / "same"), D1, D2)
    other_days = spark.published_days(spark.microbatch_tables(tmp_path / "other"), D1, D2)

    # THEN the same work reads the same, quarantine included; the changed day is named
    assert refill_days[str(D2)] == {
        "rows": 1,
        "amount": "10.00",
        "amount_usd": "10.00",
        "quarantined": 1,
    }
    assert spark_report.differing_days(
        {"refill-c1": refill_days, "microbatch": same_days, "other": other_days}
    ) == {"microbatch": [], "other": [str(D2)]}
    # and payment by payment: the changed payment is a difference no quarantined line explains
    same = spark.compare_days(
        spark.refill_tables(tmp_path / "refill"), spark.microbatch_tables(tmp_path / "same"), D1, D2
    )
    other = spark.compare_days(
        spark.refill_tables(tmp_path / "refill"),
        spark.microbatch_tables(tmp_path / "other"),
        D1,
        D2,
    )
    assert [day.identical for day in same] == [True, True]
    assert [(day.day, day.unexplained) for day in other] == [(D1, 0), (D2, 1)]


def test_bench_run_spark_report_only_prints_the_table_from_saved_results(tmp_path, capsys):
    # GIVEN the results of an earlier Spark run
    environment = {
        "measured_at": "2026-12-01 03:00 UTC",
        "cpus": 2,
        "memory_gib": 24,
        "load_average_start": [4.0, 3.0, 2.0],
        "load_average_end": [5.0, 4.0, 3.0],
        "product_commit": "abc",
        "packages": {"dbt-spark": "1.11.0", "pyspark": "4.3.0"},
        "java": 'openjdk version "17"',
        "total_seconds": 400,
    }
    parameters = {
        "days": 4,
        "payments": 100,
        "chunk_days": 2,
        "repeat": 1,
        "master": "local[2]",
        "landed_mb": 0.1,
    }
    day = {"rows": 1, "amount": "1.00", "amount_usd": "1.00", "quarantined": 0}
    per_day = {name: {str(D1): day} for name in ("refill-c1", "refill-c2", "microbatch")}
    spark.write_results(tmp_path, parameters, environment, RUNS, per_day, {})

    # WHEN `python -m bench.run --spark --report-only` renders it again
    assert bench_main(["--spark", "--report-only", "--out", str(tmp_path)]) == 0

    # THEN the table shows each run and the ratios side by side, start-up subtracted too
    printed = capsys.readouterr().out
    assert "| refill backfill, `--max-concurrency 1` | 120.0 s | 98.0 s | – | 500 MiB |" in printed
    assert "| refill-c1/microbatch | 1.71 | 2.00 | 1.69 | 2.00 |" in printed
    assert "load average 4.0, 3.0, 2.0 at the start" in printed
    assert "- microbatch against refill-c1: the same payments" in printed
