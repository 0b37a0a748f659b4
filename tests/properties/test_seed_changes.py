"""Properties (reference data per day): for any set of changed fx rate cells (any days,
currencies and values, a new currency added or not), refill plans stale exactly the days
whose inputs changed (their landing aside: the rows of the seed each day reads, as the
models read them, worked out here without refill's rule), naming the seed; and once those
days are restated (the seeds loaded again, the stale days built), the warehouse is the one
a fresh build from the new seed gives, every consumer relation and the ledger's data, its
facts the oracle's (tests.helpers.expected_day at the new rates). The first property only
plans (cheap: every example of the profile); the second builds (an eighth of them).

Tiny days (a few lines each, March 30 to April 2: two months, so a rate is read by its day
and, through fct_daily_revenue_v1's monthly average, by its month), a seed of March and
April only (loading it is quick), one parsed project copy whose seed each example rewrites,
and warehouses copied from one built before the change.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections import Counter
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from refill.rules.planning import DateRange, DayState, plan_chunks
from refill.rules.window import window_vars
from refill.sample_data import CURRENCIES, payment_line, write_landed_day
from refill.settings import PACKAGE_PROJECT_DIR
from refill.warehouse import partition_status
from refill.warehouse.dbt_runner import DbtProject
from tests.helpers import FX_SEED, expected_day, fx_rates_of, patched_project, query, snapshot
from tests.properties.conftest import copy_warehouse

LANDED = [date(2025, 3, 30) + timedelta(days=n) for n in range(4)]  # March 30 .. April 2
SEED_DAYS = [date(2025, 3, 1) + timedelta(days=n) for n in range(61)]  # March and April
NEW_CURRENCY = "CHF"  # a line of each day pays in it: quarantined until the seed knows it
MARKET_OF = {"USD": "US", "EUR": "DE", "GBP": "GB", "JPY": "JP", "CAD": "CA", "CHF": "DE"}


def seed_text(rates: dict[tuple[date, str], Decimal]) -> str:
    rows = [f"{day},{currency},{rate:.6f}\n" for (day, currency), rate in sorted(rates.items())]
    return "rate_date,currency,usd_per_unit\n" + "".join(rows)


def land_tiny_days(landing: Path) -> None:
    """A payment in every currency (one refunded), a replay, a malformed line, and a line
    in the currency the seed does not know yet."""
    for index, day in enumerate(LANDED):
        lines = [
            payment_line(day, n, currency=currency, market=MARKET_OF[currency], amount=7 + n)
            for n, currency in enumerate([*CURRENCIES, NEW_CURRENCY])
        ]
        lines.append(payment_line(day, 9, status="refunded", amount=3 + index))
        lines += [lines[0], "not json"]
        write_landed_day(landing, day, [lines[:4], lines[4:]])


@pytest.fixture(scope="module")
def seed_world(tmp_path_factory):
    """A project copy with a seed of March and April (parsed once), the landing, a
    warehouse of the landed days built from that seed, and the seed's rates."""
    root = tmp_path_factory.mktemp("seed_changes")
    project_dir = patched_project(PACKAGE_PROJECT_DIR, root / "project", {})
    seed = project_dir / FX_SEED
    rates = {key: rate for key, rate in fx_rates_of(seed).items() if key[0] in SEED_DAYS}
    seed.write_text(seed_text(rates))
    landing = root / "landing"
    land_tiny_days(landing)
    warehouse = root / "built" / "refill.duckdb"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REFILL_LANDING", str(landing))
        patch.setenv("REFILL_WAREHOUSE", str(warehouse))
        patch.setenv("DBT_TARGET_PATH", str(root / "target"))
        project = DbtProject(project_dir=project_dir)
        outcome = project.build(window_vars(LANDED[0], LANDED[-1]))
        assert outcome.success, outcome.message
    return project, seed, landing, warehouse, rates, root


@st.composite
def rate_changes(draw, min_size: int = 0) -> dict[tuple[date, str], Decimal]:
    """Rate cells set to any value (now and then the one they hold), on landed days or other
    days of their months; and, now and then, a new currency with a rate every day."""
    days = st.sampled_from(LANDED + [date(2025, 3, 3), date(2025, 3, 29), date(2025, 4, 20)])
    values = st.decimals(Decimal("0.000001"), Decimal("9.999999"), places=6)
    changes = draw(
        st.dictionaries(
            st.tuples(days, st.sampled_from(CURRENCIES)), values, min_size=min_size, max_size=3
        )
    )
    if draw(st.integers(0, 3)) == 0:
        rate = draw(values)
        changes.update({(day, NEW_CURRENCY): rate for day in SEED_DAYS})
    return changes


def read_by_day(rates: dict[tuple[date, str], Decimal], day: date) -> tuple:
    """What a day reads of the seed, as the models read it (the oracle of the day's inputs):
    its own rates (fct_payments), its month's rates (fct_daily_revenue_v1's average), the
    currencies known (stg_payments__lines' quarantine)."""
    return (
        Counter((d, c, r) for (d, c), r in rates.items() if d == day),
        Counter((d, c, r) for (d, c), r in rates.items() if d.month == day.month),
        {currency for _, currency in rates},
    )


def changed_days(rates, new_rates) -> list[date]:
    return [day for day in LANDED if read_by_day(rates, day) != read_by_day(new_rates, day)]


def plan(project: DbtProject, landing: Path, warehouse: Path):
    return partition_status.collect(
        warehouse,
        landing,
        DateRange(LANDED[0], LANDED[-1]),
        sorted(project.partitioned_models()),
        project.code_versions(),
        project.catalog,
    )


@contextlib.contextmanager
def seed_rewritten(seed_world, new_rates):
    """The world's seed holding `new_rates`, its landing and target folder in the environment."""
    project, seed, landing, _, _, root = seed_world
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REFILL_LANDING", str(landing))
        patch.setenv("DBT_TARGET_PATH", str(root / "target"))
        seed.write_text(seed_text(new_rates))
        yield patch


@given(changes=rate_changes())
def test_a_changed_rate_makes_exactly_the_days_that_read_it_stale(seed_world, changes):
    project, _, landing, built, rates, _ = seed_world
    new_rates = {**rates, **changes}
    # GIVEN the landed days published from the seed as it was
    # WHEN these rate cells change in the seed
    with seed_rewritten(seed_world, new_rates):
        # THEN refill plans stale exactly the days whose inputs changed, naming the seed
        statuses = plan(project, landing, built)
    assert [s.day for s in statuses if s.state == DayState.STALE] == changed_days(rates, new_rates)
    assert {s.state for s in statuses} <= {DayState.STALE, DayState.PUBLISHED}
    assert {s.why.reason for s in statuses if s.is_stale} <= {"fx_rates_daily changed for this day"}


@settings(max_examples=max(settings().max_examples // 8, 3))
@given(changes=rate_changes(min_size=1))
def test_restating_the_stale_days_gives_a_fresh_builds_warehouse(seed_world, changes):
    project, _, landing, built, rates, _ = seed_world
    new_rates = {**rates, **changes}
    with tempfile.TemporaryDirectory() as scratch, seed_rewritten(seed_world, new_rates) as patch:
        # GIVEN the landed days published from the seed as it was, whose rates then change
        warehouse = copy_warehouse(built, Path(scratch) / "restated" / "refill.duckdb")
        patch.setenv("REFILL_WAREHOUSE", str(warehouse))
        stale = [s.day for s in plan(project, landing, warehouse) if s.is_stale]

        # WHEN the seeds are loaded again and the stale days built, as a refill run does
        load_key = json.dumps({"refill_seed_key": project.seed_load_key()})
        assert project.invoke(["seed", "--vars", load_key]).success
        for chunk in plan_chunks(stale, chunk_days=92, order="oldest-first"):
            outcome = project.build(window_vars(chunk.start, chunk.end), include_seeds=False)
            assert outcome.success, f"{chunk}: {outcome.message}"

        # THEN nothing is stale any more, and the warehouse is a fresh build's from the new
        # seed, its facts the oracle's at the new rates
        assert {s.state for s in plan(project, landing, warehouse)} == {DayState.PUBLISHED}
        fresh = Path(scratch) / "fresh" / "refill.duckdb"
        patch.setenv("REFILL_WAREHOUSE", str(fresh))
        outcome = project.build(window_vars(LANDED[0], LANDED[-1]))
        assert outcome.success, outcome.message
        assert snapshot(warehouse) == snapshot(fresh)
        currencies = {currency for _, currency in new_rates}
        for day in LANDED:
            truth = expected_day(landing, day, currencies)
            assert query(
                warehouse,
                "select count(*), sum(amount_usd) from main.fct_payments where event_date = ?",
                [day],
            ) == [(truth.published, truth.amount_usd(day, new_rates))]
