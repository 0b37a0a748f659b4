"""The landing as a dbt source (models/staging/payments/_payments__sources.yml): the
staging models' parent in dbt's lineage, and a freshness dbt measures with the readiness
rule (refill_landing_loaded_at), not with a column of the files."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

from refill.rules.readiness import day_folder
from refill.sample_data import DATASET, write_days

STAGING = ["stg_payments__manifests", "stg_payments__raw_lines", "stg_payments__lines"]
MARTS = ["fct_payments", "payments_quarantine", "fct_daily_revenue_v1", "fct_daily_revenue_v2"]


def exported_at(landing, day: date) -> datetime:
    manifest = json.loads((day_folder(landing, DATASET, day) / "_SUCCESS").read_text())
    return datetime.fromisoformat(manifest["exported_at"].replace("Z", "+00:00"))


def freshness(project):
    result = project.invoke(["source", "freshness", "--select", "source:payments"])
    (checked,) = [r for r in result.result.results if r.node.resource_type == "source"]
    return checked


def test_every_staging_model_and_mart_is_downstream_of_the_landing_source(dbt_project):
    # GIVEN the parsed project
    manifest = dbt_project.manifest

    # THEN the landing is a documented source with its two kinds of files
    tables = {s.name: s for s in manifest.sources.values() if s.source_name == "payments"}
    assert sorted(tables) == ["manifests", "part_files"]
    assert all(table.description for table in tables.values())

    # AND the staging models that read the files name them as parents
    parents = {
        name: manifest.nodes[f"model.refill.{name}"].depends_on.nodes
        for name in ("stg_payments__manifests", "stg_payments__raw_lines")
    }
    assert "source.refill.payments.manifests" in parents["stg_payments__manifests"]
    assert "source.refill.payments.part_files" in parents["stg_payments__raw_lines"]

    # AND dbt's selection finds every staging model and mart downstream of it
    listed = dbt_project.invoke(
        ["ls", "--select", "source:payments+", "--resource-type", "model", "--output", "name"]
    )
    assert listed.success
    names = {line.split(".")[0] for line in listed.result}
    for model in [*STAGING, "fct_payments", "payments_quarantine", "fct_daily_revenue"]:
        assert model in names, model


def test_freshness_is_the_newest_ready_days_export(dbt_project, workspace):
    # GIVEN days landed up to today's folder, which is still exporting (no _SUCCESS yet)
    today = datetime.now(UTC).date()
    write_days(workspace.landing, today - timedelta(days=3), 4)
    (day_folder(workspace.landing, DATASET, today) / "_SUCCESS").unlink()

    # WHEN dbt measures the landing's freshness
    checked = freshness(dbt_project)

    # THEN it is the export time of the newest ready day (yesterday's, exported early
    # today), not of the unready one: fresh
    assert checked.max_loaded_at == exported_at(workspace.landing, today - timedelta(days=1))
    assert str(checked.status) == "pass"


def test_a_landing_with_no_ready_day_reads_as_never_loaded(dbt_project, workspace):
    # GIVEN one landed day whose manifest disagrees with its files (one line too many)
    day = datetime.now(UTC).date() - timedelta(days=1)
    write_days(workspace.landing, day, 1)
    manifest_path = day_folder(workspace.landing, DATASET, day) / "_SUCCESS"
    manifest = json.loads(manifest_path.read_text())
    manifest_path.write_text(json.dumps({**manifest, "records": manifest["records"] + 1}))

    # WHEN dbt measures the landing's freshness
    checked = freshness(dbt_project)

    # THEN no ready day: never loaded, an error, though a manifest is there
    assert checked.max_loaded_at.year == 1
    assert str(checked.status) == "error"


def test_an_old_landing_is_an_error(dbt_project, workspace):
    # GIVEN days that stopped landing long ago
    write_days(workspace.landing, date(2026, 1, 1), 3)

    # WHEN dbt measures the landing's freshness
    checked = freshness(dbt_project)

    # THEN it names the last complete export and is past error_after
    assert checked.max_loaded_at == exported_at(workspace.landing, date(2026, 1, 3))
    assert str(checked.status) == "error"
