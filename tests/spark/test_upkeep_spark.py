"""What DuckDB's path does beside the publish, on the Spark cluster (issue 24, item 4): the
landing's source freshness, a full refresh's ledger rule for days whose landing is gone."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from refill.rules.readiness import day_folder
from refill.sample_data import DATASET, write_days
from refill.warehouse.dbt_runner import outcome_of
from tests.spark.test_spark_pipeline import JAN, SPEC, build, day

pytestmark = pytest.mark.spark

NO_TESTS = ["--exclude-resource-type", "unit_test", "--exclude-resource-type", "test"]


def exported_at(landing: Path, landed: date) -> datetime:
    manifest = json.loads((day_folder(landing, DATASET, landed) / "_SUCCESS").read_text())
    return datetime.fromisoformat(manifest["exported_at"].replace("Z", "+00:00"))


def freshness(project):
    result = project.invoke(["source", "freshness", "--select", "source:payments"])
    (checked,) = [r for r in result.result.results if r.node.resource_type == "source"]
    return checked


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
