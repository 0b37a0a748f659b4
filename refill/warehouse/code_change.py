"""`refill ci`'s SQL: two CI warehouses (the base branch's build and the pull request's, of
the same window and landing) read side by side, and every published number compared with
the one diff engine (refill.warehouse.diff.paired_sql), per day and key.

Both are DuckDB files `refill ci` made (the `ci` target with a warehouse path of its own);
they are attached read-only to an in-memory session, never written.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb

from refill.errors import RefillError
from refill.rules.code_change import ROWS, CodeChangeReport, ComparedModel, Difference
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


def published_relations(connection, database: str) -> set[str]:
    """The relations a build published (its ledger's published rows)."""
    found = connection.execute(
        "select count(*) from information_schema.tables "
        "where table_catalog = ? and table_schema = 'ops' and table_name = 'partition_ledger'",
        [database],
    ).fetchone()[0]
    if not found:
        return set()
    rows = connection.execute(
        f"select distinct model_name from {database}.ops.partition_ledger "
        "where status = 'published'"
    ).fetchall()
    return {name for (name,) in rows}


def compare(
    base_warehouse: Path,
    change_warehouse: Path,
    models: dict[str, ComparedModel],
    report: CodeChangeReport,
) -> CodeChangeReport:
    """Fill `report`: the relations compared, added and removed, and every number of the
    window that differs between the two builds (`models`: what to compare of each relation,
    from the pull request's project)."""
    window = (report.start, report.end)
    with both(base_warehouse, change_warehouse) as connection:
        in_base = published_relations(connection, BASE)
        in_change = published_relations(connection, CHANGE)
        report.compared = sorted(in_base & in_change)
        report.added = sorted(in_change - in_base)
        report.removed = sorted(in_base - in_change)
        for relation in report.compared:
            spec = models.get(relation)
            if spec is None:
                raise RefillError(
                    f"{relation} is published by both builds but is not a partitioned model "
                    "of the pull request's project (no partition_column in its config)"
                )
            report.differences += _differences(connection, spec, window)
    report.differences.sort(key=lambda d: (d.day, d.model, d.key, d.measure))
    return report


def _differences(connection, spec: ComparedModel, window: tuple[date, date]) -> list[Difference]:
    measures = {ROWS: "count(*)"}
    measures.update({m: f"sum({diff.quoted(m)})" for m in spec.measures})
    relation = diff.quoted(spec.relation)
    sql, parameters = diff.paired_sql(
        f"{BASE}.main.{relation}",
        f"{CHANGE}.main.{relation}",
        spec.partition_column,
        spec.key_column,
        measures,
        window,
    )
    found = []
    for row in connection.execute(f"select * from ({sql}) order by 1, 2", parameters).fetchall():
        day, key, values = row[0], row[1], row[2:]
        for index, measure in enumerate(measures):
            before, after = Decimal(values[2 * index]), Decimal(values[2 * index + 1])
            if before != after:
                found.append(Difference(day, spec.relation, str(key), measure, before, after))
    return found
