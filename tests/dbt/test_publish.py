"""One chunk, one commit: write-audit-publish across the partitioned models of a dbt run.

Each partitioned model writes and audits its chunk in a shadow (schema `wap`); dbt's
on-run-end publishes every chunk of the invocation and its ledger rows in one
transaction, or nothing. These tests break a run at every stage after the first model
and check that facts, quarantine, both revenue versions, the ledger and
ops.data_as_of are exactly as before.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from datetime import date, timedelta
from functools import lru_cache
from pathlib import Path

import pytest

from refill.rules.readiness import day_folder
from refill.rules.window import window_vars
from refill.sample_data import DATASET, DaySpec, write_day, write_days
from refill.warehouse.dbt_runner import DbtProject, audits_twins
from tests.helpers import (
    AUDITS_TWINS,
    armed_dbt_project,
    audits_twins_of,
    expected_day,
    patched_dbt_project,
    query,
    snapshot,
    typed_selection,
)

JAN = date(2026, 1, 1)
# the publish: the second on-run-end hook, after the release of the landed files
ON_RUN_END = "operation.refill.refill-on-run-end-1"
# A singular data test that always fails, on the last model of the chunk.
FAILING_DATA_TEST = (
    "-- depends_on: {{ ref('fct_daily_revenue', v=2) }}\nselect 1 as always_failing\n"
)


def day(n: int) -> date:
    return JAN + timedelta(days=n - 1)


def armed_project() -> DbtProject:
    return armed_dbt_project()


@lru_cache(maxsize=1)
def project_with_a_failing_test() -> DbtProject:
    """A copy of the project with a data test on fct_daily_revenue_v2 that always fails."""
    return patched_dbt_project(
        {"data_tests/assert_the_chunk_fails_a_data_test.sql": FAILING_DATA_TEST}
    )


@pytest.fixture
def published_then_reexported(dbt_project, workspace):
    """Days 1-3 published; then day 2 re-exported with other amounts and day 3 with fewer
    payments, so a rebuild of 1-3 would change every model."""
    write_days(workspace.landing, JAN, 3)
    assert dbt_project.build(window_vars(day(1), day(3))).success
    before = snapshot(workspace.warehouse, full=True)
    write_day(workspace.landing, day(2), DaySpec(amount_factor=2, export_version=2))
    write_day(workspace.landing, day(3), DaySpec(keep_fraction=0.5, export_version=2))
    return before


@pytest.mark.parametrize(
    "fault, model",
    [
        ("in_audit", "fct_daily_revenue_v2"),
        ("in_audit", "fct_daily_revenue_v1"),
        ("in_audit", "payments_quarantine"),
        ("before_shadow_ledger", "fct_daily_revenue_v2"),
    ],
)
def test_a_failure_in_a_later_model_leaves_every_relation_as_it_was(
    workspace, published_then_reexported, monkeypatch, fault, model
):
    # WHEN the rebuild fails in a model built after fct_payments passed its audits
    monkeypatch.setenv("REFILL_TEST_FAULT", f"{fault}:{model}")
    outcome = armed_project().build(window_vars(day(1), day(3)))

    # THEN it fails naming the point, and facts, quarantine, v1, v2, ledger and
    # data_as_of are exactly as before: nothing of the chunk was published
    assert not outcome.success
    assert f"fault injected at {fault} in {model}" in outcome.message
    assert outcome.statuses["model.refill.fct_payments"] == "success"
    assert snapshot(workspace.warehouse, full=True) == published_then_reexported
    assert query(
        workspace.warehouse,
        "select count(*) from information_schema.tables where table_schema = 'wap'",
    ) == [(0,)]


def test_a_failing_data_test_of_the_chunk_publishes_nothing(workspace, published_then_reexported):
    # WHEN every model of the rebuild passes its audits but a data test fails
    outcome = project_with_a_failing_test().build(window_vars(day(1), day(3)))

    # THEN the run fails on that test and nothing of the chunk is published
    assert not outcome.success
    assert "assert_the_chunk_fails_a_data_test" in outcome.message
    assert outcome.statuses["model.refill.fct_daily_revenue.v2"] == "success"
    assert snapshot(workspace.warehouse, full=True) == published_then_reexported


@pytest.mark.parametrize("fault", ["after_delete", "before_ledger", "before_commit"])
def test_a_failure_inside_publish_leaves_every_relation_as_it_was(
    workspace, published_then_reexported, monkeypatch, fault
):
    # WHEN every model and test passed and the publish transaction fails part-way
    monkeypatch.setenv("REFILL_TEST_FAULT", fault)
    outcome = armed_project().build(window_vars(day(1), day(3)))

    # THEN dbt reports the on-run-end hook as the failed node, with the fault's message,
    # and every relation is as before
    assert not outcome.success
    assert outcome.statuses[ON_RUN_END] == "error"
    assert f"fault injected at {fault}" in outcome.message
    assert snapshot(workspace.warehouse, full=True) == published_then_reexported


def test_a_missing_fx_rate_fails_the_chunk_naming_the_day_and_currency(dbt_project, workspace):
    # GIVEN the last two days of the fx seed published, then a day after its last rate lands
    last_rated = date(2027, 12, 31)
    write_days(workspace.landing, last_rated - timedelta(days=1), 2)
    assert dbt_project.build(window_vars(last_rated - timedelta(days=1), last_rated)).success
    before = snapshot(workspace.warehouse, full=True)
    write_day(workspace.landing, last_rated, DaySpec(amount_factor=3, export_version=2))
    write_day(workspace.landing, last_rated + timedelta(days=1))

    # WHEN a window over the re-exported day and the unrated day is built
    outcome = dbt_project.build(window_vars(last_rated, last_rated + timedelta(days=1)))

    # THEN the amount_usd audit names the day and a currency, and nothing changed
    assert not outcome.success
    assert "has no fx rate for 2028-01-01 CAD" in outcome.message
    assert snapshot(workspace.warehouse, full=True) == before


def test_a_kill_inside_publish_leaves_every_relation_as_it_was(
    workspace, published_then_reexported, tmp_path
):
    # WHEN the process building the chunk is killed in the middle of the publish
    # transaction (after fct_payments' window was deleted, before its insert)
    marker = tmp_path / "publish-reached"
    environment = {
        **os.environ,
        "REFILL_TEST_FAULT": f"after_delete!{marker}",
        "REFILL_PROJECT_DIR": str(armed_project().project_dir),
    }
    script = (
        "import sys; from datetime import date; "
        "from refill.rules.window import window_vars; "
        "from refill.warehouse.dbt_runner import DbtProject; "
        "DbtProject().build(window_vars(date(2026, 1, 1), date(2026, 1, 3)))"
    )
    child = subprocess.Popen([sys.executable, "-c", script], env=environment)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None, "the build ended before reaching the publish"
            assert time.monotonic() < deadline, "the build never reached the publish"
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=30)

    # THEN every relation is as before (DuckDB does not replay an uncommitted transaction)
    assert child.returncode == -signal.SIGKILL
    assert snapshot(workspace.warehouse, full=True) == published_then_reexported


def test_a_chunk_makes_each_check_once_and_dbt_test_still_makes_every_one(dbt_project, workspace):
    # GIVEN two landed days
    write_days(workspace.landing, JAN, 2)
    data_tests = {
        node.name
        for node in dbt_project.manifest.nodes.values()
        if node.resource_type == "test" and not node.name.startswith("assert_")
    }
    twins = audits_twins_of(data_tests, AUDITS_TWINS.values())
    assert len(twins) == len(AUDITS_TWINS)

    # WHEN a chunk of them is built
    outcome = dbt_project.build(window_vars(day(1), day(2)))

    # THEN every data test ran but the audits' twins (the audits ran: the chunk published)
    assert outcome.success
    ran = {
        unique_id.split(".")[2] for unique_id in outcome.statuses if unique_id.startswith("test.")
    }
    assert ran == data_tests - twins
    # AND a plain `dbt test` of the published days still runs every one of them
    window = json.dumps(window_vars(day(1), day(2)))
    tested = dbt_project.invoke(["test", "--vars", window, "--exclude-resource-type", "unit_test"])
    assert tested.success
    results = tested.result.results
    assert {r.node.name for r in results if r.node.resource_type == "test"} == data_tests


def test_a_test_is_left_out_only_where_its_audit_runs(dbt_project):
    nodes = dict(dbt_project.manifest.nodes)
    twins = audits_twins(nodes)
    (quarantine_twin,) = audits_twins_of(twins, ["payments_quarantine"])

    # a build of the quarantine alone leaves out its twin, not the facts' (no facts audit runs)
    quarantine = dbt_project.resolve_selection("payments_quarantine")
    assert quarantine.models == ["payments_quarantine"]
    assert dbt_project._twins_of_built_models(quarantine) == [quarantine_twin]
    # a selection made by hand, not resolve_selection's, leaves none out
    assert dbt_project._twins_of_built_models(typed_selection("fct_payments")) == []

    # a test naming an audit its model does not run is no twin: it keeps running
    test_id, test = next(
        (unique_id, node)
        for unique_id, node in nodes.items()
        if node.resource_type == "test" and node.name == quarantine_twin
    )
    misnamed = copy.deepcopy(test)
    misnamed.config.meta["repeats_audit"] = "refill_audit_line_accounting"
    assert quarantine_twin not in audits_twins({**nodes, test_id: misnamed})
    # and a test naming no audit neither
    del misnamed.config.meta["repeats_audit"]
    assert quarantine_twin not in audits_twins({**nodes, test_id: misnamed})


def test_a_chunk_publishes_every_model_and_its_ledger_in_one_run(dbt_project, workspace):
    # GIVEN a published window whose day 2 is then re-exported
    write_days(workspace.landing, JAN, 3)
    assert dbt_project.build(window_vars(day(1), day(3), run_id="first")).success
    write_day(workspace.landing, day(2), DaySpec(amount_factor=2, export_version=2))

    # WHEN it is rebuilt
    assert dbt_project.build(window_vars(day(1), day(3), run_id="second")).success

    # THEN every model's rows and ledger rows of the window come from the second run,
    # the facts match the new export, and no shadow is left behind
    for relation in (
        "main.fct_payments",
        "main.payments_quarantine",
        "main.fct_daily_revenue_v1",
        "main.fct_daily_revenue_v2",
    ):
        assert query(workspace.warehouse, f"select distinct _run_id from {relation}") == [
            ("second",)
        ], relation
    assert query(workspace.warehouse, "select distinct run_id from ops.partition_ledger") == [
        ("second",)
    ]
    truth = expected_day(workspace.landing, day(2))
    assert query(
        workspace.warehouse,
        "select count(*), sum(amount) from main.fct_payments where event_date = ?",
        [day(2)],
    ) == [(truth.published, truth.amount)]
    assert query(
        workspace.warehouse,
        "select count(*) from information_schema.tables where table_schema = 'wap'",
    ) == [(0,)]


def test_the_attempts_table_has_failed_step_on_new_and_existing_warehouses(dbt_project, workspace):
    import duckdb

    # GIVEN a warehouse whose ops.partition_attempts predates the failed_step column
    workspace.warehouse.parent.mkdir(parents=True)
    with duckdb.connect(str(workspace.warehouse)) as connection:
        connection.execute("create schema ops")
        connection.execute(
            "create table ops.partition_attempts (run_id varchar not null, command varchar "
            "not null, partition_date date not null, chunk_start date not null, chunk_end date "
            "not null, attempt integer not null, outcome varchar not null, message varchar, "
            "started_at timestamp not null, ended_at timestamp not null)"
        )
    write_days(workspace.landing, JAN, 1)

    # WHEN any dbt run starts on it
    assert dbt_project.build(window_vars(day(1), day(1))).success

    # THEN the column is there, nullable, last
    columns = query(
        workspace.warehouse,
        "select column_name, is_nullable from information_schema.columns "
        "where table_schema = 'ops' and table_name = 'partition_attempts' "
        "order by ordinal_position",
    )
    assert columns[-1] == ("failed_step", "YES")


def test_a_reused_id_on_two_days_gives_the_same_warehouse_for_any_chunking(
    dbt_project, workspace, tmp_path, monkeypatch
):
    # GIVEN a transaction captured on day 1 and refunded on day 2 (same id, two events)
    write_days(workspace.landing, JAN, 3, DaySpec(payments=60))
    (reused_id,) = _first_id(workspace.landing, day(1))
    _append_line(
        workspace.landing,
        day(2),
        {
            "transaction_id": reused_id,
            "event_ts": "2026-01-02T09:30:00Z",
            "amount": 12.5,
            "currency": "USD",
            "market": "US",
            "status": "refunded",
        },
    )

    # WHEN the days are built as one window, day by day oldest first, and newest first
    warehouses = {}
    for name, windows in {
        "one-window": [(1, 3)],
        "oldest-first": [(1, 1), (2, 2), (3, 3)],
        "newest-first": [(3, 3), (2, 2), (1, 1)],
    }.items():
        warehouse = tmp_path / name / "refill.duckdb"
        monkeypatch.setenv("REFILL_WAREHOUSE", str(warehouse))
        for first, last in windows:
            outcome = dbt_project.build(window_vars(day(first), day(last)))
            assert outcome.success, (name, outcome.message)
        warehouses[name] = warehouse

    # THEN all three hold the same data, with one row per day for the reused id
    one_window = snapshot(warehouses["one-window"])
    assert snapshot(warehouses["oldest-first"]) == one_window
    assert snapshot(warehouses["newest-first"]) == one_window
    assert query(
        warehouses["one-window"],
        "select event_date, status from main.fct_payments where transaction_id = ? order by 1",
        [reused_id],
    ) == [(day(1), _status_of(workspace.landing, day(1), reused_id)), (day(2), "refunded")]


def _first_id(landing: Path, on: date) -> tuple[str]:
    part = day_folder(landing, DATASET, on) / "part-0000.jsonl"
    for line in part.read_text().splitlines():
        record = json.loads(line)
        if isinstance(record, dict) and str(record.get("transaction_id", "")).startswith("tx-"):
            return (record["transaction_id"],)
    raise AssertionError("no valid line")


def _status_of(landing: Path, on: date, transaction_id: str) -> str:
    part = day_folder(landing, DATASET, on) / "part-0000.jsonl"
    for line in part.read_text().splitlines():
        record = json.loads(line)
        if isinstance(record, dict) and record.get("transaction_id") == transaction_id:
            return record["status"]
    raise AssertionError(transaction_id)


def _append_line(landing: Path, on: date, record: dict) -> None:
    """Add one line to a landed day and count it in its manifest (a valid re-export)."""
    folder = day_folder(landing, DATASET, on)
    part = folder / "part-0000.jsonl"
    part.write_text(part.read_text() + json.dumps(record) + "\n")
    manifest = json.loads((folder / "_SUCCESS").read_text())
    manifest["records"] += 1
    (folder / "_SUCCESS").write_text(json.dumps(manifest))
