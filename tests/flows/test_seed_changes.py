"""A seed (reference data) is keyed by its bytes, whatever its size.

dbt checksums a seed over 1 MiB by its path, so a corrected fx rate in a large seed was
invisible to refill: the seed was never loaded again, a dry run found nothing to build, and
`--restate --yes` published the old rate. These tests grow the fx seed
past that threshold in a copy of the project and correct one rate.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from refill import settings
from refill.rules.planning import DayState
from refill.rules.window import window_vars
from refill.sample_data import payment_line, write_landed_day
from refill.settings import PACKAGE_PROJECT_DIR
from refill.warehouse.dbt_runner import shared_project
from tests.helpers import (
    DBT_SEED_CHECKSUM_LIMIT,
    FX_SEED,
    expected_day,
    fx_rates_of,
    grow_seed_past,
    patched_project,
    query,
    set_fx_rate,
)
from tests.runs import run_backfill

pytestmark = pytest.mark.usefixtures("prefect_harness")

D1, D2 = date(2025, 3, 3), date(2025, 3, 4)


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


def test_a_corrected_rate_in_a_seed_over_1_mib_restates_the_days_that_use_it(workspace, big_seed):
    # GIVEN two days of EUR payments published with an fx seed over dbt's 1 MiB threshold
    for day in (D1, D2):
        write_landed_day(workspace.landing, day, [[payment_line(day, n) for n in range(5)]])
    assert run_backfill(start=D1, end=D2, confirm=True).success
    assert big_seed.stat().st_size > DBT_SEED_CHECKSUM_LIMIT
    truth = expected_day(workspace.landing, D1)
    assert published_usd(workspace.warehouse, D1) == truth.amount_usd(D1, fx_rates_of(big_seed))

    # WHEN the EUR rate of D1 is corrected (the seed stays over 1 MiB)
    set_fx_rate(big_seed, D1, "EUR", Decimal("1.234567"))

    # THEN a dry run plans D1 again, as stale
    plan = run_backfill(start=D1, end=D2, dry_run=True).plan
    assert plan.states[D1] == DayState.STALE
    assert D1 in [day for chunk in plan.chunks for day in chunk.days]
    # AND a restatement publishes D1 at the corrected rate
    assert run_backfill(start=D1, end=D2, restate=True, confirm=True).success
    corrected = truth.amount_usd(D1, fx_rates_of(big_seed))
    assert published_usd(workspace.warehouse, D1) == corrected
    assert query(
        workspace.warehouse,
        "select usd_per_unit from reference.fx_rates_daily "
        "where rate_date = ? and currency = 'EUR'",
        [D1],
    ) == [(Decimal("1.234567"),)]
    # AND then every day is current again: nothing left to build
    after = run_backfill(start=D1, end=D2, dry_run=True).plan
    assert (after.states, after.chunks) == ({D1: DayState.PUBLISHED, D2: DayState.PUBLISHED}, [])


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
