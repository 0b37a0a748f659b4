"""A plain dbt invocation is in the run log with its outcome, as a refill run is (issue 34,
finding 14: a `dbt build --vars` that restated days left no row in ops.run_log)."""

from __future__ import annotations

import json
from datetime import date, timedelta

from refill.rules.window import window_vars
from refill.sample_data import DaySpec, write_day, write_days
from tests.helpers import armed_dbt_project, query, snapshot

JAN = date(2026, 1, 1)
RUN_LOG = (
    "select run_id, command, parameters, started_at <= ended_at, outcome, "
    "partitions_touched, message from ops.run_log order by started_at"
)


def day(n: int) -> date:
    return JAN + timedelta(days=n - 1)


def run_log(warehouse) -> list[tuple]:
    return [
        (run_id, command, json.loads(parameters), *rest)
        for run_id, command, parameters, *rest in query(warehouse, RUN_LOG)
    ]


def test_a_plain_build_is_recorded_with_its_window_outcome_and_days(dbt_project, workspace):
    # GIVEN three landed days
    write_days(workspace.landing, JAN, 3)

    # WHEN a plain dbt build publishes two of them
    outcome = dbt_project.build(window_vars(day(2), day(3)))

    # THEN the run log holds one row for it: dbt's invocation id (the run the ledger rows
    # name), the path, the window, `succeeded` and the days it published
    assert outcome.success, outcome.message
    [(run_id, command, parameters, ordered, result, days, message)] = run_log(workspace.warehouse)
    ledger_runs = query(workspace.warehouse, "select distinct run_id from ops.partition_ledger")
    assert ledger_runs == [(run_id,)]
    assert command == "dbt build"
    assert parameters["path"] == "dbt" and parameters["invocation_id"] == run_id
    assert (parameters["start"], parameters["end"]) == (str(day(2)), str(day(3)))
    assert (ordered, result, days) == (True, "succeeded", [day(2), day(3)])
    assert "fct_payments" in message


def test_a_failed_plain_build_is_recorded_as_failed_naming_the_node(workspace, monkeypatch):
    # GIVEN a day published, then re-exported with other amounts
    write_days(workspace.landing, JAN, 1)
    assert armed_dbt_project().build(window_vars(day(1), day(1))).success
    before = snapshot(workspace.warehouse, full=True)
    write_day(workspace.landing, day(1), DaySpec(amount_factor=2, export_version=2))

    # WHEN a plain dbt build of it fails in the audit of its last model
    monkeypatch.setenv("REFILL_TEST_FAULT", "in_audit:fct_daily_revenue_v2")
    outcome = armed_dbt_project().build(window_vars(day(1), day(1)))

    # THEN it is recorded as failed, with no day touched and the model that failed named;
    # the published day stands
    assert not outcome.success
    [published, (_, command, _, _, result, days, message)] = run_log(workspace.warehouse)
    assert published[4] == "succeeded"
    assert (command, result, days) == ("dbt build", "failed", [])
    assert "nothing published" in message and "fct_daily_revenue_v2 (error)" in message
    assert "fault injected at in_audit in fct_daily_revenue_v2" in message
    assert snapshot(workspace.warehouse, full=True) == before


def test_a_plain_builds_row_commits_with_its_publish(workspace, monkeypatch):
    # GIVEN a landed day
    write_days(workspace.landing, JAN, 1)

    # WHEN the publish transaction fails just before its commit
    monkeypatch.setenv("REFILL_TEST_FAULT", "before_commit")
    outcome = armed_dbt_project().build(window_vars(day(1), day(1)))

    # THEN there is no row claiming it succeeded, as there is no ledger row: the row is
    # part of the publish
    assert not outcome.success
    assert query(workspace.warehouse, "select count(*) from ops.partition_ledger") == [(0,)]
    assert query(workspace.warehouse, "select count(*) from ops.run_log") == [(0,)]


def test_a_flows_build_adds_no_row_of_its_own(dbt_project, workspace):
    # GIVEN a landed day
    write_days(workspace.landing, JAN, 1)

    # WHEN a build is started as a flow starts it (its run id in the vars)
    assert dbt_project.build(window_vars(day(1), day(1), run_id="a-flow-run")).success

    # THEN the flow's own row is the only one it gets (the flow writes it): none here
    assert query(workspace.warehouse, "select count(*) from ops.run_log") == [(0,)]
