"""What `refill ci` compares and reports: a pull request's published models against the
base branch's, on the same window and landing, as plain data.

What to compare is the base's word first: the partitioned models (a `partition_column`
in their config) of the base's parsed project, joined by those only the pull request
declares, each with the base's partition column and key (a versioned mart's `key`, the
grain within a day) when the base declares the model. The pull request's own manifest
cannot take a model, a column or a measure out of the comparison.

Every column both builds published is compared, per day and key: each number's sum (and
the row count), and every column's values as a multiset (numbers and any other type), so
a change that keeps a day's total but moves values within it is reported too. Columns
that only one side has, or whose type changed, are named. The SQL is
refill.warehouse.code_change's, the rendering refill.views.code_change_report's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

ROWS = "rows"  # every model's first measure: its row count per day (and key)
# DuckDB's number types (information_schema's data_type, parameters left out)
WHOLE_NUMBER_TYPES = frozenset(
    {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT"}
    | {"UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT"}
)
EXACT_NUMBER_TYPES = WHOLE_NUMBER_TYPES | {"DECIMAL", "NUMERIC"}
INEXACT_NUMBER_TYPES = frozenset({"DOUBLE", "FLOAT", "REAL"})


@dataclass(frozen=True)
class ComparedModel:
    """A published relation and how its rows are grouped: per day, and per key within a day
    where the project declares one."""

    relation: str  # the table dbt writes (a versioned model's <name>_v<n>)
    schema: str  # the schema dbt writes it in
    partition_column: str
    key_column: str | None  # the grain within a day, when the project declares one


def compared_models(
    base_nodes: Mapping[str, Mapping], change_nodes: Mapping[str, Mapping] | None = None
) -> dict[str, ComparedModel]:
    """Every partitioned model of the base's parsed project (manifest.json's `nodes`) and of
    the pull request's, by relation; the base's declaration wins for a model both have."""
    found = _partitioned(change_nodes or {})
    found.update(_partitioned(base_nodes))
    return dict(sorted(found.items()))


def _partitioned(nodes: Mapping[str, Mapping]) -> dict[str, ComparedModel]:
    found: dict[str, ComparedModel] = {}
    for node in nodes.values():
        config = node.get("config") or {}
        partition_column = config.get("partition_column")
        if node.get("resource_type") != "model" or not partition_column:
            continue
        meta = {**(node.get("meta") or {}), **(config.get("meta") or {})}.get("refill") or {}
        key = meta.get("key") if meta.get("role") == "versioned" else None
        relation = node.get("alias") or node["name"]
        schema = node.get("schema") or "main"
        found[relation] = ComparedModel(relation, schema, partition_column, key)
    return found


def type_name(data_type: str) -> str:
    """A column type without its parameters: DECIMAL(18,2) -> DECIMAL."""
    return data_type.split("(", 1)[0].strip().upper()


def is_number(data_type: str) -> bool:
    return type_name(data_type) in EXACT_NUMBER_TYPES | INEXACT_NUMBER_TYPES


def is_inexact(data_type: str) -> bool:
    return type_name(data_type) in INEXACT_NUMBER_TYPES


@dataclass(frozen=True)
class ColumnChange:
    """A column one build published and the other did not, or published with another type."""

    model: str
    column: str
    base_type: str | None  # None: the base has no such column
    change_type: str | None  # None: the pull request has no such column


@dataclass(frozen=True)
class ColumnPlan:
    """What is compared of one model both builds published, from the two tables' columns."""

    model: ComparedModel
    key_column: str | None  # the declared key, when both tables have it
    summed: dict[str, bool]  # number columns both have -> inexact (summed as such)
    valued: tuple[str, ...]  # every column both have but the day and key: values compared
    column_changes: tuple[ColumnChange, ...]
    not_compared: str | None  # why no day can be compared (the partition column is gone)


def plan_columns(
    model: ComparedModel, base_columns: Mapping[str, str], change_columns: Mapping[str, str]
) -> ColumnPlan:
    """The comparison of one model from each build's columns (name -> type, in order)."""
    changes = [
        ColumnChange(model.relation, name, base_columns.get(name), change_columns.get(name))
        for name in [*base_columns, *(n for n in change_columns if n not in base_columns)]
        if base_columns.get(name) != change_columns.get(name)
    ]
    common = [name for name in base_columns if name in change_columns]
    not_compared = None
    if model.partition_column not in common:
        side = "either build" if model.partition_column not in base_columns else "the change"
        not_compared = f"its partition column {model.partition_column} is not in {side}'s table"
    key = model.key_column if model.key_column in common else None
    grouped = {model.partition_column, key}
    summed = {
        name: is_inexact(base_columns[name]) or is_inexact(change_columns[name])
        for name in common
        if name not in grouped and is_number(base_columns[name]) and is_number(change_columns[name])
    }
    valued = tuple(name for name in common if name not in grouped)
    return ColumnPlan(model, key, summed, valued, tuple(changes), not_compared)


@dataclass(frozen=True)
class Difference:
    """One number that the change moves: a measure of a model on a day (and key)."""

    day: date
    model: str
    key: str  # "" for a model compared per day only
    measure: str
    base: Decimal
    change: Decimal  # the pull request's value (named `change` after the ref it is built from)

    @property
    def delta(self) -> Decimal:
        return self.change - self.base


@dataclass(frozen=True)
class ValueDifference:
    """A column whose values on a day (and key) differ, as multisets, between the builds:
    how many of the base's values the change does not have, and the other way round, with
    the first of each (as text) for the reader."""

    day: date
    model: str
    key: str
    column: str
    only_in_base: int
    only_in_change: int
    base_example: str | None
    change_example: str | None


@dataclass
class CodeChangeReport:
    """The comparison of one pull request with its base, on one window."""

    base_ref: str
    base_commit: str
    change: str  # the checkout built: its commit, and whether uncommitted changes were too
    start: date
    end: date
    base_failure: str | None = None  # why the base did not build: nothing compared
    key_columns: dict[str, str] = field(default_factory=dict)  # relation -> its key column
    compared: list[str] = field(default_factory=list)  # relations both builds published
    added: list[str] = field(default_factory=list)  # published by the pull request only
    removed: list[str] = field(default_factory=list)  # published by the base only
    not_compared: dict[str, str] = field(default_factory=dict)  # relation -> why
    column_changes: list[ColumnChange] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    value_differences: list[ValueDifference] = field(default_factory=list)

    @property
    def days_changed(self) -> list[date]:
        return sorted({d.day for d in self.differences} | {d.day for d in self.value_differences})

    @property
    def changes_numbers(self) -> bool:
        return bool(
            self.differences
            or self.value_differences
            or self.added
            or self.removed
            or self.not_compared
            or self.column_changes
        )

    def moved(self) -> set[tuple[date, str, str]]:
        """(day, model, key) of every number or value the change moves."""
        return {(d.day, d.model, d.key) for d in [*self.differences, *self.value_differences]}

    def add(self, differences: list[Difference], values: list[ValueDifference]) -> None:
        """One model's differences. A column whose sum moved on a day and key is said once,
        as a number; its values are said only where its sum did not move."""
        summed = {(d.day, d.key, d.measure) for d in differences}
        self.differences += differences
        self.value_differences += [v for v in values if (v.day, v.key, v.column) not in summed]
        self.differences.sort(key=lambda d: (d.day, d.model, d.key, d.measure))
        self.value_differences.sort(key=lambda d: (d.day, d.model, d.key, d.column))
