"""The versioned revenue marts: both methods, the pointer a build never moves, v2 built alone."""

from __future__ import annotations

import csv
from collections import defaultdict
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

import pytest

from refill.rules.window import window_vars
from refill.sample_data import DaySpec, write_day, write_days
from tests.helpers import armed_dbt_project, query, typed_selection

JAN = date(2026, 1, 1)
V1, V2, VIEW = "main.fct_daily_revenue_v1", "main.fct_daily_revenue_v2", "main.fct_daily_revenue"
FX_SEED = "seeds/fx_rates_daily.csv"
CENT = Decimal("0.01")


def day(n: int) -> date:
    return JAN + timedelta(days=n - 1)


def build(dbt_project, first: int, last: int, select: str | None = None):
    return dbt_project.build(window_vars(day(first), day(last)), typed_selection(select))


def rows(warehouse, relation: str, lineage: bool = False) -> list[tuple]:
    columns = "*" if lineage else "* exclude (_run_id)"
    return query(warehouse, f"select {columns} from {relation} order by event_date, market")


def ledger(warehouse, model: str) -> list[tuple]:
    return query(
        warehouse,
        "select * from ops.partition_ledger where model_name = ? order by partition_date",
        [model],
    )


def pointer_state(warehouse) -> tuple[list[tuple], list[tuple]]:
    return (
        query(warehouse, "select * from ops.version_pointer order by all"),
        query(warehouse, "select * from ops.version_switches order by all"),
    )


def revenue_by_day_and_market(warehouse, relation: str) -> dict[tuple, tuple]:
    return {
        (event_date, market): tuple(rest)
        for event_date, market, *rest in query(
            warehouse,
            "select event_date, market, transactions, refunds, gross_revenue_usd, refunds_usd, "
            f"revenue_usd from {relation}",
        )
    }


def expected_revenue(dbt_project, warehouse, version: int) -> dict[tuple, tuple]:
    """Each version's figures computed in Python from fct_payments' amounts and the fx seed
    CSV, without refill's SQL: v1 at the month's average rate over captured payments; v2
    at the day's rate, captured and refunded counted, refunds netted."""
    daily: dict[tuple, Decimal] = {}
    by_month: dict[tuple, list[Decimal]] = defaultdict(list)
    with open(dbt_project.project_dir / FX_SEED) as seed:
        for record in csv.DictReader(seed):
            rate_date = date.fromisoformat(record["rate_date"])
            rate = Decimal(record["usd_per_unit"])
            daily[(rate_date, record["currency"])] = rate
            by_month[(rate_date.year, rate_date.month, record["currency"])].append(rate)
    month_average = {
        key: (sum(rates) / len(rates)).quantize(Decimal("0.000001"), ROUND_HALF_UP)
        for key, rates in by_month.items()
    }

    figures: dict[tuple, list] = defaultdict(lambda: [0, 0, Decimal(0), Decimal(0)])
    payments = query(
        warehouse, "select event_date, market, currency, amount, status from main.fct_payments"
    )
    for event_date, market, currency, amount, status in payments:
        if version == 1:
            if status != "captured":
                continue
            rate = month_average[(event_date.year, event_date.month, currency)]
        else:
            if status == "failed":
                continue
            rate = daily[(event_date, currency)]
        usd = (amount * rate).quantize(CENT, ROUND_HALF_UP)
        counts = figures[(event_date, market)]
        counts[0] += 1
        if status == "refunded":
            counts[1] += 1
            counts[3] += usd
        else:
            counts[2] += usd
    return {
        key: (transactions, refunds, gross, refunded, gross - refunded)
        for key, (transactions, refunds, gross, refunded) in figures.items()
    }


def test_a_fresh_warehouse_serves_v1_and_each_version_follows_its_method(dbt_project, workspace):
    # GIVEN three landed days with captured, refunded and failed payments in five currencies
    write_days(workspace.landing, JAN, 3, DaySpec(payments=150))

    # WHEN the warehouse is built from scratch
    assert build(dbt_project, 1, 3).success

    # THEN the pointer is at latest_version (1), with one history row saying so
    pointer, switches = pointer_state(workspace.warehouse)
    assert [(name, current, previous) for name, current, previous, *_ in pointer] == [
        ("fct_daily_revenue", 1, None)
    ]
    assert [(model, old, new) for model, old, new, *_ in switches] == [
        ("fct_daily_revenue", None, 1)
    ]
    assert "first pointer" in switches[0][-1]

    # AND the consumer view returns v1's rows
    assert rows(workspace.warehouse, VIEW, lineage=True) == rows(
        workspace.warehouse, V1, lineage=True
    )

    # AND each version equals its method computed independently from payments and fx rates
    for version, relation in ((1, V1), (2, V2)):
        published = revenue_by_day_and_market(workspace.warehouse, relation)
        assert published == expected_revenue(dbt_project, workspace.warehouse, version)

    # AND the methods really differ: v1 never subtracts a refund, v2 does
    v1_total, v2_total = (
        query(workspace.warehouse, f"select sum(revenue_usd), sum(refunds) from {r}")[0]
        for r in (V1, V2)
    )
    assert v1_total[1] == 0 < v2_total[1]
    assert v2_total[0] < v1_total[0]

    # AND the versions' ledger rows carry the facts' fingerprints and row counts per day
    facts = {row[1]: row for row in ledger(workspace.warehouse, "fct_payments")}
    for model in ("fct_daily_revenue_v1", "fct_daily_revenue_v2"):
        recorded = ledger(workspace.warehouse, model)
        assert [row[1] for row in recorded] == [day(1), day(2), day(3)]
        for row in recorded:
            assert row[6] == facts[row[1]][6]  # source_fingerprint
            assert row[8] == facts[row[1]][7]  # source_records = the facts' rows that day


def test_the_conversion_unit_tests_pass(dbt_project, workspace):
    # GIVEN a built day (dbt's unit tests read the columns of the models they feed)
    write_days(workspace.landing, JAN, 1, DaySpec(payments=20))
    assert build(dbt_project, 1, 1).success

    # WHEN the revenue marts' dbt unit tests run
    result = dbt_project.invoke(["test", "--select", "fct_daily_revenue,test_type:unit"])

    # THEN both conversion methods pass
    ran = {
        r.node.name: str(r.status)
        for r in result.result.results
        if r.node.resource_type == "unit_test"
    }
    assert result.success, ran
    assert ran == {
        "test_v1_converts_at_the_months_average_rate_and_counts_captured_only_v1": "pass",
        "test_v2_converts_at_the_days_rate_nets_refunds_and_leaves_failed_out_v2": "pass",
    }


def test_rebuilding_v2_alone_never_changes_v1_or_the_pointer(dbt_project, workspace):
    # GIVEN three built days, then day 2 re-exported and only the facts rebuilt
    write_days(workspace.landing, JAN, 3, DaySpec(payments=80))
    assert build(dbt_project, 1, 3).success
    write_day(workspace.landing, day(2), DaySpec(payments=80, amount_factor=1.5, export_version=2))
    assert build(dbt_project, 2, 2, select="+fct_payments").success
    v1_before = rows(workspace.warehouse, V1, lineage=True)
    v1_ledger_before = ledger(workspace.warehouse, "fct_daily_revenue_v1")
    pointer_before = pointer_state(workspace.warehouse)
    view_before = rows(workspace.warehouse, VIEW, lineage=True)
    v2_before = revenue_by_day_and_market(workspace.warehouse, V2)

    # WHEN v2 alone is rebuilt for days 2-3
    assert build(dbt_project, 2, 3, select="fct_daily_revenue_v2").success

    # THEN v2 follows the new facts
    v2_after = revenue_by_day_and_market(workspace.warehouse, V2)
    assert v2_after == expected_revenue(dbt_project, workspace.warehouse, 2)
    assert {k: v for k, v in v2_after.items() if k[0] == day(2)} != {
        k: v for k, v in v2_before.items() if k[0] == day(2)
    }

    # AND v1's rows and ledger, the pointer, its history and what readers see are untouched
    assert rows(workspace.warehouse, V1, lineage=True) == v1_before
    assert ledger(workspace.warehouse, "fct_daily_revenue_v1") == v1_ledger_before
    assert pointer_state(workspace.warehouse) == pointer_before
    assert rows(workspace.warehouse, VIEW, lineage=True) == view_before


def test_a_version_built_alone_over_days_without_facts_fails_and_writes_nothing(
    dbt_project, workspace
):
    # GIVEN two built days, and a third that landed but whose facts were never built
    write_days(workspace.landing, JAN, 3, DaySpec(payments=40))
    assert build(dbt_project, 1, 2).success
    before = (
        rows(workspace.warehouse, V2, lineage=True),
        ledger(workspace.warehouse, "fct_daily_revenue_v2"),
    )

    # WHEN v2 alone is built over all three days
    outcome = build(dbt_project, 1, 3, select="fct_daily_revenue_v2")

    # THEN it fails naming the day and what to build, and v2 is as it was
    assert not outcome.success
    assert "fct_payments, which is not published for 1 day(s) of the window (2026-01-03)" in (
        outcome.message
    )
    assert (
        rows(workspace.warehouse, V2, lineage=True),
        ledger(workspace.warehouse, "fct_daily_revenue_v2"),
    ) == before


@pytest.mark.parametrize("point", ["after_delete", "in_audit", "before_ledger"])
def test_a_version_rebuild_that_fails_leaves_it_as_it_was(
    dbt_project, workspace, point, monkeypatch
):
    # GIVEN two built days, then day 1 re-exported and its facts rebuilt, so v2 would change
    write_days(workspace.landing, JAN, 2, DaySpec(payments=40))
    assert build(dbt_project, 1, 2).success
    write_day(workspace.landing, day(1), DaySpec(payments=40, amount_factor=2, export_version=2))
    assert build(dbt_project, 1, 1, select="+fct_payments").success
    before = (
        rows(workspace.warehouse, V2, lineage=True),
        ledger(workspace.warehouse, "fct_daily_revenue_v2"),
    )

    # WHEN v2 alone is rebuilt and fails after its window was deleted (a copy of the
    # project with its fault seam armed: the product's seam renders nothing)
    monkeypatch.setenv("REFILL_TEST_FAULT", point)
    outcome = armed_dbt_project().build(
        window_vars(day(1), day(2)), typed_selection("fct_daily_revenue_v2")
    )

    # THEN it says where, and v2 and its ledger rows are exactly as before
    assert not outcome.success
    assert f"fault injected at {point}" in outcome.message
    assert (
        rows(workspace.warehouse, V2, lineage=True),
        ledger(workspace.warehouse, "fct_daily_revenue_v2"),
    ) == before
