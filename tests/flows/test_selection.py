"""A selection is a set: every model downstream of any model it rebuilds publishes in the
same commit, and the run log records the models rebuilt, not the string typed."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest

from refill.sample_data import DaySpec, write_day, write_days
from refill.warehouse.dbt_runner import shared_project
from tests.helpers import query
from tests.runs import run_backfill

pytestmark = pytest.mark.usefixtures("prefect_harness")

D1 = date(2026, 4, 1)
EVERY_MODEL = [
    "fct_daily_revenue_v1",
    "fct_daily_revenue_v2",
    "fct_payments",
    "payments_quarantine",
]


def d(n: int) -> date:
    return D1 + timedelta(days=n - 1)


def test_several_selectors_rebuild_the_descendants_of_each():
    selection = shared_project().resolve_selection("fct_payments payments_quarantine")

    assert selection.models == EVERY_MODEL


def test_a_backfill_of_two_selectors_publishes_the_marts_below_both_in_one_commit(workspace):
    # GIVEN three published days, day 2 re-exported
    write_days(workspace.landing, D1, 3, DaySpec(payments=60))
    run_backfill(start=d(1), end=d(3))
    write_day(workspace.landing, d(2), DaySpec(payments=90), seed=5)

    # WHEN a backfill restates it with two selectors
    run_backfill(
        start=d(2), end=d(2), restate=True, confirm=True, select="fct_payments payments_quarantine"
    )

    # THEN every model of day 2, the revenue marts too, is the one run's, in one commit
    runs = query(
        workspace.warehouse,
        "select model_name, run_id from ops.partition_ledger where partition_date = ? order by 1",
        [d(2)],
    )
    assert [model for model, _ in runs] == EVERY_MODEL
    assert len({run for _, run in runs}) == 1
    # AND the run log says what was rebuilt
    (recorded,) = query(
        workspace.warehouse,
        "select parameters->'select' from ops.run_log order by started_at desc limit 1",
    )[0]
    assert json.loads(recorded) == EVERY_MODEL
