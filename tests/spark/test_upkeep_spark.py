"""What DuckDB's path does beside the publish, on the Spark cluster (issue 24, item 4): the
landing's source freshness, a full refresh's ledger rule for days whose landing is gone,
and the janitor of a killed chunk's work tables."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from refill import settings
from refill.rules.readiness import day_folder
from refill.rules.window import window_vars
from refill.sample_data import DATASET, write_days
from refill.warehouse.dbt_outcomes import outcome_of
from tests.dbt.test_landing_source import exported_at, freshness
from tests.spark.test_spark_pipeline import JAN, SPEC, build, day, tables_in

pytestmark = pytest.mark.spark

NO_TESTS = ["--exclude-resource-type", "unit_test", "--exclude-resource-type", "test"]


def test_source_freshness_is_the_newest_ready_days_export_as_on_duckdb(
    cluster_dbt, cluster_workspace
):
    # GIVEN days landed up to today's folder, which is still exporting (no _SUCCESS yet)
    today = datetime.now(UTC).date()
    write_days(cluster_workspace.landing, today - timedelta(days=3), 4)
    (day_folder(cluster_workspace.landing, DATASET, today) / "_SUCCESS").unlink()

    # WHEN dbt measures the landing's freshness on the cluster
    checked = freshness(cluster_dbt)

    # THEN it is the export time of the newest ready day (yesterday's), not of the
    # unready one: fresh
    assert str(checked.status) == "pass", checked.message
    assert checked.max_loaded_at == exported_at(
        cluster_workspace.landing, today - timedelta(days=1)
    )

    # WHEN every landed day's manifest disagrees with its files
    for offset in range(1, 4):
        manifest = day_folder(cluster_workspace.landing, DATASET, today - timedelta(days=offset))
        fields = json.loads((manifest / "_SUCCESS").read_text())
        (manifest / "_SUCCESS").write_text(json.dumps({**fields, "records": -1}))
    checked = freshness(cluster_dbt)

    # THEN no day is ready: never loaded, an error
    assert checked.max_loaded_at.year == 1
    assert str(checked.status) == "error"


def test_a_full_refresh_refuses_to_drop_unlanded_days_then_drops_them_from_the_ledger_too(
    cluster_dbt, cluster_workspace
):
    # GIVEN four published days, then the landing of the first two removed (retention)
    write_days(cluster_workspace.landing, JAN, 4, SPEC)
    assert build(cluster_dbt, 1, 4).success
    for n in (1, 2):
        shutil.rmtree(day_folder(cluster_workspace.landing, DATASET, day(n)))
    ledger = "select distinct partition_date from ops.partition_ledger order by 1"
    before = cluster_workspace.rows(ledger)

    # WHEN a full refresh runs without the var
    refused = outcome_of(cluster_dbt.invoke(["build", "--full-refresh", *NO_TESTS]))

    # THEN it refuses naming the days, as on DuckDB, and the ledger is as it was
    assert not refused.success
    assert "would drop 2 published day(s) of fct_payments" in refused.message
    assert "(2026-01-01, 2026-01-02)" in refused.message
    assert cluster_workspace.rows(ledger) == before == [(day(n),) for n in (1, 2, 3, 4)]

    # WHEN it runs with the explicit var
    command = ["build", "--full-refresh", "--vars", "{allow_dropping_unlanded_days: true}"]
    outcome = outcome_of(cluster_dbt.invoke([*command, *NO_TESTS]))

    # THEN the days leave the tables, the ledger and data_as_of together
    assert outcome.success, outcome.message
    assert cluster_workspace.rows(
        "select distinct event_date from main.fct_payments order by 1"
    ) == [(day(3),), (day(4),)]
    assert cluster_workspace.rows(ledger) == [(day(3),), (day(4),)]
    assert cluster_workspace.rows(
        "select distinct first_partition, data_as_of from ops.data_as_of"
    ) == [(day(3), day(4))]


def data_files(folder: Path) -> list[Path]:
    """A table folder's committed parquet files (not under a `_temporary` or dot folder)."""
    return [
        file
        for file in folder.rglob("*.parquet")
        if not any(part.startswith(("_", ".")) for part in file.relative_to(folder).parts)
    ]


def rows_in_folder(folder: Path) -> int:
    """Rows in a table folder's parquet files, read with DuckDB (an emptied table's folder
    keeps one file with its schema and no rows)."""
    with duckdb.connect() as connection:
        return sum(
            connection.execute("select count(*) from read_parquet(?)", [str(file)]).fetchone()[0]
            for file in data_files(folder)
        )


def chunk_work(workspace, first: int, last: int) -> list[str]:
    """The work tables and views of the chunk over days first..last in the metastore."""
    suffix = f"__{day(first):%Y%m%d}_{day(last):%Y%m%d}"
    return sorted(
        f"{schema}.{name}"
        for schema in ("wap", "staging")
        for name in tables_in(workspace, schema)
        if suffix in name
    )


def test_the_next_build_drops_a_killed_chunks_work_tables_never_another_chunks(
    cluster_dbt, cluster_workspace, tmp_path
):
    # GIVEN days 1..6 landed, and a chunk over days 5..6 building now (its shadow written)
    write_days(cluster_workspace.landing, JAN, 6, SPEC)
    cluster_workspace.rows("create database if not exists wap")
    live = "wap.main__fct_payments__20260105_20260106"
    live_folder = cluster_workspace.tables / "wap.db" / "main__fct_payments__20260105_20260106"
    cluster_workspace.rows(
        f"create table {live} using parquet location ? as select 1 as kept", [str(live_folder)]
    )

    # AND a `dbt build` of days 1..4 killed (SIGKILL) once its chunk wrote a shadow
    environment = {**os.environ, "DBT_TARGET_PATH": str(tmp_path / "t")}
    project = str(settings.project_dir())
    window = json.dumps(window_vars(day(1), day(4)))
    killed = subprocess.Popen(
        [str(Path(sys.executable).parent / "dbt"), "build", "--vars", window, *NO_TESTS]
        + ["--project-dir", project, "--profiles-dir", project],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    shadow_files = cluster_workspace.tables / "wap.db" / "main__fct_payments__20260101_20260104"
    deadline = time.monotonic() + 900
    while not data_files(shadow_files):  # the files, not the metastore: no session per poll
        assert killed.poll() is None, "the build ended before its chunk wrote a shadow"
        assert time.monotonic() < deadline
        time.sleep(0.5)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    time.sleep(5)  # the statement in flight completes on the server
    left = chunk_work(cluster_workspace, 1, 4)
    assert left, "the killed chunk left its work tables"
    assert rows_in_folder(shadow_files) > 0, "its shadow holds rows"
    work_files = (
        cluster_workspace.tables / "staging.db" / "stg_payments__lines" / "20260101_20260104"
    )
    assert rows_in_folder(work_files) > 0, "its work table holds the window's lines"

    # WHEN the next build runs over days 1..2 (another chunking of the killed chunk's days)
    outcome = build(cluster_dbt, 1, 2)

    # THEN it publishes, and the killed chunk's work tables are gone, their folders empty
    assert outcome.success, outcome.message
    assert chunk_work(cluster_workspace, 1, 4) == [], left
    assert rows_in_folder(shadow_files) == rows_in_folder(work_files) == 0
    # AND the chunk over other days keeps its shadow and its rows
    assert cluster_workspace.rows(f"select kept from {live}") == [(1,)]
