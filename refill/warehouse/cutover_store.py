"""Cutover's SQL: the version pointer, the versions' ledger days, reconciliation against
each version's expected figures, the diff between two versions, and the switch itself, all
on the one transaction a cutover holds (refill.cli.cutover) so that what was checked is what is
switched.

On an engine without multi-statement transactions (Spark's parquet: `append_only`
connections) the pointer is a log, read latest row wins, and the switch is one appended
row (`append_switch`), made under the days' locks after the checks: docs/cutover.md.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import date
from decimal import Decimal

from refill.errors import RefillError
from refill.rules.cutover import LARGEST_CHANGES, Change, CutoverReport, KeyTotals, VersionedModel
from refill.warehouse import diff, ops
from refill.warehouse.engine import ENGINE_ERRORS, Connection, Warehouse
from refill.warehouse.locking import WarehouseOpenElsewhere


@contextlib.contextmanager
def transaction(warehouse: Warehouse) -> Iterator[Connection]:
    """The command's one read-write connection, in a transaction the caller commits or rolls
    back; rolled back on any error, closed after. Taken under the warehouse lock, after the
    lock waited for processes outside refill to close the file: it does not wait again."""
    try:
        connection = warehouse.open(read_only=False, wait_seconds=0)
    except WarehouseOpenElsewhere as busy:
        raise RefillError(
            f"cutover refused: the warehouse is open in {busy.holder.describe()}; "
            "run again when it closes it"
        ) from None
    except RefillError as error:
        raise RefillError(f"cutover refused: {error}") from None
    try:
        connection.begin()
        yield connection
    except BaseException:
        # No transaction may be open any more (committed, or never begun).
        with contextlib.suppress(*ENGINE_ERRORS):
            connection.rollback()
        raise
    finally:
        connection.close()


def read_pointer(connection: Connection, model: str) -> tuple[int, int | None] | None:
    """(current_version, previous_version) of `model`, or None when it has no pointer.

    The latest row: DuckDB keeps one row per model; Spark appends one per switch, each
    later than the last (append_switch), and its consumer view reads the same latest row."""
    if not ops.has_table(connection, "ops", "version_pointer"):
        return None
    return connection.execute(
        "select current_version, previous_version from ops.version_pointer "
        "where model_name = ? order by switched_at desc limit 1",
        [model],
    ).fetchone()


def _appends_only(connection: Connection) -> bool:
    """An engine without update and without multi-statement transactions (Spark's parquet)."""
    return getattr(connection, "append_only", False)


def read_again(connection: Connection, spec: VersionedModel, versions: list[int]) -> None:
    """Spark: forget this process's cached file listings of what the checks read, so they
    see what other processes wrote before the lock was taken (DuckDB reads its file)."""
    if not _appends_only(connection):
        return
    wanted = [("ops", "version_pointer"), ("ops", "partition_ledger"), ("main", spec.upstream)]
    wanted += [("main", spec.relation_name(version)) for version in versions]
    # one listing of the catalog (each costs seconds on Spark), not one per table
    known = set(
        connection.execute(
            "select table_schema, table_name from information_schema.tables"
        ).fetchall()
    )
    for schema, name in wanted:
        if (schema, name) in known:
            connection.execute(f"refresh table {schema}.{name}")


def relation_exists(connection: Connection, relation_name: str) -> bool:
    return ops.has_table(connection, "main", relation_name)


def published_days(connection: Connection, relation_name: str) -> list[date]:
    return ops.read_published_days(connection, relation_name)


def diff_sql(spec: VersionedModel, from_relation: str, to_relation: str) -> str:
    """One row per day and key in either version, with each measure before and after
    (the one diff engine, refill.warehouse.diff, which a restatement preview uses too).

    A row present in one version only compares against zero.
    """
    sql, _ = diff.paired_sql(
        from_relation,
        to_relation,
        spec.partition_column,
        spec.key_column,
        {m: f"sum({diff.quoted(m)})" for m in spec.measures},
    )
    return sql


def unreconciled(
    connection: Connection, spec: VersionedModel, relation_name: str
) -> list[tuple[date, str, Decimal, Decimal]]:
    """(day, measure, published, expected) for every published day of the version that no
    longer equals its rules' figures from the upstream facts, oldest first. The expected
    figures are the view `ops.<relation>__expected` that the version's in-transaction audit
    keeps (one home for those rules, dbt's macro fct_daily_revenue_expected_sql)."""
    expected = f"{relation_name}__expected"
    if not ops.has_table(connection, "ops", expected):
        raise RefillError(
            f"cutover refused: ops.{expected} is missing, so {relation_name} cannot be checked; "
            f"rebuild it with this code: refill backfill --start ... --end ... "
            f"--select {relation_name}"
        )
    measures = [
        name
        for (name,) in connection.execute(
            "select column_name from information_schema.columns "
            "where table_schema = 'ops' and table_name = ? and column_name <> 'partition_date'",
            [expected],
        ).fetchall()
    ]
    sums = ", ".join(f"sum({m}) as {m}" for m in measures)
    compared = " union all ".join(
        f"select day, '{m}' as measure, coalesce(published.{m}, 0) as published_value, "
        f"coalesce(expected.{m}, 0) as expected_value "
        f"from days "
        f"left join published using (day) left join expected using (day)"
        for m in measures
    )
    rows = connection.execute(
        f"""
        with days as (
            select partition_date as day from ops.partition_ledger
            where model_name = ? and status = 'published'
        ),
        published as (
            select {spec.partition_column} as day, {sums} from main.{relation_name} group by 1
        ),
        expected as (
            select partition_date as day, {sums} from ops.{expected} group by 1
        ),
        compared as ({compared})
        select day, measure, published_value, expected_value
        from compared
        where published_value <> expected_value
        order by day, measure
        """,
        [relation_name],
    ).fetchall()
    return [(day, measure, published, expected) for day, measure, published, expected in rows]


def diff_report(
    connection: Connection,
    spec: VersionedModel,
    action: str,
    current: int,
    target: int,
    warehouse: str,
) -> CutoverReport:
    """What switching from `current` to `target` changes for readers."""
    paired = diff_sql(
        spec,
        f"main.{spec.relation_name(current)}",
        f"main.{spec.relation_name(target)}",
    )
    changed = " or ".join(f"before_{m} <> after_{m}" for m in spec.measures)
    totals_columns = ", ".join(f"sum(before_{m}), sum(after_{m})" for m in spec.measures)
    totals = []
    for row in connection.execute(
        f"with paired as ({paired}) "
        f"select key, {totals_columns} from paired group by key order by key"
    ).fetchall():
        values = row[1:]
        totals.append(
            KeyTotals(
                key=row[0],
                before={m: values[2 * i] for i, m in enumerate(spec.measures)},
                after={m: values[2 * i + 1] for i, m in enumerate(spec.measures)},
            )
        )
    days_compared = [
        day
        for (day,) in connection.execute(
            f"with paired as ({paired}) select distinct day from paired order by 1"
        ).fetchall()
    ]
    days_changed = [
        day
        for (day,) in connection.execute(
            f"with paired as ({paired}) select distinct day from paired where {changed} order by 1"
        ).fetchall()
    ]
    headline = spec.measures[0]
    largest = [
        Change(day, key, before, after)
        for day, key, before, after in connection.execute(
            f"""
            with paired as ({paired})
            select day, key, before_{headline}, after_{headline}
            from paired
            where before_{headline} <> after_{headline}
            order by abs(after_{headline} - before_{headline}) desc, day, key
            limit {LARGEST_CHANGES}
            """
        ).fetchall()
    ]
    return CutoverReport(
        model=spec.name,
        action=action,
        from_version=current,
        to_version=target,
        partition_column=spec.partition_column,
        key_column=spec.key_column,
        measures=spec.measures,
        totals=totals,
        days_compared=days_compared,
        days_changed=days_changed,
        largest_changes=largest,
        warehouse=warehouse,
    )


def switch(connection: Connection, report: CutoverReport, command_line: str) -> None:
    """One UPDATE moves the pointer (only from the version that was checked), one INSERT
    records it; the caller commits both together."""
    (updated,) = connection.execute(
        """
        update ops.version_pointer
        set
            current_version = ?,
            previous_version = current_version,
            switched_at = ?,
            run_id = ?
        where model_name = ? and current_version = ?
        """,
        [report.to_version, report.switched_at, report.run_id, report.model, report.from_version],
    ).fetchone()
    if updated != 1:
        raise RefillError(
            f"cutover refused: {report.model} moved while this command checked it; run it again"
        )
    connection.execute(
        "insert into ops.version_switches values (?, ?, ?, ?, ?, ?)",
        [
            report.model,
            report.from_version,
            report.to_version,
            report.switched_at,
            report.run_id,
            command_line,
        ],
    )


def versions_days(connection: Connection, spec: VersionedModel, versions: list[int]) -> list[date]:
    """Every day the ledger says one of `versions` is published for: the days a switch
    between them checks, which a cutover on Spark holds locked."""
    days: set[date] = set()
    for version in versions:
        days.update(published_days(connection, spec.relation_name(version)))
    return sorted(days)


def append_switch(
    connection: Connection,
    spec: VersionedModel,
    report: CutoverReport,
    command_line: str,
    checked_days: list[date],
) -> None:
    """The switch on an engine without update or transactions (Spark): ONE appended pointer
    row is the commit point (readers take the latest row per model), then the history row.

    Runs under the locks of the checked days, right after the checks: it refuses if the
    pointer moved or the versions' published days changed since they were checked. The
    new row's switched_at is later than every earlier row's, whatever the host clock says,
    so "latest" names it. A crash after the pointer row and before the history row leaves
    the switch made and recorded in the pointer's own log (run id, time), without its
    command line in ops.version_switches."""
    versions = [report.from_version, report.to_version]
    read_again(connection, spec, versions)
    pointer = read_pointer(connection, report.model)
    if pointer is None or pointer[0] != report.from_version:
        raise RefillError(
            f"cutover refused: {report.model} moved while this command checked it; run it again"
        )
    if versions_days(connection, spec, versions) != sorted(checked_days):
        raise RefillError(
            f"cutover refused: {report.model}'s versions published other days while this "
            "command checked them; run it again"
        )
    # Later than every earlier row of the model whatever the host clock says (reckoned in
    # SQL: the value never comes back through the host's time zone), so "latest" names it.
    connection.execute(
        "insert into ops.version_pointer "
        "select ?, ?, ?, greatest(?, max(switched_at) + interval 1 microsecond), ? "
        "from ops.version_pointer where model_name = ?",
        [
            report.model,
            report.to_version,
            report.from_version,
            report.switched_at,
            report.run_id,
            report.model,
        ],
    )
    connection.execute(
        "insert into ops.version_switches "
        "select model_name, ?, current_version, switched_at, run_id, ? "
        "from ops.version_pointer where model_name = ? and run_id = ?",
        [report.from_version, command_line, report.model, report.run_id],
    )
