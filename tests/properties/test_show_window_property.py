"""Property (a mart never reads another window's work tables): for any window W, after any
window E was built (so staging holds E's lines), `dbt show --select fct_payments --vars W`
gives W's rows, the rows a whole `dbt build --vars W` publishes: per day, the published
count and amount the oracle (tests.helpers.expected_day) reads from the landing, and no
row of a day outside W.

One warehouse for every example (each build only replaces its window's days), one parsed
dbt project, days of a few dozen payments: each example is one build and one show.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import date, timedelta
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from refill.rules.window import window_vars
from refill.sample_data import DaySpec, write_days
from tests.helpers import expected_day
from tests.properties.conftest import copy_warehouse

FIRST = date(2025, 9, 1)
DAYS = [FIRST + timedelta(days=n) for n in range(6)]


@st.composite
def windows(draw) -> tuple[date, date]:
    start = draw(st.integers(0, len(DAYS) - 1))
    end = draw(st.integers(start, min(start + 2, len(DAYS) - 1)))
    return DAYS[start], DAYS[end]


@pytest.fixture(scope="module")
def landed(tmp_path_factory, seeded_warehouse):
    """Six landed days and one warehouse (the seeds loaded), in the environment."""
    root = tmp_path_factory.mktemp("show-window")
    landing = root / "landing"
    write_days(landing, FIRST, len(DAYS), DaySpec(payments=40, parts=1))
    warehouse = copy_warehouse(seeded_warehouse, root / "warehouse" / "refill.duckdb")
    truths = {day: expected_day(landing, day) for day in DAYS}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REFILL_LANDING", str(landing))
        patch.setenv("REFILL_WAREHOUSE", str(warehouse))
        yield truths


@settings(max_examples=max(settings().max_examples // 5, 3))
@given(earlier=windows(), shown=windows())
def test_show_of_any_window_gives_its_rows_whatever_window_staging_holds(
    landed, dbt_project, earlier, shown
):
    # GIVEN window E built last: staging's work tables hold E's lines
    outcome = dbt_project.build(window_vars(*earlier), include_seeds=False)
    assert outcome.success, f"{earlier}: {outcome.message}"

    # WHEN fct_payments is shown for window W
    result = dbt_project.invoke(
        ["show", "--select", "fct_payments", "--limit", "-1", "--vars"]
        + [json.dumps(window_vars(*shown))]
    )
    assert result.success, result.exception
    table = result.result.results[0].agate_table
    counts: dict[date, int] = defaultdict(int)
    amounts: dict[date, Decimal] = defaultdict(Decimal)
    for row in table.rows:
        day = row["event_date"]
        day = day.date() if hasattr(day, "date") else day
        counts[day] += 1
        amounts[day] += Decimal(str(row["amount"]))

    # THEN per day of W: the oracle's published count and amount; no other day
    in_window = [day for day in DAYS if shown[0] <= day <= shown[1]]
    expected = {day: landed[day].published for day in in_window if landed[day].published}
    assert dict(counts) == expected
    assert {day: amounts[day] for day in expected} == {day: landed[day].amount for day in expected}
