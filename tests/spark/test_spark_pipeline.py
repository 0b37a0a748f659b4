"""The project on the local Spark cluster (the `spark-cluster` target, over thrift), driven
as a user drives it: a plain `dbt build --vars <window>`, no step before it (the engine
runs the readiness rule itself), publishing what DuckDB publishes on the same landing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import pytest

from refill import settings
from refill.errors import FailedStep
from refill.rules.window import window_vars
from refill.sample_data import DaySpec, payment_line, write_days, write_landed_day
from refill.warehouse.dbt_runner import outcome_of
from tests.helpers import expected_day, query

pytestmark = pytest.mark.spark

JAN = date(2026, 1, 1)
SPEC = DaySpec(payments=40, malformed_rate=0.1, replay_rate=0.05, conflict_rate=0.03)


def day(n: int) -> date:
    return JAN + timedelta(days=n - 1)


def build(project, first: int, last: int, data_tests=False, select=None):
    """`dbt build` of days first..last, in-process on `project` (a parsed DbtProject).

    dbt's data tests only when asked (once per module: they pass on Spark): the audits, the
    guarantees under test, run in every build as post-hooks; the data tests repeat them."""
    command = ["build", "--vars", json.dumps(window_vars(day(first), day(last))), "--no-write-json"]
    command += ["--exclude-resource-type", "unit_test"]
    if not data_tests:
        command += ["--exclude-resource-type", "test"]
    if select:
        command += ["--select", select]
    return outcome_of(project.invoke(command))


def dbt_cli(arguments: list[str], workspace, tmp_path: Path) -> subprocess.CompletedProcess:
    """The dbt command line itself, as a user types it, on the workspace's cluster."""
    environment = {**os.environ, **workspace.environment(), "DBT_TARGET_PATH": str(tmp_path / "t")}
    project = str(settings.project_dir())
    return subprocess.run(
        [str(Path(sys.executable).parent / "dbt"), *arguments]
        + ["--project-dir", project, "--profiles-dir", project],
        env=environment,
        capture_output=True,
        text=True,
        timeout=1800,
    )


def facts_by_day(workspace) -> list[tuple]:
    return workspace.rows(
        "select event_date, count(*), sum(amount) from main.fct_payments group by 1 order by 1"
    )


def quarantine_by_day(workspace) -> list[tuple]:
    return workspace.rows(
        "select landed_date, quarantine_reason, count(*) from main.payments_quarantine"
        " group by 1, 2 order by 1, 2"
    )


def published_state(workspace) -> dict[str, list[tuple]]:
    """Every published row and ledger row, without what names the run that wrote it."""
    return {
        "facts": workspace.rows(
            "select transaction_id, event_date, event_ts, amount, currency, amount_usd, market,"
            " status from main.fct_payments order by 1, 2"
        ),
        "quarantine": workspace.rows(
            "select landed_date, file_name, line_number, quarantine_reason, line_text"
            " from main.payments_quarantine order by 1, 2, 3"
        ),
        "revenue": workspace.rows(
            "select event_date, market, transactions, revenue_usd from main.fct_daily_revenue"
            " order by 1, 2"
        ),
        "ledger": workspace.rows(
            "select model_name, partition_date, status, rows_written, source_records,"
            " source_fingerprint from ops.partition_ledger order by 1, 2"
        ),
    }


def tables_in(workspace, schema: str) -> list[str]:
    if not workspace.rows("show databases like ?", [schema]):
        return []
    return [name for _, name, _ in workspace.rows(f"show tables in {schema}")]


def duckdb_build(dbt_project, monkeypatch, tmp_path: Path, first: int, last: int):
    """The same window on DuckDB, from the same landing; returns the warehouse file."""
    duckdb_file = tmp_path / "duckdb" / "refill.duckdb"
    with monkeypatch.context() as patch:
        patch.setenv("DBT_TARGET", "duckdb")
        patch.setenv("REFILL_WAREHOUSE", str(duckdb_file))
        outcome = dbt_project.build(window_vars(day(first), day(last)))
    return duckdb_file, outcome


def test_a_dbt_build_on_the_cluster_publishes_as_duckdb_rebuilds_and_a_failed_audit_changes_nothing(
    cluster_dbt, cluster_workspace, dbt_project, tmp_path, monkeypatch
):
    # GIVEN two landed days with replays, conflicts and malformed lines
    write_days(cluster_workspace.landing, JAN, 2, SPEC)

    # WHEN the window is built by `dbt build --vars` on the cluster as a dbt user types it,
    # nothing run before it and nothing left out (dbt's unit and data tests included), and
    # on DuckDB from the same landing
    window = json.dumps(window_vars(day(1), day(2)))
    typed = dbt_cli(["build", "--vars", window], cluster_workspace, tmp_path)
    assert typed.returncode == 0, typed.stdout[-3000:]
    # and every unit test of the project passed on Spark (their fixtures are SQL that both
    # engines parse: `null::string`, not DuckDB's `null::varchar`)
    # (a versioned model's unit test is printed, and keyed, with its version: `..._v1`)
    unit_tests = {unique_id.split(".")[-1] for unique_id in cluster_dbt.manifest.unit_tests}
    passed = set(re.findall(r" PASS \S+::(\S+) ", typed.stdout))
    assert unit_tests and unit_tests <= passed, (sorted(unit_tests - passed), typed.stdout[-3000:])
    on_spark = published_state(cluster_workspace)
    duckdb_file, outcome = duckdb_build(dbt_project, monkeypatch, tmp_path, 1, 2)
    assert outcome.success, outcome.message
    # AND its ledger names the code version refill calls current: the seeds' content keys
    # the build read (ops.seed_loads, Spark's sha2 of each file) are the files' own
    current = cluster_dbt.code_versions()
    ledger = cluster_workspace.rows(
        "select distinct model_name, code_version from ops.partition_ledger"
    )
    assert ledger and all(code == current[model] for model, code in ledger), (ledger, current)
    # and each day's reference fingerprint (the seed rows it read) is the one refill computes
    read = cluster_workspace.rows(
        "select distinct cast(partition_date as string), reference_fingerprint"
        " from ops.partition_ledger"
    )
    now = cluster_dbt.catalog.reference_fingerprints(day(1), day(2))
    assert sorted(read) == [(str(d), prints[0]) for d, prints in sorted(now.items())]

    # THEN both engines publish the same per-day counts, amounts and quarantine, which
    # are the landing's own
    duckdb_facts = query(
        duckdb_file,
        "select event_date, count(*), sum(amount) from main.fct_payments group by 1 order by 1",
    )
    duckdb_quarantine = query(
        duckdb_file,
        "select landed_date, quarantine_reason, count(*) from main.payments_quarantine"
        " group by 1, 2 order by 1, 2",
    )
    assert facts_by_day(cluster_workspace) == duckdb_facts
    assert quarantine_by_day(cluster_workspace) == duckdb_quarantine
    for n in (1, 2):
        truth = expected_day(cluster_workspace.landing, day(n))
        assert (day(n), truth.published, truth.amount) in duckdb_facts
        assert sum(c for d, _, c in duckdb_quarantine if d == day(n)) == truth.quarantined
    assert on_spark["quarantine"], "the landing has malformed lines: quarantine is not empty"
    # and the window's work tables (its landed lines, classified) are gone once published:
    # each chunk has its own, in the metastore every chunk shares
    assert tables_in(cluster_workspace, "staging") == []

    # WHEN the same window is built again
    outcome = build(cluster_dbt, 1, 2)

    # THEN every published row and ledger row is the same: replaced, not appended
    assert outcome.success, outcome.message
    assert published_state(cluster_workspace) == on_spark

    # WHEN day 3 lands but is not built, and revenue v1 alone is rebuilt over days 1..3:
    # its audit finds day 3 of its facts unpublished
    write_days(cluster_workspace.landing, day(3), 1, SPEC)
    v1 = "select * from main.fct_daily_revenue_v1 order by event_date, market"
    v1_before = cluster_workspace.rows(v1)
    outcome = build(cluster_dbt, 1, 3, select="fct_daily_revenue_v1")

    # THEN the invocation fails naming the audit, and nothing published changed
    assert not outcome.success
    assert "refill audit: fct_daily_revenue_v1" in outcome.message, outcome.message
    assert published_state(cluster_workspace) == on_spark
    assert cluster_workspace.rows(v1) == v1_before

    # WHEN day 1 is re-exported with three payments and day 2 as one empty file
    lines = [payment_line(day(1), n) for n in range(3)]
    write_landed_day(cluster_workspace.landing, day(1), [lines])
    write_landed_day(cluster_workspace.landing, day(2), [[]])
    outcome = build(cluster_dbt, 1, 2)

    # THEN day 1 holds exactly the new payments, day 2 nothing, in every published table
    assert outcome.success, outcome.message
    assert facts_by_day(cluster_workspace) == [(day(1), 3, sum(10 + n for n in range(3)))]
    assert quarantine_by_day(cluster_workspace) == []
    assert cluster_workspace.rows(
        "select count(*) from main.fct_daily_revenue where event_date = date'2026-01-02'"
    ) == [(0,)]
    # and the ledger says so: day 2 published with no rows from no records
    assert cluster_workspace.rows(
        "select rows_written, source_records from ops.partition_ledger"
        " where model_name = 'fct_payments' and partition_date = date'2026-01-02'"
    ) == [(0, 0)]


def test_a_window_with_days_not_ready_is_refused_naming_each_day_and_field_as_on_duckdb(
    cluster_dbt, cluster_workspace, dbt_project, tmp_path, monkeypatch
):
    # GIVEN day 1 landed whole, day 2 with a manifest whose records is a string, day 3 absent
    write_days(cluster_workspace.landing, JAN, 2, SPEC)
    manifest = cluster_workspace.landing / "payments" / "dt=2026-01-02" / "_SUCCESS"
    fields = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**fields, "records": str(fields["records"])}))

    # WHEN the window 1..3 is built on the cluster and on DuckDB
    on_spark = build(cluster_dbt, 1, 3)
    _, on_duckdb = duckdb_build(dbt_project, monkeypatch, tmp_path, 1, 3)

    # THEN both refuse it with the same line, naming each day not ready and why
    said = f'2026-01-02 (_SUCCESS records "{fields["records"]}" is not a whole number >= 0); '
    said += "2026-01-03 (no landing folder)"
    assert not on_spark.success and not on_duckdb.success
    assert f"2 day(s) of payments not ready, nothing written: {said}" in on_duckdb.message
    assert f"2 day(s) of payments not ready, nothing written: {said}" in on_spark.message
    assert on_spark.failed_step == on_duckdb.failed_step == FailedStep.READINESS
    # AND nothing was written to the cluster's published tables or ledger
    assert "fct_payments" not in tables_in(cluster_workspace, "main")
    assert cluster_workspace.rows("select count(*) from ops.partition_ledger") == [(0,)]
