"""The partition board: a planted week read row by row, versioned marts, a run in progress
on the served board, the Prefect artifact, and the lamp rules on their own."""

from __future__ import annotations

import json
import time
import urllib.request
from datetime import date, datetime, timedelta
from decimal import Decimal

import pytest

from flows import artifacts
from harness import overlay
from refill.errors import RefillError
from refill.rules import planning
from refill.rules.planning import DayState
from refill.rules.readiness import DayReadiness
from refill.sample_data import DaySpec, write_day, write_days
from refill.views import board, status
from refill.views.board import markdown as board_markdown
from refill.views.board import model as board_model
from refill.views.board import page as board_page
from refill.views.board import read as board_read
from refill.views.board import rows as board_rows
from refill.views.board import server as board_server
from refill.warehouse import ops
from refill.warehouse.dbt_runner import shared_project
from refill.warehouse.partition_status import DayStatus
from tests.board.page import SPEC, W1, BoardPage, d, render, run_daily
from tests.helpers import PAYMENTS_CATALOG, expected_day, hold_lock_in_another_process, query
from tests.runs import run_backfill

pytestmark = pytest.mark.usefixtures("prefect_harness")


def ledger(warehouse, model: str = "fct_payments") -> dict[date, tuple]:
    rows = query(
        warehouse,
        "select partition_date, code_version, run_id from ops.partition_ledger "
        "where model_name = ?",
        [model],
    )
    return {day: (code, run_id) for day, code, run_id in rows}


# -- the planted week ---------------------------------------------------------------------------


def test_the_board_shows_a_planted_week_row_by_row(workspace, tmp_path, monkeypatch):
    # GIVEN a week whose third day is late, fifth lost six hours to a streaming outage,
    # sixth fails its first build in the audits, and seventh has not landed
    write_days(workspace.landing, d(1), 7, SPEC)
    write_day(workspace.landing, d(3), DaySpec(payments=150, write_manifest=False))
    write_day(workspace.landing, d(5), DaySpec(payments=400, outage_hours=(8, 14)))
    write_day(workspace.landing, d(7), DaySpec(payments=150, write_manifest=False))
    with overlay.use_patched_project():  # the harness's copy, whose fault seam can be armed
        for n in range(1, 8):  # AND its daily runs
            if n in (3, 7):
                with pytest.raises(RefillError, match="not ready"):
                    run_daily(d(n))
            elif n == 6:  # an audit failure is not retried: the on-call reruns the day
                monkeypatch.setenv(overlay.FAULT_ENV, overlay.fault_spec("in_audit", d(6)))
                with pytest.raises(RefillError, match="fault injected at in_audit"):
                    run_daily(d(n))
                monkeypatch.delenv(overlay.FAULT_ENV)
                run_daily(d(n))
            else:
                run_daily(d(n))
    # AND day 3's file lands and a backfill fills the hole (day 7 is still missing)
    write_day(workspace.landing, d(3), SPEC)
    run_backfill(start=d(1), end=d(7), on_missing="skip")
    # AND day 2 is re-exported with corrected amounts after it was published
    write_day(workspace.landing, d(2), DaySpec(payments=150, amount_factor=1.1, export_version=2))

    # WHEN the board of the week is drawn
    page = render(tmp_path / "board.html", d(1), d(7))

    # THEN there is a row per day, and data-as-of is what readers see
    assert list(page.rows) == [str(d(n)) for n in range(1, 8)]
    assert any(
        line.startswith("data as of: fct_payments complete through 2026-03-07 (published")
        for line in page.data_as_of
    )
    published = ledger(workspace.warehouse)
    rows = page.rows

    # day 1: every lamp lit; rows against the source, quarantine and duplicates as landed
    day1 = rows[str(d(1))]
    truth = expected_day(workspace.landing, d(1))
    assert day1.state == "published" and day1.lamp_states() == ["on"] * 4
    assert day1.cells["rows"] == f"{truth.published:,} / {truth.lines:,}"
    assert day1.cells["quarantined"] == str(truth.quarantined)
    assert day1.cells["duplicates"] == str(truth.duplicates)
    assert day1.cells["code"] == published[d(1)][0]
    assert day1.cells["run"].startswith("daily · attempt 1")
    assert published[d(1)][1][:12] in day1.cells["run"]
    assert not set(day1.flags) & {"stale", "late", "hole", "retried", "backfill"}

    # day 2: still published, but stale since the re-export, and says how to rebuild it
    day2 = rows[str(d(2))]
    assert day2.state == "stale"
    assert day2.lamp_states() == ["on", "on", "on", "stale"]
    assert "re-exported" in day2.flags["stale"]
    assert f"refill backfill --start {d(2)} --end {d(2)} --yes" in day2.flags["stale"]

    # day 3: late, then published by the backfill
    day3 = rows[str(d(3))]
    assert day3.lamp_states() == ["on"] * 4
    assert {"late", "backfill", "notified not ready"} <= set(day3.flags)
    assert "no _SUCCESS manifest" in day3.flags["late"]
    assert day3.cells["run"].startswith("backfill · attempt 1")

    # day 5: the strip has a six-hour hole
    day5 = rows[str(d(5))]
    assert day5.hole_hours == 6
    assert "08:00-14:00 (6h)" in day5.flags["hole"]

    # day 6: failed in its audit in the first run, published by the rerun
    day6 = rows[str(d(6))]
    assert day6.state == "published" and day6.lamp_states() == ["on"] * 4
    assert "attempt 1" in day6.flags["retried"] and "in_audit" in day6.flags["retried"]
    assert day6.cells["run"].startswith("daily · attempt 1")

    # day 7: not landed: a crossed ready lamp with the reason, nothing else started
    day7 = rows[str(d(7))]
    assert day7.state == "not ready"
    assert day7.lamp_states() == ["failed", "off", "off", "off"]
    assert "no _SUCCESS manifest" in day7.lamps["ready"][1]
    assert {"not ready", "late", "notified not ready"} <= set(day7.flags)
    assert day7.cells["rows"] == "-"

    # AND the Prefect artifact's markdown says the same per day
    window = planning.DateRange(d(1), d(7))
    markdown = board_markdown.summary_markdown(
        status.collect_for(shared_project(), window),
        board_read.read_extras(workspace.warehouse, window),
        window=window,
    )
    lines = {line.split(" | ")[0].strip("| "): line for line in markdown.splitlines()}
    assert "| 🟢 | 🟢 | 🟢 | 🟠 | stale |" in lines[str(d(2))]
    assert "| ❌ | ⚪ | ⚪ | ⚪ | not ready |" in lines[str(d(7))]
    assert "retried" in lines[str(d(6))] and "hole" in lines[str(d(5))]


def test_versioned_marts_show_both_totals_and_the_version_readers_get(
    workspace, tmp_path, dbt_project
):
    if "fct_daily_revenue_v2" not in dbt_project.partitioned_models():
        pytest.skip("this project has no versioned revenue marts yet")
    # GIVEN two days built: v1 and v2 of the revenue mart beside each other, readers on v1
    write_days(workspace.landing, d(1), 2, SPEC)
    run_backfill(start=d(1), end=d(2))

    # WHEN the board is drawn
    page = render(tmp_path / "board.html", d(1), d(2))

    # THEN each row shows both versions' totals, v1 served, and the cutover is pending
    totals = {
        version: dict(
            query(
                workspace.warehouse,
                f"select event_date, sum(revenue_usd) from main.fct_daily_revenue_v{version} "
                "group by 1",
            )
        )
        for version in (1, 2)
    }
    for n in (1, 2):
        versions = page.rows[str(d(n))].versions
        for version in (1, 2):
            assert versions[version][0].startswith(f"v{version} {totals[version][d(n)]:,.2f}")
        assert versions[1][1] and not versions[2][1]
    mart = page.marts["fct_daily_revenue"]
    assert mart["data-served"] == "1" and mart["data-pending"] == "2"
    assert "cutover pending" in mart["text"]
    assert any("fct_daily_revenue (v1)" in line for line in page.data_as_of)

    # WHEN readers are cut over to v2
    from refill.cli.cutover import cutover

    cutover("fct_daily_revenue", 2, False, True, False, "refill cutover fct_daily_revenue --to 2")
    page = render(tmp_path / "board.html", d(1), d(2))

    # THEN the board serves v2 and keeps v1 for rollback
    assert page.rows[str(d(1))].versions[2][1] and not page.rows[str(d(1))].versions[1][1]
    mart = page.marts["fct_daily_revenue"]
    assert mart["data-served"] == "2" and mart["data-pending"] == ""
    assert "v1 kept for rollback" in mart["text"]
    assert any("fct_daily_revenue (v2)" in line for line in page.data_as_of)


# -- a run in progress ---------------------------------------------------------------------------


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def wait_for(predicate, seconds: float = 30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out waiting for the board")


def test_a_run_in_progress_moves_across_the_served_board(workspace, monkeypatch):
    # GIVEN day 1 published, and a backfill of days 2-3 running now (its process alive)
    # whose first attempt at day 2 just failed in the audits
    monkeypatch.setattr(ops, "run_is_alive", lambda warehouse, run_id: run_id == "run-now")
    write_days(workspace.landing, d(1), 3, SPEC)
    run_backfill(start=d(1), end=d(1))
    failed_at = ops.utc_now().replace(microsecond=0)
    with ops.connect(workspace.warehouse) as connection:
        ops.record_run_start(
            connection,
            "run-now",
            "backfill",
            f"refill backfill --start {d(2)} --end {d(3)}",
            {"start": d(2), "end": d(3), "on_missing": "fail"},
        )
        ops.record_attempt(
            connection,
            [d(2)],
            ops.Attempt(
                "run-now",
                "backfill",
                d(2),
                d(2),
                1,
                "failed",
                "fct_payments: refill audit: fct_payments loses landed lines: ...",
                failed_at - timedelta(seconds=5),
                failed_at,
            ),
        )

    # WHEN the board is served
    window = planning.DateRange(d(1), d(3))
    running = board_server.start(shared_project(), window, port=0, poll_seconds=0.2)
    holder = None
    try:
        wait_for(lambda: running.service.full_reads >= 1)
        page = BoardPage(fetch(running.url))

        # THEN day 2 shows a clock at its audit lamp, with the next retry time
        day2 = page.rows[str(d(2))]
        assert day2.lamp_states() == ["on", "on", "waiting", "off"]
        next_retry = failed_at + timedelta(seconds=300)
        assert f"Next retry about {next_retry:%H:%M:%S} UTC (estimated" in day2.lamps["audited"][1]
        assert "retrying" in day2.flags
        assert "running now: backfill" in page.banner
        assert page.body["data-poll"] == "/state.json"
        assert page.rows[str(d(3))].lamp_states() == ["on", "off", "off", "off"]
        before = json.loads(fetch(running.url + "state.json"))["fingerprint"]

        # WHEN the run takes the warehouse to build day 3
        holder = hold_lock_in_another_process(
            workspace.warehouse, 120, run_id="run-now", days=[d(3)]
        )

        # THEN the served page moves at once: day 3 builds now, though the warehouse is busy
        state = wait_for(
            lambda: (s := json.loads(fetch(running.url + "state.json")))["building"] and s
        )
        assert state["building"] == [str(d(3))] and state["fingerprint"] != before
        page = BoardPage(fetch(running.url))
        assert page.rows[str(d(3))].lamps["building"][0] == "active"
        assert "building" in page.rows[str(d(3))].flags
        assert f"building {d(3)}" in page.banner
    finally:
        if holder is not None:
            holder.kill()
            holder.wait()
        running.stop()


# -- the Prefect artifact ------------------------------------------------------------------------


def test_every_run_can_publish_the_board_as_a_markdown_artifact(workspace):
    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    # GIVEN two published days
    write_days(workspace.landing, d(1), 2, SPEC)
    run_backfill(start=d(1), end=d(2))

    # WHEN a flow run publishes the board at its end
    @flow(name="publishes-the-board")
    def publishes():
        return artifacts.publish_board(planning.DateRange(d(1), d(2)), key="refill-board-test")

    artifact_id = publishes()

    # THEN the run has a markdown table with a row per day
    assert artifact_id is not None
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["refill-board-test"]))
        )
    markdown = next(a for a in found if a.id == artifact_id).data
    assert f"| {d(1)} | 🟢 | 🟢 | 🟢 | 🟢 | published |" in markdown
    assert f"| {d(2)} | 🟢 | 🟢 | 🟢 | 🟢 | published |" in markdown
    assert "data as of: fct_payments complete through 2026-03-03" in markdown

    # AND a run that holds the days' statuses hands them over: the artifact draws those
    held = status.collect_for(shared_project(), planning.DateRange(d(1), d(1)))
    window = planning.DateRange(d(1), d(2))
    drawn = board.artifact_markdown(shared_project(), window, statuses=held)
    assert f"| {d(1)} | 🟢 | 🟢 | 🟢 | 🟢 | published |" in drawn
    assert f"| {d(2)} |" not in drawn


# -- the rules on their own ----------------------------------------------------------------------


NOW = datetime(2026, 3, 2, 12, 0)  # the time a board of the rules' own is drawn at


def _status(day: date, ready: bool = True, ledger=None, state=DayState.MISSING) -> DayStatus:
    verdict = DayReadiness(day, ready, "ready" if ready else "no _SUCCESS manifest", [], 1, 10)
    return DayStatus(day, verdict, state, ledger or {}, catalog=PAYMENTS_CATALOG)


def _attempt(
    outcome: str,
    message: str,
    attempt: int = 1,
    run_id: str = "r1",
    failed_step: str | None = None,
) -> ops.Attempt:
    at = datetime(2026, 3, 2, 10, 0, attempt)
    return ops.Attempt(run_id, "backfill", W1, W1, attempt, outcome, message, at, at, failed_step)


@pytest.mark.parametrize(
    "failed_step, message, lamps",
    [
        ("audit", "fct_payments: refill audit: loses landed lines", ["on", "on", "failed", "off"]),
        ("publish", "refill publish: ledger rows not written", ["on", "on", "on", "failed"]),
        ("build", "stg_payments__lines: Binder Error: no column x", ["on", "failed", "off", "off"]),
        ("readiness", "refill readiness: 2026-03-02 exported_at", ["failed", "off", "off", "off"]),
        ("interrupted", "interrupted by SIGINT", ["on", "failed", "off", "off"]),
        # what the run recorded wins over what the message looks like
        ("audit", "a message that names no step", ["on", "on", "failed", "off"]),
        ("build", "refill audit: text in a build error", ["on", "failed", "off", "off"]),
        # an attempt recorded before failed_step existed: its message
        (None, "fct_payments: refill audit: loses landed lines", ["on", "on", "failed", "off"]),
        (None, "stg_payments__lines: Binder Error: no column x", ["on", "failed", "off", "off"]),
    ],
)
def test_a_failed_build_crosses_the_lamp_it_stopped_at(failed_step, message, lamps):
    # GIVEN a ready day whose only build failed at `failed_step` with `message`, no run on
    statuses = [_status(W1, state=DayState.FAILED)]
    attempts = [_attempt("failed", message, failed_step=failed_step)]
    extras = board_model.Extras(attempts={W1: attempts})

    # WHEN the board is assembled
    row = board_rows.assemble(statuses, extras, now=NOW, retry_delays=[300]).rows[0]

    # THEN the lamps stop at the step that failed, and the flag says why
    assert [lamp.state for lamp in row.lamps] == lamps
    assert message in row.flags[0].note and row.flags[0].name == "failed"


def test_a_fault_message_alone_no_longer_lights_the_publish_lamp():
    # GIVEN an old-style attempt (no failed_step) whose message names a fault point
    statuses = [_status(W1, state=DayState.FAILED)]
    message = "fct_payments: refill fault injected at before_ledger"
    extras = board_model.Extras(attempts={W1: [_attempt("failed", message)]})

    # WHEN the board is assembled
    row = board_rows.assemble(statuses, extras, now=NOW, retry_delays=[300]).rows[0]

    # THEN the message is not read for test machinery: the build lamp is crossed
    assert [lamp.state for lamp in row.lamps] == ["on", "failed", "off", "off"]


def test_a_warehouse_without_versioned_marts_draws_no_revenue_column():
    # GIVEN a day with nothing published and no version pointer
    statuses = [_status(W1, ready=False, state=DayState.NOT_READY)]

    # WHEN the page is drawn
    page = board_page.render_html(board_rows.assemble(statuses, board_model.Extras(), now=NOW))

    # THEN it has the row, its reason, no revenue column, and it fetches nothing from disk
    parsed = BoardPage(page)
    assert parsed.rows[str(W1)].lamp_states() == ["off", "off", "off", "off"]
    assert "no _SUCCESS manifest" in parsed.rows[str(W1)].lamps["ready"][1]
    assert "revenue" not in page.split("<tbody>")[0].split("<table")[1]
    assert parsed.marts == {} and "data-poll" not in parsed.body
    assert "http://" not in page and "https://" not in page


def test_a_versioned_mart_is_pending_only_while_a_newer_version_waits():
    mart = board_model.VersionedMart("fct_daily_revenue", 1, None, None, "revenue_usd")
    mart.totals = {1: {W1: Decimal("10.00")}, 2: {W1: Decimal("9.00")}}
    mart.published_days = {1: 7, 2: 5}
    mart.missing_days = {1: 0, 2: 2}
    assert mart.pending == [2] and "2 day(s) short of v1" in mart.describe()

    mart.missing_days[2] = 0
    assert "cutover pending (refill cutover fct_daily_revenue --to 2)" in mart.describe()

    switched = board_model.VersionedMart("fct_daily_revenue", 2, 1, None, "revenue_usd")
    switched.published_days = {1: 7, 2: 7}
    assert switched.pending == [] and "v1 kept for rollback" in switched.describe()


def _running(run_id: str, started: datetime) -> board_model.RunEntry:
    return board_model.RunEntry(
        run_id, "backfill", f"refill backfill ({run_id})", {}, started, None, "running", None
    )


def test_a_running_row_whose_process_is_gone_shows_as_interrupted(monkeypatch, tmp_path):
    # GIVEN three run-log rows still "running": one whose process is gone, one alive for
    # ten hours, and one nobody can tell about (a warehouse from before run liveness)
    now = datetime(2026, 3, 2, 20, 0)
    long_ago = now - timedelta(hours=10)
    alive = {"r-dead": False, "r-long": True, "r-unknown": None}
    monkeypatch.setattr(ops, "run_is_alive", lambda warehouse, run_id: alive[run_id])

    # WHEN the board reads them and is assembled
    runs = [board_read.with_liveness(_running(run_id, long_ago), tmp_path) for run_id in alive]
    drawn = board_rows.assemble([_status(W1)], board_model.Extras(runs=runs), now=now)

    # THEN the dead one is interrupted, never "running now"; the live one runs however
    # long it has; the unknown one counts as running only within ACTIVE_RUN_LIMIT
    shown = {run.run_id: run.outcome for run in drawn.recent_runs}
    assert shown == {"r-dead": "interrupted", "r-long": "running", "r-unknown": "running"}
    assert "killed or interrupted" in next(r for r in runs if r.run_id == "r-dead").message
    assert [run.run_id for run in drawn.active_runs] == ["r-long"]
    assert "running now" not in board_page.render_html(
        board_rows.assemble([_status(W1)], board_model.Extras(runs=[runs[0]]), now=now)
    )
