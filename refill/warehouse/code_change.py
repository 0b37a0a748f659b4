"""`refill ci`'s SQL: two CI warehouses (the base branch's build and the pull request's, of
the same window and landing) read side by side, and every published column compared, per
day and key: the numbers' sums with the one diff engine (refill.warehouse.diff.paired_sql),
every column's values as multisets (EXCEPT ALL, both ways).

Both are DuckDB files `refill ci` made (the `ci` target with a warehouse path of its own);
they are attached read-only to an in-memory session, never written. Which tables are
published is read from the warehouses' catalogs, not from either build's ledger.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import duckdb

from refill.errors import RefillError
from refill.rules.code_change import (
    ROWS,
    CodeChangeReport,
    ColumnPlan,
    ComparedModel,
    Difference,
    ValueDifference,
    plan_columns,
)
from refill.warehouse import diff

BASE, CHANGE = "base_build", "change_build"  # the attached databases' names


def _path_literal(path: Path) -> str:
    """A file path as a DuckDB string literal (ATTACH takes no bound parameter)."""
    text = str(path)
    if "\x00" in text:
        raise RefillError(f"a warehouse path holds a NUL character: {text!r}")
    return "'" + text.replace("'", "''") + "'"


@contextlib.contextmanager
def both(base_warehouse: Path, change_warehouse: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory session with the two warehouses attached read-only, closed after."""
    connection = duckdb.connect(":memory:")
    try:
        for name, path in ((BASE, base_warehouse), (CHANGE, change_warehouse)):
            connection.execute(f"attach {_path_literal(path)} as {name} (read_only)")
        yield connection
    finally:
        connection.close()


def columns_of(connection, database: str, model: ComparedModel) -> dict[str, str] | None:
    """The table's columns (name -> type, in order) in one build, None when it has no such
    table (a view or nothing)."""
    found = connection.execute(
        "select count(*) from information_schema.tables where table_catalog = ? "
        "and table_schema = ? and table_name = ? and table_type = 'BASE TABLE'",
        [database, model.schema, model.relation],
    ).fetchone()[0]
    if not found:
        return None
    rows = connection.execute(
        "select column_name, data_type from information_schema.columns "
        "where table_catalog = ? and table_schema = ? and table_name = ? "
        "order by ordinal_position",
        [database, model.schema, model.relation],
    ).fetchall()
    return dict(rows)


def compare(
    base_warehouse: Path,
    change_warehouse: Path,
    models: dict[str, ComparedModel],
    report: CodeChangeReport,
) -> CodeChangeReport:
    """Fill `report`: the relations compared, added and removed, the columns that came, went
    or changed type, and every number and value that differs between the two builds
    (`models`: the partitioned models of the base's project and the change's,
    refill.rules.code_change.compared_models). Every day either table holds is compared, not
    only the window's: both built only the window, so a row of another day is the change's
    doing, and is said."""
    with both(base_warehouse, change_warehouse) as connection:
        for relation, model in models.items():
            base_columns = columns_of(connection, BASE, model)
            change_columns = columns_of(connection, CHANGE, model)
            if base_columns is None and change_columns is None:
                continue
            if base_columns is None:
                report.added.append(relation)
                continue
            if change_columns is None:
                report.removed.append(relation)
                continue
            report.compared.append(relation)
            plan = plan_columns(model, base_columns, change_columns)
            report.column_changes += plan.column_changes
            if plan.key_column:
                report.key_columns[relation] = plan.key_column
            if plan.not_compared:
                report.not_compared[relation] = plan.not_compared
                continue
            report.add(
                _numbers(connection, plan),
                [v for column in plan.valued for v in _values(connection, plan, column)],
            )
    return report


def _relation(database: str, model: ComparedModel) -> str:
    return ".".join(diff.quoted(part) for part in (database, model.schema, model.relation))


def _numbers(connection, plan: ColumnPlan) -> list[Difference]:
    model = plan.model
    rows = ROWS if ROWS not in plan.summed else f"{ROWS} (count)"
    measures = {rows: "count(*)"}
    for column, inexact in plan.summed.items():
        # an inexact number is summed compensated, so the order rows are read in moves nothing
        measures[column] = f"{'fsum' if inexact else 'sum'}({diff.quoted(column)})"
    sql, parameters = diff.paired_sql(
        _relation(BASE, model),
        _relation(CHANGE, model),
        model.partition_column,
        plan.key_column,
        measures,
    )
    found = []
    for row in connection.execute(f"select * from ({sql}) order by 1, 2", parameters).fetchall():
        day, key, values = row[0], row[1], row[2:]
        for index, measure in enumerate(measures):
            before, after = Decimal(values[2 * index]), Decimal(values[2 * index + 1])
            if before != after:
                found.append(Difference(day, model.relation, str(key), measure, before, after))
    return found


def _values(connection, plan: ColumnPlan, column: str) -> list[ValueDifference]:
    """One column's values per day and key, as multisets (each value as text, so a type
    change that keeps the values keeps the text only if it keeps their form)."""
    model = plan.model
    part = diff.quoted(model.partition_column)
    key = f"cast({diff.quoted(plan.key_column)} as varchar)" if plan.key_column else "''"
    value = f"cast({diff.quoted(column)} as varchar)"

    def side(database: str) -> str:
        return (
            f"select {part} as day, {key} as key, {value} as value "
            f"from {_relation(database, model)}"
        )

    sql = f"""
    with base_values as ({side(BASE)}),
    change_values as ({side(CHANGE)}),
    only_in_base as (select * from base_values except all select * from change_values),
    only_in_change as (select * from change_values except all select * from base_values),
    sides as (
        select day, key, value, 1 as in_base from only_in_base
        union all
        select day, key, value, 0 as in_base from only_in_change
    )
    select
        day,
        key,
        count(*) filter (where in_base = 1),
        count(*) filter (where in_base = 0),
        min(value) filter (where in_base = 1),
        min(value) filter (where in_base = 0)
    from sides
    group by 1, 2
    order by 1, 2
    """
    rows = connection.execute(sql).fetchall()
    return [
        ValueDifference(day, model.relation, str(key), column, base, change, base_text, text)
        for day, key, base, change, base_text, text in rows
    ]
