"""Failures, as users meet them: classified (a retry only where it can help), accounted
for on every path (run log closed, notification queued), delivered without the warehouse."""

from __future__ import annotations

import http.server
import threading
import time
from datetime import date, datetime, timedelta
from types import SimpleNamespace

import pytest

from flows import daily as daily_module
from flows import tasks as tasks_module
from flows.daily import daily
from flows.tasks import run_flow
from harness import overlay
from refill import settings
from refill.errors import RefillError
from refill.rules.readiness import day_folder
from refill.sample_data import DATASET, DaySpec, write_days
from refill.warehouse import locking, notify, ops
from refill.warehouse.engine import is_transient
from tests.conftest import Workspace
from tests.helpers import copy_workspace, hold_lock_in_another_process, query

pytestmark = pytest.mark.usefixtures("prefect_harness")

D1 = date(2026, 2, 1)
LONG_DELAYS = [30.0, 60.0]  # a retry would make a test last over half a minute


def d(n: int) -> date:
    return D1 + timedelta(days=n - 1)


def run_daily(day: date, **parameters):
    settings_ = {"wait_for_ready_seconds": 0, "retries": 3, "retry_delay_seconds": LONG_DELAYS}
    return run_flow(daily, logical_date=day, **{**settings_, **parameters})


def attempts_of(warehouse, day: date) -> list[tuple]:
    return query(
        warehouse,
        "select attempt, outcome, failed_step from ops.partition_attempts "
        "where partition_date = ? order by started_at",
        [day],
    )


def run_log(warehouse, command: str = "daily") -> list[tuple]:
    return query(
        warehouse,
        "select outcome, ended_at is not null, message from ops.run_log where command = ? "
        "order by started_at",
        [command],
    )


def outbox(warehouse) -> list[tuple]:
    return query(
        warehouse,
        "select logical_date, outcome, message from ops.notification_outbox order by created_at",
    )


@pytest.fixture(scope="module")
def day_one_template(prefect_harness, tmp_path_factory) -> Workspace:
    """Days 1-3 landed and day 1 published, once for the module."""
    template = tmp_path_factory.mktemp("day-one-published")
    built = Workspace(template / "landing", template / "warehouse" / "refill.duckdb")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REFILL_LANDING", str(built.landing))
        patch.setenv("REFILL_WAREHOUSE", str(built.warehouse))
        write_days(built.landing, D1, 3, DaySpec(payments=30))
        run_daily(d(1))
    return built


@pytest.fixture
def published_day_one(day_one_template, workspace):
    """A warehouse with day 1 published (seeds and ops relations in place): a copy of the
    module's."""
    copy_workspace(day_one_template, workspace)
    return workspace


def test_a_notification_key_tells_failures_apart_but_not_two_runs_of_the_same_one():
    def failed(message: str) -> str:
        return notify.Notification(
            "daily", D1, "failed", "v1", message, failure=message
        ).idempotency_key

    # the same failure in two runs: another run id, pid, instant, duration, attempt
    first = failed(
        "daily 2026-02-01: chunk 2026-02-01 failed at lock: held by run "
        "0b6f3c1e-1d2a-4c3b-9a8e-1234567890ab (backfill, pid 4242 on vm) since "
        "2026-02-02T03:00:01+00:00; waited 900s (attempt 3)"
    )
    again = failed(
        "daily 2026-02-01: chunk 2026-02-01 failed at lock: held by run "
        "9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f (backfill, pid 77 on vm) since "
        "2026-02-03T03:10:00+00:00; waited 900.5s (attempt 2)"
    )
    assert first == again
    # another failure of the same date, and the same failure of another date
    assert failed("daily 2026-02-01: chunk 2026-02-01 failed at audit: x") != first
    assert failed("daily 2026-02-02: chunk 2026-02-02 failed at lock: y") != failed(
        "daily 2026-02-03: chunk 2026-02-03 failed at lock: y"
    )


def test_the_lock_timeout_is_transient_and_a_refusal_is_not():
    assert is_transient(locking.LockTimeout("held by run x"))
    assert not is_transient(RefillError("not ready"))


# -- deterministic failures fail at once --------------------------------------------------


def test_a_day_withdrawn_after_its_check_fails_at_once_at_readiness(published_day_one, monkeypatch):
    warehouse = published_day_one.warehouse
    # GIVEN day 2, whose export is withdrawn right after the flow found it ready
    real_wait = daily_module.wait_until_ready

    def ready_then_withdrawn(day, *args):
        verdict = real_wait(day, *args)
        (day_folder(published_day_one.landing, DATASET, day) / "_SUCCESS").unlink()
        return verdict

    monkeypatch.setattr(daily_module, "wait_until_ready", ready_then_withdrawn)

    # WHEN the daily run may try 3 times, 30 s apart
    started = time.monotonic()
    with pytest.raises(RefillError) as failure:
        run_daily(d(2))
    seconds = time.monotonic() - started

    # THEN dbt's readiness gate refused it once, with no retry sleep
    assert seconds < 25
    message = str(failure.value)
    assert message.startswith("daily 2026-02-02: chunk 2026-02-02 failed at readiness:")
    assert "refill readiness:" in message and "\n" not in message
    assert "once the export has landed" in message
    assert "rerun the same command" not in message.lower()
    assert attempts_of(warehouse, d(2)) == [(1, "failed", "readiness")]
    # AND the run is closed, its notification queued
    assert run_log(warehouse)[-1][:2] == ("not ready", True)
    assert outbox(warehouse)[-1][:2] == (d(2), "not ready")


def _window_refused(monkeypatch, start: str, end: str) -> None:
    """dbt receives a window it refuses (as a deployment given bad dates would pass)."""

    def refused(*args, **kwargs):
        variables = real(*args, **kwargs)
        return {**variables, "start_date": start, "end_date": end}

    real = tasks_module.window_vars
    monkeypatch.setattr(tasks_module, "window_vars", refused)


def test_a_window_dbt_refuses_fails_at_once_and_two_different_failures_are_both_queued(
    published_day_one, monkeypatch
):
    warehouse = published_day_one.warehouse
    # GIVEN day 2, and a window dbt refuses (end before start)
    _window_refused(monkeypatch, "2026-02-03", "2026-02-02")

    # WHEN the daily run may try 3 times, 30 s apart, and is run twice
    started = time.monotonic()
    for _ in range(2):
        with pytest.raises(RefillError, match=r"daily 2026-02-02: .*failed at build: .*window"):
            run_daily(d(2))
    # AND then fails another way: a window that is not a calendar date
    _window_refused(monkeypatch, "2026-02-30", "2026-02-30")
    with pytest.raises(RefillError, match=r"is not a calendar date"):
        run_daily(d(2))

    # THEN each run tried once, recorded at the build step
    assert time.monotonic() - started < 40
    assert attempts_of(warehouse, d(2)) == [(1, "failed", "build")] * 3
    # AND the two different failures are both queued, the repeat is not
    queued = [row for row in outbox(warehouse) if row[0] == d(2)]
    assert [outcome for _, outcome, _ in queued] == ["failed", "failed"]
    assert "before start_date" in queued[0][2] and "calendar date" in queued[1][2]
    # AND every run is closed
    assert [row[:2] for row in run_log(warehouse)[1:]] == [("failed", True)] * 3


# -- transient failures are retried --------------------------------------------------------


def _held_when_the_build_starts(monkeypatch, warehouse, seconds: float) -> list:
    """Another process takes the warehouse lock just before the first build takes it."""
    holders: list = []

    def take_the_lock_first(*args, **kwargs):
        if not holders:
            holders.append(hold_lock_in_another_process(warehouse, seconds))
        return real(*args, **kwargs)

    real = tasks_module.window_vars
    monkeypatch.setattr(tasks_module, "window_vars", take_the_lock_first)
    return holders


def test_a_warehouse_held_past_the_lock_wait_is_retried_with_backoff(
    published_day_one, monkeypatch
):
    warehouse = published_day_one.warehouse
    # GIVEN another run holds the warehouse for 2.5 s once day 2's build starts
    holders = _held_when_the_build_starts(monkeypatch, warehouse, 2.5)

    # WHEN the daily run waits 1 s for the lock, with 3 tries 1 s then 2 s apart
    try:
        report = run_daily(d(2), lock_wait_seconds=1, retry_delay_seconds=[1, 2])
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()

    # THEN the first try ran out of lock wait, the retry published the day
    assert report.outcome == "succeeded" and report.rows > 0
    assert report.attempts == 2
    assert attempts_of(warehouse, d(2)) == [(2, "published", None)]


def test_a_lock_timeout_closes_the_run_and_queues_a_notification(published_day_one, monkeypatch):
    warehouse = published_day_one.warehouse
    # GIVEN another run holds the warehouse for 4 s once day 2's build starts
    holders = _held_when_the_build_starts(monkeypatch, warehouse, 4)

    # WHEN the daily run waits 1 s for the lock and may try once
    try:
        with pytest.raises(RefillError, match=r"daily 2026-02-02: .*held by run holder-run"):
            run_daily(d(2), lock_wait_seconds=1, retries=1)
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()

    # THEN the failure is recorded once the warehouse is free: run log, attempt, outbox
    outcome, closed, message = run_log(warehouse)[-1]
    assert (outcome, closed) == ("failed", True) and "held by run holder-run" in message
    assert attempts_of(warehouse, d(2)) == [(1, "failed", "lock")]
    assert outbox(warehouse)[-1][:2] == (d(2), "failed")
    assert "rerun the same command to resume" in message


def test_a_seed_failure_closes_the_run_and_queues_a_notification(
    published_day_one, monkeypatch, tmp_path
):
    warehouse = published_day_one.warehouse
    # GIVEN a project whose fx seed has a broken row (a CSV line with a missing column)
    copy = tmp_path / "project"
    overlay.build_copy(settings.project_dir(), copy)
    seed = copy / "seeds" / "fx_rates_daily.csv"
    seed.write_text(seed.read_text() + "2026-01-01\n")
    monkeypatch.setenv(settings.PROJECT_DIR_ENV, str(copy))
    from refill.warehouse.dbt_runner import shared_project

    shared_project.cache_clear()
    try:
        # WHEN the daily run of day 2 loads the seeds
        with pytest.raises(RefillError, match=r"loading the dbt seeds failed"):
            run_daily(d(2))
    finally:
        monkeypatch.undo()
        shared_project.cache_clear()

    # THEN the run is closed as failed and its notification queued
    outcome, closed, message = run_log(warehouse)[-1]
    assert (outcome, closed) == ("failed", True) and "seeds" in message
    assert outbox(warehouse)[-1][:2] == (d(2), "failed")


# -- delivery ------------------------------------------------------------------------------


class FailingWebhook(http.server.BaseHTTPRequestHandler):
    """Answers 500, and notes whether the warehouse lock was free when it was called."""

    calls: list = []
    warehouse = None

    def do_POST(self):  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers["Content-Length"]))
        try:
            with locking.warehouse_lock(
                FailingWebhook.warehouse,
                run_id="webhook-probe",
                command="probe",
                priority=locking.HISTORY,
                wait_seconds=0,
            ):
                free = True
        except locking.LockTimeout:
            free = False
        FailingWebhook.calls.append((self.headers["Idempotency-Key"], free))
        self.send_response(500)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_failing_webhook_is_tried_a_bounded_number_of_times_without_the_warehouse(
    workspace, monkeypatch
):
    # GIVEN a webhook that answers 500, and delivery tried at most 4 times in all
    FailingWebhook.calls = []
    FailingWebhook.warehouse = workspace.warehouse
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FailingWebhook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("REFILL_WEBHOOK_URL", f"http://127.0.0.1:{server.server_port}/hook")
    monkeypatch.setattr(notify, "MAX_DELIVERY_ATTEMPTS", 4)
    write_days(workspace.landing, D1, 2, DaySpec(payments=30))

    # WHEN two daily runs succeed
    try:
        started = time.monotonic()
        first = run_daily(d(1))
        second = run_daily(d(2))
        seconds = time.monotonic() - started
    finally:
        server.shutdown()

    # THEN each run tried each pending notification a few times, then gave up for the run
    assert first.outcome == second.outcome == "succeeded"
    keys = [key for key, _ in FailingWebhook.calls]
    first_key, second_key = sorted(set(keys), key=keys.index)
    assert keys.count(first_key) == 4  # 3 in its own run, 1 left for the next run
    assert keys.count(second_key) == notify.TRIES_PER_RUN
    # AND no call was made while the warehouse was held
    assert all(free for _, free in FailingWebhook.calls)
    assert seconds < 60
    rows = query(
        workspace.warehouse,
        "select sent_at is null, delivery_attempts, last_error from ops.notification_outbox "
        "order by created_at",
    )
    assert rows == [(True, 4, "HTTP 500"), (True, 3, "HTTP 500")]


def test_two_runs_delivering_at_once_send_a_notification_once(published_day_one):
    # GIVEN a notification queued and not yet sent (day 1's own was delivered by its run)
    queued = notify.Notification("daily", d(2), "succeeded", "cv1", "published 2026-02-02")
    with ops.connect(published_day_one.warehouse) as connection:
        assert notify.enqueue(connection, queued)

    # WHEN a run claims it to deliver (the lock released while it sends), and a second run
    # (a daily beside a backfill) goes to deliver before the first has marked it sent
    with ops.connect(published_day_one.warehouse) as connection:
        first = notify.claim_pending(connection, "run-a")
    with ops.connect(published_day_one.warehouse) as connection:
        second = notify.claim_pending(connection, "run-b")

    # THEN only the first sends it
    assert [row.idempotency_key for row in first] == [queued.idempotency_key]
    assert second == []

    # AND a failed delivery releases its claim: the next run retries it at once
    with ops.connect(published_day_one.warehouse) as connection:
        notify.record_deliveries(connection, [notify.Delivery(queued.idempotency_key, "503", 1)])
        (retried,) = notify.claim_pending(connection, "run-b")
    assert retried.delivery_attempts == 1

    # AND a claim whose run died before marking lapses after the lease, never before
    lease = timedelta(seconds=notify.CLAIM_LEASE_SECONDS)
    with ops.connect(published_day_one.warehouse) as connection:
        soon = ops.utc_now() + lease - timedelta(seconds=5)
        assert notify.claim_pending(connection, "run-c", now=soon) == []
        (taken_over,) = notify.claim_pending(connection, "run-c", now=soon + timedelta(seconds=10))
    assert taken_over.idempotency_key == queued.idempotency_key


# -- sign-off ------------------------------------------------------------------------------


def test_the_schedule_signs_off_its_own_logical_date(published_day_one, monkeypatch):
    # GIVEN day 1 published, and a scheduled run of the next morning (no date given)
    scheduled = SimpleNamespace(id=None, scheduled_start_time=datetime(2026, 2, 2, 3, 0))
    monkeypatch.setattr(daily_module, "flow_run", scheduled)

    # WHEN it runs without confirm
    report = run_flow(daily, wait_for_ready_seconds=0, retries=1)

    # THEN it rebuilds its logical date, day 1
    assert (report.logical_date, report.outcome) == (d(1), "succeeded")

    # AND a run given day 1 by hand is refused without confirm
    with pytest.raises(RefillError, match=r"daily 2026-02-01 restates a published day .*--yes"):
        run_daily(d(1))


def test_an_unexpected_error_closes_the_run_and_queues_a_notification(
    published_day_one, monkeypatch
):
    warehouse = published_day_one.warehouse

    # GIVEN a daily run that meets an error refill did not foresee, after it started
    def broken(*args, **kwargs):
        raise ValueError("the landing's file system went away")

    monkeypatch.setattr(daily_module, "wait_until_ready", broken)

    # WHEN it runs
    with pytest.raises(RefillError) as failure:
        run_daily(d(2))

    # THEN it ends with one line naming the error, the run is closed and notified
    message = str(failure.value)
    assert message.startswith("daily: unexpected ValueError: the landing's file system")
    assert "\n" not in message
    outcome, closed, recorded = run_log(warehouse)[-1]
    assert (outcome, closed, recorded) == ("failed", True, message)
    assert outbox(warehouse)[-1][:2] == (d(2), "failed")
