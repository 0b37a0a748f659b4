"""refill's own bookkeeping on the Spark cluster, where parquet tables have no update: the
notification outbox stays exactly-once (a delivery appends the key's next state, readers take
the newest), and the board reads one row per run, its closing one. Through the warehouse
boundary over thrift (refill.warehouse.spark_thrift), as refill's commands use it."""

from __future__ import annotations

from datetime import date

import pytest

from refill.warehouse import board_reads, notify, ops
from refill.warehouse.spark_thrift import SparkClusterWarehouse

pytestmark = pytest.mark.spark


@pytest.fixture
def connection(cluster_dbt, cluster_workspace):
    cluster_dbt.invoke(["run-operation", "refill_create_ops_relations"])
    opened = SparkClusterWarehouse(cluster_workspace.locks).open(read_only=False, wait_seconds=0)
    yield opened
    opened.close()


def test_the_outbox_sends_a_notification_once_and_counts_failed_deliveries(connection):
    failed = notify.Notification("backfill", date(2026, 2, 3), "failed", "cv1", "chunk failed")

    assert notify.enqueue(connection, failed) is True
    assert notify.enqueue(connection, failed) is False  # a retry saying the same adds nothing
    (pending,) = notify.claim_pending(connection, "run-1")
    assert (pending.idempotency_key, pending.delivery_attempts) == (failed.idempotency_key, 0)
    # claimed: another run delivering at the same time has nothing to send
    assert notify.claim_pending(connection, "run-2") == []

    # a webhook that failed twice: still pending, with its attempts counted
    notify.record_deliveries(connection, [notify.Delivery(failed.idempotency_key, "503", 2)])
    (pending,) = notify.claim_pending(connection, "run-2")
    assert pending.delivery_attempts == 2

    # delivered: never pending again, and the board shows it once, sent
    notify.record_deliveries(connection, [notify.Delivery(failed.idempotency_key, None, 1)])
    assert notify.claim_pending(connection, "run-3") == []
    assert notify.enqueue(connection, failed) is False
    (notice,) = board_reads.read_notices(connection, date(2026, 2, 1), date(2026, 2, 28), 5)
    assert notice.key == failed.idempotency_key
    assert notice.sent_at is not None


def test_the_board_reads_one_row_per_run_its_closing_one(connection):
    ops.record_run_start(connection, "run-closed", "daily", "refill daily", {})
    ops.record_run_end(connection, "run-closed", "published", [date(2026, 2, 3)], "ok")
    ops.record_run_start(connection, "run-open", "backfill", "refill backfill", {})

    runs = {run.run_id: run.outcome for run in board_reads.read_runs(connection, 10)}
    assert runs == {"run-closed": "published", "run-open": "running"}


def test_an_outbox_kept_from_before_the_claim_gains_its_columns(cluster_dbt, connection):
    # GIVEN the metastore's outbox as a warehouse made before claims had it
    connection.execute("drop table ops.notification_outbox")
    connection.execute(
        "create table ops.notification_outbox (idempotency_key string, flow_name string, "
        "logical_date date, outcome string, code_version string, message string, "
        "created_at timestamp, sent_at timestamp, delivery_attempts int, last_error string) "
        "using parquet"
    )

    # WHEN a run prepares the ops relations
    cluster_dbt.invoke(["run-operation", "refill_create_ops_relations"])

    # THEN a notification is queued and claimed once
    queued = notify.Notification("daily", date(2026, 2, 4), "succeeded", "cv1", "published")
    assert notify.enqueue(connection, queued) is True
    (claimed,) = notify.claim_pending(connection, "run-1")
    assert claimed.idempotency_key == queued.idempotency_key
    assert notify.claim_pending(connection, "run-2") == []
