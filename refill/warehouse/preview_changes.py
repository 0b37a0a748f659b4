"""A restatement preview's report read from the warehouse: per day and model, its rows (from
the ledgers) and every measure its declaration names (a dataset's `totals`, a versioned
model's `measures`), published now vs kept by the preview; and, for a versioned model that
declares a `key`, the same per value of that key. One diff engine (refill.warehouse.diff)
pairs the published relation with the kept one; the decisions are refill.rules.preview's."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from refill.rules.catalog import Catalog
from refill.rules.preview import Change, KeyedModel, PreviewReport
from refill.warehouse import diff, ops
from refill.warehouse.preview_store import kept_ledger, kept_relations


@dataclass(frozen=True)
class Compared:
    """What the report compares of one kept model, as its declaration names it."""

    partition_column: str
    measures: tuple[str, ...]  # none: its rows alone
    keyed: KeyedModel | None = None  # a versioned model's key, when it declares one


def report(
    connection, catalog: Catalog, preview_id: str, start: date, end: date, days: list[date]
) -> PreviewReport:
    """Per day, model and declared measure, rows and amounts published now vs kept; per key
    value too for the versioned models that declare a key. Only the `days` the preview
    built are compared (contiguous or not): a day of the window between two of its chunks
    keeps its published rows, it does not go to none."""
    built = set(days)
    kept = kept_relations(connection, preview_id)
    compared = _compared(catalog, kept)
    has_ledger = ops.has_table(connection, "ops", "partition_ledger")
    result = PreviewReport(preview_id, start, end, facts_model=catalog.primary.facts_model)
    for model, relation in sorted(kept.items()):
        rows_old: dict[date, int] = {}
        if has_ledger:
            rows_old = dict(
                connection.execute(
                    "select partition_date, rows_written from ops.partition_ledger "
                    "where model_name = ? and status = 'published' "
                    "and partition_date between ? and ?",
                    [model, start, end],
                ).fetchall()
            )
        rows_new = dict(
            connection.execute(
                f"select partition_date, rows_written from {kept_ledger(relation)} "
                "where model_name = ?",
                [model],
            ).fetchall()
        )
        spec = compared.get(model)
        measures = spec.measures if spec else ()
        amounts: dict[tuple[date, str], tuple[Decimal, Decimal]] = {}
        if measures:
            published = _published(connection, model, relation)
            for day, _key, pairs in _paired(
                connection, published, relation, spec.partition_column, None, measures, start, end
            ):
                amounts.update({(day, m): pair for m, pair in zip(measures, pairs, strict=True)})
        for day in sorted((set(rows_old) | set(rows_new)) & built):
            for measure in measures or ("",):
                old, new = amounts.get((day, measure), (Decimal(0), Decimal(0)))
                result.days.append(
                    Change(
                        day,
                        model,
                        "",
                        measure,
                        int(rows_old.get(day, 0)),
                        int(rows_new.get(day, 0)),
                        old,
                        new,
                    )
                )
        if spec and spec.keyed:
            result.keyed[model] = spec.keyed
            published = _published(connection, model, relation)
            for day, key, pairs in _paired(
                connection,
                published,
                relation,
                spec.partition_column,
                spec.keyed.key_column,
                measures,
                start,
                end,
            ):
                if day in built:
                    result.by_key += [
                        Change(day, model, str(key), measure, 0, 0, old, new)
                        for measure, (old, new) in zip(measures, pairs, strict=True)
                    ]
    result.days.sort(key=lambda c: (c.day, c.model))
    result.by_key.sort(key=lambda c: (c.day, c.model, c.key))
    return result


def _compared(catalog: Catalog, kept: dict[str, str]) -> dict[str, Compared]:
    """kept model -> what its declaration says to compare: a dataset's facts their totals
    (if declared), a versioned model's versions every measure (per key, if declared)."""
    compared = {
        dataset.facts_model: Compared(
            dataset.partition_column, (dataset.totals_column,) if dataset.totals_column else ()
        )
        for dataset in catalog.datasets
    }
    for versioned in catalog.versioned:
        keyed = KeyedModel(versioned.name, versioned.key_column) if versioned.key_column else None
        for model in kept:
            if re.fullmatch(rf"{re.escape(versioned.name)}_v\d+", model):
                compared[model] = Compared(versioned.partition_column, versioned.measures, keyed)
    return compared


def _published(connection, model: str, kept: str) -> str:
    """The relation readers see now, or none of the kept one's rows when never published."""
    if ops.has_table(connection, "main", model):
        return f"main.{diff.quoted(model)}"
    return f"(select * from {kept} where false)"


def _paired(
    connection, before, after, column, key, measures: Sequence[str], start, end
) -> list[tuple[date, str, list[tuple[Decimal, Decimal]]]]:
    """(day, key, [(old, new) per measure, in order]) per day (and key) in either relation.
    The measures are named m0, m1, ... in the SQL: a declared column name is quoted where
    it is summed, never made part of another name."""
    named = {f"m{n}": f"sum({diff.quoted(measure)})" for n, measure in enumerate(measures)}
    sql, parameters = diff.paired_sql(before, after, column, key, named, (start, end))
    pairs = ", ".join(f"before_{name}, after_{name}" for name in named)
    found = connection.execute(
        f"select day, key, {pairs} from ({sql}) order by 1, 2", parameters
    ).fetchall()
    return [
        (
            day,
            key,
            [(Decimal(values[2 * n]), Decimal(values[2 * n + 1])) for n in range(len(measures))],
        )
        for day, key, *values in found
    ]
