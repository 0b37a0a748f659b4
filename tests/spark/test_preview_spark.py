"""The restatement preview on the Spark cluster (`DBT_TARGET=spark-cluster`): `--preview`
changes nothing consumers read and reports what DuckDB's preview reports on the same landing
(its rows the oracle's, `expected_day`); a day re-exported after the preview is refused at
publish, by refill and by a plain `dbt run-operation refill_publish_preview` (the engine runs
the rule); `--from-preview ID` then publishes what a plain `--restate --yes` must give (the
landing as it is now, the oracle's per-day rows, amounts and quarantined lines), signed by
the publishing run, and drops the preview.

One sequence on one warehouse (each `refill` run on the cluster costs minutes here), each
step run as a user runs it, in its own process, on the session's Prefect server; DuckDB's
backfill and preview on the same landing are the report's reference. The cluster's parquet
files are read back with DuckDB's parquet reader."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest

from refill.rules.readiness import day_folder
from refill.sample_data import DaySpec, write_day, write_days
from tests.helpers import expected_day
from tests.spark.test_backfill_spark import duckdb_days, oracle_days, parquet, refill, spark_days

pytestmark = pytest.mark.spark

D1 = date(2026, 3, 1)
DAYS = 2  # one chunk per command: a chunk's fixed cost on Spark is most of a command's
WINDOW = ["--start", str(D1), "--end", str(D1 + timedelta(DAYS - 1)), "--chunk-days", "2"]


def d(n: int) -> date:
    return D1 + timedelta(days=n - 1)


def preview_of(output: str) -> str:
    found = re.search(r"preview (p[0-9a-f]{12})", output)
    assert found, output[-3000:]
    return found.group(1)


def report_rows(folder: Path, preview_id: str) -> tuple[list, list]:
    """The saved report's per-day and per-key rows, without the preview's id."""
    saved = json.loads((folder / preview_id / "report.json").read_text())
    return saved["days"], saved["by_key"]


def plain_dbt_publish(environment: dict, preview_id: str, start: date, end: date):
    """`dbt run-operation refill_publish_preview` as a user could type it."""
    arguments = json.dumps({"preview_id": preview_id})
    window = json.dumps({"start_date": start.isoformat(), "end_date": end.isoformat()})
    return subprocess.run(
        [Path(sys.executable).with_name("dbt"), "run-operation", "refill_publish_preview"]
        + ["--args", arguments, "--vars", window],
        env=environment,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )


def signing_runs(warehouse: Path, table: str, column: str) -> set[str]:
    """The run ids a published Spark table's rows carry in `column`."""
    with duckdb.connect() as connection:
        rows = connection.execute(
            f"select distinct {column} from {parquet(warehouse / table)}"
        ).fetchall()
    return {run_id for (run_id,) in rows}


def test_a_preview_on_spark_reports_duckdbs_numbers_and_publishes_a_plain_restatement(
    cluster_workspace, tmp_path, prefect_api
):
    landing = cluster_workspace.landing
    write_days(landing, D1, DAYS, DaySpec(payments=40))
    duck = tmp_path / "duck" / "refill.duckdb"
    on_duckdb = {"DBT_TARGET": "duckdb", "REFILL_LANDING": str(landing)}
    on_duckdb |= {"REFILL_WAREHOUSE": str(duck), **prefect_api}
    on_spark = {**cluster_workspace.environment(), **prefect_api}
    for environment in (on_duckdb, on_spark):
        code, output, _ = refill(["backfill", *WINDOW], **environment)
        assert code == 0, output[-3000:]
    published_before = spark_days(cluster_workspace.tables)
    assert published_before == duckdb_days(duck)

    write_day(landing, d(2), DaySpec(payments=55), seed=17)  # day 2 re-exported: it changes
    reports = {}
    previews = {}
    for name, environment in (("duckdb", on_duckdb), ("spark", on_spark)):
        folder = tmp_path / f"reports-{name}"
        code, output, _ = refill(
            ["backfill", *WINDOW, "--restate", "--preview", "--report-dir", str(folder)],
            **environment,
        )
        assert code == 0, output[-3000:]
        previews[name] = preview_of(output)
        reports[name] = report_rows(folder, previews[name])

    assert spark_days(cluster_workspace.tables) == published_before  # nothing published
    assert reports["spark"] == reports["duckdb"]
    days, _ = reports["spark"]
    facts = {row["day"]: row for row in days if row["model"] == "fct_payments"}
    assert sorted(facts) == [d(n).isoformat() for n in range(1, DAYS + 1)]
    for n in range(1, DAYS + 1):
        truth = expected_day(landing, d(n))
        assert facts[d(n).isoformat()]["new_rows"] == truth.published, n
        assert facts[d(n).isoformat()]["old_rows"] == published_before[d(n)][0], n
    assert facts[d(2).isoformat()]["new_rows"] != facts[d(2).isoformat()]["old_rows"]

    # Day 1 re-exported after the preview: refused at publish, by refill and by plain dbt.
    preview_id = previews["spark"]
    kept_day_1 = tmp_path / "day-1-as-previewed"
    shutil.copytree(day_folder(landing, "payments", d(1)), kept_day_1)
    write_day(landing, d(1), DaySpec(payments=41), seed=29)
    publish = ["backfill", *WINDOW, "--restate", "--yes", "--from-preview", preview_id]
    code, output, _ = refill(publish, **on_spark)
    assert code != 0 and f"day {d(1)} was re-exported since preview" in output, output[-3000:]
    refused = plain_dbt_publish({**_environ(), **on_spark}, preview_id, d(1), d(2))
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0, said[-3000:]
    assert f"day {d(1)} was re-exported since preview {preview_id}" in said, said[-3000:]
    assert spark_days(cluster_workspace.tables) == published_before  # nothing published

    # The day's export as the preview read it: the preview publishes, as a plain restate.
    shutil.rmtree(day_folder(landing, "payments", d(1)))
    shutil.copytree(kept_day_1, day_folder(landing, "payments", d(1)))
    code, output, _ = refill(publish, **on_spark)
    assert code == 0, output[-3000:]
    every_day = [d(n) for n in range(1, DAYS + 1)]
    assert spark_days(cluster_workspace.tables) == oracle_days(landing, every_day)
    # the publishing run signs every published day and row, not the preview's run
    ledger_runs = signing_runs(cluster_workspace.tables, "ops.db/partition_ledger", "run_id")
    assert len(ledger_runs) == 1, ledger_runs
    assert signing_runs(cluster_workspace.tables, "main.db/fct_payments", "_run_id") == ledger_runs
    tables = {row[1] for row in cluster_workspace.rows("show tables in preview")}
    assert not any(name.startswith(preview_id) for name in tables), tables


def _environ() -> dict[str, str]:
    import os

    return {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
