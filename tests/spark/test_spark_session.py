"""The `spark` target (dbt-spark's session method: a Spark inside dbt's own process, for a
laptop) keeps a test of its own: a plain `dbt build --vars` of a window, no step before it,
publishes the landing's own numbers; and a process registers only the relations refill
reads from their folders (its catalog is in memory), never a chunk's private work tables.
Every other Spark test runs on the cluster (`spark-cluster`)."""

from __future__ import annotations

import pytest

from refill.sample_data import write_days
from refill.warehouse.spark_engine import register_tables
from tests.helpers import expected_day
from tests.spark.test_spark_pipeline import JAN, SPEC, build, day

pytestmark = pytest.mark.spark


def test_a_plain_dbt_build_on_the_session_target_publishes_the_landing(
    spark, spark_dbt, spark_workspace
):
    # GIVEN two landed days, day 2's manifest missing
    write_days(spark_workspace.landing, JAN, 2, SPEC)
    (spark_workspace.landing / "payments" / "dt=2026-01-02" / "_SUCCESS").unlink()

    # WHEN day 1 is built with `dbt build --vars`, nothing run before it
    outcome = build(spark_dbt, 1, 1)

    # THEN it publishes exactly the landing's payments, amounts and quarantined lines
    assert outcome.success, outcome.message
    truth = expected_day(spark_workspace.landing, day(1))
    facts = "select count(*), sum(amount) from main.fct_payments"
    assert [tuple(row) for row in spark.sql(facts).collect()] == [(truth.published, truth.amount)]
    quarantined = spark.sql("select count(*) from main.payments_quarantine").collect()[0][0]
    assert quarantined == truth.quarantined
    # and its ledger names the seed rows the day read, as refill computes them now (the
    # engine computed them, as it runs the readiness rule)
    ledger = "select distinct reference_fingerprint from ops.partition_ledger"
    now = spark_dbt.catalog.reference_fingerprints(day(1), day(1))[day(1)]
    assert [row[0] for row in spark.sql(ledger).collect()] == now
    # and the run log holds the plain build's row, as on DuckDB (tests/dbt/test_plain_run_log.py)
    runs = "select command, outcome, partitions_touched, get_json_object(parameters, '$.path') "
    rows = [tuple(row) for row in spark.sql(runs + "from ops.run_log").collect()]
    assert rows == [("dbt build", "succeeded", [day(1)], "dbt")]

    # WHEN day 2 is built
    outcome = build(spark_dbt, 2, 2)

    # THEN it is refused naming the day and why, as on DuckDB, and day 1 stands
    assert not outcome.success
    assert "1 day(s) of payments not ready, nothing written: 2026-01-02 (no _SUCCESS manifest)" in (
        outcome.message
    ), outcome.message
    assert [tuple(row) for row in spark.sql(facts).collect()] == [(truth.published, truth.amount)]


def test_a_process_never_registers_the_work_tables_other_chunks_are_writing(spark, tmp_path):
    # a published table refill reads, and two chunks' work tables caught mid-write (a part
    # file whose footer is not written yet): reading those would fail the whole process
    spark.sql("create database if not exists probe")
    published = tmp_path / "probe.db" / "registered_here"
    spark.range(3).selectExpr("id", "date'2026-02-01' as event_date").write.partitionBy(
        "event_date"
    ).parquet(str(published))
    for work in (
        "wap.db/main__fct_payments__20260201_20260202/event_date=2026-02-01",
        "staging.db/stg_payments_lines/20260203_20260204",
    ):
        folder = tmp_path / work
        folder.mkdir(parents=True)
        (folder / "part-00000.snappy.parquet").write_bytes(b"PAR1 half written")
    try:
        assert register_tables(spark, tmp_path) == ["`probe`.`registered_here`"]
        assert spark.sql("select count(*) from probe.registered_here").collect()[0][0] == 3
    finally:
        spark.sql("drop table if exists probe.registered_here")
