"""`refill ci`'s comparison of two CI warehouses (refill.warehouse.code_change), on two small
DuckDB files made here: every column both tables have is compared per day and key, sums and
values, whatever the column's type; columns and models that come or go are named; a row of
a day outside the window is compared like any other."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb

from refill.rules.code_change import CodeChangeReport, ComparedModel
from refill.warehouse import code_change

DAY, NEXT_DAY, LATER = date(2026, 1, 1), date(2026, 1, 2), date(2026, 2, 1)
FACTS = ComparedModel("facts", "main", "event_date", None)
MART = ComparedModel("mart", "main", "event_date", "market")
BASE_ROWS = [
    (DAY, "t1", Decimal("10.00"), "captured", "2026-01-01 10:00:07"),
    (DAY, "t2", Decimal("5.00"), "refunded", "2026-01-01 11:00:00"),
    (NEXT_DAY, "t3", Decimal("7.50"), "captured", "2026-01-02 09:30:00"),
]


def warehouse(path: Path, facts: list[tuple], mart: list[tuple], extra: str = "") -> Path:
    with duckdb.connect(str(path)) as connection:
        connection.execute(
            "create table facts (event_date date, transaction_id varchar, "
            f"amount decimal(18, 2), status varchar, event_ts timestamp{extra})"
        )
        for row in facts:
            connection.execute(f"insert into facts values ({', '.join('?' * len(row))})", list(row))
        connection.execute(
            "create table mart (event_date date, market varchar, transactions bigint)"
        )
        connection.executemany("insert into mart values (?, ?, ?)", mart)
    return path


def compared(tmp_path: Path, facts: list[tuple], mart=None, models=None, extra=""):
    mart_rows = [(DAY, "DE", 2), (DAY, "FR", 1)]
    base = warehouse(tmp_path / "base.duckdb", BASE_ROWS, mart_rows)
    change = warehouse(tmp_path / "change.duckdb", facts, mart or mart_rows, extra)
    report = CodeChangeReport("main", "a" * 40, "b" * 12, DAY, NEXT_DAY)
    return code_change.compare(base, change, models or {"facts": FACTS, "mart": MART}, report)


def test_the_same_tables_compare_equal(tmp_path):
    report = compared(tmp_path, BASE_ROWS)
    assert report.compared == ["facts", "mart"]
    assert not report.changes_numbers


def test_values_that_keep_each_days_sums_are_still_said(tmp_path):
    # GIVEN a change that swaps two amounts of a day (its sum unchanged) and cuts a
    # timestamp to the minute
    swapped = [
        (DAY, "t1", Decimal("5.00"), "captured", "2026-01-01 10:00:00"),
        (DAY, "t2", Decimal("10.00"), "refunded", "2026-01-01 11:00:00"),
        BASE_ROWS[2],
    ]
    report = compared(tmp_path, swapped)
    # THEN no number moves, and the timestamp's values are said; the amounts' multiset is
    # the same (a swap between rows is not a change of any one column's values)
    assert report.differences == []
    [moved] = report.value_differences
    assert (moved.day, moved.model, moved.column) == (DAY, "facts", "event_ts")
    assert (moved.only_in_base, moved.only_in_change) == (1, 1)
    assert moved.base_example == "2026-01-01 10:00:07"
    assert moved.change_example == "2026-01-01 10:00:00"


def test_a_text_value_a_null_and_a_row_outside_the_window_are_said(tmp_path):
    changed = [
        (DAY, "t1", Decimal("10.00"), "CAPTURED", "2026-01-01 10:00:07"),
        (DAY, "t2", None, "refunded", "2026-01-01 11:00:00"),
        BASE_ROWS[2],
        (LATER, "t9", Decimal("1.00"), "captured", "2026-02-01 00:00:00"),
    ]
    report = compared(tmp_path, changed)
    numbers = {(d.day, d.measure): (d.base, d.change) for d in report.differences}
    assert numbers == {
        (DAY, "amount"): (Decimal("15.00"), Decimal("10.00")),
        (LATER, "rows"): (0, 1),
        (LATER, "amount"): (0, Decimal("1.00")),
    }
    values = {(v.day, v.column): v for v in report.value_differences}
    assert values[(DAY, "status")].change_example == "CAPTURED"
    assert (DAY, "amount") not in values  # its sum moved: said once, as a number
    assert values[(LATER, "transaction_id")].only_in_change == 1


def test_a_market_of_a_keyed_model_moves_alone(tmp_path):
    report = compared(tmp_path, BASE_ROWS, mart=[(DAY, "DE", 2), (DAY, "FR", 3)])
    assert [(d.model, d.key, d.measure, d.delta) for d in report.differences] == [
        ("mart", "FR", "transactions", 2)
    ]
    assert report.key_columns == {"mart": "market"}


def test_columns_and_models_that_come_or_go_are_named(tmp_path):
    gone = ComparedModel("gone", "main", "event_date", None)
    report = compared(
        tmp_path,
        [(*row, 1) for row in BASE_ROWS],
        models={"facts": FACTS, "gone": gone},
        extra=", fee bigint",
    )
    assert [(c.column, c.base_type, c.change_type) for c in report.column_changes] == [
        ("fee", None, "BIGINT")
    ]
    assert report.removed == [] and report.added == []  # neither build has `gone`
    assert not report.differences and not report.value_differences
    assert report.changes_numbers
