"""The one diff engine: per day and key, each measure before and after, between two
relations of the same grain. `refill cutover --dry-run` compares two versions with it
(refill.warehouse.cutover_store), a restatement preview the published relation with what
the preview kept (refill.warehouse.preview_store).

Column names come from the dbt manifest (refill.warehouse.catalog) and are quoted here
(`quoted`, the one quoting of a name in Python-built SQL);
relation names are built by the callers from the manifest and checked ids, never input.
"""

from __future__ import annotations

from datetime import date


def quoted(name: str) -> str:
    """A name as an identifier in standard SQL (DuckDB)."""
    return '"' + name.replace('"', '""') + '"'


def paired_sql(
    before: str,
    after: str,
    partition_column: str,
    key_column: str | None,
    measures: dict[str, str],
    window: tuple[date, date] | None = None,
) -> tuple[str, list]:
    """(SQL, parameters): one row per day and key present in either relation, with
    `before_<m>` and `after_<m>` for each measure (name -> aggregate over the relation's
    rows, e.g. "sum(amount_usd)"). A row present in one relation only compares against
    zero. `key_column` None: one row per day (key ''). `window`: only those days. Names are
    quoted in standard SQL; Spark's connection turns them into its backquoted ones
    (refill.warehouse.spark_literals.render), as every query it runs."""
    part = quoted(partition_column)
    key = quoted(key_column) if key_column else "''"
    aggregates = ", ".join(f"{sql} as {quoted(name)}" for name, sql in measures.items())
    where, parameters = "", []
    if window is not None:
        where = f" where {part} between ? and ?"
        parameters = [window[0], window[1]] * 2
    pairs = ",\n        ".join(
        f"coalesce(before.{quoted(m)}, 0) as {quoted('before_' + m)}, "
        f"coalesce(after.{quoted(m)}, 0) as {quoted('after_' + m)}"
        for m in measures
    )
    sql = f"""
    with before as (
        select {part} as day, {key} as key, {aggregates} from {before}{where} group by 1, 2
    ),
    after as (
        select {part} as day, {key} as key, {aggregates} from {after}{where} group by 1, 2
    )
    select
        coalesce(before.day, after.day) as day,
        coalesce(before.key, after.key) as key,
        {pairs}
    from before
    full outer join after on before.day = after.day and before.key = after.key
    """
    return sql, parameters
