"""What a restatement shows as published now (refill.warehouse.ops.read_published_totals),
on a DuckDB file made here: each dataset's facts in its declared words, none for a dataset
whose facts were never built (a project's first dataset need not be the one built)."""

from __future__ import annotations

from datetime import date

import duckdb

from refill.rules.catalog import Dataset, DayTotals, describe_day_totals
from refill.warehouse import ops

DAY = date(2026, 1, 3)
BUILT = Dataset("sales", "fct_sales", "sold_on", totals_column="net")
ROWS_ONLY = Dataset("visits", "fct_visits", "visited_on")  # declares no totals
NEVER_BUILT = Dataset("adjustments", "fct_adjustments", "day", totals_column="delta")


def test_each_dataset_reads_its_own_facts_and_one_never_built_has_none(tmp_path):
    # GIVEN a warehouse holding two datasets' facts, and not a third's
    with duckdb.connect(str(tmp_path / "w.duckdb")) as connection:
        connection.execute("create table main.fct_sales (sold_on date, net decimal(18, 2))")
        connection.execute(
            "insert into main.fct_sales values (?, 1000.25), (?, 234.25)", [DAY, DAY]
        )
        connection.execute("create table main.fct_visits (visited_on date)")
        connection.execute("insert into main.fct_visits values (?)", [DAY])

        # WHEN each one's published totals are read
        found = {
            d: ops.read_published_totals(connection, d, DAY, DAY)
            for d in (BUILT, ROWS_ONLY, NEVER_BUILT)
        }

    # THEN the built ones give their rows (and declared totals), the other nothing
    assert found == {BUILT: {DAY: (2, 1234.5)}, ROWS_ONLY: {DAY: (1, 0.0)}, NEVER_BUILT: {}}
    # and a sign-off says them in the declaration's words, each dataset named
    said = describe_day_totals(
        [DayTotals(BUILT, *found[BUILT][DAY]), DayTotals(ROWS_ONLY, *found[ROWS_ONLY][DAY])]
    )
    assert said == "sales: 2 rows, net 1,234.50; visits: 1 row"
