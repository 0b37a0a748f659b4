"""What DuckDB's path does beside the publish, on the Spark cluster (issue 24, item 4): the
landing's source freshness."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from refill.rules.readiness import day_folder
from refill.sample_data import DATASET, write_days

pytestmark = pytest.mark.spark


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
