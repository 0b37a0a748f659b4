"""A guarantee holds whatever path reaches it: plain dbt commands, selections, tests
without a build, full refreshes after retention, and vars that used to switch it off."""

from __future__ import annotations

import json
import re
import shutil
from datetime import date, timedelta

import pytest

from refill.rules.readiness import day_folder
from refill.rules.window import window_vars
from refill.sample_data import DATASET, write_days
from refill.warehouse.dbt_runner import outcome_of
from tests.helpers import published_by_day, query, snapshot

JAN = date(2026, 1, 1)


def day(n: int) -> date:
    return JAN + timedelta(days=n - 1)


def vars_of(first: int, last: int) -> str:
    return json.dumps(window_vars(day(first), day(last)))


@pytest.mark.parametrize(
    "switch",
    [{"refill_broken_variant": "append"}, {"refill_inject_fault": "after_delete"}],
    ids=["broken-variant", "inject-fault"],
)
def test_no_var_switches_the_replace_or_an_audit_off(dbt_project, workspace, switch):
    # GIVEN a window built once
    write_days(workspace.landing, JAN, 2)
    assert dbt_project.build(window_vars(day(1), day(2))).success
    first = snapshot(workspace.warehouse, full=True)

    # WHEN it is rebuilt with a var that used to switch refill's safety net off
    outcome = dbt_project.build({**window_vars(day(1), day(2)), **switch})

    # THEN the var is refused by name, before anything is written
    assert not outcome.success
    assert f"unknown var(s) {next(iter(switch))}" in outcome.message
    assert snapshot(workspace.warehouse, full=True) == first


def test_no_product_file_reads_a_test_switch(dbt_project):
    # The fault seam renders nothing in the product; broken variants live in the harness.
    root = dbt_project.project_dir
    files = [root / "dbt_project.yml", *root.glob("macros/**/*.sql"), *root.glob("models/**/*.sql")]
    switch = re.compile(r"refill_broken_variant|refill_inject_fault|REFILL_\w*FAULT")
    readers = [path.name for path in files if switch.search(path.read_text())]
    assert readers == []


def test_dbt_test_of_a_window_reads_that_window_whatever_was_built_last(dbt_project, workspace):
    # GIVEN days 1-3 published, then days 4-5 built (the staging work tables hold 4-5)
    write_days(workspace.landing, JAN, 5)
    assert dbt_project.build(window_vars(day(1), day(3))).success
    assert dbt_project.build(window_vars(day(4), day(5))).success

    # WHEN fct_payments is tested for days 1-3
    tested = dbt_project.invoke(["test", "--select", "fct_payments", "--vars", vars_of(1, 3)])

    # THEN it passes: each day is compared with its own landing, not with 4-5's work table
    assert tested.success, outcome_of(tested).message

    # AND once a published day no longer matches its landing, the same test fails
    _tamper_with_one_payment(workspace.warehouse, day(2))
    tested = dbt_project.invoke(["test", "--select", "fct_payments", "--vars", vars_of(1, 3)])
    assert not tested.success
    failed = [r.node.name for r in tested.result.results if str(r.status) == "fail"]
    assert any(name.startswith("reconciles_with_fct_payments_") for name in failed), failed


@pytest.mark.parametrize(
    "command",
    [
        ["compile"],
        ["docs", "generate"],
        ["show", "--select", "fct_payments"],
        ["ls"],
        ["parse"],
    ],
    ids=["compile", "docs-generate", "show", "ls", "parse"],
)
def test_read_only_dbt_commands_need_no_window(dbt_project, workspace, command):
    # GIVEN an existing warehouse
    write_days(workspace.landing, JAN, 2)
    assert dbt_project.build(window_vars(day(1), day(2))).success
    before = snapshot(workspace.warehouse, full=True)

    # WHEN a read-only dbt command runs without --vars
    result = dbt_project.invoke(command)

    # THEN it works and writes nothing
    assert result.success, outcome_of(result).message
    assert snapshot(workspace.warehouse, full=True) == before


def test_a_build_without_a_window_still_refuses_on_an_existing_warehouse(dbt_project, workspace):
    write_days(workspace.landing, JAN, 2)
    assert dbt_project.build(window_vars(day(1), day(2))).success
    before = snapshot(workspace.warehouse, full=True)

    outcome = dbt_project.build({})

    assert not outcome.success and "no window given" in outcome.message
    assert snapshot(workspace.warehouse, full=True) == before


def test_a_full_refresh_refuses_to_drop_days_whose_landing_is_gone(dbt_project, workspace):
    # GIVEN four published days, then the landing of the first two removed (retention)
    write_days(workspace.landing, JAN, 4)
    assert dbt_project.build(window_vars(day(1), day(4))).success
    before = snapshot(workspace.warehouse, full=True)
    for n in (1, 2):
        shutil.rmtree(day_folder(workspace.landing, DATASET, day(n)))

    # WHEN a full refresh runs as the flows run it (no unit tests)
    refused = dbt_project.build({}, full_refresh=True)

    # THEN it refuses naming the days it would drop, and nothing changed
    assert not refused.success
    assert "would drop 2 published day(s) of fct_payments" in refused.message
    assert "(2026-01-01, 2026-01-02)" in refused.message
    assert "allow_dropping_unlanded_days" in refused.message
    assert snapshot(workspace.warehouse, full=True) == before

    # AND with the explicit var the days leave the tables, the ledger and data_as_of together
    assert dbt_project.build({"allow_dropping_unlanded_days": True}, full_refresh=True).success
    assert sorted(published_by_day(workspace.warehouse)) == [day(3), day(4)]
    assert query(
        workspace.warehouse,
        "select distinct partition_date from ops.partition_ledger order by 1",
    ) == [(day(3),), (day(4),)]
    assert query(
        workspace.warehouse, "select distinct first_partition, data_as_of from ops.data_as_of"
    ) == [(day(3), day(4))]
    for relation, column in (
        ("main.payments_quarantine", "landed_date"),
        ("main.fct_daily_revenue_v1", "event_date"),
        ("main.fct_daily_revenue_v2", "event_date"),
    ):
        assert query(workspace.warehouse, f"select min({column}) from {relation}") == [(day(3),)], (
            relation
        )


def test_dbt_build_full_refresh_as_the_readme_shows_it(dbt_project, workspace):
    # GIVEN a built warehouse
    write_days(workspace.landing, JAN, 2)
    assert dbt_project.build(window_vars(day(1), day(2))).success

    # WHEN `dbt build --full-refresh` runs as typed, unit tests included
    result = dbt_project.invoke(["build", "--full-refresh"])

    # THEN it succeeds, unit tests included, and rebuilt every landed day
    assert result.success, outcome_of(result).message
    assert any(r.node.resource_type == "unit_test" for r in result.result.results)
    assert sorted(published_by_day(workspace.warehouse)) == [day(1), day(2)]


def _tamper_with_one_payment(warehouse, on: date) -> None:
    import duckdb

    with duckdb.connect(str(warehouse)) as connection:
        connection.execute(
            "update main.fct_payments set amount = amount + 1 where transaction_id = "
            "(select min(transaction_id) from main.fct_payments where event_date = ?)",
            [on],
        )
