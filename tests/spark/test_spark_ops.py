"""refill's own bookkeeping on a real local Spark, where parquet tables have no update: the
notification outbox stays exactly-once (a delivery appends the key's next state, readers take
the newest), and a process registers only the relations refill reads, never a chunk's
private work tables that another process may be writing at that moment."""

from __future__ import annotations

from datetime import date

import pytest

from refill.warehouse import board_reads, notify, ops
from refill.warehouse.spark_engine import SparkConnection, register_tables

pytestmark = pytest.mark.spark


def test_the_outbox_sends_a_notification_once_and_counts_failed_deliveries(
    spark, spark_dbt, spark_workspace
):
    spark_dbt.invoke(["run-operation", "refill_create_ops_relations"])
    connection = SparkConnection(spark, read_only=False)
    failed = notify.Notification("backfill", date(2026, 2, 3), "failed", "cv1", "chunk failed")

    assert notify.enqueue(connection, failed) is True
    assert notify.enqueue(connection, failed) is False  # a retry saying the same adds nothing
    (pending,) = notify.read_pending(connection)
    assert (pending.idempotency_key, pending.delivery_attempts) == (failed.idempotency_key, 0)

    # a webhook that failed twice: still pending, with its attempts counted
    notify.record_deliveries(connection, [notify.Delivery(failed.idempotency_key, "503", 2)])
    (pending,) = notify.read_pending(connection)
    assert pending.delivery_attempts == 2

    # delivered: never pending again, and the board shows it once, sent
    notify.record_deliveries(connection, [notify.Delivery(failed.idempotency_key, None, 1)])
    assert notify.read_pending(connection) == []
    assert notify.enqueue(connection, failed) is False
    (notice,) = board_reads.read_notices(connection, date(2026, 2, 1), date(2026, 2, 28), 5)
    assert notice.key == failed.idempotency_key
    assert notice.sent_at is not None


def test_the_board_reads_one_row_per_run_its_closing_one(spark, spark_dbt, spark_workspace):
    spark_dbt.invoke(["run-operation", "refill_create_ops_relations"])
    connection = SparkConnection(spark, read_only=False)
    ops.record_run_start(connection, "run-closed", "daily", "refill daily", {})
    ops.record_run_end(connection, "run-closed", "published", [date(2026, 2, 3)], "ok")
    ops.record_run_start(connection, "run-open", "backfill", "refill backfill", {})

    runs = {run.run_id: run.outcome for run in board_reads.read_runs(connection, 10)}
    assert runs == {"run-closed": "published", "run-open": "running"}


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
