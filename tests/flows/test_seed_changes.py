"""A seed (reference data) is keyed by its bytes, whatever its size.

dbt checksums a seed over 1 MiB by its path, so a corrected fx rate in a large seed was
invisible to refill: the seed was never loaded again, a dry run found nothing to build, and
`--restate --yes` published the old rate; then, keyed in the code
version, a corrected rate made every day stale. The seed's rows are an input of each day
that reads them (refill.rules.reference): these tests grow the fx seed past that threshold
in a copy of the project, correct one rate, and see exactly the day that reads it rebuilt.
"""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal

import pytest

from refill import settings
from refill.rules.planning import DateRange, DayState
from refill.rules.window import window_vars
from refill.sample_data import payment_line, write_landed_day
from refill.settings import PACKAGE_PROJECT_DIR
from refill.views.status import collect_for
from refill.warehouse.dbt_outcomes import outcome_of
from refill.warehouse.dbt_runner import shared_project
from tests.helpers import (
    DBT_SEED_CHECKSUM_LIMIT,
    FX_SEED,
    expected_day,
    fx_rates_of,
    grow_seed_past,
    patched_project,
    published_tables,
    query,
    set_fx_rate,
)
from tests.runs import run_backfill

pytestmark = pytest.mark.usefixtures("prefect_harness")

D1 = date(2025, 3, 3)
# Three consecutive days, the last alone in its month: a rate of April 1 is read by that day
# only (fct_payments, and fct_daily_revenue_v1 through April's average rate).
MARCH_30, MARCH_31, APRIL_1 = date(2025, 3, 30), date(2025, 3, 31), date(2025, 4, 1)


@pytest.fixture
def big_seed(tmp_path, monkeypatch):
    """The fx seed of a copy of the project, grown past 1 MiB; refill runs on that copy."""
    copy = patched_project(PACKAGE_PROJECT_DIR, tmp_path / "project", {})
    grow_seed_past(copy / FX_SEED)
    monkeypatch.setenv(settings.PROJECT_DIR_ENV, str(copy))
    shared_project.cache_clear()
    yield copy / FX_SEED
    shared_project.cache_clear()


def published_usd(warehouse, day: date) -> Decimal:
    return query(
        warehouse, "select sum(amount_usd) from main.fct_payments where event_date = ?", [day]
    )[0][0]


def test_a_corrected_rate_in_a_seed_over_1_mib_restates_exactly_the_day_that_uses_it(
    workspace, big_seed
):
    # GIVEN three days of EUR payments published with an fx seed over dbt's 1 MiB threshold
    days = [MARCH_30, MARCH_31, APRIL_1]
    for day in days:
        write_landed_day(workspace.landing, day, [[payment_line(day, n) for n in range(5)]])
    assert run_backfill(start=MARCH_30, end=APRIL_1, confirm=True).success
    assert big_seed.stat().st_size > DBT_SEED_CHECKSUM_LIMIT
    truth = expected_day(workspace.landing, APRIL_1)
    published_before = {day: published_usd(workspace.warehouse, day) for day in days}

    # WHEN the EUR rate of April 1 is corrected (the seed stays over 1 MiB)
    set_fx_rate(big_seed, APRIL_1, "EUR", Decimal("1.234567"))

    # THEN a dry run plans exactly April 1 again, stale because of its rates, not the code
    plan = run_backfill(start=MARCH_30, end=APRIL_1, dry_run=True).plan
    assert plan.states == {
        MARCH_30: DayState.PUBLISHED,
        MARCH_31: DayState.PUBLISHED,
        APRIL_1: DayState.STALE,
    }
    assert [day for chunk in plan.chunks for day in chunk.days] == [APRIL_1]
    (status,) = status_of(APRIL_1)
    assert status.why.reason == "fx_rates_daily changed for this day"
    # AND the sign-off rebuilds that day alone, at the corrected rate
    report = run_backfill(start=MARCH_30, end=APRIL_1, confirm=True)
    assert report.success and report.published == [APRIL_1]
    corrected = truth.amount_usd(APRIL_1, fx_rates_of(big_seed))
    assert published_usd(workspace.warehouse, APRIL_1) == corrected != published_before[APRIL_1]
    assert query(
        workspace.warehouse,
        "select usd_per_unit from reference.fx_rates_daily "
        "where rate_date = ? and currency = 'EUR'",
        [APRIL_1],
    ) == [(Decimal("1.234567"),)]
    assert {day: published_usd(workspace.warehouse, day) for day in days} == {
        **published_before,
        APRIL_1: corrected,
    }
    # AND then every day is current again: nothing left to build
    after = run_backfill(start=MARCH_30, end=APRIL_1, dry_run=True).plan
    assert set(after.states.values()) == {DayState.PUBLISHED} and after.chunks == []


def status_of(day: date):
    """The day's status as `refill status` computes it."""
    return collect_for(shared_project(), DateRange(day, day))


def test_a_plain_dbt_build_after_a_corrected_rate_publishes_it_and_names_it(workspace, big_seed):
    # GIVEN a day published by refill with an fx seed over 1 MiB, whose EUR rate is then
    # corrected
    write_landed_day(workspace.landing, D1, [[payment_line(D1, n) for n in range(5)]])
    assert run_backfill(start=D1, end=D1, confirm=True).success
    set_fx_rate(big_seed, D1, "EUR", Decimal("0.987654"))

    # WHEN a user rebuilds the day with a plain `dbt build --vars` (it loads the seeds)
    outcome = shared_project().build(window_vars(D1, D1))

    # THEN the day holds the corrected rate, and refill calls it current: the ledger's code
    # version names the rates it was built with
    assert outcome.success, outcome.message
    truth = expected_day(workspace.landing, D1)
    assert published_usd(workspace.warehouse, D1) == truth.amount_usd(D1, fx_rates_of(big_seed))
    plan = run_backfill(start=D1, end=D1, dry_run=True).plan
    assert (plan.states, plan.chunks) == ({D1: DayState.PUBLISHED}, [])


def test_a_build_that_does_not_load_a_changed_seed_refuses_and_writes_nothing(workspace, big_seed):
    # GIVEN a day published by refill, then a rate of it corrected in the seed file
    write_landed_day(workspace.landing, D1, [[payment_line(D1, n) for n in range(5)]])
    assert run_backfill(start=D1, end=D1, confirm=True).success
    before = published_tables(workspace.warehouse)
    set_fx_rate(big_seed, D1, "EUR", Decimal("0.987654"))

    # WHEN a dbt command that does not load the seeds builds the day (`dbt run` runs no seed)
    outcome = outcome_of(
        shared_project().invoke(["run", "--vars", json.dumps(window_vars(D1, D1))])
    )

    # THEN it refuses in one line naming the seed, before writing: the ledger would otherwise
    # record the file's rates for rows built from the rates loaded before
    assert not outcome.success
    assert outcome.failure_class == "reference", outcome.message
    assert "refill reference: payments: seed fx_rates_daily changed since it was loaded" in (
        outcome.message
    )
    assert published_tables(workspace.warehouse) == before
