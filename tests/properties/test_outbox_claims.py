"""Exactly-once notifications under any interleaving of runs delivering at once: a queued
notification is handed to one run at a time (its claim), released by a failed delivery,
taken over once a dead run's claim lapses, and never handed out again once sent.

The oracle is a model of one outbox row written out here, not refill's SQL."""

from __future__ import annotations

from datetime import date, timedelta

from hypothesis import given
from hypothesis import strategies as st

from refill.warehouse import notify, ops
from tests.properties.conftest import copy_warehouse

RUNS = ("run-a", "run-b", "run-c")
STEP = st.tuples(st.sampled_from(("claim", "sent", "failed", "wait")), st.sampled_from(RUNS))


@given(steps=st.lists(STEP, max_size=25))
def test_any_interleaving_of_runs_hands_a_notification_to_one_run_at_a_time(
    seeded_warehouse, tmp_path_factory, steps
):
    warehouse = copy_warehouse(seeded_warehouse, tmp_path_factory.mktemp("outbox") / "w.duckdb")
    queued = notify.Notification("daily", date(2026, 2, 2), "succeeded", "cv1", "published")
    key = queued.idempotency_key
    lease = timedelta(seconds=notify.CLAIM_LEASE_SECONDS)
    now = ops.utc_now()
    # the model: who holds the row and since when, tries used, sent
    holder, held_since, attempts, sent = None, None, 0, False

    with ops.connect(warehouse) as connection:
        assert notify.enqueue(connection, queued)
        for action, run in steps:
            if action == "wait":
                now += lease / 2
            elif action == "claim":
                pending = notify.claim_pending(connection, run, now)
                claimed = [row.idempotency_key for row in pending]
                free = holder is None or held_since < now - lease
                expected = not sent and attempts < notify.MAX_DELIVERY_ATTEMPTS and free
                assert claimed == ([key] if expected else []), (action, run, holder)
                if expected:
                    holder, held_since = run, now
            elif holder == run:  # only the run holding the claim delivers it
                ok = action == "sent"
                notify.record_deliveries(
                    connection, [notify.Delivery(key, None if ok else "503", 1)]
                )
                attempts += 1
                sent = sent or ok
                holder, held_since = None, None
