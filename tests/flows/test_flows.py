"""Flow tests: real DuckDB warehouses, Prefect's test harness, the command line."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
import time
from datetime import date, timedelta

import pytest

from flows.daily import logical_date_for
from harness import overlay
from refill.cli import main
from refill.errors import RefillError
from refill.sample_data import DaySpec, write_day, write_days
from refill.warehouse import locking
from tests.helpers import file_checksum, hold_lock_in_another_process, query, snapshot
from tests.runs import run_backfill, run_daily

pytestmark = pytest.mark.usefixtures("prefect_harness")

D1 = date(2026, 2, 1)


def d(n: int) -> date:
    return D1 + timedelta(days=n - 1)


def attempts(warehouse, command: str | None = None):
    where = f"where command = '{command}'" if command else ""
    return query(
        warehouse,
        "select command, chunk_start, chunk_end, attempt, outcome, started_at, ended_at "
        f"from ops.partition_attempts {where} order by started_at, partition_date",
    )


def chunks_in_order(warehouse, command="backfill"):
    seen = []
    for _, start, end, _, outcome, _, _ in attempts(warehouse, command):
        if outcome == "published" and (start, end) not in seen:
            seen.append((start, end))
    return seen


def ledger_run_ids(warehouse) -> dict:
    rows = query(
        warehouse,
        "select partition_date, run_id from ops.partition_ledger where model_name = 'fct_payments'",
    )
    return dict(rows)


@pytest.mark.parametrize("order", ["newest-first", "oldest-first"])
def test_chunks_run_in_the_order_asked(workspace, order):
    write_days(workspace.landing, D1, 6, DaySpec(payments=50))

    report = run_backfill(start=d(1), end=d(6), order=order, chunk_days=2)

    expected = [(d(1), d(2)), (d(3), d(4)), (d(5), d(6))]
    if order == "newest-first":
        expected.reverse()
    assert chunks_in_order(workspace.warehouse) == expected
    assert [(c.start, c.end) for c in report.order_built] == expected
    # the ledger agrees: each chunk's days share one publish time, later chunks later
    # (to the microsecond: back-to-back chunks often start in the same second)
    published = query(
        workspace.warehouse,
        "select min(partition_date), max(partition_date) from ops.partition_ledger "
        "where model_name = 'fct_payments' group by published_at order by published_at",
    )
    assert [tuple(days) for days in published] == expected


def test_a_busy_day_gets_a_smaller_chunk_when_chunks_are_cut_by_lines(workspace):
    # GIVEN four quiet days (about 50 lines each) with a busy one (about 400) among them
    write_days(workspace.landing, D1, 4, DaySpec(payments=50))
    write_day(workspace.landing, d(3), DaySpec(payments=400))

    # WHEN they are backfilled in chunks of up to 4 days and 150 landed lines
    report = run_backfill(start=d(1), end=d(4), order="oldest-first", chunk_days=4, chunk_lines=150)

    # THEN the chunks close at the line limit, the busy day alone, and every day is built
    expected = [(d(1), d(2)), (d(3), d(3)), (d(4), d(4))]
    assert chunks_in_order(workspace.warehouse) == expected
    assert sorted(report.published) == [d(1), d(2), d(3), d(4)]


@pytest.fixture
def armed_project():
    """The harness's patched copy of the project, whose fault seam REFILL_HARNESS_FAULT arms
    (the product's seam does nothing): this process's runs use it for the test."""
    with overlay.use_patched_project():
        yield


def test_a_failed_chunk_then_a_rerun_builds_only_what_is_not_published(
    workspace, monkeypatch, armed_project
):
    # GIVEN six days, and the chunk of days 3-4 forced to fail on every attempt
    write_days(workspace.landing, D1, 6, DaySpec(payments=50))
    monkeypatch.setenv(overlay.FAULT_ENV, overlay.fault_spec("after_delete", (d(3), d(4))))

    with pytest.raises(RefillError, match=r"failed .*2026-02-03\.\.2026-02-04"):
        run_backfill(start=d(1), end=d(6), chunk_days=2)
    published_before = ledger_run_ids(workspace.warehouse)
    assert sorted(published_before) == [d(1), d(2), d(5), d(6)]

    # WHEN the same command runs again
    monkeypatch.delenv(overlay.FAULT_ENV)
    report = run_backfill(start=d(1), end=d(6), chunk_days=2)

    # THEN only the failed chunk is built, and published days keep their run ids
    assert [(c.start, c.end) for c in report.order_built] == [(d(3), d(4))]
    after = ledger_run_ids(workspace.warehouse)
    assert {day: after[day] for day in published_before} == published_before
    assert sorted(after) == [d(n) for n in range(1, 7)]


def test_a_chunk_that_fails_the_same_way_again_is_not_retried(
    workspace, monkeypatch, armed_project
):
    # GIVEN two days whose build fails in the transaction (a failure no pause can fix)
    # (was: a chunk retried after a failure publishes; only a transient failure is retried
    # now, tests/flows/test_failures.py has the retried one: the warehouse held by another run)
    write_days(workspace.landing, D1, 2, DaySpec(payments=50))
    monkeypatch.setenv(overlay.FAULT_ENV, overlay.fault_spec("before_ledger", (d(1), d(2))))

    # WHEN the backfill may try 2 times
    with pytest.raises(RefillError, match=r"chunk 2026-02-01\.\.2026-02-02 failed at publish"):
        run_backfill(start=d(1), end=d(2), retries=2)

    # THEN it tried once (a retry would have recorded attempt 2)
    outcomes = [(a[3], a[4]) for a in attempts(workspace.warehouse, "backfill")]
    assert outcomes == [(1, "failed"), (1, "failed")]


def test_a_day_not_ready_fails_the_daily_run_and_notifies_once(workspace):
    write_day(workspace.landing, d(1), DaySpec(write_manifest=False))

    for _ in range(2):  # a rerun fails the same way and sends nothing new
        with pytest.raises(RefillError, match=r"daily 2026-02-01: payments not ready"):
            run_daily(d(1))

    outbox = query(workspace.warehouse, "select outcome, logical_date from ops.notification_outbox")
    assert outbox == [("not ready", d(1))]
    assert query(workspace.warehouse, "select count(*) from ops.partition_ledger") == [(0,)]


def test_a_backfill_stops_before_an_unready_chunk_or_skips_it(workspace):
    write_days(workspace.landing, D1, 4, DaySpec(payments=50))
    write_day(workspace.landing, d(2), DaySpec(payments=50, write_manifest=False))

    with pytest.raises(RefillError, match="not ready: 2026-02-02") as stopped:
        run_backfill(start=d(1), end=d(4), chunk_days=1, order="newest-first")
    # newest-first: days 4 and 3 were built, the run stopped before day 2's chunk, and says
    # why day 2 is not ready and that day 1, ready, can be built now
    assert sorted(ledger_run_ids(workspace.warehouse)) == [d(3), d(4)]
    assert "not ready: 2026-02-02 (no _SUCCESS manifest)" in str(stopped.value)
    assert "1 ready day(s) were not built after the stop: --on-missing skip" in str(stopped.value)

    report = run_backfill(start=d(1), end=d(4), chunk_days=1, on_missing="skip")
    assert report.skipped_not_ready == [d(2)]
    assert sorted(ledger_run_ids(workspace.warehouse)) == [d(1), d(3), d(4)]


def test_a_backfill_of_a_range_with_nothing_landed_says_why_and_offers_no_rerun(workspace):
    # GIVEN a range of three days, none of which has landed
    # WHEN it is backfilled
    with pytest.raises(RefillError) as stopped:
        run_backfill(start=d(1), end=d(3))

    # THEN the one line names the days and why they are not ready, and does not tell the
    # user to rerun now, which would build nothing
    message = str(stopped.value)
    assert "not ready: 2026-02-01, 2026-02-02, 2026-02-03 (no landing folder)" in message
    assert "rerun the same command" not in message.lower()
    assert (
        "Nothing else can be built now; the same command builds the days not ready once "
        "they have landed." in message
    )


def test_on_missing_wait_builds_ready_chunks_first_then_the_late_day(workspace):
    write_days(workspace.landing, D1, 3, DaySpec(payments=50))
    write_day(workspace.landing, d(3), DaySpec(payments=50, write_manifest=False))

    def land_later():
        time.sleep(4)
        write_day(workspace.landing, d(3), DaySpec(payments=50))

    threading.Thread(target=land_later, daemon=True).start()
    report = run_backfill(
        start=d(1),
        end=d(3),
        chunk_days=1,
        order="newest-first",
        on_missing="wait",
        wait_for_late_seconds=60,
        poll_seconds=0.5,
    )

    assert [c.start for c in report.order_built] == [d(2), d(1), d(3)]


def test_restating_published_days_needs_sign_off_and_dry_run_writes_nothing(workspace):
    write_days(workspace.landing, D1, 3, DaySpec(payments=50))
    run_backfill(start=d(1), end=d(3))
    write_day(workspace.landing, d(2), DaySpec(payments=50, amount_factor=3, export_version=2))
    before = file_checksum(workspace.warehouse)

    with pytest.raises(RefillError, match=r"restates 1 published day\(s\) \(2026-02-02\).*--yes"):
        run_backfill(start=d(1), end=d(3))
    report = run_backfill(start=d(1), end=d(3), restate=True, dry_run=True)
    assert file_checksum(workspace.warehouse) == before
    assert sorted(report.plan.restated) == [d(1), d(2), d(3)]

    report = run_backfill(start=d(1), end=d(3), confirm=True)
    assert report.published == [d(2)]


class Webhook(http.server.BaseHTTPRequestHandler):
    received: list = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Webhook.received.append((self.headers["Idempotency-Key"], body["outcome"]))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def webhook(monkeypatch):
    Webhook.received = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Webhook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("REFILL_WEBHOOK_URL", f"http://127.0.0.1:{server.server_port}/hook")
    yield Webhook.received
    server.shutdown()


def test_retries_and_reruns_send_each_notification_once(
    workspace, webhook, monkeypatch, armed_project
):
    # GIVEN a day whose build fails before its ledger rows, in two runs the same way
    # (was: fails on attempt 1 and publishes on the retry; such a failure is no longer
    # retried, so the repeat is a rerun)
    write_days(workspace.landing, D1, 1, DaySpec(payments=50))
    monkeypatch.setenv(overlay.FAULT_ENV, overlay.fault_spec("before_ledger", d(1)))
    for _ in range(2):
        with pytest.raises(RefillError, match="failed at publish"):
            run_daily(d(1), retries=2)

    # WHEN the cause is gone and the daily run runs three more times
    monkeypatch.delenv(overlay.FAULT_ENV)
    for _ in range(3):
        run_daily(d(1), retries=2, confirm=True)

    # THEN one failure report and one success report, in the outbox and at the webhook
    outbox = query(
        workspace.warehouse,
        "select outcome, sent_at is not null from ops.notification_outbox order by created_at",
    )
    assert outbox == [("failed", True), ("succeeded", True)]
    assert [outcome for _, outcome in webhook] == ["failed", "succeeded"]
    assert webhook[1][0].startswith("daily:2026-02-01:succeeded:")


def test_a_daily_run_waits_for_a_holder_then_fails_naming_it_or_runs_after_it(workspace):
    write_days(workspace.landing, D1, 1, DaySpec(payments=50))
    holder = hold_lock_in_another_process(workspace.warehouse, 30)
    try:
        with pytest.raises(RefillError, match=r"held by run holder-run \(backfill"):
            run_daily(d(1), lock_wait_seconds=1)
    finally:
        holder.kill()
        holder.wait()
    assert not workspace.warehouse.exists() or ledger_run_ids(workspace.warehouse) == {}

    holder = hold_lock_in_another_process(workspace.warehouse, 3)
    started = time.monotonic()
    report = run_daily(d(1), lock_wait_seconds=30)
    holder.wait()
    assert report.outcome == "succeeded"
    assert time.monotonic() - started >= 2  # it waited for the holder to finish


def test_a_daily_run_goes_between_a_long_backfills_chunks(workspace):
    # GIVEN a backfill of eight one-day chunks running in another process
    write_days(workspace.landing, D1, 9, DaySpec(payments=1500))
    from prefect.settings import PREFECT_API_URL

    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value()}
    command = [sys.executable, "-m", "refill", "backfill", "--start", str(d(1)), "--end", str(d(8))]
    command += ["--chunk-days", "1", "--order", "oldest-first", "--retries", "1"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            holder = locking.read_holder(workspace.warehouse)
            if holder and holder.command == "backfill" and holder.partitions:
                break
            time.sleep(0.1)
        # WHEN the daily run for the ninth day starts while a chunk is being built
        report = run_daily(d(9), lock_wait_seconds=120)
    finally:
        output, _ = process.communicate(timeout=300)
    assert process.returncode == 0, output.decode()[-2000:]

    # THEN it ran between two chunks of the backfill, not after all of them
    assert report.outcome == "succeeded"
    daily_attempt = attempts(workspace.warehouse, "daily")[0]
    backfill_starts = [a[5] for a in attempts(workspace.warehouse, "backfill")]
    assert min(backfill_starts) < daily_attempt[5]
    assert any(start > daily_attempt[6] for start in backfill_starts)
    # AND no chunk interleaved with it
    for _, _, _, _, _, started, ended in attempts(workspace.warehouse, "backfill"):
        assert ended <= daily_attempt[5] or started >= daily_attempt[6]


def test_gaps_finds_a_six_hour_hole_and_a_stale_day_and_fix_repairs_both(workspace, capsys):
    # GIVEN four published days; day 2 lost six hours to a streaming outage
    write_days(workspace.landing, D1, 4, DaySpec(payments=400))
    write_day(workspace.landing, d(2), DaySpec(payments=400, outage_hours=(8, 14)))
    run_backfill(start=d(1), end=d(4))
    # AND day 4 was re-exported with corrected amounts
    write_day(workspace.landing, d(4), DaySpec(payments=400, amount_factor=1.1, export_version=2))

    assert main(["gaps", "--start", str(d(1)), "--end", str(d(4))]) == 1  # gaps found
    found = capsys.readouterr().out
    assert "2026-02-02 08:00-14:00 (6h)  no events" in found
    assert "2026-02-04  stale" in found

    # WHEN the hole's hours are re-delivered, and gaps --fix runs
    write_day(workspace.landing, d(2), DaySpec(payments=400, export_version=2))
    fix = ["gaps", "--start", str(d(1)), "--end", str(d(4)), "--fix", "--yes", "--retries", "1"]
    assert main(fix) == 0

    # THEN nothing is left
    assert main(["gaps", "--start", str(d(1)), "--end", str(d(4))]) == 0
    assert "no gaps" in capsys.readouterr().out


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["backfill"], "needs an explicit range"),
        (["backfill", "--start", "2026-02-05", "--end", "2026-02-01"], "is before --start"),
        (["backfill", "--start", "2026-02-31", "--end", "2026-03-01"], "is not an ISO date"),
        (
            ["backfill", "--start", "2026-02-01", "--end", "2026-02-02", "--chunk-days", "0"],
            "--chunk-days must be",
        ),
        (
            ["backfill", "--start", "2026-02-01", "--end", "2026-02-02", "--order", "random"],
            "argument --order: invalid choice: 'random'",
        ),
        (["daily", "--date", "tomorrow"], "is not an ISO date"),
        (
            ["backfill", "--start", "2026-02-01", "--end", "2026-02-02", "--chunk-days", "x"],
            "invalid int value",
        ),
    ],
)
def test_bad_input_gets_one_line_and_an_untouched_warehouse(workspace, capsys, arguments, message):
    write_days(workspace.landing, D1, 2, DaySpec(payments=50))
    run_backfill(start=d(1), end=d(2))
    before = file_checksum(workspace.warehouse)
    capsys.readouterr()

    try:
        status = main(arguments)
    except SystemExit as exit_:
        status = exit_.code

    error = capsys.readouterr().err.strip()
    assert status != 0
    assert message in error and error.startswith("refill: error:") and "\n" not in error
    assert file_checksum(workspace.warehouse) == before


def test_status_shows_each_day_and_data_as_of(workspace, capsys):
    write_days(workspace.landing, D1, 3, DaySpec(payments=50))
    write_day(workspace.landing, d(3), DaySpec(write_manifest=False))
    run_backfill(start=d(1), end=d(2))

    assert main(["status", "--start", str(d(1)), "--end", str(d(3))]) == 0

    out = capsys.readouterr().out
    assert "data as of: fct_payments complete through 2026-02-02" in out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("2026-02-0")}
    assert "published" in lines["2026-02-01"] and "backfill" in lines["2026-02-01"]
    assert "no: no _SUCCESS manifest" in lines["2026-02-03"]


def test_the_logical_date_comes_from_the_schedule_not_the_clock():
    from datetime import datetime

    assert logical_date_for(datetime(2026, 1, 8, 3, 0), None) == date(2026, 1, 7)
    assert logical_date_for(datetime(2026, 1, 8, 3, 0), "2026-01-01") == date(2026, 1, 1)
    with pytest.raises(RefillError):
        logical_date_for(None, None)


def test_the_warehouse_is_untouched_by_a_refused_run(workspace):
    write_days(workspace.landing, D1, 1, DaySpec(payments=50))
    run_backfill(start=d(1), end=d(1))
    before = snapshot(workspace.warehouse, full=True)
    with pytest.raises(RefillError):
        run_backfill(start=d(1), end=d(1), restate=True)
    assert snapshot(workspace.warehouse, full=True) == before


def test_a_daily_run_waits_for_a_late_file_then_builds(workspace):
    # GIVEN a day whose manifest lands two seconds after the run starts
    write_day(workspace.landing, d(1), DaySpec(payments=50, write_manifest=False))

    def land_later():
        time.sleep(2)
        write_day(workspace.landing, d(1), DaySpec(payments=50))

    threading.Thread(target=land_later, daemon=True).start()

    # WHEN the daily run may wait up to a minute, polling every half second
    report = run_daily(d(1), wait_for_ready_seconds=60, poll_seconds=0.5)

    # THEN it builds the day once the file is there
    assert report.outcome == "succeeded" and report.rows > 0


def test_every_writing_command_is_in_the_run_log(workspace):
    write_days(workspace.landing, D1, 2, DaySpec(payments=50))

    run_backfill(start=d(1), end=d(2), command_line="refill backfill --start x --end y")
    # (day 2 is published by then: a daily run given its date restates it on sign-off)
    run_daily(d(2), confirm=True, command_line="refill daily --date 2026-02-02")

    rows = query(
        workspace.warehouse,
        "select command, command_line, parameters->>'$.start', user_name is not null, "
        "host is not null, ended_at >= started_at, outcome, partitions_touched "
        "from ops.run_log order by started_at",
    )
    assert rows == [
        (
            "backfill",
            "refill backfill --start x --end y",
            "2026-02-01",
            True,
            True,
            True,
            "succeeded",
            [d(1), d(2)],
        ),
        ("daily", "refill daily --date 2026-02-02", None, True, True, True, "succeeded", [d(2)]),
    ]


def test_select_narrows_the_models_and_brings_their_downstream_along(workspace):
    # GIVEN three published days
    write_days(workspace.landing, D1, 3, DaySpec(payments=50))
    run_backfill(start=d(1), end=d(3))

    def run_ids():
        return dict(
            ((model, day), run_id)
            for model, day, run_id in query(
                workspace.warehouse,
                "select model_name, partition_date, run_id from ops.partition_ledger",
            )
        )

    before = run_ids()

    # WHEN v2 alone is restated, then fct_payments (with what is downstream of it)
    run_backfill(start=d(1), end=d(3), select="fct_daily_revenue_v2", restate=True, confirm=True)
    after_v2 = run_ids()
    run_backfill(start=d(2), end=d(2), select="fct_payments", restate=True, confirm=True)
    after_facts = run_ids()

    # THEN only v2's partitions were rewritten the first time
    changed = {key for key in before if after_v2[key] != before[key]}
    assert changed == {("fct_daily_revenue_v2", d(n)) for n in (1, 2, 3)}
    # AND the facts of day 2 came with every model downstream of them, and only day 2
    changed = {key for key in before if after_facts[key] != after_v2[key]}
    assert changed == {
        (model, d(2))
        for model in (
            "fct_payments",
            "payments_quarantine",
            "fct_daily_revenue_v1",
            "fct_daily_revenue_v2",
        )
    }
