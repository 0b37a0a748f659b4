"""A partitioned model publishes only with its audits and its ledger rows: one that lacks
either post-hook is refused before anything is written, with one line naming it
(macros/wap/refill_require_partitioned_contract.sql, the first on-run-start hook)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from refill.rules.window import window_vars
from refill.sample_data import write_days
from tests.helpers import patched_dbt_project, query, snapshot

FIRST = date(2026, 2, 1)
MODEL_PATH = "models/marts/payments/fct_payment_counts.sql"
# A partitioned mart (the marts' default materialization) with the post-hooks given.
MODEL_SQL = """{{{{ config(partition_column='event_date', post_hook=[{hooks}]) }}}}

select
    event_date,
    count(*) as payments
from {{{{ refill_chunk_relation(ref('fct_payments')) }}}}
where {{{{ refill_window_predicate('event_date') }}}}
group by 1
"""
LEDGER = "\"{{ refill_record_partitions(upstream_model='fct_payments') }}\""
AUDIT = "\"{{ refill_audit_unique_in_window(['event_date']) }}\""


def day(n: int) -> date:
    return FIRST + timedelta(days=n - 1)


def project_with_model(hooks: list[str]):
    return patched_dbt_project({MODEL_PATH: MODEL_SQL.format(hooks=", ".join(hooks))})


def user_tables(warehouse) -> list[tuple]:
    return query(
        warehouse,
        "select table_schema, table_name from information_schema.tables"
        " where table_catalog = current_database() order by 1, 2",
    )


@pytest.mark.parametrize(
    "hooks, reason",
    [
        ([], "has no ledger post-hook (refill_record_partitions)"),
        ([AUDIT], "has no ledger post-hook (refill_record_partitions)"),
        ([LEDGER], "has no audit post-hook (refill_audit_*) before its ledger post-hook"),
        ([LEDGER, AUDIT], "has no audit post-hook (refill_audit_*) before its ledger post-hook"),
    ],
    ids=["no_hooks", "audit_only", "ledger_only", "audit_after_ledger"],
)
def test_a_partitioned_model_without_its_audits_or_ledger_is_refused_before_any_write(
    dbt_project, workspace, hooks, reason
):
    # GIVEN a published window
    write_days(workspace.landing, FIRST, 2)
    assert dbt_project.build(window_vars(day(1), day(2))).success
    before = snapshot(workspace.warehouse, full=True)
    tables_before = user_tables(workspace.warehouse)

    # WHEN a project with a partitioned model lacking its audits or its ledger rows builds it
    outcome = project_with_model(hooks).build(window_vars(day(1), day(2)))

    # THEN the build is refused with one line naming the model and what it lacks
    assert not outcome.success
    assert f"refill project: partitioned model fct_payment_counts {reason}" in outcome.message
    assert outcome.failure_class == "project"
    assert "\n" not in outcome.message
    assert not any(status == "success" for status in outcome.statuses.values())

    # AND nothing was written: every relation and the ledger as they were, no new table
    assert snapshot(workspace.warehouse, full=True) == before
    assert user_tables(workspace.warehouse) == tables_before


def test_the_refusal_comes_before_a_fresh_warehouse_gets_a_table(workspace):
    # GIVEN landed days and no warehouse yet
    write_days(workspace.landing, FIRST, 1)

    # WHEN a project with a partitioned model without post-hooks builds
    outcome = project_with_model([]).build(window_vars(day(1), day(1)))

    # THEN it is refused and the warehouse holds no table at all (not even ops)
    assert not outcome.success
    assert "refill project: partitioned model fct_payment_counts has no ledger post-hook" in (
        outcome.message
    )
    assert not workspace.warehouse.exists() or user_tables(workspace.warehouse) == []


def test_a_partitioned_model_with_its_audits_then_its_ledger_publishes(dbt_project, workspace):
    # GIVEN a published window
    write_days(workspace.landing, FIRST, 2)
    assert dbt_project.build(window_vars(day(1), day(2))).success

    # WHEN the same model, with an audit and then its ledger post-hook, builds
    outcome = project_with_model([AUDIT, LEDGER]).build(window_vars(day(1), day(2)))

    # THEN it publishes, and the ledger holds its days
    assert outcome.success, outcome.message
    assert query(
        workspace.warehouse,
        "select partition_date from ops.partition_ledger"
        " where model_name = 'fct_payment_counts' order by 1",
    ) == [(day(1),), (day(2),)]
