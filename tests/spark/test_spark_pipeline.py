"""The project on a real local Spark (the `spark` target), driven as a user drives it:
`dbt build --vars <window>` in-process, after refill recorded the window's readiness
verdicts (python -m refill.warehouse.spark_readiness)."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest

from refill.sample_data import DaySpec, payment_line, write_days, write_landed_day
from refill.warehouse.dbt_runner import outcome_of, window_vars
from refill.warehouse.spark_readiness import record_verdicts
from tests.helpers import expected_day, query

pytestmark = pytest.mark.spark

JAN = date(2026, 1, 1)
SPEC = DaySpec(payments=40, malformed_rate=0.1, replay_rate=0.05, conflict_rate=0.03)


def day(n: int) -> date:
    return JAN + timedelta(days=n - 1)


def build(
    spark, spark_dbt, landing_first: int, first: int, last: int, data_tests=False, select=None
):
    """Record the readiness verdicts of days landing_first..last, then `dbt build` first..last.

    dbt's data tests only when asked (once per module: they pass on Spark): the audits, the
    guarantees under test, run in every build as post-hooks; the data tests repeat them
    and would double the Spark suite's time on this machine."""
    record_verdicts(spark, "payments", day(landing_first), day(last))
    command = ["build", "--vars", json.dumps(window_vars(day(first), day(last))), "--no-write-json"]
    command += ["--exclude-resource-type", "unit_test"]
    if not data_tests:
        command += ["--exclude-resource-type", "test"]
    if select:
        command += ["--select", select]
    return outcome_of(spark_dbt.invoke(command))


def rows(spark, sql: str) -> list[tuple]:
    return [tuple(row) for row in spark.sql(sql).collect()]


def facts_by_day(spark) -> list[tuple]:
    return rows(
        spark,
        "select event_date, count(*), sum(amount) from main.fct_payments group by 1 order by 1",
    )


def quarantine_by_day(spark) -> list[tuple]:
    return rows(
        spark,
        "select landed_date, quarantine_reason, count(*) from main.payments_quarantine"
        " group by 1, 2 order by 1, 2",
    )


def published_state(spark) -> dict[str, list[tuple]]:
    """Every published row and ledger row, without what names the run that wrote it."""
    return {
        "facts": rows(
            spark,
            "select transaction_id, event_date, event_ts, amount, currency, amount_usd, market,"
            " status from main.fct_payments order by 1, 2",
        ),
        "quarantine": rows(
            spark,
            "select landed_date, file_name, line_number, quarantine_reason, line_text"
            " from main.payments_quarantine order by 1, 2, 3",
        ),
        "revenue": rows(
            spark,
            "select event_date, market, transactions, revenue_usd from main.fct_daily_revenue"
            " order by 1, 2",
        ),
        "ledger": rows(
            spark,
            "select model_name, partition_date, status, rows_written, source_records,"
            " source_fingerprint from ops.partition_ledger order by 1, 2",
        ),
    }


def test_a_window_on_spark_publishes_what_duckdb_publishes_rebuilds_and_reexports(
    spark, spark_dbt, spark_workspace, dbt_project, tmp_path, monkeypatch
):
    # GIVEN two landed days with replays, conflicts and malformed lines
    write_days(spark_workspace.landing, JAN, 2, SPEC)

    # WHEN the window is built on Spark (with dbt's data tests), and on DuckDB from the
    # same landing
    outcome = build(spark, spark_dbt, 1, 1, 2, data_tests=True)
    assert outcome.success, outcome.message
    on_spark = published_state(spark)
    # AND its ledger names the code version refill calls current: the seeds' content keys
    # the build read (ops.seed_loads, Spark's sha2 of each file) are the files' own
    current = spark_dbt.code_versions()
    ledger = rows(spark, "select distinct model_name, code_version from ops.partition_ledger")
    assert ledger and all(code == current[model] for model, code in ledger), (ledger, current)
    # and each day's reference fingerprint (the seed rows it read) is the one refill computes
    read = rows(
        spark, "select distinct partition_date, reference_fingerprint from ops.partition_ledger"
    )
    now = spark_dbt.catalog.reference_fingerprints(day(1), day(2))
    assert sorted(read) == [(d, fingerprints[0]) for d, fingerprints in sorted(now.items())]

    monkeypatch.delenv("DBT_TARGET")
    duckdb_file = tmp_path / "duckdb" / "refill.duckdb"
    monkeypatch.setenv("REFILL_WAREHOUSE", str(duckdb_file))
    assert dbt_project.build(window_vars(day(1), day(2))).success

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
    assert facts_by_day(spark) == duckdb_facts
    assert quarantine_by_day(spark) == duckdb_quarantine
    for n in (1, 2):
        truth = expected_day(spark_workspace.landing, day(n))
        assert (day(n), truth.published, truth.amount) in duckdb_facts
        assert sum(c for d, _, c in duckdb_quarantine if d == day(n)) == truth.quarantined
    assert on_spark["quarantine"], "the landing has malformed lines: quarantine is not empty"
    # and the window's work table (its landed lines, classified) was emptied once published:
    # a copy of every line per chunk ever built would otherwise stay on disk
    staged = spark_workspace.warehouse / "staging.db" / "stg_payments__lines" / "20260101_20260102"
    assert rows(spark, f"select count(*) from parquet.`{staged}`") == [(0,)]

    # WHEN the same window is built again on Spark
    monkeypatch.setenv("DBT_TARGET", "spark")
    outcome = build(spark, spark_dbt, 1, 1, 2)

    # THEN every published row and ledger row is the same: replaced, not appended
    assert outcome.success, outcome.message
    assert published_state(spark) == on_spark

    # WHEN day 1 is re-exported with three payments and day 2 as one empty file
    lines = [payment_line(day(1), n) for n in range(3)]
    write_landed_day(spark_workspace.landing, day(1), [lines])
    write_landed_day(spark_workspace.landing, day(2), [[]])
    outcome = build(spark, spark_dbt, 1, 1, 2)

    # THEN day 1 holds exactly the new payments, day 2 nothing, in every published table
    assert outcome.success, outcome.message
    assert facts_by_day(spark) == [(day(1), 3, sum(10 + n for n in range(3)))]
    assert quarantine_by_day(spark) == []
    assert rows(
        spark, "select count(*) from main.fct_daily_revenue where event_date = date'2026-01-02'"
    ) == [(0,)]
    # and the ledger says so: day 2 published with no rows from no records
    assert rows(
        spark,
        "select rows_written, source_records from ops.partition_ledger"
        " where model_name = 'fct_payments' and partition_date = date'2026-01-02'",
    ) == [(0, 0)]


def test_a_day_without_a_readiness_verdict_or_changed_since_is_refused_naming_it(
    spark, spark_dbt, spark_workspace
):
    # GIVEN a landed day whose readiness verdict was never recorded on this warehouse
    write_days(spark_workspace.landing, JAN, 1, SPEC)

    # WHEN a plain dbt build of it runs
    outcome = spark_dbt.build(window_vars(day(1), day(1)))

    # THEN it is refused naming the day and the command that records the verdict, and
    # nothing is published
    assert not outcome.success
    assert "2026-01-01" in outcome.message, outcome.message
    assert "python -m refill.warehouse.spark_readiness payments" in outcome.message
    assert rows(spark, "select count(*) from ops.partition_ledger") == [(0,)]

    # WHEN the verdict is recorded, then a part file is rewritten before the build
    record_verdicts(spark, "payments", day(1), day(1))
    part = sorted((spark_workspace.landing / "payments" / "dt=2026-01-01").glob("part-*"))[0]
    part.write_text(payment_line(day(1), 1) + "\n")
    outcome = spark_dbt.build(window_vars(day(1), day(1)))

    # THEN the bytes read are not the bytes judged ready: refused, nothing published
    assert not outcome.success
    assert "is not the file its readiness verdict checked" in outcome.message, outcome.message
    assert rows(spark, "select count(*) from ops.partition_ledger") == [(0,)]


def test_an_audit_failure_publishes_nothing_and_the_previous_data_stands(
    spark, spark_dbt, spark_workspace
):
    # GIVEN days 1 and 2 published, and day 3 landed but not built
    write_days(spark_workspace.landing, JAN, 3, SPEC)
    assert build(spark, spark_dbt, 1, 1, 2).success
    before = published_state(spark)
    v1_before = rows(spark, "select * from main.fct_daily_revenue_v1 order by event_date, market")

    # WHEN revenue v1 alone is rebuilt over days 1..3: its audit finds day 3 of its
    # facts unpublished
    outcome = build(spark, spark_dbt, 1, 1, 3, select="fct_daily_revenue_v1")

    # THEN the invocation fails naming the audit, and nothing published changed
    assert not outcome.success
    assert "refill audit: fct_daily_revenue_v1" in outcome.message, outcome.message
    assert published_state(spark) == before
    assert (
        rows(spark, "select * from main.fct_daily_revenue_v1 order by event_date, market")
        == v1_before
    )
